package setup

import (
	"bytes"
	"context"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/sethvargo/go-githubactions"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"gopkg.in/yaml.v3"
)

// step is one run of the action's main: its inputs, the runner's command files and what
// it printed.
type step struct {
	vars  map[string]string
	log   bytes.Buffer
	files map[string]string // GITHUB_OUTPUT, GITHUB_ENV, GITHUB_PATH, GITHUB_STEP_SUMMARY → path
}

func newStep(t *testing.T, r runner, inputs map[string]string) *step {
	t.Helper()
	s := &step{vars: map[string]string{"RUNNER_TEMP": r.temp, "HOME": r.home, "EXE_EXPO_ROOT": repoRoot(t),
		"RUNNER_OS": "Linux", "RUNNER_ARCH": "X64"}, files: map[string]string{}}
	dir := t.TempDir()
	for _, f := range []string{"GITHUB_OUTPUT", "GITHUB_ENV", "GITHUB_PATH", "GITHUB_STEP_SUMMARY"} {
		s.files[f] = filepath.Join(dir, f)
		require.NoError(t, os.WriteFile(s.files[f], nil, 0o644))
		s.vars[f] = s.files[f]
	}
	for k, v := range inputs {
		s.vars["INPUT_"+strings.ToUpper(k)] = v
	}
	return s
}

func (s *step) action() *githubactions.Action {
	return githubactions.New(githubactions.WithWriter(&s.log), githubactions.WithGetenv(func(k string) string { return s.vars[k] }))
}

func (s *step) read(t *testing.T, file string) string {
	t.Helper()
	data, err := os.ReadFile(s.files[file])
	require.NoError(t, err)
	return string(data)
}

// commands is the runner's file-command format go-githubactions writes: each value in its
// fixed heredoc delimiter.
func commands(kv ...[2]string) string {
	const delimiter = "_GitHubActionsFileCommandDelimeter_"
	var b strings.Builder
	for _, p := range kv {
		b.WriteString(p[0] + "<<" + delimiter + "\n" + p[1] + "\n" + delimiter + "\n")
	}
	return b.String()
}

// TestActionPlan: the plan run writes only what setup-python and the actions cache read.
func TestActionPlan(t *testing.T) {
	r := newRunner(t)
	for _, tc := range []struct {
		backend string
		want    string
	}{
		{"mediatek", commands([2]string{"python-versions", "3.10\n3.11"}, [2]string{"cache-paths", r.home + "/.cache/exe-expo/sdk"},
			[2]string{"cache-key", "exe-expo-sdk-Linux-X64-neuropilot-sdk-42155c3b25e9f9af"})},
		{"xnnpack", commands([2]string{"python-versions", "3.11"}, [2]string{"cache-paths", ""}, [2]string{"cache-key", ""})},
	} {
		t.Run(tc.backend, func(t *testing.T) {
			s := newStep(t, r, map[string]string{"backend": tc.backend})
			h := &fakeHost{vars: s.vars}
			require.Equal(t, 0, Action(context.Background(), s.action(), []string{"plan"}, h.env()), s.log.String())
			assert.Equal(t, tc.want, s.read(t, "GITHUB_OUTPUT"))
			assert.Empty(t, h.cmds, "the plan runs nothing")
			assert.Empty(t, s.read(t, "GITHUB_ENV"))
		})
	}
}

// TestActionOutputs: the outputs action.yml maps, the variables later steps read, exe-expo
// on PATH and a step summary, in the runner's file formats.
func TestActionOutputs(t *testing.T) {
	r := newRunner(t)
	s := newStep(t, r, map[string]string{"backend": "xnnpack", "python-env": "false", "free-disk": "false", "work-root": r.data})
	h := &fakeHost{vars: s.vars}
	require.Equal(t, 0, Action(context.Background(), s.action(), nil, h.env()), s.log.String())
	work := filepath.Join(r.data, "exe-expo-work")
	bin := filepath.Join(r.temp, "exe-expo-bin")
	assert.Equal(t, commands(
		[2]string{"work-dir", work}, [2]string{"hf-home", work + "/hf-home"}, [2]string{"bin", bin},
		[2]string{"python", ""}, [2]string{"mtk-python", ""}, [2]string{"qnn-sdk-root", ""}, [2]string{"neuropilot-dir", ""},
		[2]string{"swap-added", "false"},
	), s.read(t, "GITHUB_OUTPUT"))
	assert.Equal(t, commands([2]string{"WORK_DIR", work}, [2]string{"HF_HOME", work + "/hf-home"}), s.read(t, "GITHUB_ENV"))
	assert.Equal(t, bin+"\n", s.read(t, "GITHUB_PATH"))
	assert.Contains(t, s.read(t, "GITHUB_STEP_SUMMARY"), "### setup-export: xnnpack\n")
	assert.Equal(t, []string{"go build -o " + bin + "/exe-expo ./cmd/exe-expo"}, h.argv())
}

