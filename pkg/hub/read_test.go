package hub_test

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/experimentalmachines/exe-expo/internal/model"
	"github.com/experimentalmachines/exe-expo/pkg/hub"
	"github.com/experimentalmachines/exe-expo/pkg/hub/hubtest"
)

var _ model.Files = (*hub.RepoFiles)(nil)

func TestModelInfo(t *testing.T) {
	srv := hubtest.New(t)
	readme := "---\nlicense: apache-2.0\nbase_model: Qwen/Qwen3-0.6B\n---\n# card\n"
	st := safetensors(t, map[string]tensor{"a": {"BF16", []int64{4, 8}}, "b": {"F32", []int64{3}}}, 0)
	sha := srv.MustAddModel(t, "org/m", map[string][]byte{
		"README.md": []byte(readme), "config.json": []byte(`{"model_type":"qwen3"}`), "model.safetensors": st,
	}, hubtest.Tags("text-generation", "license:apache-2.0"), hubtest.PipelineTag("text-generation"), hubtest.Gated("manual"))
	c := newClient(srv, testToken)
	ctx := context.Background()

	info := must(c.ModelInfo(ctx, "org/m", hub.InfoOptions{Expand: hub.ExpandForExport}))(t)
	if info.SHA != sha || info.Gated != "manual" || info.PipelineTag != "text-generation" || !slices.Contains(info.Tags, "license:apache-2.0") {
		t.Errorf("info = %+v, want sha %s, gated manual, pipeline and tags", info, sha)
	}
	if info.Safetensors == nil || info.Safetensors.Total != 35 || info.Safetensors.Parameters["BF16"] != 32 {
		t.Errorf("safetensors = %+v, want BF16 32 and total 35", info.Safetensors)
	}
	if info.CardData["license"] != "apache-2.0" || info.CardData["base_model"] != "Qwen/Qwen3-0.6B" {
		t.Errorf("cardData = %v", info.CardData)
	}
	if !strings.Contains(string(info.Config), "qwen3") {
		t.Errorf("config = %s", info.Config)
	}

	blobs := must(c.ModelInfo(ctx, "org/m", hub.InfoOptions{Blobs: true, Revision: sha[:10]}))(t)
	var lfs *hub.Sibling
	for i, s := range blobs.Siblings {
		if s.Path == "model.safetensors" {
			lfs = &blobs.Siblings[i]
		}
	}
	if lfs == nil || lfs.LFS == nil || lfs.LFS.SHA256 != sha256Hex(st) || lfs.Size != int64(len(st)) {
		t.Errorf("siblings with blobs = %+v, want the LFS sha256 of model.safetensors", blobs.Siblings)
	}
	head := must(c.HeadSHA(ctx, "org/m", "main"))(t)
	if head != sha {
		t.Errorf("HeadSHA = %s, want %s", head, sha)
	}
}

func TestListModelsFollowsLinkPages(t *testing.T) {
	srv := hubtest.New(t)
	srv.PageSize = 2
	var want []string
	for i := range 5 {
		id := fmt.Sprintf("acme/m%d", i)
		srv.MustAddModel(t, id, map[string][]byte{"config.json": []byte("{}")})
		want = append(want, id)
	}
	srv.MustAddModel(t, "other/x", map[string][]byte{"config.json": []byte("{}")})
	c := newClient(srv, "")
	var got []string
	for m, err := range c.ListModels(context.Background(), hub.ListOptions{Author: "acme", Sort: "createdAt"}) {
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, m.ID)
	}
	slices.Sort(got)
	if !slices.Equal(got, want) {
		t.Errorf("listed %v, want %v", got, want)
	}
	if n := count(srv, "GET", "/api/models?"); n != 3 {
		t.Errorf("%d list requests, want 3 pages of 2", n)
	}
	got = nil
	for m, err := range c.ListModels(context.Background(), hub.ListOptions{Author: "acme", Max: 3}) {
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, m.ID)
	}
	if len(got) != 3 {
		t.Errorf("Max 3 gave %d models", len(got))
	}
}

