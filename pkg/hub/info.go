package hub

import (
	"context"
	"encoding/json"
	"fmt"
	"net/url"
	"time"
)

// ModelInfo is the part of GET /api/models/{repo} that exe-expo reads
// (docs/research/hub.md#model-info).
type ModelInfo struct {
	ID           string          `json:"id"`
	SHA          string          `json:"sha"`
	Private      bool            `json:"private"`
	Gated        Gated           `json:"gated"`
	Disabled     bool            `json:"disabled"`
	Tags         []string        `json:"tags"`
	PipelineTag  string          `json:"pipeline_tag"`
	LibraryName  string          `json:"library_name"`
	Config       json.RawMessage `json:"config,omitempty"` // huggingface.co's: a summary of config.json
	CardData     map[string]any  `json:"cardData,omitempty"`
	Siblings     []Sibling       `json:"siblings"`
	Safetensors  *ParamTotals    `json:"safetensors,omitempty"`
	LastModified time.Time       `json:"lastModified"`
	CreatedAt    time.Time       `json:"createdAt"`
	Downloads    int64           `json:"downloads"`
	Likes        int64           `json:"likes"`
}

// Sibling is one file of a repo; size, blob id and LFS fields come only with blobs=true.
type Sibling struct {
	Path   string   `json:"rfilename"`
	Size   int64    `json:"size,omitempty"`
	BlobID string   `json:"blobId,omitempty"`
	LFS    *LFSInfo `json:"lfs,omitempty"`
}

// LFSInfo describes a file stored in LFS: its sha256 is what a publish compares against.
type LFSInfo struct {
	Size        int64  `json:"size"`
	SHA256      string `json:"sha256"`
	PointerSize int64  `json:"pointerSize"`
}

// ParamTotals is the Hub's safetensors summary: parameters per dtype and their total.
type ParamTotals struct {
	Parameters map[string]int64 `json:"parameters"`
	Total      int64            `json:"total"`
}

// Gated is the repo's gating mode: "" (not gated), "auto" or "manual". The API sends false
// or a string.
type Gated string

// UnmarshalJSON accepts false, true and the mode strings.
func (g *Gated) UnmarshalJSON(b []byte) error {
	var s string
	if json.Unmarshal(b, &s) == nil {
		*g = Gated(s)
		return nil
	}
	var v bool
	if err := json.Unmarshal(b, &v); err != nil {
		return fmt.Errorf("gated: want false or a string, got %s", b)
	}
	*g = ""
	if v {
		*g = "auto"
	}
	return nil
}

// MarshalJSON writes false for an ungated repo, as the Hub does.
func (g Gated) MarshalJSON() ([]byte, error) {
	if g == "" {
		return []byte("false"), nil
	}
	return json.Marshal(string(g))
}

// InfoOptions selects the optional parts of ModelInfo.
type InfoOptions struct {
	// Revision is a branch, tag or commit sha; empty is the default branch.
	Revision string
	// Blobs adds sizes and LFS sha256s to Siblings. It cannot be combined with Expand.
	Blobs bool
	// Expand lists the properties to return (expand=…); empty returns the default set.
	Expand []string
}

// ExpandForExport is the property set the export pipeline reads: the reference
// implementation's plus config. huggingface.co's config is a summary of config.json
// (architectures, model_type, …), not the file, so a plan still reads config.json unless
// the config is evidently whole (docs/research/hub.md#config-in-model-info).
var ExpandForExport = []string{"safetensors", "createdAt", "sha", "gated", "tags", "pipeline_tag", "cardData", "siblings", "config"}

// ModelInfo fetches a model's metadata at a revision.
func (c *Client) ModelInfo(ctx context.Context, repo string, opts InfoOptions) (*ModelInfo, error) {
	if err := firstErr(checkRepo("model info", repo), checkRev("model info", opts.Revision)); err != nil {
		return nil, err
	}
	u := c.modelURL(repo)
	if opts.Revision != "" {
		u = c.modelURL(repo, "revision", opts.Revision)
	}
	q := url.Values{}
	if opts.Blobs {
		q.Set("blobs", "true")
	}
	for _, e := range opts.Expand {
		q.Add("expand", e)
	}
	if len(q) > 0 {
		u += "?" + q.Encode()
	}
	var info ModelInfo
	if err := c.getJSON(ctx, call{method: "GET", url: u, repo: repo, revision: opts.Revision}, &info); err != nil {
		return nil, err
	}
	return &info, nil
}

// HeadSHA is the current commit sha of a branch, the parentCommit for the next commit.
func (c *Client) HeadSHA(ctx context.Context, repo, branch string) (string, error) {
	info, err := c.ModelInfo(ctx, repo, InfoOptions{Revision: branch, Expand: []string{"sha"}})
	if err != nil {
		return "", err
	}
	if info.SHA == "" {
		return "", fmt.Errorf("hub: model info of %s@%s has no sha", repo, branch)
	}
	return info.SHA, nil
}

// getJSON GETs cl.url and decodes the body into v.
func (c *Client) getJSON(ctx context.Context, cl call, v any) error {
	resp, err := c.do(ctx, cl)
	if err != nil {
		return err
	}
	defer drain(resp.Body)
	if err := json.NewDecoder(resp.Body).Decode(v); err != nil {
		return fmt.Errorf("hub: decode %s: %w", redact(cl.url), err)
	}
	return nil
}