// TestActionFailures: a mistake is one error annotation titled by the action and exit 2,
// before anything is done to the runner.
func TestActionFailures(t *testing.T) {
	r := newRunner(t)
	for _, tc := range []struct {
		name   string
		inputs map[string]string
		args   []string
		want   string
	}{
		{"bad boolean", map[string]string{"backend": "xnnpack", "free-disk": "yes"}, nil,
			`::error title=setup-export::input free-disk is "yes", not true or false`},
		{"unknown backend", map[string]string{"backend": "tpu"}, nil,
			`::error title=setup-export::input backend is "tpu", not one of xnnpack, vulkan, qnn, mediatek`},
		{"unknown argument", map[string]string{"backend": "xnnpack"}, []string{"install"},
			`::error title=setup-export::setup-export takes no arguments but plan, not "install"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := newStep(t, r, tc.inputs)
			h := &fakeHost{vars: s.vars}
			assert.Equal(t, 2, Action(context.Background(), s.action(), tc.args, h.env()))
			assert.Equal(t, tc.want+"\n", s.log.String())
			assert.Empty(t, h.cmds)
			assert.Empty(t, s.read(t, "GITHUB_OUTPUT"))
		})
	}
}

// actionFile is the part of action.yml the test reads.
type actionFile struct {
	Inputs map[string]struct {
		Required bool    `yaml:"required"`
		Default  *string `yaml:"default"`
	} `yaml:"inputs"`
	Outputs map[string]struct {
		Value string `yaml:"value"`
	} `yaml:"outputs"`
	Runs struct {
		Using string `yaml:"using"`
		Steps []struct {
			ID   string            `yaml:"id"`
			Uses string            `yaml:"uses"`
			If   string            `yaml:"if"`
			Run  string            `yaml:"run"`
			Env  map[string]string `yaml:"env"`
			With map[string]string `yaml:"with"`
		} `yaml:"steps"`
	} `yaml:"runs"`
}

var stepOutput = regexp.MustCompile(`steps\.(\w+)\.outputs\.([a-z-]+)`)

// TestActionYAML holds actions/setup-export/action.yml to the Go code: every input has a
// default unless required and reaches each run of the main as INPUT_<ID>; every output is
// one the main writes; the steps read only outputs the plan run writes; remote actions are
// skipped under act.
func TestActionYAML(t *testing.T) {
	data, err := os.ReadFile(filepath.Join(repoRoot(t), "actions", "setup-export", "action.yml"))
	require.NoError(t, err)
	var a actionFile
	require.NoError(t, yaml.Unmarshal(data, &a))
	require.Equal(t, "composite", a.Runs.Using)

	wantEnv := map[string]string{}
	for id, in := range a.Inputs {
		assert.True(t, in.Required || in.Default != nil, "input %s has neither required nor a default", id)
		wantEnv["INPUT_"+strings.ToUpper(id)] = "${{ inputs." + id + " }}"
	}
	r := newRunner(t)
	s := newStep(t, r, map[string]string{"backend": "xnnpack", "python-env": "false", "free-disk": "false", "work-root": r.data})
	require.Equal(t, 0, Action(context.Background(), s.action(), nil, (&fakeHost{vars: s.vars}).env()))
	written := outputNames(s.read(t, "GITHUB_OUTPUT"))
	s = newStep(t, r, map[string]string{"backend": "xnnpack"})
	require.Equal(t, 0, Action(context.Background(), s.action(), []string{"plan"}, (&fakeHost{vars: s.vars}).env()))
	planned := outputNames(s.read(t, "GITHUB_OUTPUT"))

	var outs []string
	for name, o := range a.Outputs {
		assert.Equal(t, "${{ steps.run.outputs."+name+" }}", o.Value, "output %s", name)
		outs = append(outs, name)
	}
	assert.ElementsMatch(t, written, outs, "the outputs action.yml declares and the ones the main writes")

	runs := 0
	for _, st := range a.Runs.Steps {
		if strings.HasPrefix(st.Run, `"$RUNNER_TEMP/exe-expo-actions/exe-expo-action" setup-export`) {
			runs++
			assert.Equal(t, wantEnv, st.Env, "step %s gets every input", st.ID)
		}
		if st.Uses != "" {
			assert.True(t, strings.HasPrefix(st.If, "${{ !env.ACT"), "%s runs under act, which cannot fetch it", st.Uses)
		}
		for _, v := range append(slices.Collect(maps.Values(st.With)), st.If) {
			for _, m := range stepOutput.FindAllStringSubmatch(v, -1) {
				assert.Equal(t, "plan", m[1])
				assert.Contains(t, planned, m[2], "a step reads an output the plan run does not write")
			}
		}
	}
	assert.Equal(t, 2, runs, "the plan run and the setup run")
}

var outputLine = regexp.MustCompile(`(?m)^([a-z-]+)<<_GitHubActionsFileCommandDelimeter_$`)

func outputNames(file string) []string {
	var out []string
	for _, m := range outputLine.FindAllStringSubmatch(file, -1) {
		out = append(out, m[1])
	}
	return out
}
