package publish

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/experimentalmachines/exe-expo/internal/config"
	"github.com/experimentalmachines/exe-expo/internal/report"
)

// TestPublishRefusesWhatAConsumerDrops publishes one window whose files a consumer would
// refuse or drop, and expects the refusal to name the consumer's rule and nothing to be
// committed: the app's probe refuses a file without get_max_seq_len or calling a delegate
// its stock runtime lacks (read from the export's structural check, which read the file);
// ExecuServe drops a MediaTek window without its runner block.
func TestPublishRefusesWhatAConsumerDrops(t *testing.T) {
	for _, tc := range []struct {
		name string
		w    win
		edit func(*report.Report)
		want []string
	}{
		{name: "no get_max_seq_len", w: win{backend: "xnnpack", window: 2048, seed: 1},
			edit: func(r *report.Report) {
				r.StructuralCheck[0].Methods = []string{"forward", "get_max_context_len"}
				r.StructuralCheck[0].Delegates = map[string][]string{"forward": {"XnnpackBackend"}}
			},
			want: []string{"[opens] xnnpack/SmolLM2-360M-Instruct-8da4w-2k.pte: the app refuses to open it: it has no get_max_seq_len method"}},
		{name: "a delegate the stock runtime lacks", w: win{backend: "vulkan", window: 2048, seed: 1},
			edit: func(r *report.Report) {
				r.StructuralCheck[0].Methods = []string{"forward", "get_max_seq_len"}
				r.StructuralCheck[0].Delegates = map[string][]string{"forward": {"NeuropilotBackend", "VulkanBackend"}}
			},
			want: []string{"[opens] vulkan/SmolLM2-360M-Instruct-vulkan-8da4w-2k.pte", "it calls NeuropilotBackend, which the app's ExecuTorch 1.5.1 runtime does not register"}},
		{name: "MediaTek chunks without their runner block", w: win{backend: "mediatek", chip: "MT6991", window: 2048, seed: 1},
			edit: func(r *report.Report) { delete(r.Recipe, "runner") },
			want: []string{"ExecuServe would drop", "[execuserve-variant] mtk/mt6991/SmolLM2-360M-Instruct-neuropilot-a16w8-2k-chunk1of2.pte: a window cut into chunks is offered only with its embedding and runner"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv, c := newHub(t)
			dir := t.TempDir()
			rp := writeWindow(t, dir, tc.w)
			r, err := report.Read(rp)
			require.NoError(t, err)
			tc.edit(r)
			require.NoError(t, report.Write(rp, r))
			_, err = publishDir(context.Background(), c, dir, rp)
			require.Error(t, err)
			for _, s := range tc.want {
				require.ErrorContains(t, err, s)
			}
			require.Equal(t, []string{".gitattributes"}, srv.Files(testRepo, "main"), "none of the window's files is committed")
		})
	}
}

// TestPublishWarnsOfAMediaTekWindowWithoutItsTwin: ExecuServe decodes a MediaTek window on
// the XNNPACK file of the same window; publishing the MediaTek window first is allowed (the
// twin may follow) and says so.
func TestPublishWarnsOfAMediaTekWindowWithoutItsTwin(t *testing.T) {
	_, c := newHub(t)
	dir := t.TempDir()
	rp := writeWindow(t, dir, win{backend: "mediatek", chip: "MT6991", window: 2048, seed: 1})
	res, err := publishDir(context.Background(), c, dir, rp)
	require.NoError(t, err)
	require.Contains(t, res.Warnings, "mtk/mt6991/SmolLM2-360M-Instruct-neuropilot-a16w8-2k-chunk1of2.pte: no XNNPACK variant of the same window (2048 tokens) in the repo to decode with, and ExecuServe drops an NPU window without one (unless it is published too)")
}

// TestKillTrapOnTheRow: a window the app offers a 4 GB phone that cannot hold it (the
// app's fit is the file × 2.4 + 450 MiB, blind to the window) is named on its config.json
// row and under the card's phone table; the 8 GB phone, which holds it, is not.
func TestKillTrapOnTheRow(t *testing.T) {
	srv, c := newHub(t)
	dir := t.TempDir()
	rp := writeWindow(t, dir, win{backend: "xnnpack", window: 32768, seed: 1})
	r, err := report.Read(rp)
	require.NoError(t, err)
	r.Window.PhoneClasses = []config.PhoneClass{{RAMGiB: 4, AppBytes: 2_576_980_378}, {RAMGiB: 8, AppBytes: 5_153_960_755}}
	r.Window.DeviceResident = 3_500_000_000
	require.NoError(t, report.Write(rp, r))
	_, err = publishDir(context.Background(), c, dir, rp)
	require.NoError(t, err)
	repo := readRepo(t, srv, testRepo)
	var cfg struct {
		Variants []struct {
			Traps []int `json:"app_kill_trap_phones_gib"`
		} `json:"variants"`
	}
	require.NoError(t, json.Unmarshal(repo.files["xnnpack/config.json"], &cfg))
	require.Len(t, cfg.Variants, 1)
	require.Equal(t, []int{4}, cfg.Variants[0].Traps)
	card := string(repo.files["README.md"])
	require.Contains(t, card, "**Kill traps.**")
	require.Contains(t, card, "- `xnnpack/` 32k: the app offers it on 4 GB phones, which cannot hold its window (3.50 GB on the phone), and no KV cache these files can keep removes that")
}
