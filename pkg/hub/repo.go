package hub

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"
)

// RepoOptions are the settings of a new repo.
type RepoOptions struct {
	// Private makes the repo private; false leaves the namespace default (public).
	Private bool
	// License is an optional Hub license id, e.g. apache-2.0.
	License string
}

// CreateRepo creates a model repo and returns its URL. A repo that already exists is fine
// (the Hub's 409); a 409 "another conflicting operation is in progress" is waited out.
func (c *Client) CreateRepo(ctx context.Context, repo string, opts RepoOptions) (string, error) {
	if err := checkRepo("create repo", repo); err != nil {
		return "", err
	}
	ns, name, _ := strings.Cut(repo, "/")
	body := map[string]any{"name": name, "organization": ns, "type": "model"}
	if opts.Private {
		body["visibility"] = "private"
	}
	if opts.License != "" {
		body["license"] = opts.License
	}
	payload, _ := json.Marshal(body)
	wait := time.Second
	for attempt := 0; ; attempt++ {
		url, err := c.createOnce(ctx, repo, payload)
		var he *Error
		if !errors.As(err, &he) || he.Kind != ErrConflict {
			return url, err
		}
		if !strings.Contains(he.Server, "conflicting operation is in progress") {
			return c.repoPage(repo), nil // already exists
		}
		if attempt >= 5 {
			return "", err
		}
		select {
		case <-ctx.Done():
			return "", ctx.Err()
		case <-time.After(wait):
		}
		wait *= 2
	}
}

func (c *Client) createOnce(ctx context.Context, repo string, payload []byte) (string, error) {
	var out struct {
		URL string `json:"url"`
	}
	err := c.postJSON(ctx, call{method: "POST", url: c.apiURL("repos", "create"), body: payload, repo: repo,
		header: jsonHeader}, &out)
	if err != nil {
		return "", err
	}
	if out.URL == "" {
		out.URL = c.repoPage(repo)
	}
	return out.URL, nil
}

var jsonHeader = map[string][]string{"Content-Type": {"application/json"}}

// postJSON sends cl and decodes the JSON answer into v (when v is not nil).
func (c *Client) postJSON(ctx context.Context, cl call, v any) error {
	resp, err := c.do(ctx, cl)
	if err != nil {
		return err
	}
	defer drain(resp.Body)
	if v == nil {
		return nil
	}
	if err := json.NewDecoder(resp.Body).Decode(v); err != nil {
		return fmt.Errorf("hub: decode answer of %s %s: %w", cl.method, redact(cl.url), err)
	}
	return nil
}
