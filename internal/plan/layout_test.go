package plan_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/experimentalmachines/exe-expo/internal/appview"
	"github.com/experimentalmachines/exe-expo/internal/backend"
	"github.com/experimentalmachines/exe-expo/internal/config"
	"github.com/experimentalmachines/exe-expo/internal/family"
	"github.com/experimentalmachines/exe-expo/internal/plan"
	"github.com/experimentalmachines/exe-expo/internal/result"
	"github.com/experimentalmachines/exe-expo/internal/source"
)

// fakeBackend is a backend's plan with one built row per window; chunks > 0 cuts each
// window into that many files.
func fakeBackend(name string, targets []string, chunks int, windows ...int) plan.BackendPlan {
	bp := plan.BackendPlan{Backend: name, Title: backend.ByName(name).Title, OK: true, Targets: targets}
	for _, w := range windows {
		r := plan.Row{Window: w, Label: family.WindowLabel(w)}
		for range chunks {
			r.Chunks = append(r.Chunks, 1)
		}
		bp.Rows = append(bp.Rows, r)
	}
	return bp
}

// windowsUpTo is n windows, 1k apart.
func windowsUpTo(n int) []int {
	ws := make([]int, n)
	for i := range ws {
		ws[i] = (i + 1) * 1024
	}
	return ws
}

var fiveWindows = []int{2048, 4096, 8192, 16384, 32768}

// TestLayOut holds LayOut at its edges: a repo of exactly the app's 40 files loses
// nothing; one more loses the longest QNN window (the app never runs QNN); QNN gone,
// MediaTek's longest windows go next (chip-locked); and where XNNPACK and Vulkan alone are
// more than 40, Vulkan's longest go before any XNNPACK window. Rows already skipped, the
// fp32 fallback and a backend that is not OK add no file.
func TestLayOut(t *testing.T) {
	mt2, sm2 := []string{"MT6991", "MT6989"}, []string{"SM8750", "SM8650"}
	forty := func() []plan.BackendPlan {
		x := fakeBackend("xnnpack", nil, 0, fiveWindows...)
		x.Fallback = x.Rows // replaces a window's file, adds none
		q := fakeBackend("qnn", sm2, 0, fiveWindows...)
		m := fakeBackend("mediatek", []string{"MT6991"}, 4, append([]int{512}, fiveWindows...)...)
		m.Rows[5].Skip = "needs about 277.4 GiB of memory"
		enn := fakeBackend("enn", nil, 0, fiveWindows...)
		enn.OK = false
		return []plan.BackendPlan{x, fakeBackend("vulkan", nil, 0, fiveWindows...), q, m, enn} // 5 + 5 + 10 + 20
	}
	for _, tc := range []struct {
		name     string
		backends func() []plan.BackendPlan
		want     plan.Layout
	}{
		{"exactly 40: nothing left out", forty, plan.Layout{Files: 40, Planned: 40, Limit: 40}},
		{"41: the longest QNN window goes", func() []plan.BackendPlan {
			bs := forty()
			bs[0] = fakeBackend("xnnpack", nil, 0, append(fiveWindows, 65536)...)
			return bs
		}, plan.Layout{Files: 39, Planned: 41, Limit: 40, LeftOut: []plan.LeftOut{{Backend: "qnn", Window: 32768, Files: 2}}}},
		{"QNN gone, MediaTek's longest next", func() []plan.BackendPlan {
			return []plan.BackendPlan{fakeBackend("xnnpack", nil, 0, fiveWindows...), fakeBackend("vulkan", nil, 0, fiveWindows...),
				fakeBackend("qnn", []string{"SM8750"}, 0, 2048, 4096), fakeBackend("mediatek", mt2, 4, append([]int{512}, fiveWindows[:4]...)...)} // 5 + 5 + 2 + 40
		}, plan.Layout{Files: 34, Planned: 52, Limit: 40, LeftOut: []plan.LeftOut{
			{Backend: "qnn", Window: 4096, Files: 1}, {Backend: "qnn", Window: 2048, Files: 1},
			{Backend: "mediatek", Window: 16384, Files: 8}, {Backend: "mediatek", Window: 8192, Files: 8}}}},
		{"XNNPACK and Vulkan alone over 40: Vulkan's longest first", func() []plan.BackendPlan {
			return []plan.BackendPlan{fakeBackend("xnnpack", nil, 0, windowsUpTo(24)...), fakeBackend("vulkan", nil, 0, windowsUpTo(24)...),
				fakeBackend("qnn", []string{"SM8750"}, 0, 1024)}
		}, plan.Layout{Files: 40, Planned: 49, Limit: 40, LeftOut: []plan.LeftOut{
			{Backend: "qnn", Window: 1024, Files: 1},
			{Backend: "vulkan", Window: 24 * 1024, Files: 1}, {Backend: "vulkan", Window: 23 * 1024, Files: 1}, {Backend: "vulkan", Window: 22 * 1024, Files: 1},
			{Backend: "vulkan", Window: 21 * 1024, Files: 1}, {Backend: "vulkan", Window: 20 * 1024, Files: 1}, {Backend: "vulkan", Window: 19 * 1024, Files: 1},
			{Backend: "vulkan", Window: 18 * 1024, Files: 1}, {Backend: "vulkan", Window: 17 * 1024, Files: 1}}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			bs := tc.backends()
			before := map[string]string{}
			for _, bp := range bs {
				for _, r := range bp.Rows {
					before[bp.Backend+"/"+r.Label] = r.Skip
				}
			}
			got := plan.LayOut(bs, appview.MaxListed)
			require.Empty(t, cmp.Diff(tc.want, got))

			shed := map[string]plan.LeftOut{}
			for _, o := range got.LeftOut {
				shed[o.Backend+"/"+family.WindowLabel(o.Window)] = o
			}
			for _, bp := range bs {
				for _, r := range bp.Rows {
					key := bp.Backend + "/" + r.Label
					o, left := shed[key]
					if !left {
						assert.Equal(t, before[key], r.Skip, "%s is not touched", key)
						continue
					}
					assert.Contains(t, r.Skip, fmt.Sprintf("the app lists only the 40 smallest .pte files of a repo (%s)", plan.AppListRule), key)
					assert.Contains(t, r.Skip, fmt.Sprintf("the windows planned would put %d there", got.Planned), key)
					files := fmt.Sprintf("%d .pte files", o.Files)
					if o.Files == 1 {
						files = "1 .pte file"
					}
					assert.Contains(t, r.Skip, fmt.Sprintf("this window is %s of %s, ", files, strings.Split(bp.Title, " (")[0]), key)
				}
			}
		})
	}
}

