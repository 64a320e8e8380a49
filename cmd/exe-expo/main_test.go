package main

import (
	"bufio"
	"bytes"
	"io"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/experimentalmachines/exe-expo/internal/cli"
	"github.com/experimentalmachines/exe-expo/internal/export/exporttest"
	"github.com/experimentalmachines/exe-expo/internal/report"
	"github.com/experimentalmachines/exe-expo/internal/smoke"
)

// runMainEnv makes the test binary run main instead of the tests, so that a test can run
// the real command, signal handling included, as a process of its own.
const runMainEnv = "EXE_EXPO_TEST_RUN_MAIN"

func TestMain(m *testing.M) {
	if os.Getenv(runMainEnv) == "1" {
		main() // exits
	}
	os.Exit(m.Run())
}

// stopLimit bounds how long a signalled command may take to exit. The commands take tens
// of milliseconds; the bound is generous so that a loaded machine cannot fail the test,
// and still far below the seconds a command that ignores the signal would take.
const stopLimit = 5 * time.Second

// blocked is one command that blocks until it is stopped: its arguments and environment,
// the stderr line (or the event) that says it is blocked, and the folder that must hold
// no half-written file afterwards.
type blocked struct {
	name string
	// setup prepares the command and returns its arguments, its extra environment, the
	// folder to check afterwards, and a channel closed when the command is blocked (nil:
	// wait for readyLine on stderr).
	setup     func(t *testing.T) (args, env []string, out string, ready <-chan struct{})
	readyLine string
	// tool is a path in the command line of the command's subprocess, which must not
	// outlive it ("": none).
	tool string
}

// TestSignalStopsCommand sends SIGTERM or SIGINT to a command while it waits (export on its
// tool, publish and watch on a Hub that never answers): it exits at once with 130 and says
// why, its tool is gone, and its folder holds no file it had started to write.
func TestSignalStopsCommand(t *testing.T) {
	standin := t.TempDir()
	require.NoError(t, exporttest.BuildStandin(standin))
	signals := []syscall.Signal{syscall.SIGTERM, syscall.SIGINT}
	for _, tc := range blockedCommands(standin) {
		for _, sig := range signals {
			t.Run(tc.name+"/"+sig.String(), func(t *testing.T) {
				stopsOn(t, tc, sig)
			})
		}
	}
}

// blockedCommands are the commands TestSignalStopsCommand stops, each set up to block:
// export on the stand-in tool in standin, publish and watch on a Hub that never answers.
func blockedCommands(standin string) []blocked {
	return []blocked{
		{
			name: "export waiting on its tool",
			setup: func(t *testing.T) ([]string, []string, string, <-chan struct{}) {
				model := exporttest.ModelDir(t, "Qwen/Qwen3-0.6B")
				root := t.TempDir()
				out := filepath.Join(root, "out")
				return []string{"export", "--backend", "xnnpack", model, "--context", "2048", "--out", out,
					"--work", filepath.Join(root, "work"), "--python", filepath.Join(standin, "python-sleep")}, nil, root, nil
			},
			// the stand-in prints this, then sleeps an hour before it would write the .pte
			readyLine: "Checkpoint dtype: torch.bfloat16",
			tool:      filepath.Join(standin, "python-sleep"),
		},
		{
			name: "publish waiting on the Hub",
			setup: func(t *testing.T) ([]string, []string, string, <-chan struct{}) {
				out := filepath.Join(t.TempDir(), "out")
				export := exec.Command(os.Args[0], "export", "--backend", "xnnpack", exporttest.ModelDir(t, "Qwen/Qwen3-0.6B"),
					"--context", "2048", "--out", out, "--work", filepath.Join(t.TempDir(), "work"),
					"--python", filepath.Join(standin, "python-ok"))
				export.Env = append(os.Environ(), runMainEnv+"=1", "EXE_EXPO_OFFLINE=")
				b, err := export.CombinedOutput()
				require.NoError(t, err, "the export to publish: %s", b)
				markSmoked(t, filepath.Join(out, "xnnpack", report.Name("2k")))
				hubURL, asked := silentServer(t)
				return []string{"publish", out}, []string{"HF_ENDPOINT=" + hubURL, "HF_TOKEN=hf_test", "GITHUB_STEP_SUMMARY=", "GITHUB_OUTPUT="}, out, asked
			},
		},
		{
			name: "watch waiting on the Hub",
			setup: func(t *testing.T) ([]string, []string, string, <-chan struct{}) {
				hubURL, asked := silentServer(t)
				gh := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
					t.Errorf("GitHub asked %s %s before the Hub answered", r.Method, r.URL)
				}))
				t.Cleanup(gh.Close)
				dir := t.TempDir()
				env := []string{"HF_ENDPOINT=" + hubURL, "HF_TOKEN=", "GITHUB_API_URL=" + gh.URL,
					"GITHUB_REPOSITORY=experimentalmachines/exe-expo", "GITHUB_STEP_SUMMARY=", "GITHUB_ACTIONS="}
				return []string{"watch", "--state", filepath.Join(dir, "seen.json"), "--summary", filepath.Join(dir, "summary.md")}, env, dir, asked
			},
		},
	}
}

