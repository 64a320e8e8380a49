package hub_test

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/experimentalmachines/exe-expo/internal/fileutil"
	"github.com/stretchr/testify/assert"
)

// BenchmarkHubClients uploads and downloads files of each size to and from hubtest on
// loopback with our client and with @huggingface/hub (node), and prints two Markdown
// tables: one row per client and operation (minimum and median of its runs), and one row
// per pair of clients compared (the JS client's wall time over ours, in every round, with
// the minimum and the median of those ratios).
//
// Three kinds of process, none sharing a runtime with another: the hub server (this test
// binary re-executed as TestHelperServer: a fresh one for every upload, so nothing is
// deduplicated, and one per size for the downloads), our client (re-executed as
// TestHelperUpload or TestHelperDownload) and the JS client (node driver.mjs). The
// benchmark process only starts them and checks their work.
//
// A round runs each pair back to back on the same file: uploads go, js, go-known-sha256
// (js next to both of ours), then downloads go, js; every other round runs them in the
// reverse order, so a drift in the machine's load hits both sides of a pair alike. A
// client's peak memory is its own VmHWM, read from /proc/self/status just before it exits
// and printed as its last line: getrusage's ru_maxrss of a child starts at its parent's
// high-water mark (Go forks with CLONE_VM). Both clients verify a download the same way:
// each hashes the bytes (sha256) as it writes them and fails on a mismatch (ours against
// the sha256 the server announces, the JS driver's download-verify mode against the one
// the benchmark passes). Every upload is checked on the server (the stored object's size
// and sha256), every download on disk.
//
//	EXE_EXPO_HUB_BENCH=1 go test -run '^$' -bench HubClients -benchtime 1x -timeout 60m ./pkg/hub
//
// EXE_EXPO_HUB_BENCH_SIZES (MiB, default 256,2048), EXE_EXPO_HUB_BENCH_ROUNDS (default 5),
// EXE_EXPO_HUB_BENCH_DIR (default: the test temp dir; needs about 3× the largest size
// free) and EXE_EXPO_HUB_BENCH_COMMIT (the commit column, for a tree without .git; default
// from git) change the defaults.
func BenchmarkHubClients(b *testing.B) {
	if os.Getenv("EXE_EXPO_HUB_BENCH") != "1" {
		b.Skip("set EXE_EXPO_HUB_BENCH=1 to move GiB-sized files")
	}
	rounds, err := strconv.Atoi(envOr("EXE_EXPO_HUB_BENCH_ROUNDS", "5"))
	if err != nil || rounds < 1 {
		b.Fatalf("EXE_EXPO_HUB_BENCH_ROUNDS=%q is not a positive number of rounds", os.Getenv("EXE_EXPO_HUB_BENCH_ROUNDS"))
	}
	commit := envOr("EXE_EXPO_HUB_BENCH_COMMIT", benchCommit())
	for _, s := range strings.Split(envOr("EXE_EXPO_HUB_BENCH_SIZES", "256,2048"), ",") {
		mib, err := strconv.Atoi(strings.TrimSpace(s))
		if err != nil || mib < 1 {
			b.Fatalf("EXE_EXPO_HUB_BENCH_SIZES: %q is not a size in MiB", s)
		}
		clients, pairs := benchSize(b, envOr("EXE_EXPO_HUB_BENCH_DIR", b.TempDir()), int64(mib), rounds, commit)
		// each size's tables as soon as it is done, so a run cut short keeps what it measured
		fmt.Printf("\n| op | client | size | runs | wall s min / median | MB/s at median | in-process s median | CPU s min / median | peak VmHWM MiB min / median | load avg before each run | commit |\n")
		fmt.Printf("| --- | --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | --- | --- |\n")
		fmt.Println(strings.Join(clients, "\n"))
		fmt.Printf("\n| op | pair (JS / ours) | size | wall-time ratio, each round | min | median | CPU ratio median | peak memory ratio median | commit |\n")
		fmt.Printf("| --- | --- | --- | --- | ---: | ---: | ---: | ---: | --- |\n")
		fmt.Println(strings.Join(pairs, "\n"))
	}
	b.ReportMetric(0, "ns/op")
}

// cell is one client doing one operation; run returns the child to start for a fresh run
// and the check to make after it.
type cell struct {
	op, client string
	run        func(b *testing.B) (*exec.Cmd, func())
}

// sample is one run of a cell: wall time from start to exit, the time the client itself
// measured around the operation (excluding its process start-up and repo creation), CPU
// time, the load average before it started and its peak resident set.
type sample struct {
	wall, op, cpu, load float64
	hwmKiB              int64
}

