package publish

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/experimentalmachines/exe-expo/internal/report"
	"github.com/experimentalmachines/exe-expo/internal/result"
)

func TestMergeSkipped(t *testing.T) {
	built := func(windows ...int) []placed {
		var out []placed
		for _, w := range windows {
			r := &report.Report{}
			r.Window.Context = w
			out = append(out, placed{Path: "xnnpack/export-report.json", Report: r})
		}
		return out
	}
	limit := SkippedWindow{Context: 32768, Reason: "over the job limit"}
	memory := SkippedWindow{Context: 16384, Reason: "no runner holds it"}
	for _, tc := range []struct {
		name     string
		old, run []SkippedWindow
		folder   []placed
		want     []SkippedWindow
	}{
		{"first publish", nil, []SkippedWindow{limit, memory}, built(2048), []SkippedWindow{memory, limit}},
		{"a later run says nothing of them: kept", []SkippedWindow{memory, limit}, nil, built(2048, 4096), []SkippedWindow{memory, limit}},
		{"a later run's reason replaces the old", []SkippedWindow{limit}, []SkippedWindow{{Context: 32768, Reason: "now too big"}}, built(2048), []SkippedWindow{{Context: 32768, Reason: "now too big"}}},
		{"a window built since is no longer skipped", []SkippedWindow{memory, limit}, nil, built(2048, 32768), []SkippedWindow{memory}},
		{"the window this run built", nil, []SkippedWindow{memory}, built(16384), nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			assert.Empty(t, cmp.Diff(tc.want, mergeSkipped(tc.old, tc.run, tc.folder)))
		})
	}
}

// TestSetSkippedByChip: a folder gets the skipped windows of its own chip; a backend
// without chips those without one.
func TestSetSkippedByChip(t *testing.T) {
	run := []result.Skipped{{Window: 32768, Reason: "a"}, {Window: 8192, SoC: "SM8750", Reason: "b"}, {Window: 16384, SoC: "SM8650", Reason: "c"}}
	for _, tc := range []struct {
		report *report.Report
		want   []SkippedWindow
	}{
		{&report.Report{Backend: "xnnpack", Target: anyTarget}, []SkippedWindow{{Context: 32768, Reason: "a"}}},
		{&report.Report{Backend: "qnn", Target: "SM8750", TargetName: "Snapdragon 8 Elite"}, []SkippedWindow{{Context: 8192, Reason: "b"}}},
		{&report.Report{Backend: "qnn", Target: "SM8450", TargetName: "Snapdragon 8 Gen 1"}, nil},
	} {
		w := &Window{Report: tc.report}
		w.SetSkipped(run)
		assert.Empty(t, cmp.Diff(tc.want, w.Skipped), tc.report.Target)
	}
}

// TestSkippedWindowsOnTheCard: the windows a run did not build reach their folder's
// config.json and the card with the reason, stay there while no later run builds them,
// and leave both once one does.
func TestSkippedWindowsOnTheCard(t *testing.T) {
	srv, c := newHub(t)
	ctx := context.Background()
	const limitReason = "the export would take about 543 minutes on linux-x64-16, over the 350-minute job limit (export.job_limit_minutes)"
	run := []result.Skipped{{Window: 32768, Reason: limitReason}, {Window: 8192, SoC: "SM8750", Reason: limitReason}}
	publishWith := func(w win, skipped []result.Skipped) {
		t.Helper()
		dir := t.TempDir()
		win, err := Load(dir, writeWindow(t, dir, w), "")
		require.NoError(t, err)
		win.SetSkipped(skipped)
		_, err = Publish(ctx, win, Options{Client: c, Wait: noWait})
		require.NoError(t, err)
	}
	publishWith(win{backend: "xnnpack", window: 2048, seed: 1}, run)
	publishWith(win{backend: "qnn", chip: "SM8750", window: 2048, seed: 1}, run)
	st := readRepo(t, srv, testRepo)
	checkConsistent(t, st)
	assert.Equal(t, []SkippedWindow{{Context: 32768, Reason: limitReason}}, configOf(t, st, "xnnpack").Skipped)
	assert.Equal(t, []SkippedWindow{{Context: 8192, Reason: limitReason}}, configOf(t, st, "qnn/sm8750").Skipped)
	card := string(st.files["README.md"])
	assert.Contains(t, card, "### Windows not built\n\n- `qnn/sm8750/` 8k: "+limitReason+"\n- `xnnpack/` 32k: "+limitReason+"\n")

	// a later run of another window, which skipped nothing, keeps what was said
	publishWith(win{backend: "xnnpack", window: 4096, seed: 1}, nil)
	st = readRepo(t, srv, testRepo)
	checkConsistent(t, st)
	assert.Equal(t, []SkippedWindow{{Context: 32768, Reason: limitReason}}, configOf(t, st, "xnnpack").Skipped)

	// once 32k is built, it is no longer listed as skipped
	publishWith(win{backend: "xnnpack", window: 32768, seed: 1}, nil)
	st = readRepo(t, srv, testRepo)
	checkConsistent(t, st)
	assert.Empty(t, configOf(t, st, "xnnpack").Skipped)
	card = string(st.files["README.md"])
	assert.NotContains(t, card, "- `xnnpack/` 32k")
	assert.Contains(t, card, "- `qnn/sm8750/` 8k: "+limitReason)
}

func configOf(t *testing.T, st repoState, folder string) BackendConfig {
	t.Helper()
	var cfg BackendConfig
	require.NoError(t, json.Unmarshal(st.files[folder+"/config.json"], &cfg), folder)
	return cfg
}
