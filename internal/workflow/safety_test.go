package workflow

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/experimentalmachines/exe-expo/internal/backend"
	"github.com/experimentalmachines/exe-expo/internal/cli"
)

// renders are the two renders every rule below holds for: as committed (today's CLI) and
// with every command the templates may run.
func renders(t *testing.T) map[string]map[string][]byte {
	t.Helper()
	return map[string]map[string][]byte{
		"today's CLI":   workflows(rendered(t, sourceOf(t, CLICommands, nil))),
		"every command": workflows(rendered(t, sourceOf(t, everyCommand, nil))),
	}
}

// unsafeRuns names the run: blocks of a workflow that hold an expression taken from the
// inputs or the triggering event: such text reaches the shell unquoted, so a model id or a
// branch name could run commands. Inputs reach scripts through env: only.
func unsafeRuns(t *testing.T, data []byte) []string {
	t.Helper()
	var bad []string
	for id, job := range decode(t, data).jobs() {
		for i, s := range steps(job) {
			run, _ := s["run"].(string)
			for _, expr := range []string{"${{ inputs.", "${{ github.event."} {
				if strings.Contains(run, expr) {
					bad = append(bad, fmt.Sprintf("jobs.%s.steps[%d] (%v) holds %s", id, i, s["name"], expr))
				}
			}
		}
	}
	sort.Strings(bad)
	return bad
}

func TestRunBlocksTakeInputsOnlyThroughEnv(t *testing.T) {
	for name, files := range renders(t) {
		for p, data := range files {
			assert.Empty(t, unsafeRuns(t, data), "%s (%s)", p, name)
			// Stricter than the rule: no expression at all is written into a script.
			for id, job := range decode(t, data).jobs() {
				for _, s := range steps(job) {
					run, _ := s["run"].(string)
					assert.NotContains(t, run, "${{", "%s jobs.%s step %v (%s)", p, id, s["name"], name)
				}
			}
		}
	}
}

func TestUnsafeRunsAreFound(t *testing.T) {
	bad := []byte(`on: workflow_dispatch
jobs:
  a:
    steps:
      - name: fine
        env:
          MODEL: ${{ inputs.model_id }}
        run: echo "$MODEL"
      - name: input
        run: echo ${{ inputs.model_id }}
      - name: event
        run: echo "${{ github.event.pull_request.title }}"
`)
	assert.Equal(t, []string{
		"jobs.a.steps[1] (input) holds ${{ inputs.",
		"jobs.a.steps[2] (event) holds ${{ github.event.",
	}, unsafeRuns(t, bad))
}

// TestPermissionsAreLeastPerJob: no workflow grants anything at the top; every job names
// what it needs, and only the watcher writes (it pushes its state and dispatches exports).
func TestPermissionsAreLeastPerJob(t *testing.T) {
	write := map[string]map[string]any{
		OutputDir + "/watch-hf.yml:watch": {"contents": "write", "actions": "write"},
	}
	for name, files := range renders(t) {
		for p, data := range files {
			d := decode(t, data)
			assert.Equal(t, map[string]any{}, d["permissions"], "%s (%s): top-level permissions", p, name)
			for id, job := range d.jobs() {
				want, ok := write[p+":"+id]
				if !ok {
					want = map[string]any{"contents": "read"}
				}
				assert.Equal(t, want, job["permissions"], "%s jobs.%s (%s)", p, id, name)
				minutes, _ := job["timeout-minutes"].(int)
				assert.True(t, minutes > 0 && minutes <= 360, "%s jobs.%s (%s): timeout-minutes %v", p, id, name, job["timeout-minutes"])
			}
		}
	}
}

// TestConcurrencyPerModelAndBackend: two runs for one model and backend queue; other
// models and backends run beside them.
func TestConcurrencyPerModelAndBackend(t *testing.T) {
	files := renders(t)["every command"]
	groups := map[string]bool{}
	for _, b := range backend.Exportable() {
		d := decode(t, files[OutputDir+"/export-"+b.Name+".yml"])
		group, _ := d.at("concurrency", "group").(string)
		assert.Equal(t, "export-"+b.Name+"-${{ inputs.model_id }}", group)
		assert.Equal(t, false, d.at("concurrency", "cancel-in-progress"), "a queued export must not cancel the running one")
		groups[group] = true
	}
	assert.Len(t, groups, len(backend.Exportable()), "backends share a concurrency group")
}

var (
	usesLine  = regexp.MustCompile(`^\s*(?:- )?uses:\s*(\S+)(.*)$`)
	pinnedUse = regexp.MustCompile(`^([^@\s]+)@([0-9a-f]{40})$`)
)

