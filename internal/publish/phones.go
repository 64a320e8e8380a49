package publish

import (
	"fmt"
	"strings"

	"github.com/experimentalmachines/exe-expo/internal/config"
	"github.com/experimentalmachines/exe-expo/internal/family"
	"github.com/experimentalmachines/exe-expo/internal/report"
)

// folderPhones is one folder's phone table from its reports: the classes its largest
// window was held against, and for each the largest window whose resident bytes fit what
// the class leaves to the app. Reports from before the classes were recorded give none.
func folderPhones(rs []placed) []config.PhoneFit {
	var classes []config.PhoneClass
	resident := map[int]int64{}
	for _, p := range rs {
		w := p.Report.Window
		if len(w.PhoneClasses) == 0 {
			continue
		}
		classes = w.PhoneClasses
		resident[w.Context] = w.DeviceResident
	}
	if len(classes) == 0 {
		return nil
	}
	return config.PhoneTable(classes, resident)
}

// folderPhonesByCache is the folder's phone table for each KV cache its files could keep,
// from the reports' resident bytes by cache; nil when fewer than two caches are known.
func folderPhonesByCache(rs []placed) map[string][]config.PhoneFit {
	var classes []config.PhoneClass
	resident := map[string]map[int]int64{}
	for _, p := range rs {
		w := p.Report.Window
		if len(w.PhoneClasses) == 0 {
			continue
		}
		classes = w.PhoneClasses
		for cache, n := range w.ResidentByCache {
			if resident[cache] == nil {
				resident[cache] = map[int]int64{}
			}
			resident[cache][w.Context] = n
		}
	}
	if len(resident) < 2 {
		return nil
	}
	out := map[string][]config.PhoneFit{}
	for cache, byWindow := range resident {
		out[cache] = config.PhoneTable(classes, byWindow)
	}
	return out
}

// phones writes the card's phone table: one row per backend folder, one column per phone
// RAM class, each cell the largest window of that folder the phone can hold.
func phones(b *strings.Builder, rs []placed) {
	var order []string
	byFolder := map[string][]placed{}
	for _, p := range rs {
		f := p.folder()
		if _, ok := byFolder[f]; !ok {
			order = append(order, f)
		}
		byFolder[f] = append(byFolder[f], p)
	}
	var head []config.PhoneFit
	var rows []string
	byCache := false
	for _, f := range order {
		fits := folderPhones(byFolder[f])
		if fits == nil {
			continue
		}
		if head == nil {
			head = fits
		}
		r := byFolder[f][0].Report
		cells := []string{title(r) + " (" + target(r) + ")"}
		for _, fit := range fits {
			cells = append(cells, windowCell(fit.Window))
		}
		rows = append(rows, "| "+strings.Join(cells, " | ")+" |")
		extra := byCacheRows(r, folderPhonesByCache(byFolder[f]))
		byCache = byCache || len(extra) > 0
		rows = append(rows, extra...)
	}
	if len(rows) == 0 {
		return
	}
	cols := []string{"files"}
	rule := []string{"---"}
	var shares []string
	for _, c := range head {
		cols = append(cols, fmt.Sprintf("%d GB phone", c.RAMGiB))
		rule = append(rule, "---")
		share := fmt.Sprintf("%s for a %d GB phone", gbText(c.AppBytes), c.RAMGiB)
		if c.ProcessLimited {
			share += " (the per-process limit some vendors' phones of that size enforce)"
		}
		shares = append(shares, share)
	}
	b.WriteString("## Which phone runs which window\n\n")
	b.WriteString("The largest window whose memory on the phone (the .pte, the KV cache and the runtime) fits what a phone of each RAM size leaves to the app: " +
		strings.Join(shares, ", ") + ". A dash: no window of these files fits. " +
		"The openweights app sizes a .pte without its KV cache, so it can offer a larger window than this table gives your phone: pick by this table.")
	if byCache {
		b.WriteString(" The rows \"every window with an fp32/int8 KV cache\" show what these files' windows would reach with that one cache at every window: the int8 cache holds a token in about a quarter of the fp32 cache's bytes.")
	}
	b.WriteString("\n\n")
	b.WriteString("| " + strings.Join(cols, " | ") + " |\n| " + strings.Join(rule, " | ") + " |\n")
	b.WriteString(strings.Join(rows, "\n") + "\n\n")
	b.WriteString(killTrapNote(rs))
}

// byCacheRows are a folder's rows for each cache it could keep at every window, fp32 first.
func byCacheRows(r *report.Report, byCache map[string][]config.PhoneFit) []string {
	var rows []string
	for _, cache := range []string{"fp32", "int8"} {
		fits, ok := byCache[cache]
		if !ok {
			continue
		}
		cells := []string{fmt.Sprintf("%s (%s), every window with an %s KV cache", title(r), target(r), cache)}
		for _, fit := range fits {
			cells = append(cells, windowCell(fit.Window))
		}
		rows = append(rows, "| "+strings.Join(cells, " | ")+" |")
	}
	return rows
}

func windowCell(w int) string {
	if w == 0 {
		return "—"
	}
	return family.WindowLabel(w)
}

func gbText(n int64) string { return fmt.Sprintf("%.2f GB", float64(n)/1e9) }

// fitsPhones is a window's fitting classes as config.json lists them, nil before they were
// recorded.
func fitsPhones(w report.Window) []int {
	if len(w.PhoneClasses) == 0 {
		return nil
	}
	if w.FitsPhonesGiB == nil {
		return []int{}
	}
	return w.FitsPhonesGiB
}
