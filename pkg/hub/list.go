package hub

import (
	"context"
	"encoding/json"
	"fmt"
	"iter"
	"net/url"
	"regexp"
	"strconv"
	"time"
)

// ModelSummary is one item of GET /api/models.
type ModelSummary struct {
	ID           string    `json:"id"`
	SHA          string    `json:"sha,omitempty"`
	Private      bool      `json:"private"`
	Gated        Gated     `json:"gated"`
	Downloads    int64     `json:"downloads"`
	Likes        int64     `json:"likes"`
	PipelineTag  string    `json:"pipeline_tag,omitempty"`
	LibraryName  string    `json:"library_name,omitempty"`
	Tags         []string  `json:"tags"`
	CreatedAt    time.Time `json:"createdAt"`
	LastModified time.Time `json:"lastModified"`
	Siblings     []Sibling `json:"siblings,omitempty"`
}

// ListOptions filters GET /api/models. Sorting is always descending on the Hub.
type ListOptions struct {
	Author string
	Search string
	Filter []string // tags, all required
	// Sort is createdAt, downloads, likes, lastModified or trendingScore; empty is the Hub's.
	Sort string
	// PageSize is the per-request limit (the Hub caps it; hf.js uses 500 at most).
	PageSize int
	// Max stops after this many models; 0 is all of them.
	Max    int
	Full   bool
	Expand []string
}

// ListModels yields models page by page, following the Link rel="next" URL verbatim until
// there is none. Stop ranging to stop fetching.
func (c *Client) ListModels(ctx context.Context, opts ListOptions) iter.Seq2[ModelSummary, error] {
	return func(yield func(ModelSummary, error) bool) {
		next := c.apiURL("models") + "?" + listQuery(opts).Encode()
		n := 0
		for next != "" {
			page, link, err := c.listPage(ctx, next)
			if err != nil {
				yield(ModelSummary{}, err)
				return
			}
			for _, m := range page {
				if !yield(m, nil) {
					return
				}
				n++
				if opts.Max > 0 && n >= opts.Max {
					return
				}
			}
			next = link
		}
	}
}

func listQuery(opts ListOptions) url.Values {
	q := url.Values{}
	set := func(k, v string) {
		if v != "" {
			q.Set(k, v)
		}
	}
	set("author", opts.Author)
	set("search", opts.Search)
	set("sort", opts.Sort)
	for _, f := range opts.Filter {
		q.Add("filter", f)
	}
	limit := opts.PageSize
	if limit <= 0 {
		limit = 100
	}
	if opts.Max > 0 && opts.Max < limit {
		limit = opts.Max
	}
	q.Set("limit", strconv.Itoa(min(limit, 500)))
	if opts.Full {
		q.Set("full", "true")
	}
	for _, e := range opts.Expand {
		q.Add("expand", e)
	}
	return q
}

func (c *Client) listPage(ctx context.Context, u string) ([]ModelSummary, string, error) {
	resp, err := c.do(ctx, call{method: "GET", url: u})
	if err != nil {
		return nil, "", err
	}
	defer drain(resp.Body)
	var page []ModelSummary
	if err := json.NewDecoder(resp.Body).Decode(&page); err != nil {
		return nil, "", fmt.Errorf("hub: decode model list %s: %w", redact(u), err)
	}
	return page, nextLink(resp.Header.Get("Link")), nil
}

var linkRe = regexp.MustCompile(`<(https?://[^>]+)>;\s*rel="([^"]+)"`)

// nextLink extracts the rel="next" URL of a GitHub-style Link header (hf.js's regex).
func nextLink(h string) string {
	for _, m := range linkRe.FindAllStringSubmatch(h, -1) {
		if m[2] == "next" {
			return m[1]
		}
	}
	return ""
}
