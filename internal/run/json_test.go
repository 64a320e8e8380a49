package run

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"
)

// TestReportFieldNames pins the JSON names the export report relies on
// (docs/research/run.md#2-memory-figures, docs/research/reference.md#export-report), so a
// rename here cannot silently change the report.
func TestReportFieldNames(t *testing.T) {
	cg := int64(1)
	tests := []struct {
		name string
		v    any
		want []string
	}{
		{"memory", Memory{PeakCgroupBytes: &cg, CgroupSource: "memory.peak"}, []string{
			"samples", "sample_every_seconds", "peak_mem_used_bytes", "peak_swap_used_bytes", "peak_in_use_bytes",
			"peak_in_use_at", "min_mem_available_bytes", "peak_cgroup_bytes", "cgroup_source", "peak_rss_tree_bytes",
		}},
		{"host", HostFacts{}, []string{"nproc", "mem_total_bytes", "swap_total_bytes", "cpu_model", "disk_free_bytes", "disk_path"}},
		{"result", Result{}, []string{"tool", "exit_status", "started_at", "seconds", "max_rss_bytes", "memory", "timings"}},
		{"timings", Timings{}, []string{"total_seconds", "stages"}},
		{"stage", StageTime{}, []string{"stage", "seconds", "share", "count"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			data, err := json.Marshal(tc.v)
			if err != nil {
				t.Fatal(err)
			}
			var m map[string]any
			if err := json.Unmarshal(data, &m); err != nil {
				t.Fatal(err)
			}
			var got []string
			for k := range m {
				got = append(got, k)
			}
			slices.Sort(got)
			want := slices.Sorted(slices.Values(tc.want))
			if !slices.Equal(got, want) {
				t.Errorf("keys = %v, want %v", got, want)
			}
		})
	}
	if data, _ := json.Marshal(Memory{}); !strings.Contains(string(data), `"peak_cgroup_bytes":null`) {
		t.Errorf("unknown cgroup peak should be null: %s", data)
	}
}

func TestTimingsString(t *testing.T) {
	tm := Timings{TotalSeconds: 2434, Stages: []StageTime{
		{Stage: "calibration", Seconds: 936, Share: 0.385}, {Stage: "htp_compile", Seconds: 1172, Share: 0.482},
		{Stage: "other", Seconds: 326, Share: 0.134},
	}}
	want := "2434.0 s: calibration 38.5%, htp_compile 48.2%, other 13.4%"
	if got := tm.String(); got != want {
		t.Errorf("String = %q, want %q", got, want)
	}
	if got := (Timings{TotalSeconds: 1.5}).String(); got != "1.5 s" {
		t.Errorf("String = %q", got)
	}
}
