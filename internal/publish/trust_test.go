package publish

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/experimentalmachines/exe-expo/internal/config"
	"github.com/experimentalmachines/exe-expo/pkg/hub"
)

const testPTE = "SmolLM2-360M-Instruct-8da4w-4k.pte"

// replaceWithLink moves p out of the export folder (to outside) and leaves a link to it.
func replaceWithLink(t *testing.T, p, outside string) {
	t.Helper()
	require.NoError(t, os.MkdirAll(filepath.Dir(outside), 0o755))
	require.NoError(t, os.Rename(p, outside))
	require.NoError(t, os.Symlink(outside, p))
}

// TestOutTrustedOnlyAsFarAsItsTree: every file publish would send resolves inside the
// export folder, is a regular file and is the one its report hashed; the report names no
// file publish writes itself, and no path twice.
func TestOutTrustedOnlyAsFarAsItsTree(t *testing.T) {
	cases := append(fileTamperings(), reportTamperings()...)
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			dir, outside := t.TempDir(), t.TempDir()
			rp := writeWindow(t, dir, win{backend: "xnnpack", window: 4096, seed: 1})
			_, err := Load(dir, rp, "")
			require.NoError(t, err, "the unchanged export loads")
			tc.mutate(t, dir, outside, rp)
			_, err = Load(dir, rp, "")
			require.Error(t, err)
			assert.Contains(t, err.Error(), tc.want)
		})
	}
}

// tampering is one change TestOutTrustedOnlyAsFarAsItsTree makes to a good export folder
// dir (outside is a folder beside it, rp its report) and the refusal it must meet.
type tampering struct {
	name   string
	mutate func(t *testing.T, dir, outside, rp string)
	want   string
}

// fileTamperings change the folder's files: links out of it, a pipe, other bytes.
func fileTamperings() []tampering {
	return []tampering{
		{".pte linked from outside", func(t *testing.T, dir, outside, rp string) {
			replaceWithLink(t, filepath.Join(dir, "xnnpack", testPTE), filepath.Join(outside, testPTE))
		}, "outside the export folder"},
		{"LICENSE linked from outside", func(t *testing.T, dir, outside, rp string) {
			replaceWithLink(t, filepath.Join(dir, "LICENSE"), filepath.Join(outside, "LICENSE"))
		}, "outside the export folder"},
		{"report linked from outside", func(t *testing.T, dir, outside, rp string) {
			replaceWithLink(t, rp, filepath.Join(outside, "export-report-4k.json"))
		}, "outside the export folder"},
		{"backend folder linked from outside", func(t *testing.T, dir, outside, rp string) {
			replaceWithLink(t, filepath.Join(dir, "xnnpack"), filepath.Join(outside, "xnnpack"))
		}, "outside the export folder"},
		{".pte replaced by a named pipe", func(t *testing.T, dir, outside, rp string) {
			p := filepath.Join(dir, "xnnpack", testPTE)
			require.NoError(t, os.Remove(p))
			require.NoError(t, syscall.Mkfifo(p, 0o644))
		}, "is not a regular file"},
		{".pte with other bytes of the same size", func(t *testing.T, dir, outside, rp string) {
			p := filepath.Join(dir, "xnnpack", testPTE)
			b := readFileT(t, p)
			b[len(b)/2] ^= 0xff
			writeFile(t, p, b)
		}, "the file changed after the export"},
		{"tokenizer with other bytes of the same size", func(t *testing.T, dir, outside, rp string) {
			p := filepath.Join(dir, "tokenizer.json")
			b := readFileT(t, p)
			b[2] ^= 0x01
			writeFile(t, p, b)
		}, "the file changed after the export"},
	}
}

// reportTamperings change the report: files it did not hash or publish writes itself, a
// path twice, license fields that are no plain name or Hub id.
func reportTamperings() []tampering {
	return []tampering{
		{"root file the report did not hash", func(t *testing.T, dir, outside, rp string) {
			editReport(t, rp, func(r map[string]any) { r["root_files"] = r["root_files"].([]any)[:1] })
		}, "records no size and sha256 for the root file tokenizer.json"},
		{"report lists the folder's config.json", func(t *testing.T, dir, outside, rp string) {
			writeFile(t, filepath.Join(dir, "xnnpack", "config.json"), []byte("{}"))
			editReport(t, rp, func(r map[string]any) {
				r["files"] = append(r["files"].([]any), map[string]any{"path": "xnnpack/config.json", "bytes": 2,
					"sha256": "44136fa355b3678a1146ad16f7e8649e94fb4fc21fe77e8310c060f61caaff8a"})
			})
		}, "xnnpack/config.json, a file publish writes itself"},
		{"report lists README.md as a license file", func(t *testing.T, dir, outside, rp string) {
			editReport(t, rp, func(r map[string]any) {
				r["source"].(map[string]any)["license_files"] = []any{"LICENSE", "README.md"}
			})
		}, "the root file README.md, a file publish writes itself"},
		{"report lists a file twice", func(t *testing.T, dir, outside, rp string) {
			editReport(t, rp, func(r map[string]any) {
				fs := r["files"].([]any)
				r["files"] = append(fs, fs[0])
				r["structural_check"] = append(r["structural_check"].([]any), r["structural_check"].([]any)[0])
			})
		}, "the commit would carry xnnpack/" + testPTE + " twice"},
		{"license name that rewrites the card", func(t *testing.T, dir, outside, rp string) {
			editReport(t, rp, func(r map[string]any) {
				r["source"].(map[string]any)["license"] = map[string]any{"license": "other", "license_name": "x\nbase_model: evil/model"}
			})
		}, `the source's license_name "x\nbase_model: evil/model" is not a plain name`},
		{"license id the Hub does not know", func(t *testing.T, dir, outside, rp string) {
			editReport(t, rp, func(r map[string]any) {
				r["source"].(map[string]any)["license"] = map[string]any{"license": "apache"}
			})
		}, `license "apache" is not a Hub license id`},
	}
}

