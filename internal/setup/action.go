package setup

import (
	"context"
	"fmt"
	"strings"

	"github.com/experimentalmachines/exe-expo/internal/config"
	"github.com/sethvargo/go-githubactions"
)

// Exit codes of the action's main, as everywhere in exe-expo.
const (
	exitOK     = 0
	exitFailed = 2
)

// Action is the whole of setup-export's step (`exe-expo-action setup-export [plan]`, through
// internal/action's table). With args ["plan"] it only writes what the steps before it need
// (python-versions, cache-paths, cache-key); with none it prepares the runner and writes
// the outputs, the env of later steps and the step summary. A failure is an error
// annotation and exit 2; it never panics or exits itself.
func Action(ctx context.Context, a *githubactions.Action, args []string, env Env) int {
	if err := action(ctx, a, args, env); err != nil {
		a.WithFieldsMap(map[string]string{"title": "setup-export"}).Errorf("%s", err)
		return exitFailed
	}
	return exitOK
}

func action(ctx context.Context, a *githubactions.Action, args []string, env Env) error {
	plan := false
	switch {
	case len(args) == 1 && args[0] == "plan":
		plan = true
	case len(args) > 0:
		return fmt.Errorf("setup-export takes no arguments but plan, not %q", strings.Join(args, " "))
	}
	in, err := ParseInputs(a.GetInput)
	if err != nil {
		return err
	}
	b, err := Backend(in.Backend)
	if err != nil {
		return err
	}
	cfg, err := config.Default()
	if err != nil {
		return err
	}
	c := ConfigFor(cfg, b)
	if plan {
		p := PlanFor(c, in, env)
		a.SetOutput("python-versions", strings.Join(p.PythonVersions, "\n"))
		a.SetOutput("cache-paths", strings.Join(p.CachePaths, "\n"))
		a.SetOutput("cache-key", p.CacheKey)
		return nil
	}
	res, err := Prepare(ctx, c, in, env, a)
	a.AddStepSummary(Summary(in, res))
	if err != nil {
		return err
	}
	writeOutputs(a, res)
	return nil
}

// writeOutputs gives later steps the folders and interpreters: as outputs for callers that
// wire them, and as WORK_DIR, HF_HOME, EXE_EXPO_PYTHON and MTK_PYTHON, which exe-expo and
// the Hugging Face libraries read, plus exe-expo on PATH.
func writeOutputs(a *githubactions.Action, res *Result) {
	a.SetOutput("work-dir", res.WorkDir)
	a.SetOutput("hf-home", res.HFHome)
	a.SetOutput("bin", res.Bin)
	a.SetOutput("python", res.Python.Main)
	a.SetOutput("mtk-python", res.Python.ToolPython())
	a.SetOutput("qnn-sdk-root", res.QNNRoot)
	a.SetOutput("neuropilot-dir", res.NeuroDir)
	a.SetOutput("swap-added", fmt.Sprint(res.Swap.Added))
	a.SetEnv("WORK_DIR", res.WorkDir)
	a.SetEnv("HF_HOME", res.HFHome)
	if res.Python.Main != "" {
		a.SetEnv("EXE_EXPO_PYTHON", res.Python.Main)
	}
	if res.Python.Overlay != "" {
		a.SetEnv(OverlayEnv, res.Python.Overlay)
	}
	if tp := res.Python.ToolPython(); tp != "" {
		a.SetEnv("MTK_PYTHON", tp)
	}
	a.AddPath(res.Bin)
}

// Summary is the step summary: what the runner is and what setup did to it, so a slow or
// failed export can be read against the machine it ran on.
func Summary(in Inputs, r *Result) string {
	var b strings.Builder
	fmt.Fprintf(&b, "### setup-export: %s\n\n| | |\n|---|---|\n", in.Backend)
	row := func(k, v string) { fmt.Fprintf(&b, "| %s | %s |\n", k, v) }
	if r.Host.NProc > 0 {
		row("host", fmt.Sprintf("%d CPUs (%s), %s memory, %s swap", r.Host.NProc, r.Host.CPUModel, human(r.Host.MemTotalBytes), human(r.Host.SwapTotalBytes)))
	}
	for _, p := range r.Places {
		use := ""
		if p.Dev == r.Work.Dev {
			use = ": work folder `" + r.WorkDir + "`"
		}
		row("file system "+p.Mount, human(p.Free)+" free"+use)
	}
	if r.Freed != nil {
		row("disk freed", fmt.Sprintf("%s (%d preinstalled folders deleted)", human(r.Freed.Bytes), len(r.Freed.Paths)))
	}
	switch {
	case r.Untouched != "":
		row("disk and swap", r.Untouched)
	case in.SwapGiB == 0:
		row("swap file", "none asked")
	case r.Swap.Added:
		row("swap file", fmt.Sprintf("%d GiB at `%s`", r.Swap.GiB, r.Swap.Path))
	case r.Swap.Refused != "":
		row("swap file", fmt.Sprintf("%d GiB refused (%s)", r.Swap.GiB, r.Swap.Refused))
	}
	if r.Bin != "" {
		row("exe-expo", "`"+r.Bin+"/exe-expo`")
	}
	if r.Python.Main != "" {
		row("Python", fmt.Sprintf("`%s`: %s", r.Python.Main, strings.Join(r.Installed, ", ")))
	}
	if tp := r.Python.ToolPython(); tp != "" {
		row("tool venv", fmt.Sprintf("`%s`: %s", tp, strings.Join(r.ToolInstalled, ", ")))
	}
	for _, s := range r.SDKs {
		how := "downloaded"
		if s.Cached {
			how = "from the cache"
		}
		sha := "checked by ExecuTorch"
		if s.SHA256 != "" {
			sha = "sha256 `" + s.SHA256 + "`"
		}
		row(s.Name+" "+s.Version, fmt.Sprintf("%s, %s (%s), in `%s`", how, sha, s.Source, s.Dir))
	}
	return b.String()
}
