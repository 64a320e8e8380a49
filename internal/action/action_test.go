package action

import (
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/experimentalmachines/exe-expo/internal/cli"
	"github.com/experimentalmachines/exe-expo/internal/result"
)

// actionFuncs are the actions by name, as their mains call them.
var actionFuncs = map[string]func(Env) int{
	"size-window": SizeWindow, "export": Export, "smoke": Smoke, "gate": Gate, "publish": Publish, "watch": Watch,
}

// TestCommandLines holds each action's inputs to the CLI command line they stand for: an
// input left empty leaves the CLI's default, and nothing is dropped or renamed.
func TestCommandLines(t *testing.T) {
	for _, tc := range []struct {
		name, action string
		inputs, env  map[string]string
		want         []string
	}{
		{"size-window, least", "size-window", map[string]string{"model-id": "Qwen/Qwen3-1.7B", "backend": "xnnpack"}, nil,
			[]string{"plan", "Qwen/Qwen3-1.7B", "--backend", "xnnpack", "--json"}},
		{"size-window, all", "size-window", map[string]string{"model-id": "Qwen/Qwen3-1.7B", "backend": "qnn", "revision": "v2", "config": "cfg", "contexts": "2048", "socs": "SM8750"}, nil,
			[]string{"plan", "Qwen/Qwen3-1.7B", "--backend", "qnn", "--json", "--revision", "v2", "--config", "cfg", "--contexts", "2048", "--socs", "SM8750"}},
		{"export, least, work under RUNNER_TEMP", "export", map[string]string{"model-id": "Qwen/Qwen3-1.7B", "backend": "xnnpack", "window": "4096"},
			map[string]string{"RUNNER_TEMP": "/runner/tmp"},
			[]string{"export", "--backend", "xnnpack", "Qwen/Qwen3-1.7B", "--context", "4096", "--out", "out", "--work", "/runner/tmp/exe-expo-work"}},
		{"export, no RUNNER_TEMP", "export", map[string]string{"model-id": "m/x", "backend": "vulkan", "window": "2048"}, nil,
			[]string{"export", "--backend", "vulkan", "m/x", "--context", "2048", "--out", "out", "--work", "work"}},
		{"export, all", "export", map[string]string{"model-id": "m/x", "backend": "qnn", "window": "2048", "revision": "abc", "soc": "SM8750",
			"qmode": "fp32", "out": "o", "work": "w", "executorch": "et", "codes": "c.pt", "python": "py", "mtk-python": "mpy", "config": "cfg", "hf-token": "hf_x"},
			map[string]string{"RUNNER_TEMP": "/t"},
			[]string{"export", "--backend", "qnn", "m/x", "--context", "2048", "--out", "o", "--work", "w", "--revision", "abc", "--soc", "SM8750",
				"--qmode", "fp32", "--executorch", "et", "--codes", "c.pt", "--python", "py", "--mtk-python", "mpy", "--config", "cfg"}},
		{"smoke, least", "smoke", nil, nil, []string{"smoke", "out"}},
		{"smoke, all", "smoke", map[string]string{"out": "o", "backend": "xnnpack", "source": "src", "python": "py", "config": "cfg"}, nil,
			[]string{"smoke", "o", "--source", "src", "--backend", "xnnpack", "--python", "py", "--config", "cfg"}},
		{"smoke, the source's chat template from the Hub", "smoke", map[string]string{"source": "Qwen/Qwen3-0.6B", "revision": "abc", "work": "w"}, nil,
			[]string{"smoke", "out", "--source", "Qwen/Qwen3-0.6B", "--revision", "abc", "--work", "w"}},
		{"gate, least", "gate", map[string]string{"source": "fp32"}, nil, []string{"gate", "out", "--source", "fp32"}},
		{"gate, all", "gate", map[string]string{"out": "o", "source": "Qwen/Qwen3-0.6B", "revision": "r1", "work": "w", "backend": "xnnpack", "reference": "g.json", "python": "py", "config": "cfg", "hf-token": "hf_x"}, nil,
			[]string{"gate", "o", "--source", "Qwen/Qwen3-0.6B", "--backend", "xnnpack", "--python", "py", "--config", "cfg", "--reference", "g.json", "--revision", "r1", "--work", "w"}},
		{"gate, work under RUNNER_TEMP", "gate", map[string]string{"source": "Qwen/Qwen3-0.6B"}, map[string]string{"RUNNER_TEMP": "/runner/tmp"},
			[]string{"gate", "out", "--source", "Qwen/Qwen3-0.6B", "--work", "/runner/tmp/exe-expo-gate-work"}},
		{"publish, defaults", "publish", map[string]string{"dry-run": "false", "release": "false"}, nil, []string{"publish", "out"}},
		{"publish, all", "publish", map[string]string{"out": "o", "backend": "qnn", "context": "4096", "repo": "org/r", "dry-run": "true", "release": "false"}, nil,
			[]string{"publish", "o", "--backend", "qnn", "--repo", "org/r", "--context", "4096", "--dry-run"}},
		{"publish, release", "publish", map[string]string{"release": "true"}, nil, []string{"publish", "out", "--release"}},
		{"watch, as watch-hf.yml runs it", "watch", map[string]string{"state": "seen.json", "state-branch": "state", "dry-run": "false", "requeue": "false"},
			map[string]string{"GITHUB_STEP_SUMMARY": "/s"},
			[]string{"watch", "--state", "seen.json", "--state-branch", "state", "--summary", "/s"}},
		{"watch, all", "watch", map[string]string{"state": "st.json", "backfill": "a/b,c/d", "repo": "o/r", "ref": "dev", "config": "cfg", "dry-run": "true", "requeue": "true"}, nil,
			[]string{"watch", "--state", "st.json", "--backfill", "a/b,c/d", "--repo", "o/r", "--ref", "dev", "--config", "cfg", "--dry-run", "--requeue"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := newStep(t, tc.inputs)
			delete(s.env, "GITHUB_STEP_SUMMARY")
			for k, v := range tc.env {
				s.env[k] = v
			}
			fake := &fakeCLI{code: cli.ExitFailed, stderr: "stop here\n"}
			code := actionFuncs[tc.action](s.envWith(fake.run))
			assert.Equal(t, cli.ExitFailed, code)
			require.Len(t, fake.calls, 1)
			assert.Equal(t, tc.want, fake.calls[0])
		})
	}
}

