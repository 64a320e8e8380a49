package check

import (
	"fmt"
	"slices"
	"strings"

	"github.com/experimentalmachines/exe-expo/pkg/pte"
)

// LinearsOutside refuses a method whose linears run on CPU kernels instead of in the
// backend's delegate: the file would load and answer, but the bulk of its work would fall
// back to the portable kernels, many times slower than the backend the user chose. The
// sentence gives the numbers from pte.Coverage; backend names the backend when the method
// calls no delegate at all.
func LinearsOutside(c pte.Coverage, backend string) []string {
	if c.LinearsOutside == 0 {
		return nil
	}
	where := backend
	if len(c.Backends) > 0 {
		where = strings.Join(c.Backends, ", ")
	}
	linears, ops, opaque := fmt.Sprint(c.LinearsOutside), fmt.Sprint(c.OperatorsOutside), ""
	if c.LinearsInside != nil {
		linears = fmt.Sprintf("%d of %d", c.LinearsOutside, c.LinearsOutside+*c.LinearsInside)
		ops = fmt.Sprintf("%d of %d", c.OperatorsOutside, c.Operators())
	} else {
		opaque = " (its payload does not say how many run inside)"
	}
	return []string{fmt.Sprintf("%s: %s linears run outside the %s delegate, on CPU kernels (%s), reading %d of the method's %d weight bytes (%s); %s operators run outside it%s",
		c.Method, linears, where, counted(c.LinearOperatorsOutside), c.LinearWeightBytesOutside, c.WeightBytes(),
		percent(c.LinearWeightBytesOutside, c.WeightBytes()), ops, opaque)}
}

// counted lists operators with how often each is called: "aten::addmm.out, aten::mm.out ×3".
func counted(ops map[string]int) string {
	names := make([]string, 0, len(ops))
	for n := range ops {
		names = append(names, n)
	}
	slices.Sort(names)
	for i, n := range names {
		if ops[n] > 1 {
			names[i] = fmt.Sprintf("%s ×%d", n, ops[n])
		}
	}
	return strings.Join(names, ", ")
}

func percent(part, whole int64) string {
	if whole <= 0 {
		return "no weights"
	}
	return fmt.Sprintf("%.1f%%", 100*float64(part)/float64(whole))
}
