package hub

import (
	"context"
	"fmt"
)

// Account is the owner of the token, as GET /api/whoami-v2 reports it.
type Account struct {
	Name string `json:"name"`
	Type string `json:"type"`
	Auth struct {
		AccessToken struct {
			DisplayName string `json:"displayName"`
			Role        string `json:"role"`
		} `json:"accessToken"`
	} `json:"auth"`
}

// CanWrite reports whether the token's role allows commits (write, or fine-grained, whose
// scopes only a commit can tell).
func (a *Account) CanWrite() bool {
	r := a.Auth.AccessToken.Role
	return r == "write" || r == "fineGrained" || r == "admin"
}

// WhoAmI validates the token before a long run starts: a bad token fails here with
// ErrUnauthorized instead of after an hour of export.
func (c *Client) WhoAmI(ctx context.Context) (*Account, error) {
	if c.token == "" {
		return nil, fmt.Errorf("hub: whoami: no token; set HF_TOKEN: %w", ErrUnauthorized)
	}
	var a Account
	if err := c.getJSON(ctx, call{method: "GET", url: c.apiURL("whoami-v2")}, &a); err != nil {
		return nil, err
	}
	return &a, nil
}

// AuthCheck asks whether the token may download from repo: nil, or ErrGated with the
// "accept the license" advice, or ErrRepoNotFound.
func (c *Client) AuthCheck(ctx context.Context, repo string) error {
	if err := checkRepo("auth check", repo); err != nil {
		return err
	}
	resp, err := c.do(ctx, call{method: "GET", url: c.modelURL(repo, "auth-check"), repo: repo})
	if err != nil {
		return err
	}
	drain(resp.Body)
	return nil
}