// TestLayOutSaysWhyPerReach: each kind of backend is left out with the reason that fits it.
func TestLayOutSaysWhyPerReach(t *testing.T) {
	for _, tc := range []struct{ backend, why string }{
		{"qnn", "of Qualcomm QNN, which the app never runs: such files go first"},
		{"mediatek", "of MediaTek NeuroPilot, which run only on one chip's phones"},
		{"vulkan", "of Vulkan, which the app runs only on some phones"},
		{"xnnpack", "of XNNPACK, which any phone runs"},
	} {
		targets := map[string][]string{"qnn": {"SM8750"}, "mediatek": {"MT6991"}}[tc.backend]
		bs := []plan.BackendPlan{fakeBackend(tc.backend, targets, 0, windowsUpTo(41)...)}
		l := plan.LayOut(bs, appview.MaxListed)
		require.Equal(t, []plan.LeftOut{{Backend: tc.backend, Window: 41 * 1024, Files: 1}}, l.LeftOut, tc.backend)
		assert.Contains(t, bs[0].Rows[40].Skip, tc.why, tc.backend)
	}
}

// twoMediaTekChips is the default pipeline with MediaTek built for MT6989 beside MT6991:
// twice its chunk files.
func twoMediaTekChips(t *testing.T) *config.Config {
	t.Helper()
	cfg, err := config.Default()
	require.NoError(t, err)
	require.Equal(t, []string{"MT6991"}, cfg.Export.MediaTek.SoCs, "the default builds one MediaTek chip")
	require.Contains(t, cfg.Chips, "MT6989")
	cfg.Export.MediaTek.SoCs = []string{"MT6991", "MT6989"}
	return cfg
}

