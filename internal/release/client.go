package release

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"strconv"
	"time"

	"github.com/google/go-github/v62/github"

	"github.com/experimentalmachines/exe-expo/internal/watch"
	"github.com/experimentalmachines/exe-expo/pkg/hub"
)

// Publisher creates or updates releases in one GitHub repo.
type Publisher struct {
	GH          *github.Client
	Owner, Repo string
	// Attempts bounds the tries of each call (default 5).
	Attempts int
	// Sleep waits between tries (default: a timer that ends with ctx); Now is the clock the
	// rate-limit resets are read against (default time.Now). Tests pass fakes of both.
	Sleep func(ctx context.Context, d time.Duration) error
	Now   func() time.Time
}

// Publish makes the release match rel: created when its tag has none, else its notes
// updated in place; every asset uploaded, replacing one of the same name.
func (p *Publisher) Publish(ctx context.Context, rel *Release) (*github.RepositoryRelease, error) {
	if err := p.check(rel.Tag); err != nil {
		return nil, err
	}
	owner, repo := url.PathEscape(p.Owner), url.PathEscape(p.Repo)
	var got *github.RepositoryRelease
	err := p.retry(ctx, "read release "+rel.Tag, func() (*github.Response, error) {
		r, resp, err := p.GH.Repositories.GetReleaseByTag(ctx, owner, repo, url.PathEscape(rel.Tag))
		if resp != nil && resp.StatusCode == http.StatusNotFound {
			return resp, nil
		}
		got = r
		return resp, err
	})
	if err != nil {
		return nil, err
	}
	want := &github.RepositoryRelease{TagName: github.String(rel.Tag), Name: github.String(rel.Title), Body: github.String(rel.Notes)}
	err = p.retry(ctx, "write release "+rel.Tag, func() (*github.Response, error) {
		var resp *github.Response
		var err error
		if got == nil {
			got, resp, err = p.GH.Repositories.CreateRelease(ctx, owner, repo, want)
		} else {
			got, resp, err = p.GH.Repositories.EditRelease(ctx, owner, repo, got.GetID(), want)
		}
		return resp, err
	})
	if err != nil {
		return nil, err
	}
	for _, a := range rel.Assets {
		if err := p.upload(ctx, got.GetID(), a); err != nil {
			return nil, err
		}
	}
	return got, nil
}

// check refuses, before any request, a repository or tag GitHub would refuse: go-github
// puts all three into its URLs unescaped (docs/research/hub.md#names-checked-before-any-request).
func (p *Publisher) check(tag string) error {
	if !watch.ValidOwner(p.Owner) || !watch.ValidRepoName(p.Repo) {
		return fmt.Errorf("github: release in %q: the repository is not owner/name (%s)", p.Owner+"/"+p.Repo, watch.GitHubRepoRule)
	}
	if !hub.ValidRef(tag) {
		return fmt.Errorf("github: release tag %q is not %s", tag, hub.RefRule)
	}
	return nil
}

// upload replaces the asset named a.Name with the file, deleting an earlier one (also one
// a failed try left behind) before each try.
func (p *Publisher) upload(ctx context.Context, id int64, a Asset) error {
	owner, repo := url.PathEscape(p.Owner), url.PathEscape(p.Repo)
	return p.retry(ctx, "upload "+a.Name, func() (*github.Response, error) {
		assets, resp, err := p.GH.Repositories.ListReleaseAssets(ctx, owner, repo, id, &github.ListOptions{PerPage: 100})
		if err != nil {
			return resp, err
		}
		for _, old := range assets {
			if old.GetName() == a.Name {
				if resp, err := p.GH.Repositories.DeleteReleaseAsset(ctx, owner, repo, old.GetID()); err != nil {
					return resp, err
				}
			}
		}
		f, err := os.Open(a.Path)
		if err != nil {
			return nil, permanent{fmt.Errorf("open %s: %w", a.Path, err)}
		}
		defer f.Close()
		_, resp, err = p.GH.Repositories.UploadReleaseAsset(ctx, owner, repo, id, &github.UploadOptions{Name: a.Name}, f)
		return resp, err
	})
}

// permanent marks an error no retry can cure.
type permanent struct{ error }

func (e permanent) Unwrap() error { return e.error }

// retry runs call until it succeeds, fails for good, or Attempts tries are spent: a 5xx
// waits 30 × (attempt+1) s (the reference's pause) or the server's Retry-After; a rate
// limit waits until its reset or its Retry-After.
func (p *Publisher) retry(ctx context.Context, what string, call func() (*github.Response, error)) error {
	attempts := p.Attempts
	if attempts <= 0 {
		attempts = 5
	}
	var err error
	for attempt := 0; attempt < attempts; attempt++ {
		var resp *github.Response
		resp, err = call()
		if err == nil {
			return nil
		}
		wait, ok := p.waitFor(resp, err, attempt)
		if !ok || attempt == attempts-1 {
			break
		}
		if err := p.sleep(ctx, wait); err != nil {
			return fmt.Errorf("github: %s in %s/%s stopped while waiting to retry: %w", what, p.Owner, p.Repo, err)
		}
	}
	return fmt.Errorf("github: %s in %s/%s: %w", what, p.Owner, p.Repo, err)
}

// waitFor decides whether err is worth another try and how long to wait first.
func (p *Publisher) waitFor(resp *github.Response, err error, attempt int) (time.Duration, bool) {
	var pe permanent
	if errors.As(err, &pe) {
		return 0, false
	}
	var abuse *github.AbuseRateLimitError
	if errors.As(err, &abuse) {
		return abuse.GetRetryAfter(), true
	}
	var rl *github.RateLimitError
	if errors.As(err, &rl) {
		return max(rl.Rate.Reset.Time.Sub(p.now()), 0), true
	}
	if resp == nil || resp.Response == nil {
		return 0, false // not an HTTP answer: a bad URL, a cancelled context
	}
	code := resp.StatusCode
	if code < 500 && code != http.StatusTooManyRequests {
		return 0, false
	}
	if s, err := strconv.Atoi(resp.Header.Get("Retry-After")); err == nil && s >= 0 {
		return time.Duration(s) * time.Second, true
	}
	return time.Duration(30*(attempt+1)) * time.Second, true
}

func (p *Publisher) now() time.Time {
	if p.Now != nil {
		return p.Now()
	}
	return time.Now()
}

func (p *Publisher) sleep(ctx context.Context, d time.Duration) error {
	if p.Sleep != nil {
		return p.Sleep(ctx, d)
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
