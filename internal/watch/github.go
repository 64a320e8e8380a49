package watch

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"

	"github.com/google/go-github/v62/github"

	"github.com/experimentalmachines/exe-expo/internal/netutil"
)

// GitHub reaches one repository's Actions and its state branch through the REST API.
type GitHub struct {
	Client      *github.Client
	Owner, Repo string
	// Ref is the branch the export workflows are dispatched on.
	Ref string
}

// NewGitHub builds the client for repo ("owner/name") at the API base URL (empty for
// api.github.com; Actions sets GITHUB_API_URL) with token; ref is the branch workflows are
// dispatched on. The repository and ref are checked against GitHub's naming rules here,
// before any request.
func NewGitHub(apiURL, repo, token, ref string) (*GitHub, error) {
	owner, name, err := ParseRepo("the GitHub repository", repo)
	if err != nil {
		return nil, err
	}
	if err := CheckBranch("the ref", ref); err != nil {
		return nil, err
	}
	c := github.NewClient(nil)
	if token != "" {
		c = c.WithAuthToken(token)
	}
	if apiURL != "" {
		u, err := url.Parse(strings.TrimSuffix(apiURL, "/") + "/")
		if err != nil || u.Host == "" {
			return nil, fmt.Errorf("the GitHub API URL %q is not a URL such as https://api.github.com", apiURL)
		}
		c.BaseURL = u
	}
	return &GitHub{Client: c, Owner: owner, Repo: name, Ref: ref}, nil
}

// InFlight lists the workflow's runs in each in-flight status, every page.
func (g *GitHub) InFlight(ctx context.Context, workflow string) ([]Run, error) {
	if err := errors.Join(g.check(), checkWorkflow(workflow)); err != nil {
		return nil, err
	}
	var out []Run
	for _, status := range []string{"queued", "in_progress", "waiting", "pending", "requested"} {
		opts := &github.ListWorkflowRunsOptions{Status: status, ListOptions: github.ListOptions{PerPage: 100}}
		for {
			runs, resp, err := g.Client.Actions.ListWorkflowRunsByFileName(ctx, escaped(g.Owner), escaped(g.Repo), escaped(workflow), opts)
			if err != nil {
				return nil, fmt.Errorf("listing the %s runs of %s: %w", status, workflow, apiError(err))
			}
			for _, r := range runs.WorkflowRuns {
				out = append(out, Run{Title: r.GetDisplayTitle(), Status: r.GetStatus()})
			}
			if resp.NextPage == 0 {
				break
			}
			opts.Page = resp.NextPage
		}
	}
	return out, nil
}

// Dispatch starts workflow for one model; only model_id and revision are passed, so the
// export runs with its default inputs (every window).
func (g *GitHub) Dispatch(ctx context.Context, workflow, modelID, revision string) error {
	if err := errors.Join(g.check(), checkWorkflow(workflow), CheckBranch("the ref", g.Ref)); err != nil {
		return err
	}
	_, err := g.Client.Actions.CreateWorkflowDispatchEventByFileName(ctx, escaped(g.Owner), escaped(g.Repo), escaped(workflow), github.CreateWorkflowDispatchEventRequest{
		Ref:    g.Ref,
		Inputs: map[string]any{"model_id": modelID, "revision": revision},
	})
	return apiError(err)
}

// APIError is GitHub's answer to a failed call, worded without the request dump go-github
// puts in its errors.
type APIError struct {
	Status  int
	Message string
}

func (e *APIError) Error() string { return fmt.Sprintf("GitHub answered %d: %s", e.Status, e.Message) }

// Permanent says whether asking again cannot help: GitHub refused the request itself
// (a missing workflow or input, no permission) rather than failing to serve it.
func (e *APIError) Permanent() bool {
	return e.Status >= 400 && e.Status < 500 && e.Status != http.StatusTooManyRequests
}

func apiError(err error) error {
	if u := netutil.Unreachable(err); u != nil {
		return u // "cannot reach api.github.com: no such host (…)", not go-github's request dump
	}
	var er *github.ErrorResponse
	if errors.As(err, &er) && er.Response != nil {
		msg := er.Message
		if msg == "" {
			msg = http.StatusText(er.Response.StatusCode)
		}
		return &APIError{Status: er.Response.StatusCode, Message: msg}
	}
	return err
}

func statusOf(err error) int {
	var er *github.ErrorResponse
	if errors.As(err, &er) && er.Response != nil {
		return er.Response.StatusCode
	}
	return 0
}
