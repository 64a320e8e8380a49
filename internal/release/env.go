package release

import (
	"fmt"
	"net/url"
	"os"
	"strings"

	"github.com/google/go-github/v62/github"

	"github.com/experimentalmachines/exe-expo/internal/watch"
)

// FromEnv builds the Publisher of a workflow run: the run's repository
// (GITHUB_REPOSITORY), its token (GH_TOKEN, else GITHUB_TOKEN) and API (GITHUB_API_URL;
// empty or api.github.com is GitHub itself, anything else a GitHub Enterprise Server).
func FromEnv() (*Publisher, error) {
	env := os.Getenv("GITHUB_REPOSITORY")
	if env == "" {
		return nil, fmt.Errorf("a GitHub release needs GITHUB_REPOSITORY set to owner/name, the repository to release in")
	}
	owner, repo, err := watch.ParseRepo("GITHUB_REPOSITORY", env)
	if err != nil {
		return nil, fmt.Errorf("a GitHub release needs GITHUB_REPOSITORY set to the repository to release in: %w", err)
	}
	token := os.Getenv("GH_TOKEN")
	if token == "" {
		token = os.Getenv("GITHUB_TOKEN")
	}
	if token == "" {
		return nil, fmt.Errorf("a GitHub release needs a token that can write the repository's contents: set GH_TOKEN")
	}
	gh := github.NewClient(nil).WithAuthToken(token)
	api := strings.TrimRight(os.Getenv("GITHUB_API_URL"), "/")
	if api != "" && api != "https://api.github.com" {
		u, err := url.Parse(api)
		if err != nil || u.Host == "" {
			return nil, fmt.Errorf("GITHUB_API_URL %q is not a URL", api)
		}
		if gh, err = gh.WithEnterpriseURLs(api+"/", u.Scheme+"://"+u.Host+"/"); err != nil {
			return nil, fmt.Errorf("GITHUB_API_URL %q: %w", api, err)
		}
	}
	return &Publisher{GH: gh, Owner: owner, Repo: repo}, nil
}
