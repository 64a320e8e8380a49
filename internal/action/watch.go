package action

import (
	"github.com/experimentalmachines/exe-expo/internal/cli"
)

const watchAction = "watch"

// watchArgs is the `exe-expo watch` command line of the watch action, as the generated
// watch-hf.yml runs it: the state on a branch of the repository, the summary in the step's.
func watchArgs(e Env) ([]string, error) {
	dry, err := e.boolInput("dry-run", false)
	if err != nil {
		return nil, err
	}
	requeue, err := e.boolInput("requeue", false)
	if err != nil {
		return nil, err
	}
	args := flags([]string{"watch", "--state", e.input("state", "seen.json")},
		"--state-branch", e.GH.GetInput("state-branch"),
		"--backfill", e.GH.GetInput("backfill"),
		"--repo", e.GH.GetInput("repo"),
		"--ref", e.GH.GetInput("ref"),
		"--config", e.GH.GetInput("config"),
		"--summary", e.GH.Getenv("GITHUB_STEP_SUMMARY"),
	)
	if dry {
		args = append(args, "--dry-run")
	}
	if requeue {
		args = append(args, "--requeue")
	}
	return args, nil
}

// Watch runs one pass of the Hugging Face watcher (`exe-expo watch`): new models of the
// watched orgs are checked once and their export workflows dispatched, one backend after
// the other. The GitHub token dispatches and keeps the state branch; the Hub token reads
// gated models.
func Watch(e Env) int {
	if err := e.maskSecrets(hfToken, githubToken); err != nil {
		return e.fail(watchAction, cli.ExitFailed, "%v", err)
	}
	args, err := watchArgs(e)
	if err != nil {
		return e.fail(watchAction, cli.ExitFailed, "%v", err)
	}
	return e.annotate(watchAction, e.cli(args, true))
}
