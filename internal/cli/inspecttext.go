package cli

import (
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/experimentalmachines/exe-expo/pkg/pte"
)

func (v *inspectView) writeText(w io.Writer) error {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	v.writeHeader(tw)
	v.writeMethods(tw)
	v.writeMetadata(tw)
	v.writeSegments(tw)
	if v.Check != nil {
		fmt.Fprintf(tw, "\n%s\n", v.Check.Verdict())
	}
	return tw.Flush()
}

func (v *inspectView) writeHeader(w io.Writer) {
	fmt.Fprintf(w, "%s: %d bytes, %s\n", v.File, v.Size, v.Identifier)
	if h := v.Header; h != nil {
		fmt.Fprintf(w, "extended header: %d bytes, program %d bytes, segments at %d (%d bytes)\n",
			h.Length, h.ProgramSize, h.SegmentBaseOffset, h.SegmentDataSize)
	} else {
		fmt.Fprintln(w, "extended header: none (the program is the whole file)")
	}
}

func (v *inspectView) writeMethods(w io.Writer) {
	getters := 0
	for _, m := range v.Methods {
		if m.Constant {
			getters++
		}
	}
	fmt.Fprintf(w, "\nmethods (%d, plus %d metadata getters):\n", len(v.Methods)-getters, getters)
	for _, m := range v.Methods {
		if m.Constant {
			continue
		}
		runs := "kernels only (not delegated)"
		if len(m.Backends) > 0 {
			runs = strings.Join(m.Backends, ", ")
		}
		fmt.Fprintf(w, "  %s\tin %d, out %d, values %d\tinstructions %d (kernel %d, delegate %d)\ton %s\n",
			m.Name, m.Inputs, m.Outputs, m.Values, m.Instructions, m.KernelCalls, m.DelegateCalls, runs)
		for i, d := range m.Delegates {
			fmt.Fprintf(w, "    delegate %d: %s, %s %d, %d bytes at %d, signature %s%s%s\n",
				i, d.ID, d.Location, d.Index, d.Size, d.Offset, d.Signature, graphText(d), specText(d.CompileSpecs))
		}
		if len(m.Operators) > 0 {
			fmt.Fprintf(w, "    operators: %s\n", strings.Join(m.Operators, ", "))
		}
		if c := m.Coverage; c != nil {
			writeCoverage(w, c)
		}
	}
}

// graphText says what runs inside a delegate whose graph was read: ", XNNGraph 6 nodes
// (3 linears)".
func graphText(d delegateView) string {
	switch {
	case d.Graph != nil:
		return fmt.Sprintf(", %s %s (%s)", d.Graph.Format, plural(d.Graph.Nodes, "node"), plural(d.Graph.Linears, "linear"))
	case d.GraphError != "":
		return ", graph unreadable: " + d.GraphError
	}
	return ""
}

// writeCoverage prints a method's delegate coverage: operators, linears and weight bytes
// inside the delegates against the CPU kernels outside them.
func writeCoverage(w io.Writer, c *pte.Coverage) {
	in := func(n *int) string {
		if n == nil {
			return "? (opaque payload)"
		}
		return strconv.Itoa(*n)
	}
	share := func(s *float64) string {
		if s == nil {
			return ""
		}
		return fmt.Sprintf(", %.1f%% inside", 100**s)
	}
	fmt.Fprintf(w, "    coverage: operators %s inside, %d outside%s; linears %s inside, %d outside; weight bytes %d inside, %d outside%s\n",
		in(c.OperatorsInside), c.OperatorsOutside, share(c.OperatorShareInside), in(c.LinearsInside), c.LinearsOutside,
		c.WeightBytesInside, c.WeightBytesOutside, share(c.WeightShareInside))
	if c.LinearsOutside > 0 {
		names := make([]string, 0, len(c.LinearOperatorsOutside))
		for n, k := range c.LinearOperatorsOutside {
			names = append(names, fmt.Sprintf("%s ×%d", n, k))
		}
		slices.Sort(names)
		fmt.Fprintf(w, "    linears on CPU kernels: %s (%d weight bytes)\n", strings.Join(names, ", "), c.LinearWeightBytesOutside)
	}
}

func plural(n int, what string) string {
	if n == 1 {
		return "1 " + what
	}
	return fmt.Sprintf("%d %ss", n, what)
}

func specText(specs map[string]string) string {
	if len(specs) == 0 {
		return ""
	}
	keys := make([]string, 0, len(specs))
	for k := range specs {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = k + "=" + specs[k]
	}
	return ", compile specs " + strings.Join(parts, " ")
}

func (v *inspectView) writeMetadata(w io.Writer) {
	if len(v.Metadata) == 0 {
		fmt.Fprintln(w, "\nmetadata: none")
		return
	}
	fmt.Fprintln(w, "\nmetadata:")
	for _, n := range v.Metadata.Names() {
		fmt.Fprintf(w, "  %s\t%s\n", n, pte.Format(v.Metadata[n]))
	}
}

func (v *inspectView) writeSegments(w io.Writer) {
	if len(v.Segments) == 0 {
		fmt.Fprintln(w, "\nsegments: none")
	} else {
		fmt.Fprintln(w, "\nsegments:")
		for _, s := range v.Segments {
			fmt.Fprintf(w, "  %d\t%d bytes\tat %d\t%s\n", s.Index, s.Size, s.FileOffset, s.Role)
		}
	}
	if v.ConstBufs > 0 {
		fmt.Fprintf(w, "legacy constant buffers: %d\n", v.ConstBufs)
	}
}