// TestInputRefusals: an input the action cannot use fails the step before the CLI runs,
// with an error annotation that names the input.
func TestInputRefusals(t *testing.T) {
	for _, tc := range []struct {
		name, action string
		inputs       map[string]string
		want         string
	}{
		{"boolean yes", "publish", map[string]string{"dry-run": "yes"}, `input dry-run is "yes"; give true or false`},
		{"boolean 1", "publish", map[string]string{"release": "1"}, `input release is "1"; give true or false`},
		{"boolean TRUE", "watch", map[string]string{"requeue": "TRUE"}, `input requeue is "TRUE"; give true or false`},
		{"watch dry-run", "watch", map[string]string{"dry-run": "no"}, `input dry-run is "no"; give true or false`},
		{"window not a number", "export", map[string]string{"model-id": "m/x", "backend": "xnnpack", "window": "4k"}, `input window is "4k", not a whole number`},
		{"window missing", "export", map[string]string{"model-id": "m/x", "backend": "xnnpack"}, "input window is required"},
		{"window zero", "export", map[string]string{"model-id": "m/x", "backend": "xnnpack", "window": "0"}, "input window is 0; it must be at least 1"},
		{"model missing", "export", map[string]string{"backend": "xnnpack", "window": "2048"}, "input model-id is required"},
		{"backend missing", "size-window", map[string]string{"model-id": "m/x"}, "input backend is required"},
		{"gate without source", "gate", nil, "input source is required"},
		{"publish context", "publish", map[string]string{"context": "-4"}, "input context is -4; it must be at least 1"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := newStep(t, tc.inputs)
			fake := &fakeCLI{}
			code := actionFuncs[tc.action](s.envWith(fake.run))
			assert.Equal(t, cli.ExitFailed, code)
			assert.Empty(t, fake.calls, "the CLI ran despite the refusal")
			assert.Equal(t, "::error title="+tc.action+"::"+tc.want+"\n", s.log.String())
		})
	}
}

// TestExportExitCodes maps each exit code of `exe-expo export` and its result to the
// action's outcome: the reason is the result's, never a line of the log.
func TestExportExitCodes(t *testing.T) {
	inputs := map[string]string{"model-id": "m/x", "backend": "xnnpack", "window": "4096"}
	made := result.Outputs{Files: []string{"xnnpack/x-4k.pte"}, Report: "out/xnnpack/export-report-4k.json"}
	for _, tc := range []struct {
		name         string
		fake         fakeCLI
		code         int
		log          []string
		outputs      map[string]string
		wantNoOutput bool
	}{
		{"done", fakeCLI{code: 0, stdout: "{}\n", stderr: "export: converting\n", outputs: made}, 0,
			[]string{"{}"},
			map[string]string{"skipped": "false", "reason": "", "report": "out/xnnpack/export-report-4k.json", "files": `["xnnpack/x-4k.pte"]`}, false},
		{"skipped: a warning and exit 0", fakeCLI{code: 4, stderr: "probing\nexport skipped: too big\n", reason: "needs 60 GiB; this host has 16 GiB RAM + 0 GiB swap"}, 0,
			[]string{"::warning title=export::skipped: needs 60 GiB; this host has 16 GiB RAM + 0 GiB swap"},
			map[string]string{"skipped": "true", "reason": "needs 60 GiB; this host has 16 GiB RAM + 0 GiB swap", "report": "", "files": "[]"}, false},
		{"skipped: the CLI's own warning is not repeated", fakeCLI{code: 4, stdout: "::warning::m/x cannot be exported on this runner: too big\n", reason: "too big"}, 0,
			[]string{"::warning::m/x cannot be exported on this runner: too big"},
			map[string]string{"skipped": "true", "reason": "too big", "report": "", "files": "[]"}, false},
		{"failed: the result's reason is the annotation, not the log's last line", fakeCLI{code: 2, stderr: "export failed: convert\ntool: cleanup done\n", reason: "export failed: convert: the tool exited with 1"}, 2,
			[]string{"::error title=export::export failed: convert: the tool exited with 1"}, nil, true},
		{"refused flag", fakeCLI{code: 2, reason: "export: --soc is required for qnn"}, 2,
			[]string{"::error title=export::export: --soc is required for qnn"}, nil, true},
		{"failed without a result", fakeCLI{code: 2, noResult: true, stderr: "panic: something\n"}, 2,
			[]string{"::error title=export::exe-expo exited with code 2 and left no result to say why (read the result "}, nil, true},
		{"done without a result", fakeCLI{code: 0, noResult: true}, 2,
			[]string{"::error title=export::exe-expo exited with code 0 and left no result to say why (read the result "}, nil, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := newStep(t, inputs)
			code := Export(s.envWith(tc.fake.run))
			assert.Equal(t, tc.code, code)
			want := strings.Join(tc.log, "\n")
			if strings.HasSuffix(want, "(read the result ") {
				assert.True(t, strings.HasPrefix(s.log.String(), want), "log: %s", s.log.String())
			} else {
				assert.Equal(t, want+"\n", s.log.String())
			}
			assert.Equal(t, tc.fake.stderr, s.stderr.String(), "the CLI's stderr must reach the step log unchanged")
			if tc.wantNoOutput {
				assert.Empty(t, s.outputs(t))
			} else {
				assert.Equal(t, tc.outputs, s.outputs(t))
			}
		})
	}
}