// pairSpec compares cells[js] with cells[ours] round by round.
type pairSpec struct {
	op, name string
	js, ours int
}

// benchSize runs every cell rounds times on one file of mib MiB and returns the rows of
// the clients table and of the pairs table.
func benchSize(b *testing.B, dir string, mib int64, rounds int, commit string) (clients, pairs []string) {
	file := filepath.Join(dir, fmt.Sprintf("bench-%dMiB.pte", mib))
	makeRandomFile(b, file, mib<<20)
	defer os.Remove(file)
	digest, err := fileutil.Hash(file)
	if err != nil {
		b.Fatal(err)
	}
	down := downloadServer(b, dir, file)
	defer down.stop(b)
	const upGo, upJS, upKnown, downGo, downJS = 0, 1, 2, 3, 4
	cells := []cell{
		upGo:    {"upload", "go", uploadCell(dir, file, digest.SHA256, func(url string) *exec.Cmd { return helperCmd("Upload", url, file, "") })},
		upJS:    {"upload", "js", uploadCell(dir, file, digest.SHA256, func(url string) *exec.Cmd { return jsCmd(b, url, "upload", file, "") })},
		upKnown: {"upload", "go-known-sha256", uploadCell(dir, file, digest.SHA256, func(url string) *exec.Cmd { return helperCmd("Upload", url, file, digest.SHA256) })},
		downGo:  {"download", "go", downloadCell(dir, digest.SHA256, func(dst string) *exec.Cmd { return helperCmd("Download", down.URL, dst, "") })},
		downJS:  {"download", "js", downloadCell(dir, digest.SHA256, func(dst string) *exec.Cmd { return jsCmd(b, down.URL, "download-verify", dst, digest.SHA256) })},
	}
	specs := []pairSpec{
		{"upload", "js / go (both hash)", upJS, upGo},
		{"upload", "js / go-known-sha256", upJS, upKnown},
		{"download", "js / go (both verify sha256)", downJS, downGo},
	}
	got := make([][]sample, len(cells))
	for r := range rounds {
		for _, group := range [][]int{{upGo, upJS, upKnown}, {downGo, downJS}} {
			order := slices.Clone(group)
			if r%2 == 1 {
				slices.Reverse(order)
			}
			for _, i := range order {
				cmd, check := cells[i].run(b)
				got[i] = append(got[i], runChild(b, cmd))
				check()
			}
		}
	}
	for i, c := range cells {
		clients = append(clients, row(c, mib, got[i], commit))
	}
	for _, p := range specs {
		pairs = append(pairs, pairRow(p, mib, got[p.js], got[p.ours], commit))
	}
	return clients, pairs
}

// minMedian returns the minimum and the median (the lower middle one for an even count).
func minMedian(v []float64) (lo, med float64) {
	v = slices.Clone(v)
	slices.Sort(v)
	return v[0], v[(len(v)-1)/2]
}

func pick(s []sample, f func(sample) float64) []float64 {
	v := make([]float64, len(s))
	for i, x := range s {
		v[i] = f(x)
	}
	return v
}

// row formats one cell's samples: minimum and median of wall time, CPU time and VmHWM.
func row(c cell, mib int64, s []sample, commit string) string {
	wMin, wMed := minMedian(pick(s, func(x sample) float64 { return x.wall }))
	_, oMed := minMedian(pick(s, func(x sample) float64 { return x.op }))
	cMin, cMed := minMedian(pick(s, func(x sample) float64 { return x.cpu }))
	hMin, hMed := minMedian(pick(s, func(x sample) float64 { return float64(x.hwmKiB) / 1024 }))
	var loads []string
	for _, x := range s {
		loads = append(loads, fmt.Sprintf("%.1f", x.load))
	}
	return fmt.Sprintf("| %s | %s | %d MiB | %d | %.2f / %.2f | %.1f | %.2f | %.2f / %.2f | %.1f / %.1f | %s | %s |",
		c.op, c.client, mib, len(s), wMin, wMed, float64(mib<<20)/wMed/1e6, oMed, cMin, cMed, hMin, hMed, strings.Join(loads, ", "), commit)
}

// pairRow formats one pair: js's wall time over ours in each round (the runs of a round
// are back to back), their minimum and median, and the medians of the per-round CPU and
// peak-memory ratios.
func pairRow(p pairSpec, mib int64, js, ours []sample, commit string) string {
	ratios := func(f func(sample) float64) []float64 {
		v := make([]float64, len(js))
		for i := range js {
			v[i] = f(js[i]) / f(ours[i])
		}
		return v
	}
	wall := ratios(func(x sample) float64 { return x.wall })
	var each []string
	for _, r := range wall {
		each = append(each, fmt.Sprintf("%.2f", r))
	}
	wMin, wMed := minMedian(wall)
	_, cMed := minMedian(ratios(func(x sample) float64 { return x.cpu }))
	_, hMed := minMedian(ratios(func(x sample) float64 { return float64(x.hwmKiB) }))
	return fmt.Sprintf("| %s | %s | %d MiB | %s | %.2f× | %.2f× | %.1f× | %.1f× | %s |",
		p.op, p.name, mib, strings.Join(each, ", "), wMin, wMed, cMed, hMed, commit)
}