// TestFullQwen3Layout plans Qwen3-1.7B over every backend. MediaTek's 512 window is left out
// before the layout (no XNNPACK 512 window decodes for it, docs/research/execuserve-rules.md
// E10). With the default pipeline its 34 files (QNN's 32k is over the job limit) fit the
// app's 40 and nothing is left out; with the job limit lifted (every QNN window built) it is
// 36, still nothing. With a second MediaTek chip the 50 (or, without a job limit, 52) files would push the app's own XNNPACK and Vulkan files out
// (internal/appview TestFullQwen3Plan): the plan leaves every QNN window out first, then
// the longest MediaTek windows, and the layout it predicts, read by appview as the app
// reads a repo, lists every file the app runs. Each backend's plan alone (what each
// workflow's size-window runs) leaves the same windows out.
func TestFullQwen3Layout(t *testing.T) {
	t.Setenv("EXE_EXPO_OFFLINE", "1")
	src, _, err := source.Open(context.Background(), "Qwen/Qwen3-1.7B", "main", nil)
	require.NoError(t, err)
	def, err := config.Default()
	require.NoError(t, err)
	noLimit := func(c *config.Config) *config.Config { c.Export.JobLimitMinutes = 1 << 20; return c }
	defNoLimit, err := config.Default()
	require.NoError(t, err)
	for _, tc := range []struct {
		name           string
		cfg            *config.Config
		planned, files int
		leftOut        []plan.LeftOut
	}{
		{"default: 34 files", def, 34, 34, nil},
		{"every QNN window: 36", noLimit(defNoLimit), 36, 36, nil},
		{"two MediaTek chips", twoMediaTekChips(t), 50, 34, []plan.LeftOut{
			{Backend: "qnn", Window: 16384, Files: 2}, {Backend: "qnn", Window: 8192, Files: 2},
			{Backend: "qnn", Window: 4096, Files: 2}, {Backend: "qnn", Window: 2048, Files: 2},
			{Backend: "mediatek", Window: 16384, Files: 8}}},
		{"two MediaTek chips, every QNN window", noLimit(twoMediaTekChips(t)), 52, 34, []plan.LeftOut{
			{Backend: "qnn", Window: 32768, Files: 2}, {Backend: "qnn", Window: 16384, Files: 2}, {Backend: "qnn", Window: 8192, Files: 2},
			{Backend: "qnn", Window: 4096, Files: 2}, {Backend: "qnn", Window: 2048, Files: 2},
			{Backend: "mediatek", Window: 16384, Files: 8}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := plan.Build(tc.cfg, src, "")
			require.NotNil(t, p.Layout)
			assert.Equal(t, plan.Layout{Files: tc.files, Planned: tc.planned, Limit: appview.MaxListed, LeftOut: tc.leftOut}, *p.Layout)

			v := appview.Build(predictedRepo(p, false), nil, nil)
			require.Len(t, v.Files, tc.files)
			for _, e := range v.Files {
				assert.LessOrEqual(t, e.Rank, appview.MaxListed, e.Path)
				assert.True(t, e.Runs == "" || e.Listed, "%s: %s", e.Path, e.Dropped)
			}
			assert.Empty(t, v.Problems, "the layout breaks none of the app's rules")
			if len(tc.leftOut) > 0 {
				// Kept, the windows left out would have cost the app files it runs.
				kept := appview.Build(predictedRepo(p, true), nil, nil)
				assert.True(t, slices.ContainsFunc(kept.Problems, func(pr appview.Problem) bool { return pr.Rule == appview.RuleFirst40 }),
					"the windows left out would push files the app runs past the 40")
			}
			for _, bp := range p.Backends {
				alone := plan.Build(tc.cfg, src, bp.Backend)
				require.Len(t, alone.Backends, 1)
				assert.Empty(t, cmp.Diff(bp, alone.Backends[0]), "%s planned alone", bp.Backend)
				assert.Equal(t, p.Layout, alone.Layout, "%s planned alone", bp.Backend)
			}
		})
	}
}

