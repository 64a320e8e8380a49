// Package hub is the Hugging Face Hub HTTP client: model listing and info, file downloads
// and range reads, safetensors headers by range, and the write path (create repo, preupload,
// LFS batch upload, NDJSON commit). It speaks the protocol of huggingface_hub and
// @huggingface/hub (docs/research/hub.md#protocol-facts) over hashicorp/go-retryablehttp,
// streams every body, and keeps the token out of every error and log line.
package hub

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"os"
	"strings"
	"time"

	"github.com/hashicorp/go-retryablehttp"

	"github.com/experimentalmachines/exe-expo/internal/netutil"
)

// DefaultEndpoint is the public Hub; HF_ENDPOINT overrides it, as in the official clients.
const DefaultEndpoint = "https://huggingface.co"

// Options configures a Client. Zero values take the defaults of the official Python client.
type Options struct {
	// Endpoint is the Hub base URL; empty means $HF_ENDPOINT, then DefaultEndpoint.
	Endpoint string
	// Token is the Hub token; empty means $HF_TOKEN. Set NoEnvToken to stay anonymous.
	Token      string
	NoEnvToken bool
	// UserAgent is sent on every request.
	UserAgent string
	// HTTPClient is the transport; nil means a pooled client. Its CheckRedirect is replaced
	// so that the token never follows a redirect to another host.
	HTTPClient *http.Client
	// Logger receives one debug line per retry; nil is silent.
	Logger *slog.Logger
	// RetryMax is how many times a failed idempotent request is retried (default 5).
	RetryMax int
	// RetryWaitMin and RetryWaitMax bound the exponential backoff (default 1 s and 8 s).
	RetryWaitMin, RetryWaitMax time.Duration
	// MaxRateLimitWait caps how long one 429 may make us sleep (default 5 minutes).
	MaxRateLimitWait time.Duration
	// Parallel is how many LFS parts or shard headers are in flight at once (default 4).
	Parallel int
}

// Client talks to one Hub endpoint with one token. It is safe for concurrent use.
type Client struct {
	endpoint string
	token    string
	ua       string
	log      *slog.Logger
	retry    *retryablehttp.Client // retries 408, 429, 5xx (not 501) and transport errors
	once     *retryablehttp.Client // never retries: commits, which could land twice
	head     *retryablehttp.Client // retries, but stops at a redirect to another host
	parallel int
}

// New builds a Client from opts and the HF_ENDPOINT and HF_TOKEN environment variables.
func New(opts Options) *Client {
	endpoint := opts.Endpoint
	if endpoint == "" {
		endpoint = os.Getenv("HF_ENDPOINT")
	}
	if endpoint == "" {
		endpoint = DefaultEndpoint
	}
	token := opts.Token
	if token == "" && !opts.NoEnvToken {
		token = os.Getenv("HF_TOKEN")
	}
	ua := opts.UserAgent
	if ua == "" {
		ua = "exe-expo-hub/1"
	}
	log := opts.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	c := &Client{endpoint: strings.TrimRight(endpoint, "/"), token: strings.TrimSpace(token), ua: ua, log: log, parallel: opts.Parallel}
	if c.parallel <= 0 {
		c.parallel = 4
	}
	hc := opts.HTTPClient
	if hc == nil {
		tr := http.DefaultTransport.(*http.Transport).Clone()
		tr.MaxIdleConnsPerHost = 2 * c.parallel // parallel parts reuse their connections
		hc = &http.Client{Transport: tr}
	} else {
		cp := *hc
		hc = &cp
	}
	hc.CheckRedirect = stripAuthOnHostChange
	c.retry = newRetryClient(hc, opts, log, true)
	c.once = newRetryClient(hc, opts, log, false)
	hh := *hc
	hh.CheckRedirect = stopOnHostChange
	c.head = newRetryClient(&hh, opts, log, true)
	return c
}

// Endpoint is the Hub base URL the client talks to.
func (c *Client) Endpoint() string { return c.endpoint }

// Authenticated reports whether a token is configured (the token itself is never exposed).
func (c *Client) Authenticated() bool { return c.token != "" }

// stripAuthOnHostChange drops the token when a redirect leaves the Hub's host, for example
// to the LFS CDN or a presigned storage URL.
func stripAuthOnHostChange(req *http.Request, via []*http.Request) error {
	if len(via) >= 10 {
		return fmt.Errorf("stopped after 10 redirects")
	}
	if req.URL.Host != via[0].URL.Host {
		req.Header.Del("Authorization")
	}
	return nil
}

