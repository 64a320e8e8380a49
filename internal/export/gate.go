package export

import (
	"fmt"
	"slices"

	"github.com/experimentalmachines/exe-expo/internal/family"
	"github.com/experimentalmachines/exe-expo/internal/model"
	"github.com/experimentalmachines/exe-expo/internal/plan"
	"github.com/experimentalmachines/exe-expo/internal/run"
	"github.com/experimentalmachines/exe-expo/internal/sizing"
)

// gated is the window the gate let through, with the figures the report records.
type gated struct {
	window int
	reason string
	model  sizing.Model
	host   run.HostFacts
	budget int64
	row    plan.Row
	// disk is the row's disk need plus what the backend keeps spare (its gate's margin).
	disk int64
}

// gate decides the window and checks, before anything heavy starts, that this host can
// build it: the plan's host need against RAM + swap − reserve, its disk need against the
// work folder's free space. fam is the verdict's family, which the sizing model carries.
func (o *Options) gate(src *model.Source, fam *family.Family) (*gated, error) {
	m, err := plan.SizingModel(src, fam)
	if err != nil {
		return nil, err
	}
	g := &gated{model: m}
	b := o.spec()
	hostFn := o.Host
	if hostFn == nil {
		hostFn = run.Host
	}
	if g.host, err = hostFn(o.Work); err != nil {
		return nil, fmt.Errorf("cannot read this host's memory and disk: %w", err)
	}
	g.budget = g.host.MemTotalBytes + g.host.SwapTotalBytes - o.Config.Export.HostReserveBytes
	size := func(w int) error {
		row, err := plan.Estimate(o.Config, src, m, b, o.QMode, w)
		if err != nil {
			return err
		}
		g.window, g.row, g.disk = w, row, row.DiskNeedBytes+b.Gate.DiskMargin
		return nil
	}
	if b.Gate.Fixed == nil {
		return g, o.gateLLM(g, size, src, fam)
	}
	w, reason := b.Gate.Fixed(o.Config)
	if o.Window > 0 {
		w, reason = o.Window, b.Gate.Forced
	}
	g.reason = reason
	if err := size(w); err != nil {
		return nil, err
	}
	return g, o.check(g, b.Gate.What(w))
}

// gateLLM takes the requested window, or the largest configured window this host can
// build within the model's max_position_embeddings and the backend's MaxWindow (backends
// without a fixed window).
func (o *Options) gateLLM(g *gated, size func(int) error, src *model.Source, fam *family.Family) error {
	b := o.spec()
	most, why := 0, ""
	if b.MaxWindow != nil {
		most, why = b.MaxWindow(src, fam)
	}
	if o.Window > 0 {
		if most > 0 && o.Window > most {
			return refuse(FieldWindow, "%s %d is above the %s tokens %s's files stop at: %s", FieldWindow, o.Window, family.Commas(int64(most)), src.ID, why)
		}
		if err := size(o.Window); err != nil {
			return err
		}
		g.reason = fmt.Sprintf("requested window %d", o.Window)
		return o.check(g, b.Gate.What(o.Window))
	}
	limit := modelLimit(src)
	var tiers []int // descending
	for _, w := range slices.Backward(b.Windows(o.Config)) {
		if (limit == 0 || int64(w) <= limit) && (most == 0 || w <= most) {
			tiers = append(tiers, w)
		}
	}
	if len(tiers) == 0 {
		if most > 0 {
			return fmt.Errorf("every configured window is above %s tokens, and %s", family.Commas(int64(most)), why)
		}
		return fmt.Errorf("%s's limit of %s tokens (max_position_embeddings) is below every configured window", src.ID, family.Commas(limit))
	}
	for _, w := range tiers {
		if err := size(w); err != nil {
			return err
		}
		if o.check(g, o.spec().Gate.What(w)) == nil {
			g.reason = fmt.Sprintf("largest window this host can export: %d", w)
			return nil
		}
	}
	smallest := tiers[len(tiers)-1]
	if err := size(smallest); err != nil {
		return err
	}
	return &SkipError{Reason: fmt.Sprintf("no window fits: at %d tokens the phone would hold %s and the export would need about %s, this host has %s (RAM + swap − reserve)",
		smallest, sizing.GB(g.row.ResidentBytes), sizing.GiB(g.row.HostNeedBytes), sizing.GiB(g.budget))}
}

// check compares the need with the host and the disk need with the work folder's space.
func (o *Options) check(g *gated, what string) error {
	need := g.row.HostNeedBytes
	if need > g.budget {
		msg := fmt.Sprintf("%s at %d tokens needs about %s of memory, this host has %s (RAM %s + swap %s − %s reserve)",
			what, g.window, sizing.GiB(need), sizing.GiB(g.budget), sizing.GiB(g.host.MemTotalBytes), sizing.GiB(g.host.SwapTotalBytes), sizing.GiB(o.Config.Export.HostReserveBytes))
		if masks := g.model.MaskBytes(g.window); o.spec().LLM && masks > g.budget/2 {
			msg += fmt.Sprintf("; the causal masks alone take %s", sizing.GiB(masks))
		}
		return &SkipError{Reason: msg}
	}
	if g.host.DiskFreeBytes > 0 && g.disk > g.host.DiskFreeBytes {
		return &SkipError{Reason: fmt.Sprintf("%s at %d tokens needs about %s of disk, %s has %s free",
			what, g.window, sizing.GB(g.disk), g.host.DiskPath, sizing.GB(g.host.DiskFreeBytes))}
	}
	return nil
}
