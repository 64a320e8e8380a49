package run

import (
	"os"
	"sync"
	"time"
)

// TimeFormat is how the report writes instants: UTC, to the second (%Y-%m-%dT%H:%M:%SZ).
const TimeFormat = "2006-01-02T15:04:05Z"

// Memory is what the sampler saw during one run. Its JSON names are those of the export
// report's host block (docs/research/run.md#2-memory-figures), so the report can embed it
// as is.
type Memory struct {
	// Samples is how many samples were taken; zero means the figures below are unknown.
	Samples            int     `json:"samples"`
	SampleEverySeconds float64 `json:"sample_every_seconds"`
	// PeakMemUsedBytes is the largest MemTotal − MemAvailable.
	PeakMemUsedBytes int64 `json:"peak_mem_used_bytes"`
	// PeakSwapUsedBytes is the largest SwapTotal − SwapFree.
	PeakSwapUsedBytes int64 `json:"peak_swap_used_bytes"`
	// PeakInUseBytes is the largest RAM plus swap in use within one sample, the figure a
	// host-need estimate is checked against (the two separate peaks need not coincide).
	PeakInUseBytes int64 `json:"peak_in_use_bytes"`
	// PeakInUseAt is when PeakInUseBytes was sampled, in TimeFormat.
	PeakInUseAt string `json:"peak_in_use_at"`
	// MinMemAvailableBytes is the smallest MemAvailable.
	MinMemAvailableBytes int64 `json:"min_mem_available_bytes"`
	// PeakCgroupBytes is memory.peak of this cgroup, else the largest memory.current (or
	// v1 memory.usage_in_bytes) sampled; nil where there is no cgroup memory controller.
	// memory.peak covers the cgroup's whole life, not only the tool's.
	PeakCgroupBytes *int64 `json:"peak_cgroup_bytes"`
	// CgroupSource names the file PeakCgroupBytes came from.
	CgroupSource string `json:"cgroup_source,omitempty"`
	// PeakRSSTreeBytes is the largest sum of the resident sets of the tool's process
	// group, sampled.
	PeakRSSTreeBytes int64 `json:"peak_rss_tree_bytes"`
}

// Sampler samples host memory at a fixed interval until stopped. Tool runs one for each
// tool; a caller can run its own around work that is not a single process.
type Sampler struct {
	every    time.Duration
	pgid     int
	fs       sysfs
	pageSize int64
	cgroup   cgroupSource
	hasCG    bool
	clock    clock

	mu  sync.Mutex
	m   Memory
	buf []byte

	stop chan struct{}
	done chan struct{}
	once sync.Once
}

// StartSampler takes a first sample now and then one every interval (at least 10 ms)
// until Stop. pgid selects the process group whose RSS is summed; 0 skips it.
func StartSampler(every time.Duration, pgid int) *Sampler {
	return startSampler(every, pgid, realFS, systemClock{})
}

func startSampler(every time.Duration, pgid int, fs sysfs, clk clock) *Sampler {
	s := newSampler(every, pgid, fs, clk)
	s.sample(clk.Now())
	go s.loop()
	return s
}

func newSampler(every time.Duration, pgid int, fs sysfs, clk clock) *Sampler {
	every = max(every, 10*time.Millisecond)
	s := &Sampler{
		every: every, pgid: pgid, fs: fs, pageSize: int64(os.Getpagesize()), clock: clk,
		stop: make(chan struct{}), done: make(chan struct{}),
	}
	s.m.SampleEverySeconds = every.Seconds()
	s.cgroup, s.hasCG = fs.findCgroup()
	return s
}

func (s *Sampler) loop() {
	defer close(s.done)
	ticks, stop := s.clock.Ticker(s.every)
	defer stop()
	for {
		select {
		case <-s.stop:
			return
		case now := <-ticks:
			s.sample(now)
		}
	}
}

// Stop takes a last sample and returns what was seen. It is safe to call more than once.
func (s *Sampler) Stop() Memory {
	s.once.Do(func() {
		close(s.stop)
		<-s.done
		s.sample(s.clock.Now())
		if s.hasCG && s.cgroup.kind == "memory.peak" {
			if v, err := readInt(s.cgroup.path); err == nil {
				s.m.PeakCgroupBytes = &v
			}
		}
	})
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.m
}

// Snapshot returns the figures so far without stopping.
func (s *Sampler) Snapshot() Memory {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.m
}

// sample reads meminfo, the cgroup and the group's RSS once and folds them into the peaks.
func (s *Sampler) sample(now time.Time) {
	s.mu.Lock()
	defer s.mu.Unlock()
	mi, err := s.fs.readMeminfo()
	if err != nil {
		return
	}
	m := &s.m
	used := mi.memTotal - mi.memAvailable
	swap := mi.swapTotal - mi.swapFree
	first := m.Samples == 0
	m.Samples++
	m.PeakMemUsedBytes = max(m.PeakMemUsedBytes, used)
	m.PeakSwapUsedBytes = max(m.PeakSwapUsedBytes, swap)
	if first || used+swap > m.PeakInUseBytes {
		m.PeakInUseBytes = used + swap
		m.PeakInUseAt = now.UTC().Format(TimeFormat)
	}
	if first || mi.memAvailable < m.MinMemAvailableBytes {
		m.MinMemAvailableBytes = mi.memAvailable
	}
	if s.hasCG {
		m.CgroupSource = s.cgroup.kind
		if s.cgroup.kind != "memory.peak" {
			if v, err := readInt(s.cgroup.path); err == nil && (m.PeakCgroupBytes == nil || v > *m.PeakCgroupBytes) {
				m.PeakCgroupBytes = &v
			}
		}
	}
	if s.pgid > 0 {
		var rss int64
		rss, s.buf = s.fs.groupRSS(s.pgid, s.pageSize, s.buf)
		m.PeakRSSTreeBytes = max(m.PeakRSSTreeBytes, rss)
	}
}
