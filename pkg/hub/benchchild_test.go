package hub_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/experimentalmachines/exe-expo/pkg/hub"
)

// opSeconds finds the time a client measured around its operation: op_s=N from our
// helper, "seconds":N in the JS driver's result.
var opSeconds = regexp.MustCompile(`(?:^op_s=|"seconds":)([0-9.eE+-]+)`)

// runChild runs cmd and returns its wall time, CPU time (getrusage: not inherited), the
// load average before it started, the time it measured itself and the VmHWM it printed as
// vmhwm_kib=N.
func runChild(b *testing.B, cmd *exec.Cmd) sample {
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	load := loadAvg()
	start := time.Now()
	err := cmd.Run()
	wall := time.Since(start).Seconds()
	if err != nil {
		b.Fatalf("%v: %v\n%s", cmd.Args, err, out.String())
	}
	ru := cmd.ProcessState.SysUsage().(*syscall.Rusage)
	s := sample{wall: wall, cpu: tv(ru.Utime) + tv(ru.Stime), load: load}
	for _, line := range strings.Split(out.String(), "\n") {
		line = strings.TrimSpace(line)
		if v, ok := strings.CutPrefix(line, "vmhwm_kib="); ok {
			s.hwmKiB, _ = strconv.ParseInt(v, 10, 64)
		}
		if m := opSeconds.FindStringSubmatch(line); m != nil {
			s.op, _ = strconv.ParseFloat(m[1], 64)
		}
	}
	if s.hwmKiB == 0 || s.op == 0 {
		b.Fatalf("%v printed no vmhwm_kib or time line:\n%s", cmd.Args, out.String())
	}
	return s
}

func tv(t syscall.Timeval) float64 { return float64(t.Sec) + float64(t.Usec)/1e6 }

func loadAvg() float64 {
	b, _ := os.ReadFile("/proc/loadavg")
	f, _ := strconv.ParseFloat(strings.Fields(string(b) + " 0")[0], 64)
	return f
}

// benchCommit names the commit the benchmark runs at, with "+dirty" when the client's code
// (pkg/hub, internal/fileutil, the JS driver) differs from it, so a table row says what code it
// measured.
func benchCommit() string {
	out, err := exec.Command("git", "rev-parse", "--short=10", "HEAD").Output()
	if err != nil {
		return "unknown"
	}
	c := strings.TrimSpace(string(out))
	if st, err := exec.Command("git", "status", "--porcelain", "--untracked-files=no", "--", ".", "../../internal/fileutil").Output(); err == nil && len(st) > 0 {
		c += "+dirty"
	}
	return c
}

// helperCmd starts this test binary as TestHelper<op>, our client's side of a cell.
func helperCmd(op, url, file, sha string) *exec.Cmd {
	cmd := exec.Command(os.Args[0], "-test.run=^TestHelper"+op+"$")
	cmd.Env = append(os.Environ(), "EXE_EXPO_HUB_HELPER=1", "HELPER_URL="+url, "HELPER_FILE="+file, "HELPER_SHA="+sha)
	return cmd
}

// jsCmd starts driver.mjs: upload creates bench/up and uploads file; download-verify
// writes bench/down's model.pte to file, hashing it on the way and failing unless its
// sha256 is sha.
func jsCmd(b *testing.B, url, mode, file, sha string) *exec.Cmd {
	node := needNode(b)
	repo, create := "bench/down", false
	if mode == "upload" {
		repo, create = "bench/up", true
	}
	arg, err := json.Marshal(map[string]any{"mode": mode, "hubUrl": url, "token": testToken, "repo": repo, "create": create,
		"files": []map[string]string{{"path": "model.pte", "local": file, "sha256": sha}}})
	if err != nil {
		b.Fatal(err)
	}
	cmd := exec.Command(node, "driver.mjs", string(arg))
	cmd.Dir = jsDir
	return cmd
}

// TestHelperUpload is a child process of BenchmarkHubClients: create the repo and commit
// one file with our client, then print the commit's time and its own peak memory.
func TestHelperUpload(t *testing.T) {
	if os.Getenv("EXE_EXPO_HUB_HELPER") != "1" {
		t.Skip("child process of BenchmarkHubClients")
	}
	c := hub.New(hub.Options{Endpoint: os.Getenv("HELPER_URL"), Token: testToken})
	ctx := context.Background()
	if _, err := c.CreateRepo(ctx, "bench/up", hub.RepoOptions{}); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	_, err := c.Commit(ctx, hub.CommitRequest{Repo: "bench/up", Summary: "bench",
		Add: []hub.CommitFile{{PathInRepo: "model.pte", LocalPath: os.Getenv("HELPER_FILE"), SHA256: os.Getenv("HELPER_SHA")}}})
	if err != nil {
		t.Fatal(err)
	}
	fmt.Printf("op_s=%f\n", time.Since(start).Seconds())
	printVmHWM(t)
}

// TestHelperDownload is a child process of BenchmarkHubClients: download bench/down's
// model.pte with our client (which checks the sha256 the server announces while writing),
// then print the download's time and its own peak memory.
func TestHelperDownload(t *testing.T) {
	if os.Getenv("EXE_EXPO_HUB_HELPER") != "1" {
		t.Skip("child process of BenchmarkHubClients")
	}
	c := hub.New(hub.Options{Endpoint: os.Getenv("HELPER_URL"), Token: testToken})
	start := time.Now()
	if _, err := c.Download(context.Background(), "bench/down", "main", "model.pte", os.Getenv("HELPER_FILE")); err != nil {
		t.Fatal(err)
	}
	fmt.Printf("op_s=%f\n", time.Since(start).Seconds())
	printVmHWM(t)
}

// printVmHWM prints this process's peak resident set (VmHWM), which counts only pages this
// process touched since its exec.
func printVmHWM(t *testing.T) {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			fmt.Printf("vmhwm_kib=%s\n", strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")))
			return
		}
	}
	t.Fatal("/proc/self/status has no VmHWM line")
}

// makeRandomFile writes n incompressible bytes, streamed.
func makeRandomFile(b *testing.B, path string, n int64) {
	if st, err := os.Stat(path); err == nil && st.Size() == n {
		return
	}
	f, err := os.Create(path)
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	w := bufio.NewWriterSize(f, 4<<20)
	r := rand.NewChaCha8([32]byte{1, 2, 3})
	buf := make([]byte, 4<<20)
	for left := n; left > 0; left -= int64(len(buf)) {
		chunk := buf[:min(int64(len(buf)), left)]
		_, _ = r.Read(chunk)
		if _, err := w.Write(chunk); err != nil {
			b.Fatal(err)
		}
	}
	if err := w.Flush(); err != nil {
		b.Fatal(err)
	}
}

func envOr(k, def string) string {
	if v := os.Getenv(k); v != "" {
		return v
	}
	return def
}
