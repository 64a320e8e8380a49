package action

import (
	"strconv"

	"github.com/experimentalmachines/exe-expo/internal/cli"
	"github.com/experimentalmachines/exe-expo/internal/result"
)

// checkArgs is the `exe-expo smoke|gate OUT` command line of the smoke and gate actions.
func checkArgs(e Env, command string) ([]string, error) {
	args := []string{command, e.input("out", "out")}
	if command == "gate" {
		source, err := e.required("source")
		if err != nil {
			return nil, err
		}
		args = append(args, "--source", source)
	} else if source := e.GH.GetInput("source"); source != "" {
		// a Hub id's tokenizer files and chat template are downloaded into work
		args = flags(args, "--source", source, "--revision", e.GH.GetInput("revision"), "--work", e.workDir("exe-expo-smoke-work", ""))
	}
	args = flags(args, "--backend", e.GH.GetInput("backend"), "--python", e.GH.GetInput("python"), "--config", e.GH.GetInput("config"))
	if command == "gate" {
		args = flags(args, "--reference", e.GH.GetInput("reference"), "--revision", e.GH.GetInput("revision"), "--work", e.workDir("exe-expo-gate-work", ""))
	}
	return args, nil
}

// Smoke runs `exe-expo smoke` on an export folder: the size check of every file and a smoke
// run where the x86 runner runs it, prompted through the chat template of the source (a
// folder, or a Hub id whose tokenizer files are downloaded with the hf-token input), and
// the file's speed where no earlier step measured it. Outputs: passed ("true"/"false") and files (the .pte
// files whose reports have no blocker, relative to out, as JSON) and failed (the windows
// refused, with file and reason: what an fp32 fallback rebuilds), from the command's result.
func Smoke(e Env) int { return runCheck(e, "smoke", hfToken) }

// Gate runs `exe-expo gate` on an export folder against its fp32 source (a folder, or a Hub
// id downloaded with the hf-token input), with the same outputs as Smoke.
func Gate(e Env) int { return runCheck(e, "gate", hfToken) }

// runCheck runs the check command, first handing it the secrets it uses (the gate's Hub
// token downloads a source given as a Hub id).
func runCheck(e Env, command string, secrets ...secret) int {
	if err := e.maskSecrets(secrets...); err != nil {
		return e.fail(command, cli.ExitFailed, "%v", err)
	}
	args, err := checkArgs(e, command)
	if err != nil {
		return e.fail(command, cli.ExitFailed, "%v", err)
	}
	r := e.cli(args, true)
	passed, failed := []string{}, []result.Failed{}
	if o := r.outputs(); o != nil {
		passed, failed = nonNil(o.Files), nonNil(o.Failed)
	}
	e.GH.SetOutput("passed", strconv.FormatBool(r.code == cli.ExitOK && r.res != nil))
	e.GH.SetOutput("files", jsonOf(passed))
	e.GH.SetOutput("failed", jsonOf(failed))
	if r.code == cli.ExitOK && r.res == nil {
		return e.fail(command, cli.ExitFailed, "%s", r.reason())
	}
	return e.annotate(command, r)
}
