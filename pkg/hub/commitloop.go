package hub

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net/url"
	"time"
)

// CommitBuilder builds a commit on top of head, the branch's current sha: the publisher
// reads the repo at head (reports, config.json) and decides the operations from it.
type CommitBuilder func(ctx context.Context, head string) (CommitRequest, error)

// RetryWait is the reference implementation's publish pause before attempt n+1: 5 × (n+1)
// seconds (docs/research/hub.md#what-the-reference-implementation-reads-and-retries).
func RetryWait(attempt int) time.Duration { return time.Duration(5*(attempt+1)) * time.Second }

// JitteredWait is RetryWait spread over its upper half, capped at a minute: publishers
// that lost a race to the same commit do not all come back at the same instant and lose
// again (a matrix of windows publishing into one repo).
func JitteredWait(attempt int) time.Duration {
	d := min(RetryWait(attempt), time.Minute)
	return d/2 + time.Duration(rand.Int64N(int64(d/2)+1))
}

// maxRounds bounds the attempts of one CommitOnHead even while other writers keep landing:
// every lost race is another window's commit, so a publisher among N loses at most N-1.
const maxRounds = 1000

// CommitOnHead reads the head of branch, builds the commit on it and sends it with that
// head as parentCommit. When the branch moved (ErrStaleParent), the Hub reports a conflict
// (ErrConflict), or the commit's answer never came (a server error or a broken connection:
// it may have landed), it waits wait(n) and starts over from a fresh head; parentCommit
// makes that safe, and a commit that did land shows as nothing left to change
// (CommitResult.Recovered). It gives up after attempts failures in a row during which the
// branch did not move: a failure while other writers land is progress, not a reason to
// stop. LFS objects uploaded by a failed attempt are not sent again.
func (c *Client) CommitOnHead(ctx context.Context, repo, branch string, attempts int, wait func(int) time.Duration, build CommitBuilder) (*CommitResult, error) {
	if err := firstErr(checkRepo("commit", repo), checkRev("commit", branch)); err != nil {
		return nil, err
	}
	branch = orMain(branch)
	if wait == nil {
		wait = JitteredWait
	}
	attempts = max(attempts, 1)
	var last error
	prev, fails, unanswered := "", 0, false
	for round := 0; round < maxRounds; round++ {
		res, head, err := c.commitRound(ctx, repo, branch, build)
		if round > 0 && head != "" && head != prev {
			fails = 0 // another writer landed (or ours did): the count starts again
		}
		if head != "" {
			prev = head
		}
		switch {
		case err == nil:
			return res, nil
		case errors.Is(err, ErrNoChanges) && unanswered:
			return &CommitResult{Recovered: true}, nil
		case !retryable(ctx, err):
			return res, err
		}
		last = err
		var lost *lostAnswer
		unanswered = unanswered || errors.As(err, &lost)
		if fails++; fails >= attempts {
			return nil, fmt.Errorf("hub: commit to %s gave up after %d attempts: %w", repo, attempts, last)
		}
		c.log.Debug("hub: commit raced another writer or lost its answer; rebuilding", "repo", repo, "round", round+1)
		if err := pause(ctx, wait(fails-1)); err != nil {
			return nil, fmt.Errorf("hub: commit to %s stopped before attempt %d of %d: %w", repo, fails+1, attempts, err)
		}
	}
	return nil, fmt.Errorf("hub: commit to %s gave up after %d rounds while other writers kept landing: %w", repo, maxRounds, last)
}

// commitRound reads the head, builds on it and commits; head is "" when it could not be
// read. A commit whose answer never came is marked lostAnswer.
func (c *Client) commitRound(ctx context.Context, repo, branch string, build CommitBuilder) (*CommitResult, string, error) {
	head, err := c.HeadSHA(ctx, repo, branch)
	if err != nil {
		return nil, "", err
	}
	req, err := build(ctx, head)
	if err != nil {
		return nil, head, fmt.Errorf("hub: build commit for %s at %s: %w", repo, head, err)
	}
	req.Repo, req.Branch, req.ParentCommit = repo, branch, head
	res, err := c.Commit(ctx, req)
	if err != nil && !errors.Is(err, ErrStaleParent) && !errors.Is(err, ErrConflict) && transient(ctx, err) {
		err = &lostAnswer{err}
	}
	return res, head, err
}

// lostAnswer is a commit (or its uploads) that failed without a refusal: it may have
// landed, so the next round's "nothing to change" means it did.
type lostAnswer struct{ err error }

func (l *lostAnswer) Error() string { return l.err.Error() }
func (l *lostAnswer) Unwrap() error { return l.err }

// retryable says whether a round is worth starting again on a fresh head: a lost race, or
// a failure that was no refusal (a 5xx, a 429 past its retries, a broken connection while
// reading the repo or committing), never the caller's own cancellation.
func retryable(ctx context.Context, err error) bool {
	return ctx.Err() == nil && (errors.Is(err, ErrStaleParent) || errors.Is(err, ErrConflict) || transient(ctx, err))
}

// transient says whether err is the Hub or the network failing rather than refusing.
func transient(ctx context.Context, err error) bool {
	if ctx.Err() != nil {
		return false
	}
	if errors.Is(err, ErrServer) || errors.Is(err, ErrRateLimited) {
		return true
	}
	var ue *url.Error
	return errors.As(err, &ue) || errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF)
}

// pause waits d, or returns the context's error as soon as it ends: a cancelled publisher
// stops without reading the head again.
func pause(ctx context.Context, d time.Duration) error {
	if err := context.Cause(ctx); err != nil {
		return err
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return context.Cause(ctx)
	case <-t.C:
		return nil
	}
}
