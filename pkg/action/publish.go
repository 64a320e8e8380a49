package action

import (
	"cmp"
	"strconv"
	"strings"

	"github.com/experimentalmachines/exe-expo/pkg/cli"
	"github.com/experimentalmachines/exe-expo/pkg/hub"
	"github.com/experimentalmachines/exe-expo/pkg/publish"
	"github.com/experimentalmachines/exe-expo/pkg/report"
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
// Outputs: repo (the Hub repo; the last window's, as the CLI's own output) and url (its
// page on the Hub).
func Publish(e Env) int {
	if err := e.maskSecrets(hfToken, githubToken); err != nil {
		return e.fail(publishAction, cli.ExitFailed, "%v", err)
	}
	p, err := readPublish(e)
	if err != nil {
		return e.fail(publishAction, cli.ExitFailed, "%v", err)
	}
	r := e.cli(p.args(), true)
	if r.code != cli.ExitOK {
		return e.annotate(publishAction, r)
	}
	repo, err := publishedRepo(p)
	if err != nil {
		return e.fail(publishAction, cli.ExitFailed, "exe-expo publish succeeded, but its repo cannot be named: %v", err)
	}
	endpoint := cmp.Or(e.GH.Getenv("HF_ENDPOINT"), hub.DefaultEndpoint)
	setOutputs(e, "repo", repo, "url", strings.TrimRight(endpoint, "/")+"/"+repo)
	return cli.ExitOK
}

// publishedRepo is the Hub repo the last window published went to: the repo input, else
// the report's output_repo, as publish.Load chooses.
func publishedRepo(p publishRequest) (string, error) {
	if p.repo != "" {
		return p.repo, nil
	}
	paths, err := publish.Find(p.out, p.backend, p.window)
	if err != nil {
		return "", err
	}
	rep, err := report.Read(paths[len(paths)-1])
	if err != nil {
		return "", err
	}
	return rep.OutputRepo, nil
}
