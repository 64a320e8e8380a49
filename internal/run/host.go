package run

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
)

// HostFacts describes the machine an export ran on. Runners of one label differ (the same
// calibration took 1,761 s on one and 936 s on another), so every report carries them. JSON
// names follow the report's host block.
type HostFacts struct {
	// NProc is the CPUs this process may use (as nproc counts them, honouring affinity).
	NProc          int    `json:"nproc"`
	MemTotalBytes  int64  `json:"mem_total_bytes"`
	SwapTotalBytes int64  `json:"swap_total_bytes"`
	CPUModel       string `json:"cpu_model"`
	// DiskFreeBytes is the space an unprivileged writer has left under DiskPath.
	DiskFreeBytes int64  `json:"disk_free_bytes"`
	DiskPath      string `json:"disk_path"`
}

// Host reads the host facts; dir is the directory whose file system's free space matters
// (the work directory).
func Host(dir string) (HostFacts, error) {
	return realFS.host(dir)
}

func (fs sysfs) host(dir string) (HostFacts, error) {
	mi, err := fs.readMeminfo()
	if err != nil {
		return HostFacts{}, fmt.Errorf("host facts: %w", err)
	}
	model, err := fs.cpuModel()
	if err != nil {
		return HostFacts{}, fmt.Errorf("host facts: %w", err)
	}
	free, err := DiskFree(dir)
	if err != nil {
		return HostFacts{}, fmt.Errorf("host facts: %w", err)
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		abs = dir
	}
	return HostFacts{
		NProc: runtime.NumCPU(), MemTotalBytes: mi.memTotal, SwapTotalBytes: mi.swapTotal,
		CPUModel: model, DiskFreeBytes: free, DiskPath: abs,
	}, nil
}

// DiskFree returns the bytes an unprivileged process can still write under dir.
func DiskFree(dir string) (int64, error) {
	var st syscall.Statfs_t
	if err := syscall.Statfs(dir, &st); err != nil {
		return 0, fmt.Errorf("statfs %s: %w", dir, err)
	}
	return int64(st.Bavail) * int64(st.Bsize), nil
}

// armParts names the Arm server cores CI runners use, keyed by "implementer part" as
// /proc/cpuinfo prints them (names as util-linux lscpu has them). Arm kernels print no
// "model name", and without a name two ARM runners could not be told apart in a report.
var armParts = map[string]string{
	"0x41 0xd0c": "ARM Neoverse-N1",
	"0x41 0xd40": "ARM Neoverse-V1",
	"0x41 0xd49": "ARM Neoverse-N2",
	"0x41 0xd4f": "ARM Neoverse-V2",
	"0x41 0xd84": "ARM Neoverse-V3",
	"0x41 0xd8e": "ARM Neoverse-N3",
	"0xc0 0xac3": "Ampere Ampere-1",
	"0xc0 0xac4": "Ampere Ampere-1a",
}

// cpuModel reads the first "model name" of /proc/cpuinfo; on Arm, where there is none, it
// names the core from "CPU implementer" and "CPU part".
func (fs sysfs) cpuModel() (string, error) {
	path := filepath.Join(fs.proc, "cpuinfo")
	data, err := os.ReadFile(path)
	if err != nil {
		return "", fmt.Errorf("read %s: %w", path, err)
	}
	var impl, part string
	for line := range bytes.Lines(data) {
		k, v, ok := strings.Cut(string(line), ":")
		if !ok {
			continue
		}
		k, v = strings.TrimSpace(k), strings.TrimSpace(v)
		switch k {
		case "model name":
			return v, nil
		case "CPU implementer":
			if impl == "" {
				impl = v
			}
		case "CPU part":
			if part == "" {
				part = v
			}
		}
	}
	if impl == "" || part == "" {
		return "", fmt.Errorf("read %s: no model name and no CPU implementer/part", path)
	}
	key := strings.ToLower(impl + " " + part)
	if name, ok := armParts[key]; ok {
		return name, nil
	}
	return "CPU implementer " + impl + " part " + part, nil
}
