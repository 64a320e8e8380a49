package release

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/experimentalmachines/exe-expo/internal/report"
)

// exported writes a window's export folder: the report, its files (sizes given; a file of
// AssetLimit bytes is sparse) and the tokenizer.
func exported(t *testing.T, folder string, window int, files map[string]int64) (string, string) {
	t.Helper()
	dir := t.TempDir()
	r := &report.Report{Backend: "xnnpack", OutputRepo: "experimentalmachines/Qwen3-1.7B-ExecuTorch", Tokenizer: "tokenizer.json",
		Source:    report.Source{ID: "Qwen/Qwen3-1.7B", SHA: "abcdef0123456789abcdef0123456789abcdef01"},
		Toolchain: map[string]string{"executorch": "1.4.0"}, Window: report.Window{Context: window}}
	require.NoError(t, os.MkdirAll(filepath.Join(dir, filepath.FromSlash(folder)), 0o755))
	for name, size := range files {
		p := filepath.Join(dir, filepath.FromSlash(folder), name)
		f, err := os.Create(p)
		require.NoError(t, err)
		if size < 1<<20 {
			_, err = f.Write(make([]byte, size))
		} else {
			err = f.Truncate(size)
		}
		require.NoError(t, err)
		require.NoError(t, f.Close())
		r.Files = append(r.Files, report.File{Path: folder + "/" + name, Bytes: size})
	}
	require.NoError(t, os.WriteFile(filepath.Join(dir, "tokenizer.json"), []byte(`{"v":1}`), 0o644))
	rp := filepath.Join(dir, filepath.FromSlash(folder), report.Name(strconv.Itoa(window/1024)+"k"))
	require.NoError(t, report.Write(rp, r))
	return dir, rp
}

func TestForReport(t *testing.T) {
	tests := []struct {
		folder  string
		window  int
		files   map[string]int64
		tag     string
		assets  []string
		tooBig  []string
		inNotes []string
	}{
		{"xnnpack", 4096, map[string]int64{"Qwen3-1.7B-8da4w-4k.pte": 100}, "Qwen3-1.7B-xnnpack-4k-abcdef0",
			[]string{"export-report-4k.json", "Qwen3-1.7B-8da4w-4k.pte", "tokenizer.json"}, nil,
			[]string{"XNNPACK (CPU) export of [Qwen/Qwen3-1.7B](https://huggingface.co/Qwen/Qwen3-1.7B) at `abcdef012345`, window 4096 tokens, ExecuTorch 1.4.0.",
				"Hugging Face: https://huggingface.co/experimentalmachines/Qwen3-1.7B-ExecuTorch"}},
		{"qnn/sm8650", 2048, map[string]int64{"Qwen3-1.7B-qnn-hybrid-2k.pte": AssetLimit}, "Qwen3-1.7B-qnn-sm8650-2k-abcdef0",
			[]string{"export-report-2k.json", "tokenizer.json"}, []string{"qnn/sm8650/Qwen3-1.7B-qnn-hybrid-2k.pte"},
			[]string{"- `Qwen3-1.7B-qnn-hybrid-2k.pte` is over GitHub's 2 GiB asset limit: download it from Hugging Face: https://huggingface.co/experimentalmachines/Qwen3-1.7B-ExecuTorch/blob/main/qnn/sm8650/Qwen3-1.7B-qnn-hybrid-2k.pte"}},
		{"qnn/sm8650", 2048, map[string]int64{"Qwen3-1.7B-qnn-hybrid-2k.pte": AssetLimit - 1}, "Qwen3-1.7B-qnn-sm8650-2k-abcdef0",
			[]string{"export-report-2k.json", "Qwen3-1.7B-qnn-hybrid-2k.pte", "tokenizer.json"}, nil, nil},
	}
	for _, tc := range tests {
		t.Run(tc.tag+"/"+strconv.Itoa(len(tc.assets)), func(t *testing.T) {
			dir, rp := exported(t, tc.folder, tc.window, tc.files)
			rel, err := ForReport(dir, rp)
			require.NoError(t, err)
			assert.Equal(t, tc.tag, rel.Tag)
			assert.Equal(t, tc.tag, rel.Title)
			var names []string
			for _, a := range rel.Assets {
				names = append(names, a.Name)
				assert.Less(t, a.Size, AssetLimit)
			}
			assert.Equal(t, tc.assets, names)
			assert.Equal(t, tc.tooBig, rel.TooLarge)
			for _, s := range tc.inNotes {
				assert.Contains(t, rel.Notes, s)
			}
		})
	}
}

func sum(b []byte) string {
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:])
}