// TestLeftOutReachesSizeWindow: a window the layout leaves out is a skipped window of its
// backend's selection (what size-window outputs), with its reason, and it costs nothing.
func TestLeftOutReachesSizeWindow(t *testing.T) {
	t.Setenv("EXE_EXPO_OFFLINE", "1")
	src, _, err := source.Open(context.Background(), "Qwen/Qwen3-1.7B", "main", nil)
	require.NoError(t, err)
	cfg := twoMediaTekChips(t)
	for _, name := range []string{"qnn", "mediatek"} {
		p := plan.Build(cfg, src, name)
		s, err := p.Select(name, "", "")
		require.NoError(t, err)
		bp := p.Backends[0]
		for _, o := range p.Layout.LeftOut {
			if o.Backend != name {
				continue
			}
			i := slices.IndexFunc(s.Skipped, func(sk result.Skipped) bool { return sk.Window == o.Window })
			require.GreaterOrEqual(t, i, 0, "%s %d is skipped", name, o.Window)
			assert.Contains(t, s.Skipped[i].Reason, "left out of the repo: the app lists only the 40 smallest .pte files")
			assert.False(t, slices.ContainsFunc(s.Windows, func(w result.Window) bool { return w.Window == o.Window }), "%s %d is not in the matrix", name, o.Window)
		}
		jobs := 0
		for _, w := range s.Windows {
			i := slices.IndexFunc(bp.Rows, func(r plan.Row) bool { return r.Window == w.Window })
			if bp.Rows[i].ExportMinutes > 0 {
				jobs += len(bp.Targets)
			}
		}
		assert.Equal(t, jobs, bp.Jobs, "%s: only the windows built are costed", name)
	}
}

// predictedRepo is the repo p's windows would publish, as appview reads it: the root
// tokenizer and, for each window built (with keep, also each left out), its .pte files in
// its backend's folder (per chip, per chunk), sized by the plan's estimates.
func predictedRepo(p *plan.Plan, keep bool) appview.Repo {
	repo := appview.Repo{ID: "experimentalmachines/Qwen3-1.7B-ExecuTorch", Files: []appview.File{{Path: "tokenizer.json", Size: 11_422_654}}}
	left := map[string]bool{}
	for _, o := range p.Layout.LeftOut {
		left[fmt.Sprintf("%s/%d", o.Backend, o.Window)] = true
	}
	folders := map[string]string{"xnnpack": "xnnpack", "vulkan": "vulkan", "qnn": "qnn", "mediatek": "mtk"}
	for _, bp := range p.Backends {
		if !bp.OK {
			continue
		}
		dirs := []string{folders[bp.Backend]}
		if len(bp.Targets) > 0 {
			dirs = nil
			for _, chip := range bp.Targets {
				dirs = append(dirs, folders[bp.Backend]+"/"+strings.ToLower(chip))
			}
		}
		for _, r := range bp.Rows {
			if r.Skip != "" && !(keep && left[fmt.Sprintf("%s/%d", bp.Backend, r.Window)]) {
				continue
			}
			for _, dir := range dirs {
				stem := fmt.Sprintf("%s/Qwen3-1.7B-%s-%s", dir, bp.Backend, r.Label)
				if len(r.Chunks) == 0 {
					repo.Files = append(repo.Files, appview.File{Path: stem + ".pte", Size: r.PTEBytes})
				}
				for i, c := range r.Chunks {
					repo.Files = append(repo.Files, appview.File{Path: fmt.Sprintf("%s-chunk%dof%d.pte", stem, i+1, len(r.Chunks)), Size: c})
				}
			}
		}
	}
	return repo
}

// TestLayoutLine: the plan's text says the layout in one line, within the 40 or with what
// was left out per backend and why.
func TestLayoutLine(t *testing.T) {
	within := plan.Layout{Files: 34, Planned: 34, Limit: 40}
	assert.Equal(t, "34 .pte files in the repo, within the 40 smallest the app lists (docs/research/app-rules.md, rule 2)", within.Line())
	over := plan.Layout{Files: 34, Planned: 54, Limit: 40, LeftOut: []plan.LeftOut{
		{Backend: "qnn", Window: 4096, Files: 2}, {Backend: "qnn", Window: 2048, Files: 2},
		{Backend: "mediatek", Window: 16384, Files: 8}, {Backend: "mediatek", Window: 8192, Files: 8}}}
	assert.Equal(t, "54 .pte files planned, over the 40 smallest the app lists (docs/research/app-rules.md, rule 2); "+
		"left out, the files the app runs on the fewest phones first: Qualcomm QNN (HTP) 4k, 2k (4 .pte files), MediaTek NeuroPilot (APU) 16k, 8k (16 .pte files); "+
		"the repo holds 34, so the app lists every file it runs", over.Line())
}
