package workflow

import (
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/experimentalmachines/exe-expo/internal/pinned"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/experimentalmachines/exe-expo/internal/backend"
)

func replace(old, new string) func(string) string {
	return func(s string) string { return strings.Replace(s, old, new, 1) }
}

func replaceRe(re, new string) func(string) string {
	return func(s string) string { return regexp.MustCompile(re).ReplaceAllString(s, new) }
}

// exportFiles are the export workflows, one per exportable backend.
func exportFiles() []string {
	var out []string
	for _, b := range backend.Exportable() {
		out = append(out, OutputDir+"/export-"+b.Name+".yml")
	}
	return out
}

// changed lists the files whose rendering differs.
func changed(before, after map[string][]byte) []string {
	var out []string
	for p := range after {
		if string(before[p]) != string(after[p]) {
			out = append(out, p)
		}
	}
	sort.Strings(out)
	return out
}

// exportsAnd is the export workflows and the other files named (workflows by their name
// under OutputDir, the lint configuration by its path), sorted.
func exportsAnd(others ...string) []string {
	out := exportFiles()
	for _, o := range others {
		if o != LintConfig {
			o = OutputDir + "/" + o
		}
		out = append(out, o)
	}
	sort.Strings(out)
	return out
}

// inputDefault reads one input's default under both triggers, which must agree.
func inputDefault(t *testing.T, d doc, input string) any {
	t.Helper()
	dispatch := d.at("on", "workflow_dispatch", "inputs", input, "default")
	if call := d.at("on", "workflow_call", "inputs", input); call != nil {
		assert.Equal(t, dispatch, d.at("on", "workflow_call", "inputs", input, "default"), "workflow_call's %s default", input)
	}
	return dispatch
}

type configChange struct {
	name string
	edit map[string]func(string) string
	// files are the files the change must touch, and only those.
	files func() []string
	check func(t *testing.T, after map[string][]byte)
}

