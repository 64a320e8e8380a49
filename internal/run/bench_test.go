package run

import (
	"io"
	"strings"
	"syscall"
	"testing"
	"time"
)

// BenchmarkSample measures one sample on this host: /proc/meminfo, the cgroup file and a
// scan of /proc for the RSS of this test's own process group.
func BenchmarkSample(b *testing.B) {
	s := newSampler(time.Second, syscall.Getpgrp(), realFS, systemClock{})
	b.ReportAllocs()
	for b.Loop() {
		s.sample(time.Now())
	}
}

// BenchmarkSampleNoGroup is a sample without the /proc scan (pgid 0).
func BenchmarkSampleNoGroup(b *testing.B) {
	s := newSampler(time.Second, 0, realFS, systemClock{})
	b.ReportAllocs()
	for b.Loop() {
		s.sample(time.Now())
	}
}

// BenchmarkLineSink measures splitting, stage matching and prefixing of export_llm-like
// output with the XNNPACK rules.
func BenchmarkLineSink(b *testing.B) {
	chunk := []byte(strings.Repeat("[INFO 2026-12-02 10:00:00,000 builder.py:194] (layers.0.attention.wq): Linear8da4w(in_features=1024, out_features=2048)\n", 64))
	s := testSink(io.Discard, newStageClock(llmRules, time.Now()))
	s.prefix = "[export_llm] "
	b.SetBytes(int64(len(chunk)))
	b.ReportAllocs()
	for b.Loop() {
		s.Write(chunk)
	}
}