// TestPublishCreatesThenUpdatesInPlace publishes a release, then the same tag again with
// other notes and another file content: one release, updated, each asset once, the new
// bytes.
func TestPublishCreatesThenUpdatesInPlace(t *testing.T) {
	fake, gh := newFake(t)
	dir, rp := exported(t, "xnnpack", 4096, map[string]int64{"Qwen3-1.7B-8da4w-4k.pte": 64})
	rel, err := ForReport(dir, rp)
	require.NoError(t, err)
	p := &Publisher{GH: gh, Owner: "o", Repo: "r"}
	first, err := p.Publish(context.Background(), rel)
	require.NoError(t, err)

	pte := filepath.Join(dir, "xnnpack", "Qwen3-1.7B-8da4w-4k.pte")
	require.NoError(t, os.WriteFile(pte, []byte("new bytes"), 0o644))
	rel.Notes = "updated notes\n"
	second, err := p.Publish(context.Background(), rel)
	require.NoError(t, err)
	assert.Equal(t, first.GetID(), second.GetID())

	require.Len(t, fake.releases, 1)
	assert.Equal(t, "updated notes\n", fake.releases[first.GetID()].GetBody())
	assets := fake.assets[first.GetID()]
	require.Len(t, assets, 3)
	for _, a := range assets {
		if a.name == "Qwen3-1.7B-8da4w-4k.pte" {
			assert.Equal(t, sum([]byte("new bytes")), sum(a.data))
		}
	}
}

func status(code int, headers ...string) func(w http.ResponseWriter) {
	return func(w http.ResponseWriter) {
		for i := 0; i+1 < len(headers); i += 2 {
			w.Header().Set(headers[i], headers[i+1])
		}
		body := map[string]string{"message": "injected"}
		if code == 403 && w.Header().Get("X-Ratelimit-Remaining") == "" {
			body["documentation_url"] = "https://docs.github.com/rest/overview/rate-limits-for-the-rest-api#about-secondary-rate-limits"
		}
		writeJSON(w, code, body)
	}
}

// TestRetries makes the first calls fail and checks the waits publish takes (on a fake
// clock) and whether it gets through.
func TestRetries(t *testing.T) {
	reset := time.Now().Add(-time.Minute).Truncate(time.Second) // past for go-github's own check
	tests := []struct {
		name    string
		answers []func(http.ResponseWriter)
		waits   []time.Duration
		fails   string
	}{
		{"502 once", []func(http.ResponseWriter){status(502)}, []time.Duration{30 * time.Second}, ""},
		{"503 with Retry-After", []func(http.ResponseWriter){status(503, "Retry-After", "7")}, []time.Duration{7 * time.Second}, ""},
		{"429 with Retry-After", []func(http.ResponseWriter){status(429, "Retry-After", "3")}, []time.Duration{3 * time.Second}, ""},
		{"secondary rate limit", []func(http.ResponseWriter){status(403, "Retry-After", "0")}, []time.Duration{0}, ""},
		{"primary rate limit", []func(http.ResponseWriter){status(403, "X-Ratelimit-Remaining", "0", "X-Ratelimit-Limit", "5000", "X-Ratelimit-Reset", strconv.FormatInt(reset.Unix(), 10))},
			[]time.Duration{30 * time.Second}, ""},
		{"5xx five times", []func(http.ResponseWriter){status(500), status(500), status(500), status(500), status(500)},
			[]time.Duration{30 * time.Second, 60 * time.Second, 90 * time.Second, 120 * time.Second}, "github: read release Qwen3-1.7B-xnnpack-4k-abcdef0 in o/r"},
		{"422 is not retried", []func(http.ResponseWriter){status(422)}, nil, "422 injected"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			fake, gh := newFake(t)
			fake.fail(tc.answers...)
			dir, rp := exported(t, "xnnpack", 4096, map[string]int64{"Qwen3-1.7B-8da4w-4k.pte": 64})
			rel, err := ForReport(dir, rp)
			require.NoError(t, err)
			var waits []time.Duration
			p := &Publisher{GH: gh, Owner: "o", Repo: "r", Now: func() time.Time { return reset.Add(-30 * time.Second) },
				Sleep: func(_ context.Context, d time.Duration) error { waits = append(waits, d); return nil }}
			_, err = p.Publish(context.Background(), rel)
			assert.Equal(t, tc.waits, waits)
			if tc.fails != "" {
				require.Error(t, err)
				assert.Contains(t, err.Error(), tc.fails)
				return
			}
			require.NoError(t, err)
			require.Len(t, fake.releases, 1)
			for _, r := range fake.releases {
				assert.Len(t, fake.assets[r.GetID()], 3)
			}
		})
	}
}