// TestOutputFileFormat holds the outputs to the runner's multiline file format, which is
// what lets a reason or a JSON value hold any character.
func TestOutputFileFormat(t *testing.T) {
	s := newStep(t, map[string]string{"model-id": "m/x", "backend": "xnnpack", "window": "4096"})
	fake := &fakeCLI{code: 4, reason: "too big: 60 GiB"}
	require.Equal(t, 0, Export(s.envWith(fake.run)))
	data, err := os.ReadFile(s.outPath)
	require.NoError(t, err)
	want := ""
	for _, kv := range [][2]string{{"skipped", "true"}, {"reason", "too big: 60 GiB"}, {"report", ""}, {"files", "[]"}} {
		want += kv[0] + "<<" + delimiter + "\n" + kv[1] + "\n" + delimiter + "\n"
	}
	assert.Equal(t, want, string(data))
}

// TestSecretsMaskedFirst: a token input is registered with the runner before anything is
// printed (even a refusal), handed to the CLI under the variable it reads, and never shown.
func TestSecretsMaskedFirst(t *testing.T) {
	for _, tc := range []struct {
		name, action string
		inputs       map[string]string
		masked       []string
		setenv       map[string]string
	}{
		{"export", "export", map[string]string{"model-id": "m/x", "backend": "xnnpack", "window": "2048", "hf-token": "hf_secret"},
			[]string{"hf_secret"}, map[string]string{"HF_TOKEN": "hf_secret"}},
		{"export refused", "export", map[string]string{"model-id": "m/x", "backend": "xnnpack", "window": "big", "hf-token": "hf_secret"},
			[]string{"hf_secret"}, map[string]string{"HF_TOKEN": "hf_secret"}},
		{"size-window", "size-window", map[string]string{"model-id": "m/x", "backend": "xnnpack", "hf-token": "hf_secret"},
			[]string{"hf_secret"}, map[string]string{"HF_TOKEN": "hf_secret"}},
		{"publish, both tokens", "publish", map[string]string{"hf-token": "hf_secret", "github-token": "ghs_secret"},
			[]string{"hf_secret", "ghs_secret"}, map[string]string{"HF_TOKEN": "hf_secret", "GH_TOKEN": "ghs_secret"}},
		{"gate", "gate", map[string]string{"source": "Qwen/Qwen3-0.6B", "hf-token": "hf_secret"},
			[]string{"hf_secret"}, map[string]string{"HF_TOKEN": "hf_secret"}},
		{"watch, GitHub token only", "watch", map[string]string{"github-token": "ghs_secret"},
			[]string{"ghs_secret"}, map[string]string{"GH_TOKEN": "ghs_secret"}},
		{"no token, no mask", "publish", nil, nil, map[string]string{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := newStep(t, tc.inputs)
			fake := &fakeCLI{code: cli.ExitFailed, stdout: "working\n", stderr: "failed\n"}
			actionFuncs[tc.action](s.envWith(fake.run))
			lines := strings.Split(s.log.String(), "\n")
			require.Greater(t, len(lines), len(tc.masked))
			for i, secret := range tc.masked {
				assert.Equal(t, "::add-mask::"+secret, lines[i], "line %d of the log", i+1)
				assert.Equal(t, 1, strings.Count(s.log.String(), secret), "the token appears outside its mask line")
			}
			assert.NotContains(t, lines[len(tc.masked)], "::add-mask::")
			assert.Equal(t, tc.setenv, s.setenv)
		})
	}
}
