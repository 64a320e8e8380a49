package hub

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// CommitBuilder builds a commit on top of head, the branch's current sha: the publisher
// reads the repo at head (reports, config.json) and decides the operations from it.
type CommitBuilder func(ctx context.Context, head string) (CommitRequest, error)

// RetryWait is the reference implementation's publish pause before attempt n+1: 5 × (n+1)
// seconds (docs/research/hub.md#what-the-reference-implementation-reads-and-retries).
func RetryWait(attempt int) time.Duration { return time.Duration(5*(attempt+1)) * time.Second }

// CommitOnHead reads the head of branch, builds the commit on it and sends it with that
// head as parentCommit. When the branch moved (ErrStaleParent) or the Hub reports a
// conflict (ErrConflict), it waits wait(attempt) and starts over from a fresh head, up to
// attempts times; LFS objects uploaded by a failed attempt are not sent again.
func (c *Client) CommitOnHead(ctx context.Context, repo, branch string, attempts int, wait func(int) time.Duration, build CommitBuilder) (*CommitResult, error) {
	if branch == "" {
		branch = "main"
	}
	if wait == nil {
		wait = RetryWait
	}
	var last error
	for attempt := 0; attempt < max(attempts, 1); attempt++ {
		if attempt > 0 {
			if err := pause(ctx, wait(attempt-1)); err != nil {
				return nil, fmt.Errorf("hub: commit to %s stopped before attempt %d of %d: %w", repo, attempt+1, max(attempts, 1), err)
			}
		}
		head, err := c.HeadSHA(ctx, repo, branch)
		if err != nil {
			return nil, err
		}
		req, err := build(ctx, head)
		if err != nil {
			return nil, fmt.Errorf("hub: build commit for %s at %s: %w", repo, head, err)
		}
		req.Repo, req.Branch, req.ParentCommit = repo, branch, head
		res, err := c.Commit(ctx, req)
		if err == nil || !(errors.Is(err, ErrStaleParent) || errors.Is(err, ErrConflict)) {
			return res, err
		}
		last = err
		c.log.Debug("hub: commit raced another writer; rebuilding", "repo", repo, "attempt", attempt+1)
	}
	return nil, fmt.Errorf("hub: commit to %s gave up after %d attempts: %w", repo, max(attempts, 1), last)
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
