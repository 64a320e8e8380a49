package main

import (
	"bufio"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestMain(m *testing.M) {
	if os.Getenv("HUBTEST_RUN_MAIN") == "1" {
		main()
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// TestProcess runs the command as a process: it prints its URL, serves a seeded repo, and
// exits 0 on SIGTERM. The SIGTERM goes out as soon as the URL is read, the earliest a
// caller can send it, so a handler installed after the URL is printed fails here.
func TestProcess(t *testing.T) {
	seed := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(seed, "config.json"), []byte(`{"model_type":"qwen3"}`), 0o644))
	url, cmd := startHubtest(t, "--dir", t.TempDir(), "--token", "hf_only", "--user", "org", "--seed", "org/seeded="+seed)

	resp, err := http.Get(url + "/org/seeded/resolve/main/config.json")
	require.NoError(t, err)
	body, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	require.NoError(t, err)
	assert.Equal(t, http.StatusOK, resp.StatusCode, "seeded file")
	assert.Contains(t, string(body), "qwen3", "seeded file")

	req, err := http.NewRequest("GET", url+"/api/whoami-v2", nil)
	require.NoError(t, err)
	req.Header.Set("Authorization", "Bearer hf_other")
	resp, err = http.DefaultClient.Do(req)
	require.NoError(t, err)
	resp.Body.Close()
	assert.Equal(t, http.StatusUnauthorized, resp.StatusCode, "a token other than --token")

	assert.NoError(t, stopHubtest(t, cmd), "exit after SIGTERM")
}

// TestStopRightAfterURL sends SIGTERM the moment the URL line arrives, with no request in
// between: the window in which a late signal handler lets the signal kill the process.
func TestStopRightAfterURL(t *testing.T) {
	for i := range 5 {
		_, cmd := startHubtest(t, "--dir", t.TempDir())
		require.NoError(t, stopHubtest(t, cmd), "run %d: exit after SIGTERM", i)
	}
}

// startHubtest runs this test binary as the command and returns the URL it printed.
func startHubtest(t *testing.T, args ...string) (string, *exec.Cmd) {
	t.Helper()
	cmd := exec.Command(os.Args[0], args...)
	cmd.Env = append(os.Environ(), "HUBTEST_RUN_MAIN=1")
	out, err := cmd.StdoutPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())
	t.Cleanup(func() { _ = cmd.Process.Kill() })
	line, err := bufio.NewReader(out).ReadString('\n')
	require.NoError(t, err, "no URL printed")
	url := strings.TrimSpace(line)
	require.True(t, strings.HasPrefix(url, "http://127.0.0.1:"), "first line %q is not a loopback URL", url)
	return url, cmd
}

// stopHubtest sends SIGTERM and returns how the process ended. The limit only catches a
// process that ignores the signal (it would serve forever); a clean stop takes milliseconds.
func stopHubtest(t *testing.T, cmd *exec.Cmd) error {
	t.Helper()
	require.NoError(t, cmd.Process.Signal(syscall.SIGTERM))
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		return err
	case <-time.After(time.Minute):
		require.FailNow(t, "did not stop on SIGTERM within a minute")
		return nil
	}
}

func TestSeedSpec(t *testing.T) {
	err := seedRepos(nil, "org/no-equals-sign")
	require.Error(t, err, "a --seed without = was accepted")
	assert.Contains(t, err.Error(), "want org/name=path")
}
