package cli

import (
	"bytes"
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// closedPort is a loopback address nothing listens on: a port the kernel handed out and
// took back.
func closedPort(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	addr := l.Addr().String()
	require.NoError(t, l.Close())
	return addr
}

// forbiddenServer fails the test at any request: a command that must refuse its flags
// before it touches the network is pointed at it.
func forbiddenServer(t *testing.T) string {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		t.Errorf("request %s %s sent before the flags were checked", r.Method, r.URL)
		w.WriteHeader(http.StatusTeapot)
	}))
	t.Cleanup(srv.Close)
	return srv.URL
}

// networkEnv points the Hub and GitHub clients at hubURL and ghURL.
func networkEnv(t *testing.T, hubURL, ghURL string) {
	t.Setenv("HF_ENDPOINT", hubURL)
	t.Setenv("HF_TOKEN", "")
	t.Setenv("GITHUB_API_URL", ghURL)
	t.Setenv("GITHUB_REPOSITORY", "experimentalmachines/exe-expo")
	t.Setenv("GITHUB_REF_NAME", "main")
	t.Setenv("GITHUB_STEP_SUMMARY", "")
	t.Setenv("GITHUB_ACTIONS", "")
}

// unreachableLimit bounds how long a command may take to say it cannot reach a server.
// The commands take about a second (one retry after a 1 s wait); the 23 s the client's
// five retries took are what the bound catches, with room for a loaded machine.
const unreachableLimit = 5 * time.Second

// TestUnreachableFailsInWords points watch and audit at a closed loopback port and at a
// host name that cannot resolve (.invalid is reserved for that): each fails within
// unreachableLimit with a sentence that names the host, not Go's "dial tcp" text.
func TestUnreachableFailsInWords(t *testing.T) {
	port := closedPort(t)
	endpoints := []struct {
		name, url, want string
	}{
		{"closed port", "http://" + port, "cannot reach " + port + ": connection refused (nothing listens there: is the address right?)"},
		{"no such host", "http://hub.exe-expo.invalid", "cannot reach hub.exe-expo.invalid: no such host (is the machine offline?)"},
	}
	work := t.TempDir()
	// audit checks its python before the Hub: give it one whose probe passes, so the test
	// does not depend on the machine's EXE_EXPO_PYTHON.
	py := filepath.Join(work, "python")
	require.NoError(t, os.WriteFile(py, []byte(probeAnswer(`{"executorch": "1.4.0", "torch": "2.13.0", "torchao": "0.18.0", "transformers": "5.0.0rc1"}`)+"exit 1\n"), 0o755))
	commands := []struct {
		name string
		args []string
		// env points the client the command calls first at url; the other at a server
		// that fails the test
		env func(t *testing.T, url string)
	}{
		{"watch, Hub", []string{"watch", "--state", filepath.Join(work, "seen.json")},
			func(t *testing.T, url string) { networkEnv(t, url, forbiddenServer(t)) }},
		{"watch, GitHub", []string{"watch", "--state", "seen.json", "--state-branch", "watch-state"},
			func(t *testing.T, url string) { networkEnv(t, forbiddenServer(t), url) }},
		{"audit, Hub", []string{"audit", "HuggingFaceTB/SmolLM2-360M-Instruct", "--work", filepath.Join(work, "audit"), "--python", py},
			func(t *testing.T, url string) { networkEnv(t, url, forbiddenServer(t)) }},
	}
	for _, c := range commands {
		for _, e := range endpoints {
			t.Run(c.name+"/"+e.name, func(t *testing.T) {
				c.env(t, e.url)
				start := time.Now()
				code, out, errs := run(t, c.args...)
				took := time.Since(start)
				t.Logf("%s in %s", strings.TrimSpace(errs), took.Round(time.Millisecond))
				assert.Equal(t, ExitFailed, code)
				assert.Empty(t, out)
				assert.Contains(t, errs, e.want)
				assert.NotContains(t, errs, "dial tcp")
				assert.Less(t, took, unreachableLimit)
			})
		}
	}
	assert.NoFileExists(t, filepath.Join(work, "seen.json"), "watch saved a state it never read")
}

