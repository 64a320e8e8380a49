package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/experimentalmachines/exe-expo/internal/result"
)

// writeCheck leaves a check's result where a workflow's step leaves it.
func writeCheck(t *testing.T, dir, command string, code int, o result.Outputs) string {
	t.Helper()
	r := result.New(command)
	r.Outputs = o
	r.Finish(code)
	path := filepath.Join(dir, command+".json")
	require.NoError(t, result.Write(path, r))
	return path
}

// githubOutput reads the name<<DELIMITER blocks go-githubactions writes to $GITHUB_OUTPUT.
func githubOutput(t *testing.T, path string) map[string]string {
	t.Helper()
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	out := map[string]string{}
	lines := strings.Split(string(data), "\n")
	for i := 0; i < len(lines); i++ {
		name, delim, ok := strings.Cut(lines[i], "<<")
		if !ok {
			continue
		}
		require.Less(t, i+2, len(lines), "the output %s has no value", name)
		require.Equal(t, delim, lines[i+2], "the output %s is one line", name)
		out[name] = lines[i+1]
		i += 2
	}
	return out
}

// TestHandoff runs the command a workflow's check step ends with, on the results smoke and
// the gate wrote: the outputs it sets, the reports it keeps, the gate's result it keeps for
// the fp32 fallback, and its exit code.
func TestHandoff(t *testing.T) {
	t.Setenv("GITHUB_STEP_SUMMARY", "")
	out := t.TempDir()
	for _, p := range []string{"xnnpack/a-2k.pte", "xnnpack/export-report-2k.json", "xnnpack/a-4k.pte", "xnnpack/export-report-4k.json"} {
		require.NoError(t, os.MkdirAll(filepath.Dir(filepath.Join(out, p)), 0o755))
		require.NoError(t, os.WriteFile(filepath.Join(out, p), []byte(p), 0o644))
	}
	exported := []result.Skipped{{Window: 16384, Reason: "the runner ran out of disk"}}
	passed := result.Outputs{Skipped: exported, Files: []string{"xnnpack/a-2k.pte", "xnnpack/a-4k.pte"},
		Reports: []string{"xnnpack/export-report-2k.json", "xnnpack/export-report-4k.json"}}
	refused := result.Outputs{Skipped: exported, Files: []string{"xnnpack/a-2k.pte"}, Reports: []string{"xnnpack/export-report-2k.json"},
		Failed: []result.Failed{{Window: 4096, File: "xnnpack/a-4k.pte", QMode: "8da4w-gptq", Reason: "3 of 12 rows agree"}}}
	for _, tc := range []struct {
		name      string
		gateCode  int
		gate      result.Outputs
		qmode     string
		code      int
		outputs   map[string]string
		kept      []string
		fallsBack bool
	}{
		{"every file passes", 0, passed, "", ExitOK, map[string]string{
			"files": `["xnnpack/a-2k.pte","xnnpack/a-4k.pte"]`, "checked": `["xnnpack/a-2k.pte","xnnpack/a-4k.pte"]`, "failed": `[]`,
			"skipped": `[{"window":32768,"reason":"no runner"},{"window":16384,"reason":"the runner ran out of disk"}]`,
		}, []string{"2k", "4k"}, false},
		{"the gate refuses 4k: the fallback rebuilds it", ExitFailed, refused, "", ExitOK, map[string]string{
			"files": `["xnnpack/a-2k.pte"]`, "checked": `["xnnpack/a-2k.pte"]`, "failed": `[4096]`,
			"skipped": `[{"window":32768,"reason":"no runner"},{"window":16384,"reason":"the runner ran out of disk"}]`,
		}, []string{"2k"}, true},
		{"the gate refuses an fp32 build", ExitFailed, refused, "fp32", ExitFailed, map[string]string{
			"files": `[]`, "checked": `[]`, "failed": `[]`,
			"skipped": `[{"window":32768,"reason":"no runner"},{"window":16384,"reason":"the runner ran out of disk"}]`,
		}, nil, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			temp, work := t.TempDir(), t.TempDir()
			ghOut := filepath.Join(temp, "github_output")
			t.Setenv("GITHUB_OUTPUT", ghOut)
			smoke := writeCheck(t, temp, "smoke", 0, passed)
			gate := writeCheck(t, temp, "gate", tc.gateCode, tc.gate)
			resultPath := filepath.Join(temp, "handoff.json")
			checked, fallback := filepath.Join(work, "checked"), filepath.Join(work, "gate-result")
			code, stdout, errs := run(t, "handoff", out, "--check", smoke, "--check", gate, "--status", strconv.Itoa(tc.gateCode),
				"--skipped", `[{"window":32768,"reason":"no runner"}]`, "--checked", checked, "--fallback", fallback, "--qmode", tc.qmode,
				"--result", resultPath)
			require.Equal(t, tc.code, code, errs)
			assert.Empty(t, cmp.Diff(tc.outputs, githubOutput(t, ghOut)))
			assert.Contains(t, stdout, "skipped window 16384: the runner ran out of disk")
			for _, w := range []string{"2k", "4k"} {
				rel := filepath.Join("xnnpack", "export-report-"+w+".json")
				data, err := os.ReadFile(filepath.Join(checked, rel))
				if !assert.Equal(t, slices.Contains(tc.kept, w), err == nil, "the %s report kept for publish: %v", w, err) || err != nil {
					continue
				}
				assert.Equal(t, rel, string(data), "the report is copied whole")
			}
			kept, err := result.ReadChecks(filepath.Join(fallback, "gate.json"))
			assert.Equal(t, tc.fallsBack, err == nil, "the gate's result kept for the fp32 fallback: %v", err)
			if err == nil {
				assert.Empty(t, cmp.Diff(refused.Failed, kept.Outputs.Failed))
			}
			r, err := result.Read(resultPath)
			require.NoError(t, err)
			var files []string
			require.NoError(t, json.Unmarshal([]byte(tc.outputs["files"]), &files))
			assert.Equal(t, files, r.Outputs.Files, "the result records what the outputs say")
		})
	}
}

