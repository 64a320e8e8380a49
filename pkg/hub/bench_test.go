package hub_test

import (
	"bufio"
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/experimentalmachines/exe-expo/pkg/fileutil"
	"github.com/experimentalmachines/exe-expo/pkg/hub"
	"github.com/experimentalmachines/exe-expo/pkg/hub/hubtest"
)

// BenchmarkUpload uploads 1 GiB and 4 GiB files to hubtest on loopback with our client (in
// a child process, hashing included or the sha256 passed in) and with @huggingface/hub
// (node), and reports each one's throughput, peak RSS and CPU time (getrusage of the
// child; CPU time is the figure that holds on a loaded machine). It
// writes the files under EXE_EXPO_HUB_BENCH_DIR (default: the test temp dir) and needs
// about 3× the largest size free on disk.
//
//	EXE_EXPO_HUB_BENCH=1 go test -run '^$' -bench Upload -benchtime 1x -timeout 60m ./pkg/hub
func BenchmarkUpload(b *testing.B) {
	if os.Getenv("EXE_EXPO_HUB_BENCH") != "1" {
		b.Skip("set EXE_EXPO_HUB_BENCH=1 to upload GiB-sized files")
	}
	sizes := strings.Split(envOr("EXE_EXPO_HUB_BENCH_SIZES", "1024,4096"), ",")
	for _, s := range sizes {
		mib, err := strconv.Atoi(strings.TrimSpace(s))
		if err != nil {
			b.Fatalf("EXE_EXPO_HUB_BENCH_SIZES: %v", err)
		}
		dir := envOr("EXE_EXPO_HUB_BENCH_DIR", b.TempDir())
		file := filepath.Join(dir, fmt.Sprintf("bench-%dMiB.pte", mib))
		makeRandomFile(b, file, int64(mib)<<20)
		digest, err := fileutil.Hash(file)
		if err != nil {
			b.Fatal(err)
		}
		sha := digest.SHA256
		clients := []struct {
			name string
			cmd  func(url string) *exec.Cmd
		}{
			{"go", func(url string) *exec.Cmd { return helperCmd(url, file, "") }},
			{"go-known-sha256", func(url string) *exec.Cmd { return helperCmd(url, file, sha) }},
			{"js", func(url string) *exec.Cmd { return jsUploadCmd(b, url, file) }},
		}
		for _, c := range clients {
			b.Run(fmt.Sprintf("%s/%dMiB", c.name, mib), func(b *testing.B) {
				for range b.N {
					secs, ru := uploadOnce(b, dir, c.cmd)
					b.ReportMetric(float64(int64(mib)<<20)/secs/1e6, "MB/s")
					b.ReportMetric(float64(ru.Maxrss<<10)/(1<<20), "peakRSS-MiB")
					b.ReportMetric(tv(ru.Utime)+tv(ru.Stime), "cpu-s")
					b.ReportMetric(0, "ns/op")
				}
			})
		}
		_ = os.Remove(file)
	}
}

// uploadOnce runs one upload into a fresh server (so nothing is deduplicated) and returns
// the child's wall time and resource usage (peak RSS, CPU time).
func uploadOnce(b *testing.B, dir string, mk func(url string) *exec.Cmd) (float64, *syscall.Rusage) {
	srvDir, err := os.MkdirTemp(dir, "hub-")
	if err != nil {
		b.Fatal(err)
	}
	defer os.RemoveAll(srvDir)
	srv, err := hubtest.NewServer(srvDir)
	if err != nil {
		b.Fatal(err)
	}
	defer srv.Close()
	srv.ChunkSize = 16 << 20
	cmd := mk(srv.URL)
	out, err := os.CreateTemp(dir, "log-")
	if err != nil {
		b.Fatal(err)
	}
	defer os.Remove(out.Name())
	cmd.Stdout, cmd.Stderr = out, out
	start := time.Now()
	err = cmd.Run()
	secs := time.Since(start).Seconds()
	if err != nil {
		log, _ := os.ReadFile(out.Name())
		b.Fatalf("%v: %v\n%s", cmd.Args[0], err, log)
	}
	if got := srv.Files("bench/up", "main"); len(got) < 2 {
		b.Fatalf("nothing committed: %v", got)
	}
	return secs, cmd.ProcessState.SysUsage().(*syscall.Rusage)
}

func tv(t syscall.Timeval) float64 { return float64(t.Sec) + float64(t.Usec)/1e6 }

func helperCmd(url, file, sha string) *exec.Cmd {
	cmd := exec.Command(os.Args[0], "-test.run=^TestHelperUpload$")
	cmd.Env = append(os.Environ(), "EXE_EXPO_HUB_HELPER=1", "HELPER_URL="+url, "HELPER_FILE="+file, "HELPER_SHA="+sha)
	return cmd
}

func jsUploadCmd(b *testing.B, url, file string) *exec.Cmd {
	node := needNode(b)
	arg := fmt.Sprintf(`{"mode":"upload","hubUrl":%q,"token":%q,"repo":"bench/up","create":true,"files":[{"path":"model.pte","local":%q}]}`, url, testToken, file)
	cmd := exec.Command(node, "driver.mjs", arg)
	cmd.Dir = jsDir
	return cmd
}

// TestHelperUpload is the child process of BenchmarkUpload: create the repo and commit one
// file with our client.
func TestHelperUpload(t *testing.T) {
	if os.Getenv("EXE_EXPO_HUB_HELPER") != "1" {
		t.Skip("child process of BenchmarkUpload")
	}
	c := hub.New(hub.Options{Endpoint: os.Getenv("HELPER_URL"), Token: testToken})
	ctx := context.Background()
	if _, err := c.CreateRepo(ctx, "bench/up", hub.RepoOptions{}); err != nil {
		t.Fatal(err)
	}
	_, err := c.Commit(ctx, hub.CommitRequest{Repo: "bench/up", Summary: "bench",
		Add: []hub.CommitFile{{PathInRepo: "model.pte", LocalPath: os.Getenv("HELPER_FILE"), SHA256: os.Getenv("HELPER_SHA")}}})
	if err != nil {
		t.Fatal(err)
	}
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