func TestErrors(t *testing.T) {
	srv := hubtest.New(t)
	srv.AddToken(testToken, hubtest.Token{User: "alice", Write: true})
	srv.AddToken("hf_bob", hubtest.Token{User: "bob"})
	srv.MustAddModel(t, "meta/gated", map[string][]byte{"config.json": []byte("{}")}, hubtest.Gated("manual"), hubtest.Authorize("bob"))
	srv.MustAddModel(t, "org/open", map[string][]byte{"config.json": []byte("{}")})
	srv.MustAddModel(t, "org/secret", map[string][]byte{"config.json": []byte("{}")}, hubtest.Private())
	srv.MustAddModel(t, "org/off", map[string][]byte{"config.json": []byte("{}")}, hubtest.Disabled())
	ctx := context.Background()
	tests := []struct {
		name        string
		token       string
		repo, rev   string
		path        string
		kind        error
		status      int
		msgContains string
	}{
		{"gated anonymous", "", "meta/gated", "main", "config.json", hub.ErrGated, 401, "accept the license at " + srv.URL + "/meta/gated"},
		{"gated not accepted", testToken, "meta/gated", "main", "config.json", hub.ErrGated, 403, "HF_TOKEN"},
		{"missing repo", testToken, "org/nope", "main", "config.json", hub.ErrRepoNotFound, 404, "does not exist or is private"},
		{"private anonymous", "", "org/secret", "main", "config.json", hub.ErrRepoNotFound, 401, "org/secret"},
		{"missing file", "", "org/open", "main", "nope.json", hub.ErrEntryNotFound, 404, `"nope.json"`},
		{"missing revision", "", "org/open", "v9", "config.json", hub.ErrRevisionNotFound, 404, `"v9"`},
		{"bad token", "hf_wrong_" + testToken[3:], "org/open", "main", "config.json", hub.ErrUnauthorized, 401, "set HF_TOKEN"},
		{"disabled", "", "org/off", "main", "config.json", hub.ErrDisabled, 403, "disabled"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c := newClient(srv, tc.token)
			_, err := c.ReadFile(ctx, tc.repo, tc.rev, tc.path)
			var he *hub.Error
			if !errors.Is(err, tc.kind) || !errors.As(err, &he) || he.Status != tc.status {
				t.Fatalf("err = %v, want %v with HTTP %d", err, tc.kind, tc.status)
			}
			if !strings.Contains(err.Error(), tc.msgContains) {
				t.Errorf("message %q does not say %q", err, tc.msgContains)
			}
			if errors.Is(err, fs.ErrNotExist) != (tc.kind == hub.ErrEntryNotFound) {
				t.Errorf("fs.ErrNotExist match is wrong for %v", err)
			}
			noToken(t, err)
			if strings.Contains(err.Error(), "hf_wrong") {
				t.Errorf("error leaks the bad token: %v", err)
			}
		})
	}
	// An accepted gate opens the files.
	if _, err := newClient(srv, "hf_bob").ReadFile(ctx, "meta/gated", "main", "config.json"); err != nil {
		t.Errorf("authorized user: %v", err)
	}
}

func TestRetries(t *testing.T) {
	srv := hubtest.New(t)
	srv.MustAddModel(t, "org/m", map[string][]byte{"config.json": []byte(`{"a":1}`)})
	c := newClient(srv, testToken)
	ctx := context.Background()
	tests := []struct {
		name   string
		fault  hubtest.Fault
		kind   error // nil: the call succeeds after retries
		status int
	}{
		{"503 then ok", hubtest.Fault{Status: 503, Times: 2}, nil, 0},
		{"429 retry-after then ok", hubtest.Fault{Status: 429, RetryAfter: "1"}, nil, 0},
		{"429 ratelimit header then ok", hubtest.Fault{Status: 429, RateLimit: `"api";r=0;t=0`}, nil, 0},
		{"persistent 500", hubtest.Fault{Status: 500, Times: -1}, hub.ErrServer, 500},
		{"persistent 429", hubtest.Fault{Status: 429, RetryAfter: "0", Times: -1}, hub.ErrRateLimited, 429},
		{"501 not retried", hubtest.Fault{Status: 501, Times: -1}, hub.ErrServer, 501},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			srv.ClearFaults()
			tc.fault.PathContains = "/api/models/org/m"
			f := srv.Inject(tc.fault)
			_, err := c.ModelInfo(ctx, "org/m", hub.InfoOptions{})
			srv.ClearFaults()
			if tc.kind == nil {
				if err != nil {
					t.Fatalf("err = %v, want success after retries", err)
				}
				return
			}
			var he *hub.Error
			if !errors.Is(err, tc.kind) || !errors.As(err, &he) || he.Status != tc.status {
				t.Fatalf("err = %v, want %v", err, tc.kind)
			}
			wantHits := 6
			if tc.status == http.StatusNotImplemented {
				wantHits = 1
			}
			if f.Hits() != wantHits {
				t.Errorf("%d attempts, want %d", f.Hits(), wantHits)
			}
		})
	}
}

func TestReadRangeAndFiles(t *testing.T) {
	srv := hubtest.New(t)
	big := pattern(3<<20, 7)
	srv.MustAddModel(t, "org/m", map[string][]byte{"w.bin": big, "config.json": []byte(`{"x":2}`)})
	c := newClient(srv, "")
	ctx := context.Background()
	files := c.Files("org/m", "main")
	tests := []struct {
		off, n int64
		want   []byte
	}{
		{0, 8, big[:8]},
		{1 << 20, 100, big[1<<20 : 1<<20+100]},
		{int64(len(big)) - 5, 100, big[len(big)-5:]},
		{int64(len(big)) + 10, 4, []byte{}},
	}
	for _, tc := range tests {
		got, err := files.ReadRange(ctx, "w.bin", tc.off, tc.n)
		if err != nil || string(got) != string(tc.want) {
			t.Errorf("ReadRange(%d, %d) = %d bytes, %v; want %d bytes", tc.off, tc.n, len(got), err, len(tc.want))
		}
	}
	cfg := must(files.ReadFile(ctx, "config.json"))(t)
	if string(cfg) != `{"x":2}` {
		t.Errorf("config.json = %q", cfg)
	}
	if _, err := files.ReadFile(ctx, "missing.json"); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("missing file: %v, want fs.ErrNotExist", err)
	}
	meta := must(c.FileMeta(ctx, "org/m", "main", "w.bin"))(t)
	if !meta.IsLFS() || meta.ETag != sha256Hex(big) || meta.Size != int64(len(big)) || meta.Commit != srv.Head("org/m") || meta.Location == "" {
		t.Errorf("FileMeta = %+v", meta)
	}
}
