package run

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const mib = 1 << 20

// TestSamplerSeesChildAllocation runs a child that makes 300 MiB resident and holds it
// until the sampler has ticked twice, then checks both RSS figures against what it really
// allocated. The ticks come from the test, so the count of samples is exact: the first at
// start, two ticks, the last at Stop.
func TestSamplerSeesChildAllocation(t *testing.T) {
	const alloc = 300
	t0 := time.Date(2026, 9, 13, 13, 44, 16, 0, time.UTC)
	clk, g := newFakeClock(t0), newGates(t)
	out := &hookWriter{hook: func(line string) {
		if line == fmt.Sprintf("[hungry] allocated %d MiB", alloc) {
			clk.Tick()
			clk.Tick() // taken only once the first tick's sample is done
			g.open("sampled")
		}
	}}
	res, err := Tool(context.Background(), Spec{
		Name: "hungry", Argv: fake(fmt.Sprintf("alloc:%d", alloc), g.wait("sampled")), Output: out,
		Mode: LogPrefixed, SampleEvery: 50 * time.Millisecond, clock: clk,
	})
	require.NoError(t, err)
	m := res.Memory
	for name, got := range map[string]int64{"sampled tree RSS": m.PeakRSSTreeBytes, "ru_maxrss": res.MaxRSSBytes} {
		assert.GreaterOrEqual(t, got, int64(alloc*mib), name)
		assert.LessOrEqual(t, got, int64((alloc+150)*mib), name)
	}
	assert.Equal(t, 4, m.Samples)
	assert.Equal(t, 0.05, m.SampleEverySeconds)
	assert.GreaterOrEqual(t, m.PeakMemUsedBytes, int64(alloc*mib))
	assert.GreaterOrEqual(t, m.PeakInUseBytes, m.PeakMemUsedBytes)
	assert.Positive(t, m.MinMemAvailableBytes)
	assert.Equal(t, "2026-09-13T13:44:16Z", m.PeakInUseAt, "every sample is stamped by the run's clock")
}