// stopOnHostChange follows only relative redirects (a renamed repo), like the Python
// client, so that a HEAD sees the Hub's X-Linked-* headers rather than the CDN's.
func stopOnHostChange(req *http.Request, via []*http.Request) error {
	if len(via) >= 10 || req.URL.Host != via[0].URL.Host {
		return http.ErrUseLastResponse
	}
	if req.Response != nil {
		if loc, err := url.Parse(req.Response.Header.Get("Location")); err != nil || loc.IsAbs() || loc.Host != "" {
			return http.ErrUseLastResponse
		}
	}
	return nil
}

// call describes one request for do.
type call struct {
	method     string
	url        string
	body       any // nil, []byte, or retryablehttp.ReaderFunc
	length     int64
	header     http.Header
	noAuth     bool // presigned storage URLs must not get the token
	noRetry    bool
	noRedirect bool // stay on the Hub's host (HEAD metadata)
	// context for error messages
	repo, revision, path string
}

// do sends c and returns the response when its status is below 400; otherwise it maps the
// response to an *Error and closes it.
func (c *Client) do(ctx context.Context, cl call) (*http.Response, error) {
	req, err := retryablehttp.NewRequestWithContext(withDialBudget(ctx), cl.method, cl.url, cl.body)
	if err != nil {
		return nil, fmt.Errorf("hub: build %s %s: %w", cl.method, redact(cl.url), err)
	}
	if cl.length > 0 {
		req.ContentLength = cl.length
	}
	for k, vs := range cl.header {
		for _, v := range vs {
			req.Header.Add(k, v)
		}
	}
	req.Header.Set("User-Agent", c.ua)
	if c.token != "" && !cl.noAuth {
		req.Header.Set("Authorization", "Bearer "+c.token)
	}
	rc := c.retry
	switch {
	case cl.noRetry:
		rc = c.once
	case cl.noRedirect:
		rc = c.head
	}
	resp, err := rc.Do(req)
	if u := netutil.Unreachable(err); u != nil {
		return nil, u // a sentence that names the host; the URL would say it twice
	}
	if err != nil {
		return nil, fmt.Errorf("hub: %s %s: %w", cl.method, redact(cl.url), c.scrub(err))
	}
	if resp.StatusCode >= 400 {
		defer resp.Body.Close()
		return nil, mapError(resp, cl)
	}
	return resp, nil
}

// scrub makes sure an error from the transport cannot leak the token.
func (c *Client) scrub(err error) error {
	if c.token == "" || !strings.Contains(err.Error(), c.token) {
		return err
	}
	return fmt.Errorf("%s", strings.ReplaceAll(err.Error(), c.token, "<redacted>"))
}

// redact drops any userinfo and query secrets from a URL before it is quoted.
func redact(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return raw
	}
	u.User = nil
	return u.String()
}

// drain reads the rest of a body so that the connection is reused, then closes it.
func drain(r io.ReadCloser) {
	_, _ = io.Copy(io.Discard, io.LimitReader(r, 1<<16))
	_ = r.Close()
}

// apiURL is {endpoint}/api/{segments}, each segment escaped on its own.
func (c *Client) apiURL(segs ...string) string {
	return c.endpoint + "/api/" + escapeSegments(segs)
}

// modelURL is {endpoint}/api/models/{repo}/{segments}: the repo id's slash stays a
// separator, and every other segment is escaped on its own.
func (c *Client) modelURL(repo string, segs ...string) string {
	u := c.endpoint + "/api/models/" + escapeRepo(repo)
	if len(segs) > 0 {
		u += "/" + escapeSegments(segs)
	}
	return u
}

// repoPage is the repo's page on the Hub, {endpoint}/{repo}.
func (c *Client) repoPage(repo string) string { return c.endpoint + "/" + escapeRepo(repo) }

// escapeRev escapes a revision like Python's quote(rev, safe=""): refs/pr/1 → refs%2Fpr%2F1.
func escapeRev(rev string) string { return url.PathEscape(orMain(rev)) }

// orMain is rev, or main (the default branch) when rev is empty.
func orMain(rev string) string {
	if rev == "" {
		return "main"
	}
	return rev
}

// escapePath escapes a file path in the repo, keeping its slashes.
func escapePath(p string) string {
	parts := strings.Split(p, "/")
	for i, s := range parts {
		parts[i] = url.PathEscape(s)
	}
	return strings.Join(parts, "/")
}

// resolveURL is the download URL of path at rev.
func (c *Client) resolveURL(repo, rev, path string) string {
	return c.repoPage(repo) + "/resolve/" + escapeRev(rev) + "/" + escapePath(path)
}