// TestHandoffRefuses: a check that stopped before it wrote its result, a list that is not
// JSON and a report outside the export folder each fail the step with a sentence that
// names them; the outputs are still set.
func TestHandoffRefuses(t *testing.T) {
	t.Setenv("GITHUB_STEP_SUMMARY", "")
	out, temp := t.TempDir(), t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(out, "a.pte"), []byte("x"), 0o644))
	smoke := writeCheck(t, temp, "smoke", 0, result.Outputs{Files: []string{"a.pte"}})
	escape := writeCheck(t, t.TempDir(), "smoke", 0, result.Outputs{Files: []string{"a.pte"}, Reports: []string{"../../etc/passwd"}})
	export := writeCheck(t, t.TempDir(), "export", 0, result.Outputs{})
	for _, tc := range []struct {
		name string
		args []string
		errs string
	}{
		{"the gate died before its result", []string{"--check", smoke, "--check", filepath.Join(temp, "gate.json"), "--status", "137"},
			"exited with code 137, and its result (exe-expo smoke) says 0: it stopped before it wrote one"},
		{"files and no check", []string{"--check", filepath.Join(temp, "none.json")}, "the export folder holds files, and no check's result was given"},
		{"a skipped list that is not JSON", []string{"--check", smoke, "--skipped", "32768"}, "--skipped is not a JSON list"},
		{"a report outside OUT", []string{"--check", escape}, `a check listed the report "../../etc/passwd", which is not a path inside`},
		{"another command's result", []string{"--check", export}, "is the result of exe-expo export, not of smoke or gate"},
		{"no OUT", []string{"--check", smoke, "--status", "0"}, "give exactly one OUT folder"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ghOut := filepath.Join(t.TempDir(), "github_output")
			t.Setenv("GITHUB_OUTPUT", ghOut)
			args := append([]string{"handoff"}, tc.args...)
			if tc.name != "no OUT" {
				args = append(args, out, "--checked", filepath.Join(t.TempDir(), "checked"))
			}
			code, _, errs := run(t, args...)
			assert.Equal(t, ExitFailed, code)
			assert.Contains(t, errs, tc.errs)
			if strings.Contains(tc.name, "died") {
				assert.Equal(t, "[]", githubOutput(t, ghOut)["files"], "the outputs are set even so")
			}
		})
	}
}
