package workflow

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/experimentalmachines/exe-expo/internal/config"
)

// TestTemplatesDoNotRederive: the workflows take their matrix and verdict from the
// repository's size-window action and their reasons from the commands' results
// (docs/results.md), so no template reads the plan's JSON with jq or scrapes a reason out
// of a log.
func TestTemplatesDoNotRederive(t *testing.T) {
	forbidden := map[string]*regexp.Regexp{
		"a jq filter over the plan's JSON": regexp.MustCompile(`\.backends|\.verdict|\.windows\[|select\(\.skip`),
		"exe-expo plan run in shell":       regexp.MustCompile(`exe-expo plan\b`),
		"a reason scraped from a log":      regexp.MustCompile(`tail -n|grep -v '\^::'|\| *grep \.|export\.log`),
		"a skip file the workflow builds":  regexp.MustCompile(`skipped-\$`),
	}
	paths, err := filepath.Glob(filepath.Join(root, "workflows-src", "*.tmpl"))
	require.NoError(t, err)
	require.NotEmpty(t, paths)
	for _, p := range paths {
		data, err := os.ReadFile(p)
		require.NoError(t, err)
		for what, re := range forbidden {
			assert.Nil(t, re.Find(data), "%s holds %s: %q", filepath.Base(p), what, re.Find(data))
		}
	}
}

// TestPlanJobUsesSizeWindow: every export workflow plans through ./actions/size-window,
// handing it the workflow's inputs, and builds its matrix from that action's outputs.
func TestPlanJobUsesSizeWindow(t *testing.T) {
	for _, tc := range []struct {
		file  string
		chips bool
	}{
		{"export-xnnpack.yml", false}, {"export-vulkan.yml", false}, {"export-qnn.yml", true}, {"export-mediatek.yml", true},
	} {
		t.Run(tc.file, func(t *testing.T) {
			data, err := os.ReadFile(filepath.Join(root, OutputDir, tc.file))
			require.NoError(t, err)
			jobs := decode(t, data).jobs()
			st := step(t, jobs["plan"], "Plan the windows")
			assert.Equal(t, "./actions/size-window", st["uses"])
			with, _ := st["with"].(map[string]any)
			want := []string{"model-id", "revision", "backend", "contexts", "hf-token"}
			if tc.chips {
				want = append(want, "socs")
			}
			var got []string
			for k := range with {
				got = append(got, k)
			}
			assert.ElementsMatch(t, want, got)
			outputs, _ := jobs["plan"]["outputs"].(map[string]any)
			assert.Equal(t, "${{ steps.plan.outputs.windows }}", outputs["windows"])
			assert.Equal(t, "${{ steps.plan.outputs.skipped }}", outputs["skipped"])
		})
	}
}

// TestJobLimitIsTheWorkflows: plan skips a window whose fitted export time is over
// export.job_limit_minutes, so every job that exports (the matrix legs, the fp32 fallback
// legs, the solve that precedes them) must time out at that same number and no other.
func TestJobLimitIsTheWorkflows(t *testing.T) {
	cfg, err := config.Default()
	require.NoError(t, err)
	for _, tc := range []struct {
		file string
		jobs []string
	}{
		{"export-xnnpack.yml", []string{"solve", "export", "fallback"}},
		{"export-vulkan.yml", []string{"export"}},
		{"export-qnn.yml", []string{"export"}},
		{"export-mediatek.yml", []string{"export"}},
		{"probe-runner.yml", []string{"calibrate"}},
		{"audit-published.yml", []string{"audit"}},
	} {
		t.Run(tc.file, func(t *testing.T) {
			data, err := os.ReadFile(filepath.Join(root, OutputDir, tc.file))
			require.NoError(t, err)
			jobs := decode(t, data).jobs()
			for _, id := range tc.jobs {
				require.Contains(t, jobs, id)
				assert.EqualValues(t, cfg.Export.JobLimitMinutes, jobs[id]["timeout-minutes"], "%s: job %s", tc.file, id)
			}
		})
	}
}

// TestTemplatesOnlyWire: what a check step hands on (the files, every skipped window, the
// fp32 fallback's windows, the reports publish reads) is derived by `exe-expo handoff`, a
// Go command with tests, so the templates read at most three named fields with jq and
// filter, merge or pick nothing in shell.
func TestTemplatesOnlyWire(t *testing.T) {
	jq := regexp.MustCompile(`\bjq\b[^\n]*`)
	read := regexp.MustCompile(`^jq (-[a-z] )*\.[a-z_]+(\.[a-z_]+)* "[^"]+"$`)
	paths, err := filepath.Glob(filepath.Join(root, "workflows-src", "*.tmpl"))
	require.NoError(t, err)
	reads := 0
	for _, p := range paths {
		data, err := os.ReadFile(p)
		require.NoError(t, err)
		for _, use := range jq.FindAll(data, -1) {
			assert.Regexp(t, read, string(use), "%s: jq may only read a named field", filepath.Base(p))
			reads++
		}
	}
	assert.LessOrEqual(t, reads, 3, "jq reads in the templates")
	export, err := os.ReadFile(filepath.Join(root, "workflows-src", "export.yml.tmpl"))
	require.NoError(t, err)
	assert.Equal(t, 2, strings.Count(string(export), "exe-expo handoff out"), "verify and the fp32 fallback's check hand on through exe-expo handoff")
}
