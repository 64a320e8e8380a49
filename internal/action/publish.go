package action

import (
	"strconv"

	"github.com/experimentalmachines/exe-expo/internal/cli"
)

const publishAction = "publish"

// publishRequest is what the publish action's inputs ask for.
type publishRequest struct {
	out, backend, repo string
	window             int
	dry, release       bool
}

func readPublish(e Env) (publishRequest, error) {
	p := publishRequest{out: e.input("out", "out"), backend: e.GH.GetInput("backend"), repo: e.GH.GetInput("repo")}
	var err error
	if p.window, err = e.intInput("context", false, 1); err != nil {
		return p, err
	}
	if p.dry, err = e.boolInput("dry-run", false); err != nil {
		return p, err
	}
	p.release, err = e.boolInput("release", false)
	return p, err
}

// args is the `exe-expo publish OUT` command line the request stands for.
func (p publishRequest) args() []string {
	args := flags([]string{"publish", p.out}, "--backend", p.backend, "--repo", p.repo)
	if p.window > 0 {
		args = append(args, "--context", strconv.Itoa(p.window))
	}
	if p.dry {
		args = append(args, "--dry-run")
	}
	if p.release {
		args = append(args, "--release")
	}
	return args
}

// Publish runs `exe-expo publish` on an export folder: one Hub commit per window (with
// release: a GitHub release each too; with dry-run: the commits printed, nothing written).
// Outputs: repo (the Hub repo; the last window's) and url (its page on the Hub), from the
// command's result.
func Publish(e Env) int {
	if err := e.maskSecrets(hfToken, githubToken); err != nil {
		return e.fail(publishAction, cli.ExitFailed, "%v", err)
	}
	p, err := readPublish(e)
	if err != nil {
		return e.fail(publishAction, cli.ExitFailed, "%v", err)
	}
	r := e.cli(p.args(), true)
	if r.code != cli.ExitOK || r.res == nil {
		if r.code == cli.ExitOK {
			return e.fail(publishAction, cli.ExitFailed, "%s", r.reason())
		}
		return e.annotate(publishAction, r)
	}
	o := r.outputs()
	setOutputs(e, "repo", o.Repo, "url", o.URL)
	return cli.ExitOK
}