// writeTree writes files (path → content) under a new temporary root.
func writeTree(t *testing.T, files map[string]string) string {
	t.Helper()
	root := t.TempDir()
	for p, content := range files {
		full := filepath.Join(root, p)
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return root
}

func meminfoText(totalKB, availKB, swapTotalKB, swapFreeKB int64) string {
	return fmt.Sprintf("MemTotal:       %d kB\nMemFree:         1000 kB\nMemAvailable:   %d kB\n"+
		"Buffers:           23460 kB\nSwapCached:            0 kB\nSwapTotal:      %d kB\nSwapFree:       %d kB\n",
		totalKB, availKB, swapTotalKB, swapFreeKB)
}

func TestSamplerPeaks(t *testing.T) {
	root := writeTree(t, map[string]string{
		"proc/meminfo":                        meminfoText(16_000_000, 12_000_000, 4_000_000, 4_000_000),
		"proc/self/cgroup":                    "0::/\n",
		"cgroup/memory.current":               "1000\n",
		"proc/100/stat":                       "100 (python3) S 1 100 100 0 -1",
		"proc/100/statm":                      "5000 2000 300 1 0 900 0",
		"proc/101/stat":                       "101 (a (weird) name) R 100 100 100 0 -1",
		"proc/101/statm":                      "5000 1000 300 1 0 900 0",
		"proc/102/stat":                       "102 (bash) S 1 102 102 0 -1",
		"proc/102/statm":                      "5000 9999 300 1 0 900 0",
		"proc/self/stat":                      "1 (x) S 0 1 1",
		"proc/not-a-pid/stat":                 "junk",
		"cgroup/memory/memory.usage_in_bytes": "7\n",
	})
	fs := sysfs{proc: filepath.Join(root, "proc"), cgroup: filepath.Join(root, "cgroup")}
	s := newSampler(time.Second, 100, fs, systemClock{})
	page := s.pageSize
	t0 := time.Date(2026, 9, 13, 13, 44, 16, 0, time.UTC)
	steps := []struct {
		meminfo string
		current string
	}{
		{meminfoText(16_000_000, 12_000_000, 4_000_000, 4_000_000), "1000"}, // 4 GB used, no swap
		{meminfoText(16_000_000, 1_000_000, 4_000_000, 1_000_000), "5000"},  // 15 + 3: the peak in use
		{meminfoText(16_000_000, 500_000, 4_000_000, 3_900_000), "2000"},    // least available, swap mostly freed
	}
	for i, st := range steps {
		os.WriteFile(filepath.Join(root, "proc/meminfo"), []byte(st.meminfo), 0o644)
		os.WriteFile(filepath.Join(root, "cgroup/memory.current"), []byte(st.current), 0o644)
		s.sample(t0.Add(time.Duration(i) * time.Minute))
	}
	m := s.Snapshot()
	const kb = 1024
	cg := int64(5000)
	want := Memory{
		Samples: 3, SampleEverySeconds: 1,
		PeakMemUsedBytes:     15_500_000 * kb,
		PeakSwapUsedBytes:    3_000_000 * kb,
		PeakInUseBytes:       18_000_000 * kb,
		PeakInUseAt:          "2026-09-13T13:45:16Z",
		MinMemAvailableBytes: 500_000 * kb,
		PeakCgroupBytes:      &cg,
		CgroupSource:         "memory.current",
		PeakRSSTreeBytes:     3000 * page,
	}
	if m.PeakCgroupBytes == nil || *m.PeakCgroupBytes != cg {
		t.Errorf("PeakCgroupBytes = %v", m.PeakCgroupBytes)
	}
	m.PeakCgroupBytes, want.PeakCgroupBytes = nil, nil
	if m != want {
		t.Errorf("memory =\n%+v\nwant\n%+v", m, want)
	}
}

func TestFindCgroup(t *testing.T) {
	tests := []struct {
		name  string
		files map[string]string
		want  string // kind and path under root, "" for none
	}{
		{"own v2 cgroup peak first", map[string]string{
			"proc/self/cgroup": "0::/system.slice/runner.service\n", "cgroup/system.slice/runner.service/memory.peak": "9",
			"cgroup/memory.peak": "8",
		}, "memory.peak cgroup/system.slice/runner.service/memory.peak"},
		{"root peak before any current", map[string]string{
			"proc/self/cgroup": "0::/a\n", "cgroup/a/memory.current": "9", "cgroup/memory.peak": "8",
		}, "memory.peak cgroup/memory.peak"},
		{"v2 current", map[string]string{"proc/self/cgroup": "0::/\n", "cgroup/memory.current": "9"}, "memory.current cgroup/memory.current"},
		{"v1 usage, own cgroup first", map[string]string{
			"proc/self/cgroup":                      "5:cpu,cpuacct:/y\n4:memory:/x\n0::/\n",
			"cgroup/memory/x/memory.usage_in_bytes": "9", "cgroup/memory/memory.usage_in_bytes": "9",
		}, "memory.usage_in_bytes cgroup/memory/x/memory.usage_in_bytes"},
		{"v1 usage at the root", map[string]string{
			"proc/self/cgroup": "4:memory:/x\n", "cgroup/memory/memory.usage_in_bytes": "9",
		}, "memory.usage_in_bytes cgroup/memory/memory.usage_in_bytes"},
		{"none", map[string]string{"proc/self/cgroup": "0::/\n"}, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			root := writeTree(t, tc.files)
			fs := sysfs{proc: filepath.Join(root, "proc"), cgroup: filepath.Join(root, "cgroup")}
			src, ok := fs.findCgroup()
			got := ""
			if ok {
				rel, _ := filepath.Rel(root, src.path)
				got = src.kind + " " + rel
			}
			if got != tc.want {
				t.Errorf("findCgroup = %q, want %q", got, tc.want)
			}
		})
	}
}

func TestSamplerReadsMemoryPeakAtStop(t *testing.T) {
	root := writeTree(t, map[string]string{
		"proc/meminfo": meminfoText(1000, 500, 0, 0), "proc/self/cgroup": "0::/\n", "cgroup/memory.peak": "4242\n",
	})
	clk := newFakeClock(time.Date(2026, 9, 13, 13, 44, 16, 0, time.UTC))
	s := startSampler(10*time.Millisecond, 0, sysfs{proc: filepath.Join(root, "proc"), cgroup: filepath.Join(root, "cgroup")}, clk)
	clk.Tick()
	require.NoError(t, os.WriteFile(filepath.Join(root, "cgroup/memory.peak"), []byte("5151\n"), 0o644))
	m := s.Stop()
	require.NotNil(t, m.PeakCgroupBytes)
	assert.Equal(t, int64(5151), *m.PeakCgroupBytes, "memory.peak is read at Stop")
	assert.Equal(t, "memory.peak", m.CgroupSource)
	assert.Equal(t, 3, m.Samples, "one at start, one tick, one at Stop")
	assert.Equal(t, m.Samples, s.Stop().Samples, "a second Stop sampled again")
}

func TestMeminfoErrors(t *testing.T) {
	tests := []struct {
		name, content, want string
	}{
		{"no MemTotal", "MemAvailable: 5 kB\n", "no MemTotal"},
		{"no MemAvailable", "MemTotal: 5 kB\nSwapTotal: 0 kB\nSwapFree: 0 kB\n", "no MemAvailable"},
		{"bad number", "MemTotal: x kB\n", "field MemTotal:"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			root := writeTree(t, map[string]string{"proc/meminfo": tc.content})
			_, err := sysfs{proc: filepath.Join(root, "proc")}.readMeminfo()
			if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), "meminfo") {
				t.Errorf("err = %v, want %q", err, tc.want)
			}
		})
	}
}
