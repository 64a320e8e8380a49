package workflow

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"gopkg.in/yaml.v3"

	"github.com/experimentalmachines/exe-expo/internal/cli"
)

// TestMain runs the test binary as the real exe-expo when a step's stand-in hands it a
// command (EXE_EXPO_WORKFLOW_CLI=1): the check steps' handoff is tested for real.
func TestMain(m *testing.M) {
	if os.Getenv("EXE_EXPO_WORKFLOW_CLI") == "1" {
		os.Exit(cli.Main(context.Background(), os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
	}
	os.Exit(m.Run())
}

// root is the repository this package sits in: its config/, workflows-src/ and .github/ are
// the generator's real input and output.
const root = "../.."

// everyCommand stands for a CLI that has every command a template may run, so the jobs and
// workflows waiting for a command are rendered and checked too.
func everyCommand(string) bool { return true }

// sourceOf loads the repository's source; edit, when given, rewrites the text of a file
// under config/ or workflows-src/ before it is parsed ("config/pipeline.yaml" → new text).
func sourceOf(t *testing.T, commands func(string) bool, edit map[string]func(string) string) Source {
	t.Helper()
	dir := t.TempDir()
	for _, sub := range []string{"config", TemplateDir} {
		copyDir(t, filepath.Join(root, sub), filepath.Join(dir, sub))
	}
	for name, change := range edit {
		p := filepath.Join(dir, filepath.FromSlash(name))
		data, err := os.ReadFile(p)
		require.NoError(t, err)
		changed := change(string(data))
		require.NotEqual(t, string(data), changed, "the edit of %s changed nothing", name)
		require.NoError(t, os.WriteFile(p, []byte(changed), 0o644))
	}
	src, err := Load(dir, commands)
	require.NoError(t, err)
	return src
}

// rendered renders src into a map from path to content.
func rendered(t *testing.T, src Source) map[string][]byte {
	t.Helper()
	files, err := Render(src)
	require.NoError(t, err)
	out := map[string][]byte{}
	for _, f := range files {
		out[f.Path] = f.Data
	}
	return out
}

// workflows is the rendered workflows alone (not actionlint's configuration).
func workflows(files map[string][]byte) map[string][]byte {
	out := map[string][]byte{}
	for p, data := range files {
		if strings.HasPrefix(p, OutputDir+"/") {
			out[p] = data
		}
	}
	return out
}

func copyDir(t *testing.T, from, to string) {
	t.Helper()
	require.NoError(t, os.CopyFS(to, os.DirFS(from)))
}

// doc is a workflow decoded as plain maps, for reading fields by path.
type doc map[string]any

func decode(t *testing.T, data []byte) doc {
	t.Helper()
	// A plain map, not a doc: yaml.v3 would decode nested maps as the named type too.
	var m map[string]any
	require.NoError(t, yaml.Unmarshal(data, &m))
	return doc(m)
}

// at reads a field by its keys: at("jobs", "plan", "runs-on").
func (d doc) at(keys ...string) any {
	var cur any = map[string]any(d)
	for _, k := range keys {
		m, ok := cur.(map[string]any)
		if !ok {
			return nil
		}
		cur = m[k]
	}
	return cur
}

// jobs lists a workflow's jobs by id.
func (d doc) jobs() map[string]map[string]any {
	out := map[string]map[string]any{}
	jobs, _ := d["jobs"].(map[string]any)
	for id, j := range jobs {
		out[id], _ = j.(map[string]any)
	}
	return out
}

// steps lists a job's steps.
func steps(job map[string]any) []map[string]any {
	var out []map[string]any
	list, _ := job["steps"].([]any)
	for _, s := range list {
		m, _ := s.(map[string]any)
		out = append(out, m)
	}
	return out
}

// step finds the step called name in a job.
func step(t *testing.T, job map[string]any, name string) map[string]any {
	t.Helper()
	for _, s := range steps(job) {
		if s["name"] == name {
			return s
		}
	}
	require.Failf(t, "no such step", "the job has no step %q", name)
	return nil
}

// needTool returns the path of a tool the tests run, skipping without it except under
// EXE_EXPO_CI=1, where .ci/run has installed it and its absence is a failure.
func needTool(t *testing.T, name string) string {
	t.Helper()
	p, err := exec.LookPath(name)
	if err != nil {
		if os.Getenv("EXE_EXPO_CI") == "1" {
			t.Fatalf("EXE_EXPO_CI=1 and %s is missing (.ci/run installs it with apt)", name)
		}
		t.Skipf("%s is not installed", name)
	}
	return p
}
