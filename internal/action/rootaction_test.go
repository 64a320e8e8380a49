package action

import (
	"bytes"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

var (
	binaryRun = regexp.MustCompile(`^"\$RUNNER_TEMP/exe-expo-actions/exe-expo-action" ([a-z-]+)( [a-z]+)?$`)
	inputRef  = regexp.MustCompile(`inputs\.([a-z-]+)`)
	outputRef = regexp.MustCompile(`steps\.([a-z-]+)\.outputs\.([a-z-]+)`)
)

// rootStep is a step of the root action that runs the step of actions/<name>.
type rootStep struct {
	step   stepYAML
	name   string
	action actionYAML
	// plain: the step runs with no argument after its name, so its outputs are the action's.
	plain bool
}

// TestRootAction holds the root action.yml to the actions it strings together: it builds
// the one main it runs every step with, gives each step only inputs that action declares
// (and every one it requires), reads only inputs the root declares and outputs of earlier
// steps that exist.
func TestRootAction(t *testing.T) {
	path := filepath.Join(repoRoot, "action.yml")
	root := readAction(t, path)
	checkInputs(t, path, root)
	require.GreaterOrEqual(t, len(root.Runs.Steps), 3)
	setup := root.Runs.Steps[0]
	assert.Equal(t, "${{ !env.ACT }}", setup.If)
	assert.Equal(t, "${{ github.action_path }}/go.mod", setup.With["go-version-file"])
	var build string
	earlier := map[string]rootStep{}
	for _, st := range root.Runs.Steps[1:] {
		checkRefs(t, root, earlier, st)
		if strings.HasPrefix(st.Run, "go build") {
			build = st.Run
			continue
		}
		m := binaryRun.FindStringSubmatch(st.Run)
		if m == nil {
			assert.NotContains(t, st.Run, "exe-expo-actions/", "step %q runs a main other than exe-expo-action STEP", st.Name)
			continue
		}
		rs := rootStep{step: st, name: m[1], plain: m[2] == "",
			action: readAction(t, filepath.Join(repoRoot, "actions", m[1], "action.yml"))}
		assert.Equal(t, `go build -C "$GITHUB_ACTION_PATH" -o "$RUNNER_TEMP/exe-expo-actions/exe-expo-action" ./cmd/exe-expo-action`, build,
			"the build step does not build the main the root runs %s with", rs.name)
		assert.Contains(t, steps, rs.name, "exe-expo-action has no step %s", rs.name)
		checkGiven(t, rs)
		if st.ID != "" {
			earlier[st.ID] = rs
		}
	}
	require.NotEmpty(t, earlier)
	for id, out := range root.Outputs {
		assert.Regexp(t, `steps\.[a-z]+\.outputs\.`+id+`\b`, out.Value, "output %s", id)
		checkRefs(t, root, earlier, stepYAML{Name: "output " + id, Run: out.Value})
	}
}

// checkGiven: a step gives its action only inputs it declares, and each it requires.
func checkGiven(t *testing.T, rs rootStep) {
	t.Helper()
	given := map[string]bool{}
	for k := range rs.step.Env {
		id, ok := strings.CutPrefix(k, "INPUT_")
		if !ok {
			continue
		}
		id = strings.ToLower(id)
		_, declared := rs.action.Inputs[id]
		assert.True(t, declared, "step %q passes %s, which actions/%s does not declare", rs.step.Name, k, rs.name)
		given[id] = true
	}
	for id, in := range rs.action.Inputs {
		if *in.Required {
			assert.True(t, given[id], "step %q does not give actions/%s its required input %s", rs.step.Name, rs.name, id)
		}
	}
}

// checkRefs: every inputs.X a step reads is a root input, and every steps.S.outputs.O is
// an earlier step's output that its action declares (or, for a step run with an
// argument, at least an earlier step).
func checkRefs(t *testing.T, root actionYAML, earlier map[string]rootStep, st stepYAML) {
	t.Helper()
	texts := []string{st.If, st.Run}
	for _, v := range st.Env {
		texts = append(texts, v)
	}
	for _, v := range st.With {
		texts = append(texts, v)
	}
	for _, text := range texts {
		for _, m := range inputRef.FindAllStringSubmatch(text, -1) {
			_, ok := root.Inputs[m[1]]
			assert.True(t, ok, "step %q reads input %s, which action.yml does not declare", st.Name, m[1])
		}
		for _, m := range outputRef.FindAllStringSubmatch(text, -1) {
			rs, ok := earlier[m[1]]
			if !assert.True(t, ok, "step %q reads step %s, which does not run before it", st.Name, m[1]) || !rs.plain {
				continue
			}
			_, ok = rs.action.Outputs[m[2]]
			assert.True(t, ok, "step %q reads output %s of step %s, which actions/%s does not declare", st.Name, m[2], m[1], rs.name)
		}
	}
}

// TestRootActionRefusesANonBoolean runs the root action's input check as the runner would:
// publish must be true or false, so that `publish: yes` fails instead of not publishing.
func TestRootActionRefusesANonBoolean(t *testing.T) {
	bash, err := exec.LookPath("bash")
	require.NoError(t, err)
	root := readAction(t, filepath.Join(repoRoot, "action.yml"))
	var script string
	for _, st := range root.Runs.Steps {
		if st.Env["PUBLISH"] == "${{ inputs.publish }}" {
			script = st.Run
		}
	}
	require.NotEmpty(t, script, "no step checks input publish")
	for _, tc := range []struct {
		value string
		code  int
		out   string
	}{
		{"true", 0, ""},
		{"false", 0, ""},
		{"yes", 2, "::error title=exe-expo::input publish is \"yes\"; give true or false\n"},
		{"", 2, "::error title=exe-expo::input publish is \"\"; give true or false\n"},
	} {
		cmd := exec.Command(bash, "-e", "-c", script)
		cmd.Env = []string{"PUBLISH=" + tc.value}
		var out bytes.Buffer
		cmd.Stdout = &out
		err := cmd.Run()
		code := 0
		if ee, ok := err.(*exec.ExitError); ok {
			code = ee.ExitCode()
		} else {
			require.NoError(t, err)
		}
		assert.Equal(t, tc.code, code, "publish=%q", tc.value)
		assert.Equal(t, tc.out, out.String(), "publish=%q", tc.value)
	}
}
