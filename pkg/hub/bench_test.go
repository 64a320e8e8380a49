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
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

	"github.com/experimentalmachines/exe-expo/pkg/fileutil"
	"github.com/experimentalmachines/exe-expo/pkg/hub"
	"github.com/experimentalmachines/exe-expo/pkg/hub/hubtest"
)

// BenchmarkHubClients uploads and downloads files of each size to and from hubtest on
// loopback with our client and with @huggingface/hub (node), each client in its own child
// process, and prints one Markdown table row per cell with the minimum and median of its
// runs. Runs alternate between the clients (the order reverses every round), so a change in
// the machine's load hits every client alike. A client's peak memory is its own VmHWM, read
// from /proc/self/status just before it exits and printed as its last line: getrusage's
// ru_maxrss of a child starts at its parent's high-water mark (Go forks with CLONE_VM), and
// the parent here holds the server. Every upload is checked on the server (the stored
// object's size and sha256), every download on disk.
//
//	EXE_EXPO_HUB_BENCH=1 go test -run '^$' -bench HubClients -benchtime 1x -timeout 60m ./pkg/hub
//
// EXE_EXPO_HUB_BENCH_SIZES (MiB, default 256,2048), EXE_EXPO_HUB_BENCH_ROUNDS (default 3)
// and EXE_EXPO_HUB_BENCH_DIR (default: the test temp dir; needs about 3× the largest size
// free) change the defaults.
func BenchmarkHubClients(b *testing.B) {
	if os.Getenv("EXE_EXPO_HUB_BENCH") != "1" {
		b.Skip("set EXE_EXPO_HUB_BENCH=1 to move GiB-sized files")
	}
	rounds, err := strconv.Atoi(envOr("EXE_EXPO_HUB_BENCH_ROUNDS", "3"))
	if err != nil || rounds < 1 {
		b.Fatalf("EXE_EXPO_HUB_BENCH_ROUNDS=%q is not a positive number of rounds", os.Getenv("EXE_EXPO_HUB_BENCH_ROUNDS"))
	}
	commit := benchCommit()
	fmt.Printf("| op | client | size | runs | wall s min / median | MB/s at median | CPU s min / median | peak VmHWM MiB min / median | load avg before each run | commit |\n")
	fmt.Printf("| --- | --- | --- | ---: | ---: | ---: | ---: | ---: | --- | --- |\n")
	for _, s := range strings.Split(envOr("EXE_EXPO_HUB_BENCH_SIZES", "256,2048"), ",") {
		mib, err := strconv.Atoi(strings.TrimSpace(s))
		if err != nil || mib < 1 {
			b.Fatalf("EXE_EXPO_HUB_BENCH_SIZES: %q is not a size in MiB", s)
		}
		benchSize(b, envOr("EXE_EXPO_HUB_BENCH_DIR", b.TempDir()), int64(mib), rounds, commit)
	}
	b.ReportMetric(0, "ns/op")
}

// cell is one client doing one operation; run returns the child to start for a fresh run.
type cell struct {
	op, client string
	run        func(b *testing.B) (*exec.Cmd, func())
}

// sample is one run of a cell.
type sample struct {
	wall, cpu, load float64
	hwmKiB          int64
}

// benchSize runs every cell rounds times on one file of mib MiB and prints their rows.
func benchSize(b *testing.B, dir string, mib int64, rounds int, commit string) {
	file := filepath.Join(dir, fmt.Sprintf("bench-%dMiB.pte", mib))
	makeRandomFile(b, file, mib<<20)
	defer os.Remove(file)
	digest, err := fileutil.Hash(file)
	if err != nil {
		b.Fatal(err)
	}
	down := downloadServer(b, dir, file)
	cells := []cell{
		{"upload", "go", uploadCell(dir, file, digest.SHA256, func(url string) *exec.Cmd { return helperCmd("Upload", url, file, "") })},
		{"upload", "go-known-sha256", uploadCell(dir, file, digest.SHA256, func(url string) *exec.Cmd { return helperCmd("Upload", url, file, digest.SHA256) })},
		{"upload", "js", uploadCell(dir, file, digest.SHA256, func(url string) *exec.Cmd { return jsCmd(b, url, "upload", file) })},
		{"download", "go", downloadCell(dir, down.URL, digest.SHA256, func(url, dst string) *exec.Cmd { return helperCmd("Download", url, dst, "") })},
		{"download", "js", downloadCell(dir, down.URL, digest.SHA256, func(url, dst string) *exec.Cmd { return jsCmd(b, url, "download-to", dst) })},
	}
	got := make([][]sample, len(cells))
	for r := range rounds {
		order := make([]int, len(cells))
		for i := range order {
			order[i] = i
		}
		if r%2 == 1 {
			slices.Reverse(order)
		}
		for _, i := range order {
			cmd, check := cells[i].run(b)
			got[i] = append(got[i], runChild(b, cmd))
			check()
		}
	}
	for i, c := range cells {
		fmt.Println(row(c, mib, got[i], commit))
	}
}