// TestActionsArePinnedFromTheTable: a third-party action is used at the full commit of the
// pin table with its tag in a comment; a local action exists.
func TestActionsArePinnedFromTheTable(t *testing.T) {
	pins := sourceOf(t, CLICommands, nil).Pins
	used := map[string]bool{}
	for name, files := range renders(t) {
		for p, data := range files {
			for n, line := range strings.Split(string(data), "\n") {
				m := usesLine.FindStringSubmatch(line)
				if m == nil {
					continue
				}
				where := fmt.Sprintf("%s:%d (%s)", p, n+1, name)
				if strings.HasPrefix(m[1], "./") {
					assert.FileExists(t, filepath.Join(root, m[1], "action.yml"), "%s uses a local action that does not exist", where)
					continue
				}
				pm := pinnedUse.FindStringSubmatch(m[1])
				if !assert.NotNil(t, pm, "%s: %s is not pinned to a full commit", where, m[1]) {
					continue
				}
				pin, ok := pins[pm[1]]
				if assert.True(t, ok, "%s: %s is not in the pin table", where, pm[1]) {
					assert.Equal(t, pin.Commit, pm[2], where)
					assert.Equal(t, " # "+pin.Tag, m[2], where)
				}
				used[pm[1]] = true
			}
		}
	}
	// The composite actions take their pins from the same table (internal/action holds them to it).
	actions, err := filepath.Glob(filepath.Join(root, "actions", "*", "action.yml"))
	require.NoError(t, err)
	for _, p := range append(actions, filepath.Join(root, "action.yml")) {
		data, err := os.ReadFile(p)
		require.NoError(t, err)
		for _, line := range strings.Split(string(data), "\n") {
			if m := usesLine.FindStringSubmatch(line); m != nil {
				if pm := pinnedUse.FindStringSubmatch(m[1]); pm != nil {
					used[pm[1]] = true
				}
			}
		}
	}
	for action := range pins {
		assert.True(t, used[action], "%s is pinned but no workflow or action uses it", action)
	}
}

var (
	cliCall  = regexp.MustCompile(`exe-expo ([a-z][a-z-]*)([^\n|;&]*)`)
	flagWord = regexp.MustCompile(`(?:^|\s)--([a-z][a-z-]*)`)
)

// TestEveryCommandAWorkflowRunsExists: the committed workflows run only commands the CLI
// has, with flags it takes, so a workflow cannot call a tool that is not there (the seed
// called a missing action three times and its lint did not notice).
func TestEveryCommandAWorkflowRunsExists(t *testing.T) {
	calls := 0
	for p, data := range renders(t)["today's CLI"] {
		for id, job := range decode(t, data).jobs() {
			for _, s := range steps(job) {
				run, _ := s["run"].(string)
				run = strings.ReplaceAll(run, "\\\n", " ")
				for _, m := range cliCall.FindAllStringSubmatch(run, -1) {
					calls++
					help, ok := commandHelp(m[1])
					if !assert.True(t, ok, "%s jobs.%s runs exe-expo %s, which the CLI does not have", p, id, m[1]) {
						continue
					}
					for _, f := range flagWord.FindAllStringSubmatch(m[2], -1) {
						takes := regexp.MustCompile(`\n  -` + f[1] + `[ \n]`).MatchString(help)
						assert.True(t, takes, "%s jobs.%s: exe-expo %s has no flag --%s", p, id, m[1], f[1])
					}
				}
			}
		}
	}
	assert.Greater(t, calls, 10, "the scan found too few CLI calls to mean anything")
}

func commandHelp(name string) (string, bool) {
	var out strings.Builder
	code := cli.Main(context.Background(), []string{"help", name}, strings.NewReader(""), &out, &strings.Builder{})
	return strings.ReplaceAll(out.String(), "\t", " ") + "\n", code == cli.ExitOK
}

// TestWaitingJobsAppearWithTheirCommands: what runs a command the CLI lacks is left out of
// the committed files and rendered once the command exists.
func TestWaitingJobsAppearWithTheirCommands(t *testing.T) {
	today, every := renders(t)["today's CLI"], renders(t)["every command"]
	for _, tc := range []struct {
		command string
		file    string
		job     string
	}{
		{"solve", "export-xnnpack.yml", "solve"},
		{"publish", "export-xnnpack.yml", "publish"},
		{"publish", "export-mediatek.yml", "publish"},
		{"watch", "watch-hf.yml", "watch"},
		{"audit", "audit-published.yml", "audit"},
	} {
		p := OutputDir + "/" + tc.file
		require.Contains(t, every, p)
		assert.Contains(t, decode(t, every[p]).jobs(), tc.job, "%s with every command", p)
		if CLICommands(tc.command) {
			continue
		}
		if data, ok := today[p]; ok {
			assert.NotContains(t, decode(t, data).jobs(), tc.job, "%s renders %s before the CLI has %s", p, tc.job, tc.command)
		}
	}
	// GPTQ is XNNPACK's alone: no other export workflow gets a solve job.
	for _, b := range backend.Exportable() {
		_, solves := decode(t, every[OutputDir+"/export-"+b.Name+".yml"]).jobs()["solve"]
		assert.Equal(t, b.Actions.GPTQ, solves, b.Name)
	}
	_, err := os.Stat(filepath.Join(root, OutputDir, "watch-hf.yml"))
	assert.Equal(t, CLICommands("watch"), err == nil, "watch-hf.yml is committed exactly when the CLI has watch")
}
