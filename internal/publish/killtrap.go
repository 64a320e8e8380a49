package publish

import (
	"fmt"
	"path"
	"sort"
	"strconv"
	"strings"

	"github.com/experimentalmachines/exe-expo/internal/appview"
	"github.com/experimentalmachines/exe-expo/internal/backend"
	"github.com/experimentalmachines/exe-expo/internal/family"
	"github.com/experimentalmachines/exe-expo/internal/report"
)

// killTraps are the phone classes (RAM GiB) on which the openweights app would offer the
// report's file while the phone cannot hold its window (appview.KillTraps): the app's fit
// is the file × 2.4 + 450 MiB, blind to the KV cache. Only a single program the app offers
// has any; the plan already gave the window the int8 cache where that removes a trap, so
// what is left here is what nothing removes.
func killTraps(r *report.Report) []int {
	var ptes []report.File
	for _, f := range r.Files {
		if strings.HasSuffix(f.Path, ".pte") {
			ptes = append(ptes, f)
		}
	}
	b := backend.ByName(r.Backend)
	if len(ptes) != 1 || b == nil || r.Window.DeviceResident == 0 || !appview.AppOffers(b.AppName, ptes[0].Path) {
		return nil
	}
	return appview.KillTraps(r.Window.PhoneClasses, ptes[0].Bytes, r.Window.DeviceResident)
}

// killTrapNote is the card's paragraph under the phone table naming each window the app
// offers a phone class that cannot hold it, "" when there is none.
func killTrapNote(rs []placed) string {
	var lines []string
	for _, p := range rs {
		cls := killTraps(p.Report)
		if len(cls) == 0 {
			continue
		}
		gb := make([]string, len(cls))
		for i, c := range cls {
			gb[i] = strconv.Itoa(c)
		}
		lines = append(lines, fmt.Sprintf("- `%s/` %s: the app offers it on %s GB phones, which cannot hold its window (%s on the phone)%s",
			path.Dir(p.Path), family.WindowLabel(p.Report.Window.Context), strings.Join(gb, ", "), gbText(p.Report.Window.DeviceResident), trapCause(p.Report)))
	}
	if len(lines) == 0 {
		return ""
	}
	sort.Strings(lines)
	return "**Kill traps.** The openweights app sizes a .pte as the file × 2.4 + 450 MiB, without its KV cache, and offers these windows to phones that cannot hold them; opening one there gets the app killed:\n\n" +
		strings.Join(lines, "\n") + "\n\n"
}

// trapCause says why the plan's KV-cache decision left the trap: the int8 cache is already
// the file's, or the file keeps the only cache its backend exports (Vulkan's fp32).
func trapCause(r *report.Report) string {
	if recordedCache(r) == "int8" {
		return ", even with the int8 KV cache"
	}
	return ", and no KV cache these files can keep removes that"
}
