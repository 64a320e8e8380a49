package publish

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

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