// stopsOn starts tc's command, sends it sig once it blocks, and checks it stopped at once
// with 130, said why, wrote nothing and left no tool behind.
func stopsOn(t *testing.T, tc blocked, sig syscall.Signal) {
	args, env, out, ready := tc.setup(t)
	before := files(t, out)
	p := start(t, args, env, tc.readyLine)
	if ready == nil {
		ready = p.ready
	}
	select {
	case <-ready:
	case <-p.exited:
		t.Fatalf("the command exited before it blocked; stderr:\n%s", p.stderr())
	case <-time.After(time.Minute):
		t.Fatalf("the command did not block within a minute; stderr:\n%s", p.stderr())
	}
	sent := time.Now()
	require.NoError(t, p.cmd.Process.Signal(sig))
	select {
	case <-p.exited:
	case <-time.After(stopLimit):
		t.Fatalf("the command still runs %s after %s; stderr:\n%s", stopLimit, sig, p.stderr())
	}
	t.Logf("exited %s after %s", time.Since(sent).Round(time.Millisecond), sig)
	assert.Equal(t, cli.ExitInterrupted, p.cmd.ProcessState.ExitCode(), "stderr:\n%s", p.stderr())
	assert.Contains(t, p.stderr(), "exe-expo: "+args[0]+" stopped: "+sig.String()+" signal received")
	assert.Equal(t, before, files(t, out), "files written or left half-written")
	if tc.tool != "" {
		left := processesOf(tc.tool)
		assert.Empty(t, left, "the command's tool outlived it")
		for _, pid := range left {
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
	}
}

// markSmoked records a passed smoke run in the report at p, which publish requires of an
// XNNPACK file; the stand-in toolchain has no runner to smoke it with.
func markSmoked(t *testing.T, p string) {
	t.Helper()
	r, err := report.Read(p)
	require.NoError(t, err)
	r.Smoke = &smoke.Result{Kind: "smoke", Passed: true, Problems: []string{}, Reply: "Paris", Answered: true}
	require.NoError(t, report.Write(p, r))
}

// silentServer is a Hub that takes every request and never answers it; asked is closed
// at the first request.
func silentServer(t *testing.T) (url string, asked <-chan struct{}) {
	t.Helper()
	ch := make(chan struct{})
	var once sync.Once
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		once.Do(func() { close(ch) })
		// with the body read, the server watches the connection, so the context ends
		// when the stopped command's connection closes
		_, _ = io.Copy(io.Discard, r.Body)
		<-r.Context().Done()
	}))
	t.Cleanup(srv.Close)
	return srv.URL, ch
}

// proc is the command running as a process of its own.
type proc struct {
	cmd    *exec.Cmd
	mu     sync.Mutex
	errBuf bytes.Buffer
	ready  chan struct{} // closed when stderr has shown the ready line
	exited chan struct{} // closed when the process has exited and its stderr is read
}

func (p *proc) stderr() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.errBuf.String()
}

// start runs the test binary as exe-expo with args. readyLine, when set, closes ready at
// the first stderr line that contains it.
func start(t *testing.T, args, env []string, readyLine string) *proc {
	t.Helper()
	p := &proc{ready: make(chan struct{}), exited: make(chan struct{})}
	p.cmd = exec.Command(os.Args[0], args...)
	p.cmd.Env = append(append(os.Environ(), runMainEnv+"=1", "EXE_EXPO_OFFLINE="), env...)
	p.cmd.Stdout = io.Discard
	errPipe, err := p.cmd.StderrPipe()
	require.NoError(t, err)
	require.NoError(t, p.cmd.Start())
	t.Cleanup(func() { // a test that failed before the command exited
		select {
		case <-p.exited:
		default:
			_ = p.cmd.Process.Kill()
			<-p.exited
		}
	})
	go func() {
		var once sync.Once
		sc := bufio.NewScanner(errPipe)
		for sc.Scan() {
			p.mu.Lock()
			p.errBuf.WriteString(sc.Text() + "\n")
			p.mu.Unlock()
			if readyLine != "" && strings.Contains(sc.Text(), readyLine) {
				once.Do(func() { close(p.ready) })
			}
		}
		_ = p.cmd.Wait()
		close(p.exited)
	}()
	return p
}

// files lists every file under dir with its size; folders are left out, since a command
// may create its output folder before it is stopped.
func files(t *testing.T, dir string) map[string]int64 {
	t.Helper()
	out := map[string]int64{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		out[rel] = info.Size()
		return nil
	})
	require.NoError(t, err)
	return out
}

// processesOf lists the pids of running processes whose command line holds fragment.
func processesOf(fragment string) []int {
	var pids []int
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if err != nil || !bytes.Contains(b, []byte(fragment)) {
			continue
		}
		stat, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
		if i := bytes.LastIndexByte(stat, ')'); err == nil && i > 0 && bytes.HasPrefix(bytes.TrimSpace(stat[i+1:]), []byte("Z")) {
			continue // exited, waiting for its reaper
		}
		pids = append(pids, pid)
	}
	return pids
}
