package action

import (
	"strconv"

	"github.com/experimentalmachines/exe-expo/internal/cli"
)

const exportAction = "export"

// exportArgs is the `exe-expo export` command line the export action's inputs stand for.
// An empty work input is $RUNNER_TEMP/exe-expo-work, since action.yml defaults cannot read
// the runner context; an empty python leaves the CLI's $EXE_EXPO_PYTHON or python3.
func exportArgs(e Env) ([]string, error) {
	model, err := e.required("model-id")
	if err != nil {
		return nil, err
	}
	backendName, err := e.required("backend")
	if err != nil {
		return nil, err
	}
	window, err := e.intInput("window", true, 1)
	if err != nil {
		return nil, err
	}
	args := []string{"export", "--backend", backendName, model, "--context", strconv.Itoa(window),
		"--out", e.input("out", "out"), "--work", e.workDir("exe-expo-work", "work")}
	return flags(args,
		"--revision", e.GH.GetInput("revision"),
		"--soc", e.GH.GetInput("soc"),
		"--qmode", e.GH.GetInput("qmode"),
		"--executorch", e.GH.GetInput("executorch"),
		"--codes", e.GH.GetInput("codes"),
		"--python", e.GH.GetInput("python"),
		"--mtk-python", e.GH.GetInput("mtk-python"),
		"--config", e.GH.GetInput("config"),
	), nil
}

// Export runs one model, backend and window (and chip) through `exe-expo export` and
// writes what its result says. Outputs: skipped and reason (a window this host cannot
// build: a warning, exit 0), report (the export report's path) and files (the .pte files,
// relative to the out folder, as JSON).
func Export(e Env) int {
	if err := e.maskSecrets(hfToken); err != nil {
		return e.fail(exportAction, cli.ExitFailed, "%v", err)
	}
	args, err := exportArgs(e)
	if err != nil {
		return e.fail(exportAction, cli.ExitFailed, "%v", err)
	}
	r := e.cli(args, true)
	if r.code == cli.ExitSkipped && r.res != nil {
		setOutputs(e, "skipped", "true", "reason", r.reason(), "report", "", "files", "[]")
	}
	if r.code != cli.ExitOK || r.res == nil {
		if r.code == cli.ExitOK {
			return e.fail(exportAction, cli.ExitFailed, "%s", r.reason())
		}
		return e.annotate(exportAction, r)
	}
	o := r.outputs()
	setOutputs(e, "skipped", "false", "reason", "", "report", o.Report, "files", jsonOf(nonNil(o.Files)))
	return cli.ExitOK
}

// setOutputs writes name, value pairs to the step's outputs.
func setOutputs(e Env, pairs ...string) {
	for i := 0; i+1 < len(pairs); i += 2 {
		e.GH.SetOutput(pairs[i], pairs[i+1])
	}
}
