package run

import (
	"path/filepath"
	"strings"
	"testing"
)

func TestHostOnThisMachine(t *testing.T) {
	dir := t.TempDir()
	h, err := Host(dir)
	if err != nil {
		t.Fatal(err)
	}
	if h.NProc < 1 || h.MemTotalBytes < 1<<28 || h.SwapTotalBytes < 0 || h.CPUModel == "" ||
		h.DiskFreeBytes <= 0 || h.DiskPath != dir {
		t.Errorf("host = %+v", h)
	}
	if _, err := Host(filepath.Join(dir, "missing")); err == nil || !strings.Contains(err.Error(), "statfs") {
		t.Errorf("missing dir: err = %v", err)
	}
}

func TestCPUModel(t *testing.T) {
	tests := []struct {
		name, cpuinfo, want, err string
	}{
		{
			name:    "x86 model name",
			cpuinfo: "processor\t: 0\nvendor_id\t: AuthenticAMD\nmodel name\t: AMD EPYC 7763 64-Core Processor\nprocessor\t: 1\nmodel name\t: other\n",
			want:    "AMD EPYC 7763 64-Core Processor",
		},
		{
			name:    "arm neoverse",
			cpuinfo: "processor\t: 0\nBogoMIPS\t: 243.75\nCPU implementer\t: 0x41\nCPU architecture: 8\nCPU variant\t: 0x3\nCPU part\t: 0xd0c\nCPU revision\t: 1\n",
			want:    "ARM Neoverse-N1",
		},
		{
			name:    "arm unknown part",
			cpuinfo: "processor\t: 0\nCPU implementer\t: 0x61\nCPU part\t: 0x000\n",
			want:    "CPU implementer 0x61 part 0x000",
		},
		{name: "nothing", cpuinfo: "processor\t: 0\n", err: "no model name"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			root := writeTree(t, map[string]string{"proc/cpuinfo": tc.cpuinfo})
			got, err := sysfs{proc: filepath.Join(root, "proc")}.cpuModel()
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) || !strings.Contains(err.Error(), "cpuinfo") {
					t.Errorf("err = %v, want %q", err, tc.err)
				}
				return
			}
			if err != nil || got != tc.want {
				t.Errorf("cpuModel = %q, %v; want %q", got, err, tc.want)
			}
		})
	}
}

func TestHostFromFixture(t *testing.T) {
	root := writeTree(t, map[string]string{
		"proc/meminfo": meminfoText(16_373_452, 15_000_000, 3_145_724, 3_145_724),
		"proc/cpuinfo": "model name\t: Intel(R) Xeon(R) Platinum 8573C\n",
	})
	h, err := sysfs{proc: filepath.Join(root, "proc")}.host(root)
	if err != nil {
		t.Fatal(err)
	}
	if h.MemTotalBytes != 16_373_452*1024 || h.SwapTotalBytes != 3_145_724*1024 || h.CPUModel != "Intel(R) Xeon(R) Platinum 8573C" {
		t.Errorf("host = %+v", h)
	}
}