// TestReportAndFilesInPlace: a report is read only from inside the export folder, named
// by its path there, and lists only files of its own backend folder.
func TestReportAndFilesInPlace(t *testing.T) {
	t.Run("report outside the export folder", func(t *testing.T) {
		dir, other := t.TempDir(), t.TempDir()
		writeWindow(t, dir, win{backend: "xnnpack", window: 4096, seed: 1})
		rp := writeWindow(t, other, win{backend: "xnnpack", window: 4096, seed: 1})
		_, err := Load(dir, rp, "")
		require.Error(t, err)
		assert.Contains(t, err.Error(), "outside the export folder")
	})
	t.Run("report reached around a linked export folder", func(t *testing.T) {
		real := t.TempDir()
		rp := writeWindow(t, real, win{backend: "xnnpack", window: 4096, seed: 1})
		link := filepath.Join(t.TempDir(), "out")
		require.NoError(t, os.Symlink(real, link))
		_, err := Load(link, filepath.Join(link, "xnnpack", "export-report-4k.json"), "")
		require.NoError(t, err, "a linked export folder is read through its link")
		_, err = Load(link, rp, "")
		require.Error(t, err)
		assert.Contains(t, err.Error(), "is not inside the export folder "+link)
	})
	t.Run("file of another backend folder", func(t *testing.T) {
		dir := t.TempDir()
		rp := writeWindow(t, dir, win{backend: "xnnpack", window: 4096, seed: 1})
		writeWindow(t, dir, win{backend: "vulkan", window: 4096, seed: 2})
		vk := readReportT(t, filepath.Join(dir, "vulkan", "export-report-4k.json"))
		editReport(t, rp, func(r map[string]any) {
			r["files"] = append(r["files"].([]any), vk["files"].([]any)[0])
			r["structural_check"] = append(r["structural_check"].([]any), r["structural_check"].([]any)[0])
		})
		_, err := Load(dir, rp, "")
		require.Error(t, err)
		assert.Contains(t, err.Error(), "which is outside its folder xnnpack")
	})
}

func readReportT(t *testing.T, p string) map[string]any {
	t.Helper()
	var m map[string]any
	require.NoError(t, json.Unmarshal(readFileT(t, p), &m))
	return m
}

// TestRelativeExportFolder: the workflows publish "out" from their working directory.
func TestRelativeExportFolder(t *testing.T) {
	dir := t.TempDir()
	writeWindow(t, dir, win{backend: "xnnpack", window: 4096, seed: 1})
	t.Chdir(dir)
	w, err := Load("out/..", filepath.Join("xnnpack", "export-report-4k.json"), "")
	require.NoError(t, err, "a relative folder and report path load")
	assert.Equal(t, "xnnpack/export-report-4k.json", w.ReportPath)
	_, err = Load(".", filepath.Join("xnnpack", "export-report-4k.json"), "")
	require.NoError(t, err)
}

