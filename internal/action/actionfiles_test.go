package action

import (
	"bytes"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/experimentalmachines/exe-expo/internal/report"
	"github.com/experimentalmachines/exe-expo/internal/result"
	"github.com/experimentalmachines/exe-expo/internal/workflow"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"gopkg.in/yaml.v3"
)

// repoRoot is the repository this package's tests run in.
const repoRoot = "../.."

// actionYAML is an action.yml, decoded strictly: a misspelt key fails the test.
type actionYAML struct {
	Name        string                `yaml:"name"`
	Description string                `yaml:"description"`
	Author      string                `yaml:"author"`
	Branding    map[string]string     `yaml:"branding"`
	Inputs      map[string]inputYAML  `yaml:"inputs"`
	Outputs     map[string]outputYAML `yaml:"outputs"`
	Runs        struct {
		Using string     `yaml:"using"`
		Steps []stepYAML `yaml:"steps"`
	} `yaml:"runs"`
}

type inputYAML struct {
	Description string  `yaml:"description"`
	Required    *bool   `yaml:"required"`
	Default     *string `yaml:"default"`
}

type outputYAML struct {
	Description string `yaml:"description"`
	Value       string `yaml:"value"`
}

type stepYAML struct {
	Name  string            `yaml:"name"`
	ID    string            `yaml:"id"`
	If    string            `yaml:"if"`
	Uses  string            `yaml:"uses"`
	With  map[string]string `yaml:"with"`
	Shell string            `yaml:"shell"`
	Env   map[string]string `yaml:"env"`
	Run   string            `yaml:"run"`
}

func readAction(t *testing.T, path string) actionYAML {
	t.Helper()
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	var a actionYAML
	require.NoError(t, dec.Decode(&a), path)
	return a
}

