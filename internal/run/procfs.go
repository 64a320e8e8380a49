package run

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
)

// sysfs names the roots the sampler reads, so tests can point it at a fixture tree.
type sysfs struct {
	proc   string // normally /proc
	cgroup string // normally /sys/fs/cgroup
}

var realFS = sysfs{proc: "/proc", cgroup: "/sys/fs/cgroup"}

// meminfo holds the /proc/meminfo fields the sampler needs, in bytes.
type meminfo struct {
	memTotal, memAvailable, swapTotal, swapFree int64
}

// readMeminfo parses /proc/meminfo ("MemTotal:  24683548 kB").
func (fs sysfs) readMeminfo() (meminfo, error) {
	path := filepath.Join(fs.proc, "meminfo")
	data, err := os.ReadFile(path)
	if err != nil {
		return meminfo{}, fmt.Errorf("read %s: %w", path, err)
	}
	var m meminfo
	fields := map[string]*int64{
		"MemTotal:": &m.memTotal, "MemAvailable:": &m.memAvailable,
		"SwapTotal:": &m.swapTotal, "SwapFree:": &m.swapFree,
	}
	found := 0
	for line := range bytes.Lines(data) {
		f := bytes.Fields(line)
		if len(f) < 2 {
			continue
		}
		dst, ok := fields[string(f[0])]
		if !ok {
			continue
		}
		kb, err := strconv.ParseInt(string(f[1]), 10, 64)
		if err != nil {
			return meminfo{}, fmt.Errorf("read %s: field %s: %w", path, f[0], err)
		}
		*dst = kb * 1024
		found++
	}
	if m.memTotal == 0 {
		return meminfo{}, fmt.Errorf("read %s: no MemTotal", path)
	}
	if found < len(fields) {
		// Kernels before 3.14 have no MemAvailable; treat a missing field as unknown.
		if m.memAvailable == 0 {
			return meminfo{}, fmt.Errorf("read %s: no MemAvailable", path)
		}
	}
	return m, nil
}

// cgroupSource is where the cgroup memory figure comes from, in the order the reference
// implementation prefers (docs/research/run.md#2-memory-figures): a kernel-kept peak, else
// sampled current usage (v2, then v1).
type cgroupSource struct {
	path string
	kind string // "memory.peak", "memory.current" or "memory.usage_in_bytes"
}

// findCgroup picks the cgroup file to read. Within each kind, this process's own cgroup
// comes first (a runner service or a container), then the root the reference
// implementation reads.
func (fs sysfs) findCgroup() (cgroupSource, bool) {
	v2, v1 := fs.ownCgroups()
	var dirs []string
	if v2 != "" {
		dirs = append(dirs, filepath.Join(fs.cgroup, v2))
	}
	dirs = append(dirs, fs.cgroup)
	for _, kind := range []string{"memory.peak", "memory.current"} {
		for _, d := range dirs {
			p := filepath.Join(d, kind)
			if _, err := readInt(p); err == nil {
				return cgroupSource{path: p, kind: kind}, true
			}
		}
	}
	dirs = dirs[:0]
	if v1 != "" {
		dirs = append(dirs, filepath.Join(fs.cgroup, "memory", v1))
	}
	dirs = append(dirs, filepath.Join(fs.cgroup, "memory"))
	for _, d := range dirs {
		p := filepath.Join(d, "memory.usage_in_bytes")
		if _, err := readInt(p); err == nil {
			return cgroupSource{path: p, kind: "memory.usage_in_bytes"}, true
		}
	}
	return cgroupSource{}, false
}

// ownCgroups returns this process's v2 cgroup ("0::/system.slice/x.service") and v1
// memory cgroup ("4:memory:/docker/abc") paths from /proc/self/cgroup; "" where there is
// none or it is the root.
func (fs sysfs) ownCgroups() (v2, v1 string) {
	data, err := os.ReadFile(filepath.Join(fs.proc, "self", "cgroup"))
	if err != nil {
		return "", ""
	}
	for line := range strings.Lines(string(data)) {
		f := strings.SplitN(strings.TrimSpace(line), ":", 3)
		if len(f) != 3 || f[2] == "/" {
			continue
		}
		switch {
		case f[0] == "0" && f[1] == "":
			v2 = f[2]
		case slices.Contains(strings.Split(f[1], ","), "memory"):
			v1 = f[2]
		}
	}
	return v2, v1
}

func readInt(path string) (int64, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return 0, fmt.Errorf("read %s: %w", path, err)
	}
	v, err := strconv.ParseInt(strings.TrimSpace(string(data)), 10, 64)
	if err != nil {
		return 0, fmt.Errorf("read %s: %w", path, err)
	}
	return v, nil
}

// groupRSS sums the resident set of every process in process group pgid. It reads
// /proc/<pid>/stat for the group and /proc/<pid>/statm for the resident pages, which is
// the same figure as VmRSS in /proc/<pid>/status at a fraction of the parsing. Pages shared
// between processes of the group count once per process, as VmRSS does.
func (fs sysfs) groupRSS(pgid int, pageSize int64, buf []byte) (int64, []byte) {
	dir, err := os.Open(fs.proc)
	if err != nil {
		return 0, buf
	}
	defer dir.Close()
	names, err := dir.Readdirnames(-1)
	if err != nil {
		return 0, buf
	}
	var total int64
	for _, name := range names {
		if name == "" || name[0] < '0' || name[0] > '9' {
			continue
		}
		var ok bool
		buf, ok = readInto(filepath.Join(fs.proc, name, "stat"), buf)
		if !ok || statPgrp(buf) != pgid {
			continue
		}
		buf, ok = readInto(filepath.Join(fs.proc, name, "statm"), buf)
		if !ok {
			continue
		}
		if f := bytes.Fields(buf); len(f) >= 2 {
			if pages, err := strconv.ParseInt(string(f[1]), 10, 64); err == nil {
				total += pages * pageSize
			}
		}
	}
	return total, buf
}

// statPgrp returns the process group from a /proc/<pid>/stat line. The command name is in
// parentheses and may itself hold spaces or parentheses, so fields are counted after the
// last ')': state, ppid, pgrp.
func statPgrp(stat []byte) int {
	i := bytes.LastIndexByte(stat, ')')
	if i < 0 {
		return -1
	}
	f := bytes.Fields(stat[i+1:])
	if len(f) < 3 {
		return -1
	}
	pg, err := strconv.Atoi(string(f[2]))
	if err != nil {
		return -1
	}
	return pg
}

// readInto reads a small proc file into buf, reusing its storage between samples. It uses
// raw system calls: os.Open would also try to register each file with the network poller,
// a wasted call per process on every sample.
func readInto(path string, buf []byte) ([]byte, bool) {
	fd, err := syscall.Open(path, syscall.O_RDONLY|syscall.O_CLOEXEC, 0)
	if err != nil {
		return buf, false
	}
	defer syscall.Close(fd)
	buf = buf[:0]
	for {
		if len(buf) == cap(buf) {
			buf = append(buf, make([]byte, 512)...)[:len(buf)]
		}
		n, err := syscall.Read(fd, buf[len(buf):cap(buf)])
		if err != nil || n <= 0 {
			return buf, len(buf) > 0
		}
		buf = buf[:len(buf)+n]
	}
}
