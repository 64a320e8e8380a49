package action

import (
	"path"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/experimentalmachines/exe-expo/pkg/backend"
	"github.com/experimentalmachines/exe-expo/pkg/cli"
	"github.com/experimentalmachines/exe-expo/pkg/report"
	"github.com/experimentalmachines/exe-expo/pkg/verify"
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
	} else {
		args = flags(args, "--source", e.GH.GetInput("source"))
	}
	args = flags(args, "--backend", e.GH.GetInput("backend"), "--python", e.GH.GetInput("python"), "--config", e.GH.GetInput("config"))
	if command == "gate" {
		args = flags(args, "--reference", e.GH.GetInput("reference"), "--revision", e.GH.GetInput("revision"), "--work", e.workDir("exe-expo-gate-work", ""))
	}
	return args, nil
}

// Smoke runs `exe-expo smoke` on an export folder: the size check of every file and a smoke
// run where the x86 runner runs it. Outputs: passed ("true"/"false") and files (the .pte
// files whose reports have no blocker, relative to out, as JSON).
func Smoke(e Env) int { return runCheck(e, "smoke") }

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
	passed, blockers := verdicts(args[1], e.GH.GetInput("backend"), command)
	e.GH.SetOutput("passed", strconv.FormatBool(r.code == cli.ExitOK))
	e.GH.SetOutput("files", jsonOf(passed))
	if r.code != cli.ExitOK && r.code != cli.ExitSkipped && len(blockers) > 0 {
		return e.fail(command, r.code, "%s", strings.Join(blockers, "\n"))
	}
	return e.annotate(command, r)
}

// verdicts reads the reports under out after a check: the .pte files of the reports that
// the check judged and nothing blocks (relative to out), and one line per blocker of the
// others. A folder without readable reports has neither; the command has said why.
func verdicts(out, backendName, command string) (passed, blockers []string) {
	passed = []string{}
	paths, err := verify.Reports(out, backendName)
	if err != nil {
		return passed, nil
	}
	for _, p := range paths {
		rep, err := report.Read(p)
		if err != nil {
			continue
		}
		name := p
		if rel, err := filepath.Rel(out, p); err == nil {
			name = filepath.ToSlash(rel)
		}
		if bs := rep.Blockers(); len(bs) > 0 {
			for _, b := range bs {
				blockers = append(blockers, name+": "+b)
			}
			continue
		}
		if !judged(rep, command) {
			continue
		}
		for _, f := range rep.Files {
			if path.Ext(f.Path) == ".pte" {
				passed = append(passed, f.Path)
			}
		}
	}
	return passed, blockers
}

// judged reports whether the check left its verdict in the report: a smoke pass always
// writes the size check; the gate writes its verdict where the x86 runner runs the files
// and leaves the other backends' files ungated by design.
func judged(rep *report.Report, command string) bool {
	if command == "smoke" {
		return rep.SizeCheck != nil
	}
	b := backend.ByName(rep.Backend)
	return rep.Gate != nil || (b != nil && !b.Smoke)
}
