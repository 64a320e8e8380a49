package realtool

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/experimentalmachines/exe-expo/internal/report"
	"github.com/experimentalmachines/exe-expo/internal/tinymodel"
	"github.com/experimentalmachines/exe-expo/pkg/pte"
)

// wrongCodes: codes files that do not fit the model are refused by the real export
// (export_with_codes.py over ExecuTorch's real model), naming what is wrong, and leave no
// report and no .pte behind.
func wrongCodes(t *testing.T, family, codes string) {
	dir := t.TempDir()
	script := filepath.Join(dir, "spoil.py")
	require.NoError(t, os.WriteFile(script, []byte(`import sys, torch
codes = torch.load(sys.argv[1], weights_only=True)
kind, out = sys.argv[2], sys.argv[3]
if kind == "transposed":
    name = next(n for n, c in codes.items() if c["qdata"].shape[0] != c["qdata"].shape[1])
    codes[name] = {"qdata": codes[name]["qdata"].t().contiguous(), "scale": codes[name]["scale"]}
elif kind == "unknown":
    codes["layers.7.attention.wq"] = codes["layers.0.attention.wq"]
elif kind == "range":
    name = next(iter(codes))
    codes[name] = {"qdata": codes[name]["qdata"].clone().fill_(9), "scale": codes[name]["scale"]}
torch.save(codes, out)
`), 0o644))
	for _, tc := range []struct{ kind, want string }{
		{"transposed", "do not fit the linear"},
		{"unknown", "layers.7.attention.wq"},
		{"range", "-8"},
	} {
		t.Run(tc.kind, func(t *testing.T) {
			bad := filepath.Join(dir, tc.kind+".pt")
			out, err := exec.Command(python(t), script, codes, tc.kind, bad).CombinedOutput()
			require.NoError(t, err, "%s", out)
			f := exportArgs(t, "xnnpack", family, replyA, 1, "--codes", bad)
			code, stdout, stderr := exeExpo(t, f.args...)
			assert.Equal(t, 2, code, "a %s codes file must fail the export\n%s", tc.kind, stdout)
			assert.Contains(t, stderr, tc.want, "the refusal says what is wrong")
			paths, _ := report.Find(f.out, "xnnpack", "")
			assert.Empty(t, paths, "no report for a failed export")
			ptes, _ := filepath.Glob(filepath.Join(f.out, "xnnpack", "*.pte"))
			assert.Empty(t, ptes, "no .pte for a failed export")
		})
	}
}

// TestWrongExportLLMKey: the export_llm config our recipe writes, with one key renamed,
// run exactly as the recipe runs it, is refused by the real export_llm naming the key. A
// recipe that wrote a key the pinned ExecuTorch does not know could not pass unseen.
func TestWrongExportLLMKey(t *testing.T) {
	t.Parallel()
	e := export(t, "xnnpack", "smollm2", replyA, 1)
	yaml, err := os.ReadFile(filepath.Join(e.work, "export_llm.yaml"))
	require.NoError(t, err)
	for _, tc := range []struct{ name, from, to, want string }{
		{"unknown key", "  group_size: 32\n", "  groupsize: 32\n", "groupsize"},
		{"unknown qmode", "  qmode: 8da4w\n", "  qmode: 8da5w\n", "8da5w"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			require.Contains(t, string(yaml), tc.from)
			bad := strings.Replace(string(yaml), tc.from, tc.to, 1)
			bad = strings.ReplaceAll(bad, filepath.Join(e.work, "SmolLM2-135M-Instruct-8da4w-2k.pte"), filepath.Join(t.TempDir(), "bad.pte"))
			cfg := filepath.Join(t.TempDir(), "export_llm.yaml")
			require.NoError(t, os.WriteFile(cfg, []byte(bad), 0o644))
			cmd := exec.Command(python(t), "-m", "executorch.extension.llm.export.export_llm", "--config", cfg)
			cmd.Dir = e.work
			out, err := cmd.CombinedOutput()
			require.Error(t, err, "export_llm accepted %s:\n%s", tc.to, lastLines(string(out), 20))
			assert.Contains(t, string(out), tc.want)
		})
	}
}

// TestCorruptedPTE: a real file damaged after the export is caught: cut short, our reader
// refuses it (inspect exits 2, smoke fails); its weights overwritten, the real runner's
// reply is no longer the model's and smoke fails.
func TestCorruptedPTE(t *testing.T) {
	t.Parallel()
	e := copyExport(t, export(t, "xnnpack", "llama3.2", replyA, 1))
	require.Len(t, e.report.Files, 1)
	path := filepath.Join(e.out, e.report.Files[0].Path)
	good, err := os.ReadFile(path)
	require.NoError(t, err)
	p, err := pte.OpenFile(path)
	require.NoError(t, err)
	base := p.SegmentBase()
	require.Positive(t, base, "the real file has segments")

	t.Run("cut short", func(t *testing.T) {
		require.NoError(t, os.WriteFile(path, good[:len(good)*2/3], 0o644))
		code, _, stderr := exeExpo(t, "inspect", path)
		assert.Equal(t, 2, code)
		assert.Contains(t, stderr, filepath.Base(path))
		code, _, _ = exeExpo(t, "smoke", e.out, "--backend", "xnnpack", "--source", e.model, "--python", python(t))
		assert.Equal(t, 2, code, "smoke passes a truncated file")
	})
	t.Run("weights overwritten", func(t *testing.T) {
		bad := append([]byte{}, good...)
		for i := base + 4096; i < int64(len(bad)); i += 7 {
			bad[i] ^= 0x5a
		}
		require.NoError(t, os.WriteFile(path, bad, 0o644))
		code, stdout, stderr := exeExpo(t, "smoke", e.out, "--backend", "xnnpack", "--source", e.model, "--python", python(t))
		assert.Equal(t, 2, code, "smoke passes a file whose weights are damaged\n%s\n%s", stdout, lastLines(stderr, 10))
		r := readReport(t, e)
		if assert.NotNil(t, r.Smoke) {
			assert.False(t, r.Smoke.Passed)
			assert.NotContains(t, r.Smoke.Reply, "Paris", "the damaged file still answers as the model")
		}
	})
}

// exportCall is an export's command line and folders, not yet run.
type exportCall struct {
	args     []string
	out, dir string
}

func exportArgs(t *testing.T, backend, family, reply string, seed int, extra ...string) exportCall {
	t.Helper()
	f, err := tinymodel.Lookup(family)
	require.NoError(t, err)
	out, work := filepath.Join(t.TempDir(), "out"), filepath.Join(t.TempDir(), "work")
	return exportCall{out: out, dir: work, args: append([]string{"export", "--backend", backend, tiny(t, family, reply, seed),
		"--id", f.ID, "--context", window, "--out", out, "--work", work, "--python", python(t)}, extra...)}
}