// uploadCell uploads into a fresh server process each run (so nothing is deduplicated)
// and checks that the server stored the file whole.
func uploadCell(dir, file, sha string, mk func(url string) *exec.Cmd) func(b *testing.B) (*exec.Cmd, func()) {
	return func(b *testing.B) (*exec.Cmd, func()) {
		srvDir, err := os.MkdirTemp(dir, "hub-")
		if err != nil {
			b.Fatal(err)
		}
		srv := startServer(b, srvDir, "")
		return mk(srv.URL), func() {
			defer os.RemoveAll(srvDir)
			disk, size, lfs, err := srv.fileInfo("bench/up", "model.pte")
			if err != nil || !lfs {
				b.Fatalf("upload not committed as an LFS file: lfs=%v %v", lfs, err)
			}
			st, err := os.Stat(file)
			if err != nil || size != st.Size() {
				b.Fatalf("server holds %d bytes of %s: %v", size, file, err)
			}
			checkSHA(b, disk, sha)
			srv.stop(b)
		}
	}
}

// downloadCell downloads into a fresh file each run and checks its sha256.
func downloadCell(dir, sha string, mk func(dst string) *exec.Cmd) func(b *testing.B) (*exec.Cmd, func()) {
	return func(b *testing.B) (*exec.Cmd, func()) {
		dst := filepath.Join(dir, "downloaded.pte")
		_ = os.Remove(dst)
		return mk(dst), func() {
			checkSHA(b, dst, sha)
			_ = os.Remove(dst)
		}
	}
}

// downloadServer starts a server process that serves file as bench/down's model.pte (LFS)
// for every download run of one size.
func downloadServer(b *testing.B, dir, file string) *benchServer {
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
	return startServer(b, srvDir, "bench/down="+seedDir)
}

func checkSHA(b *testing.B, path, want string) {
	d, err := fileutil.Hash(path)
	if err != nil || d.SHA256 != want {
		b.Fatalf("%s: sha256 %v, want %s (%v)", path, d, want, err)
	}
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
			{wall: 3, op: 2.5, cpu: 1.5, load: 2, hwmKiB: 12 << 10},
			{wall: 1, op: 0.5, cpu: 0.5, load: 1, hwmKiB: 10 << 10},
			{wall: 2, op: 1.5, cpu: 2.5, load: 3, hwmKiB: 11 << 10},
		}, "| upload | go | 64 MiB | 3 | 1.00 / 2.00 | 33.6 | 1.50 | 0.50 / 1.50 | 10.0 / 11.0 | 2.0, 1.0, 3.0 | abc |"},
		{"one run", []sample{{wall: 4, op: 3, cpu: 1, load: 0.5, hwmKiB: 1536}},
			"| upload | go | 64 MiB | 1 | 4.00 / 4.00 | 16.8 | 3.00 | 1.00 / 1.00 | 1.5 / 1.5 | 0.5 | abc |"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.want, row(cell{op: "upload", client: "go"}, 64, tc.samples, "abc"))
		})
	}
}

// TestBenchPairRow: a pair's ratios are taken round by round (the JS run over ours of the
// same round), listed in round order, with their minimum and median; an even count takes
// the lower middle ratio as the median.
func TestBenchPairRow(t *testing.T) {
	js := []sample{{wall: 6, cpu: 4, hwmKiB: 100}, {wall: 3, cpu: 4, hwmKiB: 120}, {wall: 8, cpu: 4, hwmKiB: 110}, {wall: 5, cpu: 4, hwmKiB: 100}}
	ours := []sample{{wall: 2, cpu: 1, hwmKiB: 10}, {wall: 2, cpu: 2, hwmKiB: 10}, {wall: 2, cpu: 1, hwmKiB: 10}, {wall: 4, cpu: 1, hwmKiB: 10}}
	got := pairRow(pairSpec{op: "download", name: "js / go"}, 64, js, ours, "abc")
	assert.Equal(t, "| download | js / go | 64 MiB | 3.00, 1.50, 4.00, 1.25 | 1.25× | 1.50× | 4.0× | 10.0× | abc |", got)
}
