package action

import (
	"encoding/json"

	"github.com/experimentalmachines/exe-expo/internal/cli"
	"github.com/experimentalmachines/exe-expo/internal/result"
)

const sizeWindow = "size-window"

// matrix is the export job's strategy.matrix: one job per window (and per chip).
func matrix(o *result.Outputs) map[string]any {
	m := map[string]any{"entry": nonNil(o.Windows)}
	if len(o.SoCs) > 0 {
		m["soc"] = o.SoCs
	}
	return m
}

// SizeWindow plans one model for one backend (`exe-expo plan --backend B --contexts C
// --socs S`) and writes what the plan's result says as JSON outputs: the windows to build,
// the windows skipped with their reasons, the chips and the matrix. The plan's verdict is
// the action's: a model that is not eligible or a backend that does not take it exits 3, a
// window or chip the backend does not have exits 2, each with the plan's reason. The
// sizing table is in the step summary, written by plan itself.
func SizeWindow(e Env) int {
	if err := e.maskSecrets(hfToken); err != nil {
		return e.fail(sizeWindow, cli.ExitFailed, "%v", err)
	}
	model, err := e.required("model-id")
	if err != nil {
		return e.fail(sizeWindow, cli.ExitFailed, "%v", err)
	}
	backendName, err := e.required("backend")
	if err != nil {
		return e.fail(sizeWindow, cli.ExitFailed, "%v", err)
	}
	args := flags([]string{"plan", model, "--backend", backendName, "--json"},
		"--revision", e.GH.GetInput("revision"), "--config", e.GH.GetInput("config"),
		"--contexts", e.GH.GetInput("contexts"), "--socs", e.GH.GetInput("socs"), "--fallback", e.GH.GetInput("fallback"))
	r := e.cli(args, false)
	if r.code != cli.ExitOK || r.res == nil {
		return e.fail(sizeWindow, failCode(r), "%s", r.reason())
	}
	o := r.outputs()
	e.GH.SetOutput("windows", jsonOf(nonNil(o.Windows)))
	e.GH.SetOutput("skipped", jsonOf(nonNil(o.Skipped)))
	e.GH.SetOutput("socs", jsonOf(nonNil(o.SoCs)))
	e.GH.SetOutput("matrix", jsonOf(matrix(o)))
	e.GH.SetOutput("calibrate", jsonOf(nonNil(o.Calibrate)))
	return cli.ExitOK
}

// failCode is the action's exit code for a run that did not succeed: the command's own,
// or 2 when it exited 0 but left no result to act on.
func failCode(r run) int {
	if r.code == cli.ExitOK {
		return cli.ExitFailed
	}
	return r.code
}

// nonNil keeps an empty list an empty JSON array, which `fromJSON(...) != '[]'` tests.
func nonNil[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}

// jsonOf is v as one line of JSON. The values here are plain structs, lists and maps of
// them, which always encode.
func jsonOf(v any) string {
	data, err := json.Marshal(v)
	if err != nil {
		panic("action: encode an output: " + err.Error())
	}
	return string(data)
}
