package action

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestStepsAreTheActions: exe-expo-action knows one step per folder of actions/, by the
// folder's name, and each action.yml builds that one main and runs only its own step.
func TestStepsAreTheActions(t *testing.T) {
	files, err := filepath.Glob(filepath.Join(repoRoot, "actions", "*", "action.yml"))
	require.NoError(t, err)
	var dirs []string
	for _, f := range files {
		dirs = append(dirs, filepath.Base(filepath.Dir(f)))
	}
	sort.Strings(dirs)
	assert.Equal(t, dirs, StepNames())
	for name := range actionFuncs {
		assert.Contains(t, steps, name)
	}
	for _, name := range dirs {
		a := readAction(t, filepath.Join(repoRoot, "actions", name, "action.yml"))
		builds, runs := 0, 0
		for _, st := range a.Runs.Steps {
			switch {
			case strings.HasPrefix(st.Run, "go build"):
				builds++
				assert.Equal(t, mainBuild, st.Run, "actions/%s step %q", name, st.Name)
			case strings.Contains(st.Run, "exe-expo-actions/"):
				runs++
				assert.Regexp(t, `^`+regexpQuote(mainPath+" "+name)+`( [a-z]+)?$`, st.Run, "actions/%s step %q", name, st.Name)
			}
		}
		assert.Equal(t, 1, builds, "actions/%s builds the main once", name)
		assert.NotZero(t, runs, "actions/%s runs no step", name)
	}
}

func regexpQuote(s string) string {
	r := strings.NewReplacer(`$`, `\$`, `.`, `\.`, `"`, `"`)
	return r.Replace(s)
}

// stdoutOf runs f with os.Stdout, where a step's Env writes its workflow commands, sent to
// a file, and returns what f wrote there.
func stdoutOf(t *testing.T, f func()) string {
	t.Helper()
	file, err := os.Create(filepath.Join(t.TempDir(), "stdout"))
	require.NoError(t, err)
	old := os.Stdout
	os.Stdout = file
	defer func() { os.Stdout = old }()
	f()
	require.NoError(t, file.Close())
	b, err := os.ReadFile(file.Name())
	require.NoError(t, err)
	return string(b)
}

// TestDispatchRefuses: a missing or unknown step, or words after a step that takes none,
// fail the step with exit 2 and an error annotation that says what to give.
func TestDispatchRefuses(t *testing.T) {
	var out strings.Builder
	assert.Equal(t, 2, Dispatch(context.Background(), nil, &out))
	assert.Equal(t, "::error title=exe-expo-action::give the step to run as the first argument: one of export, gate, publish, "+
		"setup-export, size-window, smoke, watch (exe-expo-action STEP [ARGS])\n", out.String())

	out.Reset()
	assert.Equal(t, 2, Dispatch(context.Background(), []string{"plan"}, &out))
	assert.Contains(t, out.String(), `::error title=exe-expo-action::unknown step "plan": one of export, gate,`)

	got := stdoutOf(t, func() {
		assert.Equal(t, 2, Dispatch(context.Background(), []string{"export", "plan"}, io.Discard))
	})
	assert.Equal(t, "::error title=exe-expo-action::this step takes its inputs from INPUT_ variables and no arguments, not \"plan\"\n", got)
}