var configChanges = []configChange{{
	name:  "the watcher's schedule",
	edit:  map[string]func(string) string{"config/pipeline.yaml": replace(`schedule: ""`, `schedule: "17 */6 * * *"`)},
	files: func() []string { return []string{OutputDir + "/watch-hf.yml"} },
	check: func(t *testing.T, after map[string][]byte) {
		d := decode(t, after[OutputDir+"/watch-hf.yml"])
		assert.Equal(t, []any{map[string]any{"cron": "17 */6 * * *"}}, d.at("on", "schedule"))
		assert.NotNil(t, d.at("on", "workflow_dispatch"), "still runs by hand")
	},
}, {
	name:  "the x86-64 tier's label",
	edit:  map[string]func(string) string{"config/pipeline.yaml": replace("label: blacksmith-8vcpu-ubuntu-2404\n", "label: blacksmith-8vcpu-ubuntu-2204\n")},
	files: func() []string { return exportsAnd("ci.yml", "probe-runner.yml", "audit-published.yml", LintConfig) },
	check: func(t *testing.T, after map[string][]byte) {
		for _, p := range exportFiles() {
			assert.Equal(t, "blacksmith-8vcpu-ubuntu-2204", decode(t, after[p]).at("jobs", "verify", "runs-on"), p)
		}
		assert.Equal(t, "blacksmith-8vcpu-ubuntu-2204", decode(t, after[OutputDir+"/ci.yml"]).at("jobs", "test", "runs-on"))
		assert.Equal(t, "blacksmith-8vcpu-ubuntu-2204", decode(t, after[OutputDir+"/audit-published.yml"]).at("jobs", "audit", "runs-on"))
		assert.Contains(t, decode(t, after[LintConfig]).at("self-hosted-runner", "labels"), "blacksmith-8vcpu-ubuntu-2204")
		assert.Contains(t, decode(t, after[OutputDir+"/probe-runner.yml"]).at("on", "workflow_dispatch", "inputs", "runner", "options"), "blacksmith-8vcpu-ubuntu-2204")
		old := regexp.MustCompile(`blacksmith-8vcpu-ubuntu-2404($|[^-])`)
		for p, data := range after {
			assert.False(t, old.Match(data), "%s still names the old label", p)
		}
	},
}, {
	name:  "the smallest tier goes",
	edit:  map[string]func(string) string{"config/pipeline.yaml": replaceRe(`(?s)  - name: arm-2\n.*?measured: false\n`, "")},
	files: func() []string { return exportsAnd("probe-runner.yml", "watch-hf.yml", LintConfig) },
	check: func(t *testing.T, after map[string][]byte) {
		for _, p := range exportFiles() {
			assert.Equal(t, "blacksmith-8vcpu-ubuntu-2404-arm", decode(t, after[p]).at("jobs", "plan", "runs-on"), "%s: the plan moves to the next smallest tier", p)
		}
		assert.Equal(t, "blacksmith-8vcpu-ubuntu-2404-arm", decode(t, after[OutputDir+"/watch-hf.yml"]).at("jobs", "watch", "runs-on"))
		assert.NotContains(t, decode(t, after[LintConfig]).at("self-hosted-runner", "labels"), "blacksmith-2vcpu-ubuntu-2404-arm")
	},
}, {
	name:  "the GPTQ solve's tier",
	edit:  map[string]func(string) string{"config/pipeline.yaml": replace("runner: arm-8 ", "runner: arm-16")},
	files: func() []string { return []string{OutputDir + "/export-xnnpack.yml"} },
	check: func(t *testing.T, after map[string][]byte) {
		d := decode(t, after[OutputDir+"/export-xnnpack.yml"])
		assert.Equal(t, "blacksmith-16vcpu-ubuntu-2404-arm", d.at("jobs", "solve", "runs-on"))
		with := step(t, decode(t, after[OutputDir+"/export-xnnpack.yml"]).jobs()["solve"], "Prepare the runner")["with"].(map[string]any)
		assert.Equal(t, 48, with["swap-gib"], "the swap follows the tier")
	},
}, {
	name:  "a Qualcomm chip dropped",
	edit:  map[string]func(string) string{"config/pipeline.yaml": replace("socs: [SM8750, SM8650]", "socs: [SM8650]")},
	files: func() []string { return []string{OutputDir + "/export-qnn.yml"} },
	check: func(t *testing.T, after map[string][]byte) {
		d := decode(t, after[OutputDir+"/export-qnn.yml"])
		assert.Equal(t, "SM8650", inputDefault(t, d, "socs"))
	},
}, {
	name:  "a MediaTek chip added",
	edit:  map[string]func(string) string{"config/pipeline.yaml": replace("socs: [MT6991]", "socs: [MT6991, MT6989]")},
	files: func() []string { return []string{OutputDir + "/export-mediatek.yml"} },
	check: func(t *testing.T, after map[string][]byte) {
		assert.Equal(t, "MT6991, MT6989", inputDefault(t, decode(t, after[OutputDir+"/export-mediatek.yml"]), "socs"))
	},
}, {
	name:  "a window added",
	edit:  map[string]func(string) string{"config/pipeline.yaml": replace("context_tiers: [32768, 16384, 8192, 4096, 2048]", "context_tiers: [65536, 32768, 16384, 8192, 4096, 2048]")},
	files: func() []string { return exportsAnd("probe-runner.yml") },
	check: func(t *testing.T, after map[string][]byte) {
		for _, p := range exportFiles() {
			def, _ := inputDefault(t, decode(t, after[p]), "contexts").(string)
			assert.Contains(t, " "+def+",", " 32768, 65536,", p)
		}
		assert.Equal(t, "512, 2048, 4096, 8192, 16384, 32768, 65536", inputDefault(t, decode(t, after[OutputDir+"/export-mediatek.yml"]), "contexts"),
			"MediaTek's cache size stays among its windows")
		assert.Equal(t, "2048, 4096, 8192, 16384, 32768, 65536", decode(t, after[OutputDir+"/probe-runner.yml"]).at("on", "workflow_dispatch", "inputs", "contexts", "default"))
	},
}, {
	// The Python environment's pins reach the runner through actions/setup-export, which
	// reads config/versions.env when it runs (internal/setup); the workflows name only the
	// ExecuTorch release whose source tree the MediaTek recipe checks out.
	name: "the ExecuTorch and Python pins",
	edit: map[string]func(string) string{"config/versions.env": func(s string) string {
		return replace("PYTHON_VERSION=3.11", "PYTHON_VERSION=3.12")(replaceRe(`EXECUTORCH_VERSION=[0-9.]+`, "EXECUTORCH_VERSION=9.8.7")(s))
	}},
	files: func() []string { return []string{OutputDir + "/export-mediatek.yml"} },
	check: func(t *testing.T, after map[string][]byte) {
		for _, p := range []string{OutputDir + "/export-mediatek.yml"} {
			job := decode(t, after[p]).jobs()["export"]
			assert.Equal(t, "pytorch/executorch", step(t, job, "Check out ExecuTorch 9.8.7's source")["with"].(map[string]any)["repository"], p)
			assert.Equal(t, "./actions/setup-export", step(t, job, "Prepare the runner")["uses"], p)
		}
	},
}, {
	name:  "the ExecuTorch source commit",
	edit:  map[string]func(string) string{"config/versions.env": replaceRe(`EXECUTORCH_COMMIT=[0-9a-f]+`, "EXECUTORCH_COMMIT="+strings.Repeat("ab", 20))},
	files: func() []string { return []string{OutputDir + "/export-mediatek.yml"} },
	check: func(t *testing.T, after map[string][]byte) {
		job := decode(t, after[OutputDir+"/export-mediatek.yml"]).jobs()["export"]
		src := step(t, job, "Check out ExecuTorch "+pinned.Version()+"'s source")["with"].(map[string]any)
		assert.Equal(t, strings.Repeat("ab", 20), src["ref"])
		assert.Equal(t, "pytorch/executorch", src["repository"])
	},
}, {
	name: "an action's pin",
	edit: map[string]func(string) string{PinsFile: replace("{tag: v7.0.1, commit: 3d3c42e5aac5ba805825da76410c181273ba90b1}", "{tag: v7.0.2, commit: "+strings.Repeat("cd", 20)+"}")},
	files: func() []string {
		return exportsAnd("ci.yml", "probe-runner.yml", "watch-hf.yml", "audit-published.yml")
	},
	check: func(t *testing.T, after map[string][]byte) {
		for _, p := range exportsAnd("ci.yml", "probe-runner.yml", "watch-hf.yml", "audit-published.yml") {
			assert.Contains(t, string(after[p]), "uses: actions/checkout@"+strings.Repeat("cd", 20)+" # v7.0.2\n", p)
			assert.NotContains(t, string(after[p]), "3d3c42e5aac5ba805825da76410c181273ba90b1", p)
		}
	},
}, {
	// Without calibrate_once the QNN workflow has no calibrate job, and every window's
	// export job calibrates itself, as before it.
	name:  "calibrating once",
	edit:  map[string]func(string) string{"config/pipeline.yaml": replace("calibrate_once: true", "calibrate_once: false")},
	files: func() []string { return []string{OutputDir + "/export-qnn.yml"} },
	check: func(t *testing.T, after map[string][]byte) {
		jobs := decode(t, after[OutputDir+"/export-qnn.yml"]).jobs()
		assert.NotContains(t, jobs, "calibrate")
		assert.Equal(t, "plan", jobs["export"]["needs"])
		assert.NotContains(t, string(after[OutputDir+"/export-qnn.yml"]), "--calibration")
	},
}, {
	// plan holds every window's fitted export time against the same number, so a window it
	// lets into the matrix is one its job's timeout lets finish.
	name:  "the job limit",
	edit:  map[string]func(string) string{"config/pipeline.yaml": replace("job_limit_minutes: 350", "job_limit_minutes: 300")},
	files: func() []string { return exportsAnd("probe-runner.yml", "audit-published.yml") },
	check: func(t *testing.T, after map[string][]byte) {
		for _, p := range exportsAnd("probe-runner.yml", "audit-published.yml") {
			assert.Contains(t, string(after[p]), "\n    timeout-minutes: 300\n", p)
			assert.NotContains(t, string(after[p]), "timeout-minutes: 350", p)
		}
		assert.EqualValues(t, 300, decode(t, after[OutputDir+"/export-qnn.yml"]).jobs()["export"]["timeout-minutes"])
	},
}}

// TestConfigChangeLands changes one thing in config (or the pin table), renders, and finds
// the change where it belongs and nowhere else.
func TestConfigChangeLands(t *testing.T) {
	before := rendered(t, sourceOf(t, everyCommand, nil))
	for _, tc := range configChanges {
		t.Run(tc.name, func(t *testing.T) {
			after := rendered(t, sourceOf(t, everyCommand, tc.edit))
			require.Equal(t, tc.files(), changed(before, after), "the files the change touched")
			tc.check(t, after)
		})
	}
}