// row formats one cell's samples: minimum and median of wall time, CPU time and VmHWM.
func row(c cell, mib int64, s []sample, commit string) string {
	pick := func(f func(sample) float64) (lo, med float64) {
		v := make([]float64, len(s))
		for i, x := range s {
			v[i] = f(x)
		}
		slices.Sort(v)
		return v[0], v[len(v)/2]
	}
	wMin, wMed := pick(func(x sample) float64 { return x.wall })
	cMin, cMed := pick(func(x sample) float64 { return x.cpu })
	hMin, hMed := pick(func(x sample) float64 { return float64(x.hwmKiB) / 1024 })
	var loads []string
	for _, x := range s {
		loads = append(loads, fmt.Sprintf("%.1f", x.load))
	}
	return fmt.Sprintf("| %s | %s | %d MiB | %d | %.2f / %.2f | %.1f | %.2f / %.2f | %.1f / %.1f | %s | %s |",
		c.op, c.client, mib, len(s), wMin, wMed, float64(mib<<20)/wMed/1e6, cMin, cMed, hMin, hMed, strings.Join(loads, ", "), commit)
}

// uploadCell uploads into a fresh server each run (so nothing is deduplicated) and checks
// that the server stored the file whole.
func uploadCell(dir, file, sha string, mk func(url string) *exec.Cmd) func(b *testing.B) (*exec.Cmd, func()) {
	return func(b *testing.B) (*exec.Cmd, func()) {
		srvDir, err := os.MkdirTemp(dir, "hub-")
		if err != nil {
			b.Fatal(err)
		}
		srv, err := hubtest.NewServer(srvDir)
		if err != nil {
			b.Fatal(err)
		}
		srv.ChunkSize = 16 << 20
		return mk(srv.URL), func() {
			defer os.RemoveAll(srvDir)
			defer srv.Close()
			disk, size, lfs, err := srv.FileInfo("bench/up", "main", "model.pte")
			if err != nil || !lfs {
				b.Fatalf("upload not committed as an LFS file: lfs=%v %v", lfs, err)
			}
			st, err := os.Stat(file)
			if err != nil || size != st.Size() {
				b.Fatalf("server holds %d bytes of %s: %v", size, file, err)
			}
			checkSHA(b, disk, sha)
		}
	}
}

// downloadCell downloads into a fresh file each run and checks its sha256.
func downloadCell(dir, url, sha string, mk func(url, dst string) *exec.Cmd) func(b *testing.B) (*exec.Cmd, func()) {
	return func(b *testing.B) (*exec.Cmd, func()) {
		dst := filepath.Join(dir, "downloaded.pte")
		_ = os.Remove(dst)
		return mk(url, dst), func() {
			checkSHA(b, dst, sha)
			_ = os.Remove(dst)
		}
	}
}

// downloadServer serves file as bench/down's model.pte (LFS) for every download run.
func downloadServer(b *testing.B, dir, file string) *hubtest.Server {
	seedDir, err := os.MkdirTemp(dir, "seed-")
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { os.RemoveAll(seedDir) })
	if err := os.Symlink(file, filepath.Join(seedDir, "model.pte")); err != nil {
		b.Fatal(err)
	}
	srvDir, err := os.MkdirTemp(dir, "hub-")
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { os.RemoveAll(srvDir) })
	srv, err := hubtest.NewServer(srvDir)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = srv.Close() })
	if _, err := srv.AddModelDir("bench/down", seedDir); err != nil {
		b.Fatal(err)
	}
	return srv
}