// TestRefusedBeforeTheRepoIsCreated: a window refused for its license never reaches the
// Hub: Load fails, so Publish is never called, the server sees no request (no repo is
// created) and the sentence names the source model and the report. A source that names
// no license is refused with the rule: the card publishes the files under its terms.
func TestRefusedBeforeTheRepoIsCreated(t *testing.T) {
	const noLicense = "report %s: the source model " + testModel + " names no license in its model card (README.md front matter: license, or license_name); " +
		"the published files are distributed under the source's own terms, so a source without a license cannot be published: " +
		"give the license in the source's model card and export again"
	cases := []struct {
		name    string
		license any    // the report's source.license; nil drops the field
		want    string // the whole sentence (%s: the report's path), or a part of it
		exact   bool
	}{
		{"no license fields", map[string]any{}, noLicense, true},
		{"no license field at all", nil, noLicense, true},
		{"empty license and name", map[string]any{"license": "", "license_name": ""}, noLicense, true},
		{"only a license link", map[string]any{"license_link": "LICENSE"}, noLicense, true},
		{"license that rewrites the card", map[string]any{"license": "mit\nlicense_link: https://evil.example"}, `the source's license "mit\nlicense_link: https://evil.example" is not a Hub license id`, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			srv, c := newHub(t)
			dir := t.TempDir()
			rp := writeWindow(t, dir, win{backend: "xnnpack", window: 4096, seed: 1})
			editReport(t, rp, func(r map[string]any) {
				src := r["source"].(map[string]any)
				if tc.license == nil {
					delete(src, "license")
				} else {
					src["license"] = tc.license
				}
			})
			_, err := publishDir(context.Background(), c, dir, rp)
			require.Error(t, err)
			if tc.exact {
				assert.Equal(t, fmt.Sprintf(tc.want, rp), err.Error())
			} else {
				assert.Contains(t, err.Error(), tc.want)
				assert.Contains(t, err.Error(), "report "+rp)
			}
			for _, r := range srv.Requests() {
				assert.False(t, r.Method == http.MethodPost && r.Path == "/api/repos/create", "the repo was created: %+v", r)
			}
			assert.Empty(t, srv.Requests(), "the Hub was asked")
			assert.Equal(t, "", srv.Head(testRepo), "no repo was created")
		})
	}
}

// TestSourceLicensePublished: a source that names its license, by id or by name, is
// published, and the card names those terms.
func TestSourceLicensePublished(t *testing.T) {
	cases := []struct {
		name    string
		license map[string]any
		front   string // the card's license lines
		terms   string
	}{
		{"Hub license id", map[string]any{"license": "apache-2.0"}, "license: apache-2.0\n", "apache-2.0"},
		{"Llama 3.2", map[string]any{"license": "llama3.2"}, "license: llama3.2\n", "llama3.2"},
		{"other, by name and file", map[string]any{"license": "other", "license_name": "lfm1.0", "license_link": "LICENSE"},
			"license: other\nlicense_name: lfm1.0\nlicense_link: LICENSE\n", "lfm1.0"},
		{"a name alone", map[string]any{"license_name": "lfm1.0"}, "license_name: lfm1.0\n", "lfm1.0"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			srv, c := newHub(t)
			dir := t.TempDir()
			rp := writeWindow(t, dir, win{backend: "xnnpack", window: 4096, seed: 1})
			editReport(t, rp, func(r map[string]any) { r["source"].(map[string]any)["license"] = tc.license })
			_, err := publishDir(context.Background(), c, dir, rp)
			require.NoError(t, err)
			card := string(readRepo(t, srv, testRepo).files["README.md"])
			assert.True(t, strings.HasPrefix(card, "---\n"+tc.front+"base_model:\n"), "front matter:\n%s", card)
			assert.Contains(t, card, "distributed under the same terms ("+tc.terms+").")
		})
	}
}

// TestCheckWindow: a window is positive and one the configuration gives its backend.
func TestCheckWindow(t *testing.T) {
	cfg, err := config.Default()
	require.NoError(t, err)
	dir := t.TempDir()
	w, err := Load(dir, writeWindow(t, dir, win{backend: "xnnpack", window: 4096, seed: 1}), "")
	require.NoError(t, err)
	require.NoError(t, w.CheckWindow(cfg), "4096 is a configured XNNPACK window")
	for _, n := range []int{0, -4096, 4095, 1 << 20} {
		w.Report.Window.Context = n
		assert.Error(t, w.CheckWindow(cfg), "window %d", n)
	}
	mdir := t.TempDir()
	m, err := Load(mdir, writeWindow(t, mdir, win{backend: "mediatek", chip: "MT6991", window: cfg.Export.MediaTek.CacheSize, seed: 1}), "")
	require.NoError(t, err)
	assert.NoError(t, m.CheckWindow(cfg), "MediaTek's fixed cache size is its window")
}

// TestCommitCarriesNoPathTwice holds Build's last check: the plan never adds a path twice
// nor adds and deletes one.
func TestCommitCarriesNoPathTwice(t *testing.T) {
	f := func(p string) hub.CommitFile { return hub.CommitFile{PathInRepo: p} }
	assert.NoError(t, checkUnique([]hub.CommitFile{f("a"), f("b")}, []string{"c"}))
	assert.ErrorContains(t, checkUnique([]hub.CommitFile{f("a"), f("a")}, nil), "carry a twice")
	assert.ErrorContains(t, checkUnique([]hub.CommitFile{f("a")}, []string{"a"}), "both send and delete a")
}

// TestLoadStopsWhenAsked: a publish interrupted while it hashes the window's files stops
// with the context's error instead of reading gigabytes first.
func TestLoadStopsWhenAsked(t *testing.T) {
	dir := t.TempDir()
	rp := writeWindow(t, dir, win{backend: "xnnpack", window: 4096, seed: 1})
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := LoadContext(ctx, dir, rp, "")
	require.ErrorIs(t, err, context.Canceled)
}