// actionNames are the actions of this package, sorted.
func actionNames() []string {
	names := make([]string, 0, len(actionFuncs))
	for n := range actionFuncs {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// envName is the variable a composite step reads an input from: go-githubactions' GetInput
// upper-cases the id and keeps its hyphens.
func envName(input string) string { return "INPUT_" + strings.ToUpper(input) }

// checkInputs holds every input to a description and to being either required without a
// default or optional with one, so that actionlint can check a caller's `with:`.
func checkInputs(t *testing.T, path string, a actionYAML) {
	t.Helper()
	assert.NotEmpty(t, a.Name, "%s: name", path)
	assert.NotEmpty(t, a.Description, "%s: description", path)
	assert.Equal(t, "composite", a.Runs.Using, "%s: runs.using", path)
	for id, in := range a.Inputs {
		assert.NotEmpty(t, in.Description, "%s: input %s has no description", path, id)
		if assert.NotNil(t, in.Required, "%s: input %s does not say whether it is required", path, id) && *in.Required {
			assert.Nil(t, in.Default, "%s: required input %s has a default, so actionlint would not ask callers for it", path, id)
		} else {
			assert.NotNil(t, in.Default, "%s: optional input %s has no default", path, id)
		}
	}
	for id, out := range a.Outputs {
		assert.NotEmpty(t, out.Description, "%s: output %s has no description", path, id)
	}
}

// mainBuild and mainPath are how every action.yml builds the actions' one main from the
// action's checkout, and where it puts it.
const (
	mainBuild = `go build -C "$GITHUB_ACTION_PATH/../.." -o "$RUNNER_TEMP/exe-expo-actions/exe-expo-action" ./cmd/exe-expo-action`
	mainPath  = `"$RUNNER_TEMP/exe-expo-actions/exe-expo-action"`
)

// TestActionFiles holds each actions/<name>/action.yml to the layout its step needs: Go set
// up (not under act), the one main built from the action's checkout, and run with the
// action's name and every input in env as INPUT_<ID> and nothing else; every output is the
// run step's.
func TestActionFiles(t *testing.T) {
	for _, name := range actionNames() {
		t.Run(name, func(t *testing.T) {
			path := filepath.Join(repoRoot, "actions", name, "action.yml")
			a := readAction(t, path)
			checkInputs(t, path, a)
			require.Len(t, a.Runs.Steps, 3)
			setup, build, run := a.Runs.Steps[0], a.Runs.Steps[1], a.Runs.Steps[2]
			assert.Equal(t, "${{ !env.ACT }}", setup.If)
			assert.True(t, strings.HasPrefix(setup.Uses, "actions/setup-go@"), setup.Uses)
			assert.Equal(t, map[string]string{
				"go-version-file":       "${{ github.action_path }}/../../go.mod",
				"cache-dependency-path": "${{ github.action_path }}/../../go.sum",
			}, setup.With)
			assert.Equal(t, "bash", build.Shell)
			assert.Equal(t, mainBuild, build.Run)
			assert.Equal(t, "run", run.ID)
			assert.Equal(t, "bash", run.Shell)
			assert.Equal(t, mainPath+" "+name, run.Run)
			want := map[string]string{}
			for id := range a.Inputs {
				want[envName(id)] = "${{ inputs." + id + " }}"
			}
			assert.Equal(t, want, run.Env, "the run step's env must pass every input and only inputs")
			for id, out := range a.Outputs {
				assert.Equal(t, "${{ steps.run.outputs."+id+" }}", out.Value, "output %s", id)
			}
			assert.Contains(t, steps, name, "exe-expo-action has no step %s", name)
		})
	}
}

// succeed lays out a step of the named action in which everything works, with every input
// of inputs set, and returns the fake CLI that answers it.
func succeed(t *testing.T, name string, inputs map[string]inputYAML) (*step, *fakeCLI) {
	t.Helper()
	out := exportFolder(t, map[string]*report.Report{"xnnpack/export-report-2k.json": xnnReport("2k", nil, nil, nil)})
	values := map[string]string{}
	for id := range inputs {
		values[id] = "x"
	}
	for id, v := range map[string]string{
		"model-id": "org/M-1B", "backend": "mediatek", "window": "2048", "context": "2048", "contexts": "2048",
		"socs": "MT6991", "dry-run": "true", "release": "false", "requeue": "false", "out": out,
	} {
		if _, ok := inputs[id]; ok {
			values[id] = v
		}
	}
	fake := &fakeCLI{}
	switch name {
	case "size-window":
		fake.outputs = result.Outputs{Windows: []result.Window{{Window: 2048, Runner: "r", SwapGiB: 1}}, SoCs: []string{"MT6991"}}
	case "export":
		fake.outputs = result.Outputs{Files: []string{"mtk/x.pte"}, Report: "out/mtk/export-report-2k.json"}
	case "publish":
		fake.outputs = result.Outputs{Repo: "org/M-1B-executorch", URL: "https://huggingface.co/org/M-1B-executorch"}
	}
	return newStep(t, values), fake
}

// TestActionInputsAndOutputsMatchTheGo runs each action with every declared input set, as
// the composite step passes them: the Go reads exactly the declared inputs, and a success
// writes exactly the declared outputs.
func TestActionInputsAndOutputsMatchTheGo(t *testing.T) {
	for _, name := range actionNames() {
		t.Run(name, func(t *testing.T) {
			a := readAction(t, filepath.Join(repoRoot, "actions", name, "action.yml"))
			s, fake := succeed(t, name, a.Inputs)
			read := map[string]bool{}
			e := s.envWith(fake.run)
			env := s.env
			e.GH = githubactionsWith(&s.log, func(k string) string {
				if strings.HasPrefix(k, "INPUT_") {
					read[k] = true
				}
				return env[k]
			})
			require.Equal(t, 0, actionFuncs[name](e), s.log.String())
			declared := map[string]bool{}
			for id := range a.Inputs {
				declared[envName(id)] = true
			}
			assert.Equal(t, declared, read, "inputs declared in action.yml against inputs the Go reads")
			written := map[string]bool{}
			for id := range s.outputs(t) {
				written[id] = true
			}
			wantOut := map[string]bool{}
			for id := range a.Outputs {
				wantOut[id] = true
			}
			assert.Equal(t, wantOut, written, "outputs declared in action.yml against outputs the Go writes")
		})
	}
}

// usesPattern is a pinned `uses:` of a third-party action: owner/name@commit.
var usesPattern = regexp.MustCompile(`^([^@]+)@([0-9a-f]{40})$`)

// usesNodes are the `uses:` values anywhere in a YAML document.
func usesNodes(n *yaml.Node) []*yaml.Node {
	var out []*yaml.Node
	if n.Kind == yaml.MappingNode {
		for i := 0; i+1 < len(n.Content); i += 2 {
			if n.Content[i].Value == "uses" {
				out = append(out, n.Content[i+1])
			}
		}
	}
	for _, c := range n.Content {
		out = append(out, usesNodes(c)...)
	}
	return out
}

// TestActionsUsePinnedCommits: every `uses:` in action.yml and actions/**/action.yml is the
// commit workflows-src/pins.yaml gives, with its tag as the comment, since pins.yaml is the
// one place a pin is written.
func TestActionsUsePinnedCommits(t *testing.T) {
	data, err := os.ReadFile(filepath.Join(repoRoot, filepath.FromSlash(workflow.PinsFile)))
	require.NoError(t, err)
	pins, err := workflow.ParsePins(workflow.PinsFile, data)
	require.NoError(t, err)
	files, err := filepath.Glob(filepath.Join(repoRoot, "actions", "*", "action.yml"))
	require.NoError(t, err)
	files = append(files, filepath.Join(repoRoot, "action.yml"))
	count := 0
	for _, path := range files {
		data, err := os.ReadFile(path)
		require.NoError(t, err)
		var doc yaml.Node
		require.NoError(t, yaml.Unmarshal(data, &doc), path)
		for _, n := range usesNodes(&doc) {
			count++
			m := usesPattern.FindStringSubmatch(n.Value)
			if !assert.NotNil(t, m, "%s:%d: uses %q is not owner/action@<40-hex commit>", path, n.Line, n.Value) {
				continue
			}
			pin, ok := pins[m[1]]
			if !assert.True(t, ok, "%s:%d: %s has no pin in %s", path, n.Line, m[1], workflow.PinsFile) {
				continue
			}
			assert.Equal(t, pin.Commit, m[2], "%s:%d: %s", path, n.Line, m[1])
			assert.Equal(t, "# "+pin.Tag, n.LineComment, "%s:%d: %s's tag comment", path, n.Line, m[1])
		}
	}
	assert.GreaterOrEqual(t, count, len(actionFuncs)+1, "every action sets up Go with a pinned setup-go")
}