// TestFlagsCheckedBeforeNetwork gives watch and audit a flag or argument they refuse, with
// the Hub and GitHub at a server that fails the test on any request.
func TestFlagsCheckedBeforeNetwork(t *testing.T) {
	state := filepath.Join(t.TempDir(), "seen.json")
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"watch with an argument", []string{"watch", "--state", state, "Qwen/Qwen3-0.6B"}, "watch: takes no arguments"},
		{"watch without --state", []string{"watch"}, "watch: give --state FILE"},
		{"watch --backfill not a model id", []string{"watch", "--state", state, "--backfill", "Qwen3-0.6B"}, `watch: --backfill "Qwen3-0.6B" is not a Hugging Face model id`},
		{"watch --repo not owner/name", []string{"watch", "--state", state, "--repo", "exe-expo"}, `watch: the GitHub repository "exe-expo" is not `},
		{"watch --config missing", []string{"watch", "--state", state, "--config", filepath.Join(t.TempDir(), "none")}, "watch: "},
		{"audit without a model", []string{"audit"}, "audit: give exactly one SOURCE_MODEL"},
		{"audit --backend the runner cannot run", []string{"audit", "Qwen/Qwen3-0.6B", "--backend", "qnn"}, "audit: --backend qnn: the gate runs files on ExecuTorch's x86 runner"},
		{"audit --backend unknown", []string{"audit", "Qwen/Qwen3-0.6B", "--backend", "coreml"}, "audit: --backend coreml"},
		{"audit --context negative", []string{"audit", "Qwen/Qwen3-0.6B", "--context", "-2048"}, "audit: --context -2048: a window is a positive number of tokens"},
		{"audit --config missing", []string{"audit", "Qwen/Qwen3-0.6B", "--config", filepath.Join(t.TempDir(), "none")}, "audit: "},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			srv := forbiddenServer(t)
			networkEnv(t, srv, srv)
			code, out, errs := run(t, tc.args...)
			assert.Equal(t, ExitFailed, code, errs)
			assert.Empty(t, out)
			assert.Contains(t, errs, tc.want)
		})
	}
	assert.NoFileExists(t, state)
}

// TestInspectRefusesNonRegular: inspect on a named pipe (whose open would wait for a
// writer, past any signal) or a device fails at once, naming the path and what it is.
func TestInspectRefusesNonRegular(t *testing.T) {
	fifo := filepath.Join(t.TempDir(), "model.pte")
	require.NoError(t, mkfifo(t, fifo))
	tests := []struct {
		name, path, want string
	}{
		{"named pipe", fifo, "inspect: " + fifo + " is a named pipe, not a .pte file\n"},
		{"character device", os.DevNull, "inspect: " + os.DevNull + " is a character device, not a .pte file\n"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			type result struct {
				code     int
				out, err string
			}
			done := make(chan result, 1)
			go func() {
				var out, errb bytes.Buffer
				code := Main(context.Background(), []string{"inspect", tc.path}, nil, &out, &errb)
				done <- result{code, out.String(), errb.String()}
			}()
			select {
			case r := <-done:
				assert.Equal(t, ExitFailed, r.code)
				assert.Empty(t, r.out)
				assert.Equal(t, tc.want, r.err)
			case <-time.After(5 * time.Second):
				t.Fatal("inspect has not returned after 5 s: it blocks on the file")
			}
		})
	}
}

// mkfifo makes a named pipe at p. Cleanup opens it for writing, which ends an open for
// reading that blocks on it, so that a failing test leaves no goroutine behind.
func mkfifo(t *testing.T, p string) error {
	t.Cleanup(func() {
		if f, err := os.OpenFile(p, os.O_WRONLY|syscall.O_NONBLOCK, 0); err == nil {
			f.Close()
		}
	})
	return syscall.Mkfifo(p, 0o600)
}
