package realtool

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/experimentalmachines/exe-expo/internal/report"
)

// smokeRun runs exe-expo smoke on an export's folder (the real TextLLMRunner) and requires
// the taught reply back.
func smokeRun(t *testing.T, e exported) {
	t.Helper()
	code, out, errOut := exeExpo(t, "smoke", e.out, "--backend", e.report.Backend, "--source", e.model, "--python", python(t))
	paths, err := report.Find(e.out, e.report.Backend, "")
	require.NoError(t, err)
	r, err := report.Read(paths[0])
	require.NoError(t, err)
	require.NotNil(t, r.Smoke, "smoke wrote no verdict (exit %d)\n%s\n%s", code, out, lastLines(errOut, 20))
	assert.Empty(t, r.Smoke.TemplateError, "the family's real chat template rendered the smoke prompt")
	assert.Contains(t, r.Smoke.Reply, "Paris", "the runner's reply on %q", r.Smoke.Prompt)
	assert.True(t, r.Smoke.Passed, "smoke verdict: %v", r.Smoke.Problems)
	require.NotNil(t, r.Smoke.Stats, "the runner's stats")
	assert.Greater(t, r.Smoke.Stats.PromptTokens, 0)
	assert.Equal(t, 0, code, "exe-expo smoke\n%s\n%s", out, lastLines(errOut, 20))
	checkSpeed(t, t.Name(), r)
}

var (
	sizesMu sync.Mutex
	sizes   = map[string][2]int64{}
)

// recordSize keeps each real file's size beside its estimate; REALTOOL_SIZES names a file
// that receives the table (docs/research/realtool.md quotes it).
func recordSize(t *testing.T, name string, actual, estimate int64) {
	sizesMu.Lock()
	defer sizesMu.Unlock()
	sizes[name] = [2]int64{actual, estimate}
	path := os.Getenv("REALTOOL_SIZES")
	if path == "" {
		return
	}
	var names []string
	for n := range sizes {
		names = append(names, n)
	}
	sort.Strings(names)
	var b strings.Builder
	b.WriteString("| file | actual bytes | estimated bytes | off |\n|---|---:|---:|---:|\n")
	for _, n := range names {
		s := sizes[n]
		fmt.Fprintf(&b, "| %s | %d | %d | %+.1f%% |\n", n, s[0], s[1], 100*float64(s[0]-s[1])/float64(s[1]))
	}
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		t.Errorf("write %s: %v", path, err)
	}
}

// readJSON decodes a JSON file into v.
func readJSON(t *testing.T, path string, v any) {
	t.Helper()
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	require.NoError(t, json.Unmarshal(b, v), "%s", filepath.Base(path))
}
