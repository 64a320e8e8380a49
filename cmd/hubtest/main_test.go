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
)

func TestMain(m *testing.M) {
	if os.Getenv("HUBTEST_RUN_MAIN") == "1" {
		main()
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// TestProcess runs the command as a process: it prints its URL, serves a seeded repo, and
// exits 0 on SIGTERM.
func TestProcess(t *testing.T) {
	seed := t.TempDir()
	if err := os.WriteFile(filepath.Join(seed, "config.json"), []byte(`{"model_type":"qwen3"}`), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(os.Args[0], "--dir", t.TempDir(), "--token", "hf_only", "--user", "org", "--seed", "org/seeded="+seed)
	cmd.Env = append(os.Environ(), "HUBTEST_RUN_MAIN=1")
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil {
		t.Fatalf("no URL printed: %v", err)
	}
	url := strings.TrimSpace(line)
	if !strings.HasPrefix(url, "http://127.0.0.1:") {
		t.Fatalf("first line %q is not a loopback URL", url)
	}
	resp, err := http.Get(url + "/org/seeded/resolve/main/config.json")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || !strings.Contains(string(body), "qwen3") {
		t.Errorf("seeded file: %d %s", resp.StatusCode, body)
	}
	req, _ := http.NewRequest("GET", url+"/api/whoami-v2", nil)
	req.Header.Set("Authorization", "Bearer hf_other")
	resp, err = http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 401 {
		t.Errorf("a token other than --token: status %d, want 401", resp.StatusCode)
	}
	_ = cmd.Process.Signal(syscall.SIGTERM)
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("exit after SIGTERM: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("did not stop on SIGTERM")
	}
}

func TestSeedSpec(t *testing.T) {
	if err := seedRepos(nil, "org/no-equals-sign"); err == nil {
		t.Error("a --seed without = was accepted")
	}
}