func checkSHA(b *testing.B, path, want string) {
	d, err := fileutil.Hash(path)
	if err != nil || d.SHA256 != want {
		b.Fatalf("%s: sha256 %v, want %s (%v)", path, d, want, err)
	}
}

// runChild runs cmd and returns its wall time, CPU time (getrusage: not inherited), the
// load average before it started and the VmHWM it printed as vmhwm_kib=N.
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
		if v, ok := strings.CutPrefix(strings.TrimSpace(line), "vmhwm_kib="); ok {
			s.hwmKiB, _ = strconv.ParseInt(v, 10, 64)
		}
	}
	if s.hwmKiB == 0 {
		b.Fatalf("%v printed no vmhwm_kib line:\n%s", cmd.Args, out.String())
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
// (pkg/hub, pkg/fileutil, the JS driver) differs from it, so a table row says what code it
// measured.
func benchCommit() string {
	out, err := exec.Command("git", "rev-parse", "--short=10", "HEAD").Output()
	if err != nil {
		return "unknown"
	}
	c := strings.TrimSpace(string(out))
	if st, err := exec.Command("git", "status", "--porcelain", "--untracked-files=no", "--", ".", "../fileutil").Output(); err == nil && len(st) > 0 {
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

// jsCmd starts driver.mjs: upload creates bench/up and uploads file; download-to writes
// bench/down's model.pte to file.
func jsCmd(b *testing.B, url, mode, file string) *exec.Cmd {
	node := needNode(b)
	repo, create := "bench/down", false
	if mode == "upload" {
		repo, create = "bench/up", true
	}
	arg, err := json.Marshal(map[string]any{"mode": mode, "hubUrl": url, "token": testToken, "repo": repo, "create": create,
		"files": []map[string]string{{"path": "model.pte", "local": file}}})
	if err != nil {
		b.Fatal(err)
	}
	cmd := exec.Command(node, "driver.mjs", string(arg))
	cmd.Dir = jsDir
	return cmd
}

// TestHelperUpload is a child process of BenchmarkHubClients: create the repo and commit
// one file with our client, then print its own peak memory.
func TestHelperUpload(t *testing.T) {
	if os.Getenv("EXE_EXPO_HUB_HELPER") != "1" {
		t.Skip("child process of BenchmarkHubClients")
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
	printVmHWM(t)
}

// TestHelperDownload is a child process of BenchmarkHubClients: download bench/down's
// model.pte with our client, then print its own peak memory.
func TestHelperDownload(t *testing.T) {
	if os.Getenv("EXE_EXPO_HUB_HELPER") != "1" {
		t.Skip("child process of BenchmarkHubClients")
	}
	c := hub.New(hub.Options{Endpoint: os.Getenv("HELPER_URL"), Token: testToken})
	if _, err := c.Download(context.Background(), "bench/down", "main", "model.pte", os.Getenv("HELPER_FILE")); err != nil {
		t.Fatal(err)
	}
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

// TestBenchRow: a cell's row gives the minimum and the median of each measure, whatever the
// order of its runs, and the throughput at the median wall time.
func TestBenchRow(t *testing.T) {
	tests := []struct {
		name    string
		samples []sample
		want    string
	}{
		{"three runs out of order", []sample{
			{wall: 3, cpu: 1.5, load: 2, hwmKiB: 12 << 10},
			{wall: 1, cpu: 0.5, load: 1, hwmKiB: 10 << 10},
			{wall: 2, cpu: 2.5, load: 3, hwmKiB: 11 << 10},
		}, "| upload | go | 64 MiB | 3 | 1.00 / 2.00 | 33.6 | 0.50 / 1.50 | 10.0 / 11.0 | 2.0, 1.0, 3.0 | abc |"},
		{"one run", []sample{{wall: 4, cpu: 1, load: 0.5, hwmKiB: 1536}},
			"| upload | go | 64 MiB | 1 | 4.00 / 4.00 | 16.8 | 1.00 / 1.00 | 1.5 / 1.5 | 0.5 | abc |"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.want, row(cell{op: "upload", client: "go"}, 64, tc.samples, "abc"))
		})
	}
}
