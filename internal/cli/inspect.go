package cli

import (
	"encoding/hex"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"
	"unicode"

	"github.com/experimentalmachines/exe-expo/internal/backend"
	"github.com/experimentalmachines/exe-expo/internal/check"
	"github.com/experimentalmachines/exe-expo/pkg/pte"
)

func inspectCommand() Command {
	return Command{
		Name:    "inspect",
		Summary: "show what a .pte holds: methods, their backends, metadata values, segments; optionally check its structure",
		Usage:   "FILE.pte [--json] [--backend B [--max-seq-len N] [--max-context-len N] [--bos ID] [--eos IDS] [--qnn-mode M] [--mtk-exp E ...]]",
		Flags:   inspectFlags,
	}
}

type inspectOpts struct {
	asJSON                         bool
	backend, bos, eos, qnnMode     string
	maxSeq, maxCtx                 int64
	mtkExp                         string
	mtkPrompt, mtkWindow, mtkChunk int
}

func inspectFlags(fs *flag.FlagSet) func(Env, []string) error {
	var o inspectOpts
	fs.BoolVar(&o.asJSON, "json", false, "print JSON instead of text")
	fs.StringVar(&o.backend, "backend", "", "run the structural check for "+words(exportable(), "or"))
	fs.Int64Var(&o.maxSeq, "max-seq-len", 0, "expected get_max_seq_len (0: not checked)")
	fs.Int64Var(&o.maxCtx, "max-context-len", 0, "expected get_max_context_len (0: not checked)")
	fs.StringVar(&o.bos, "bos", "", "expected get_bos_id")
	fs.StringVar(&o.eos, "eos", "", "expected get_eos_ids, comma-separated in order (with --backend qnn, get_eos_id when the program has only that)")
	fs.StringVar(&o.qnnMode, "qnn-mode", "hybrid", "QNN model mode: hybrid or kv")
	fs.StringVar(&o.mtkExp, "mtk-exp", "", "MediaTek experiment name; with it the chunk's method names are checked exactly")
	fs.IntVar(&o.mtkPrompt, "mtk-prompt-tokens", 128, "MediaTek prompt tokens per call")
	fs.IntVar(&o.mtkWindow, "mtk-window", 0, "MediaTek cache size (context window)")
	fs.IntVar(&o.mtkChunk, "mtk-chunk", 0, "MediaTek 0-based chunk index")
	return func(env Env, args []string) error {
		if len(args) != 1 {
			return failf(ExitFailed, "inspect: give exactly one .pte file")
		}
		if unchecked := checkOnly(fs); o.backend == "" && len(unchecked) > 0 {
			verb, what := "needs", "it is a value"
			if len(unchecked) > 1 {
				verb, what = "need", "they are values"
			}
			return failf(ExitFailed, "inspect: %s %s --backend: %s the structural check holds the file to, and only --backend %s runs that check",
				words(unchecked, "and"), verb, what, words(exportable(), "or"))
		}
		return runInspect(env, args[0], o)
	}
}

// checkFlags are the expected values the structural check holds a file to: without
// --backend no check runs, and a value given would be ignored without a word.
var checkFlags = []string{"max-seq-len", "max-context-len", "bos", "eos", "qnn-mode",
	"mtk-exp", "mtk-prompt-tokens", "mtk-window", "mtk-chunk"}

// checkOnly lists the check flags given on the command line, as the user typed them.
func checkOnly(fs *flag.FlagSet) []string {
	var set []string
	fs.Visit(func(f *flag.Flag) {
		if slices.Contains(checkFlags, f.Name) {
			set = append(set, "--"+f.Name)
		}
	})
	return set
}

func (o inspectOpts) expect() (check.Expect, error) {
	want := check.Expect{MaxSeqLen: o.maxSeq, MaxContextLen: o.maxCtx, QNNMode: o.qnnMode,
		MediaTek: check.MediaTekChunk{Exp: o.mtkExp, PromptTokens: o.mtkPrompt, Window: o.mtkWindow, Chunk: o.mtkChunk}}
	if o.bos != "" {
		v, err := tokenID(o.bos)
		if err != nil {
			return want, fmt.Errorf("--bos %q: %w", o.bos, err)
		}
		want.BOS = &v
	}
	if o.eos != "" {
		for _, s := range strings.Split(o.eos, ",") {
			v, err := tokenID(s)
			if err != nil {
				return want, fmt.Errorf("--eos %q: %w", o.eos, err)
			}
			want.EOS = append(want.EOS, v)
		}
	}
	return want, nil
}

// tokenID reads one token id, saying what is wrong with it in words.
func tokenID(s string) (int64, error) {
	s = strings.TrimSpace(s)
	v, err := strconv.ParseInt(s, 10, 64)
	switch {
	case s == "":
		return 0, errors.New("a token id is empty")
	case errors.Is(err, strconv.ErrRange):
		return 0, fmt.Errorf("token id %s is out of range", s)
	case err != nil:
		return 0, fmt.Errorf("token id %q is not a whole number", s)
	case v < 0:
		return 0, fmt.Errorf("token id %d is negative", v)
	}
	return v, nil
}

func runInspect(env Env, path string, o inspectOpts) error {
	b := backend.ByName(o.backend)
	if o.backend != "" && (b == nil || b.Check.Program == nil) {
		return failf(ExitFailed, "inspect: unknown backend %q (%s)", o.backend, strings.Join(exportable(), ", "))
	}
	want, err := o.expect()
	if err != nil {
		return failf(ExitFailed, "inspect: %w", err)
	}
	prog, err := pte.OpenFile(path)
	if err != nil {
		return failf(ExitFailed, "inspect: %w", err)
	}
	view := newInspectView(filepath.Base(path), prog)
	if o.backend != "" {
		r := check.Structural(prog, b.Check, want)
		view.Check = &r
	}
	if o.asJSON {
		enc := json.NewEncoder(env.Stdout)
		enc.SetIndent("", "  ")
		err = enc.Encode(view)
	} else {
		err = view.writeText(env.Stdout)
	}
	if err != nil {
		return failf(ExitFailed, "inspect: write: %w", err)
	}
	if c := view.Check; c != nil && !c.Passed {
		// The verdict is in the output above too; stderr (and --result) says why as well,
		// so a script that keeps only stderr, or --json's reader, is told.
		return failf(ExitFailed, "inspect: %s fails the %s structural check: %s", path, c.Backend, strings.Join(c.Problems, "; "))
	}
	return nil
}

// inspectView is what inspect prints, in text or as JSON.
type inspectView struct {
	File        string        `json:"file"`
	Size        int64         `json:"size"`
	Identifier  string        `json:"identifier"`
	Header      *headerView   `json:"extended_header"`
	ProgramSize int64         `json:"program_size"`
	Methods     []methodView  `json:"methods"`
	Metadata    pte.Metadata  `json:"metadata"`
	Segments    []segmentView `json:"segments"`
	Named       []namedView   `json:"named_data"`
	ConstBufs   int           `json:"legacy_constant_buffers"`
	Check       *check.Result `json:"check,omitempty"`
}

type headerView struct {
	Length            uint32 `json:"length"`
	ProgramSize       uint64 `json:"program_size"`
	SegmentBaseOffset uint64 `json:"segment_base_offset"`
	SegmentDataSize   uint64 `json:"segment_data_size"`
}

type methodView struct {
	Name          string         `json:"name"`
	Constant      bool           `json:"constant"`
	Inputs        int            `json:"inputs"`
	Outputs       int            `json:"outputs"`
	Values        int            `json:"values"`
	Instructions  int            `json:"instructions"`
	KernelCalls   int            `json:"kernel_calls"`
	DelegateCalls int            `json:"delegate_calls"`
	Backends      []string       `json:"backends"`
	Operators     []string       `json:"operators"`
	Delegates     []delegateView `json:"delegates"`
	// Coverage is how much of the method runs inside its delegates (nil for a getter).
	Coverage *pte.Coverage `json:"delegate_coverage,omitempty"`
}

type delegateView struct {
	ID           string            `json:"id"`
	Location     string            `json:"location"`
	Index        uint32            `json:"index"`
	Offset       int64             `json:"offset"`
	Size         int64             `json:"size"`
	Signature    string            `json:"signature"`
	CompileSpecs map[string]string `json:"compile_specs"`
	// Graph is what runs inside an XNNPACK or Vulkan delegate; GraphError says why it
	// could not be read.
	Graph      *graphView `json:"graph,omitempty"`
	GraphError string     `json:"graph_error,omitempty"`
}

type graphView struct {
	Format        string           `json:"format"`
	Inputs        int              `json:"inputs"`
	Outputs       int              `json:"outputs"`
	Nodes         int              `json:"nodes"`
	Linears       int              `json:"linears"`
	Ops           map[string]int   `json:"ops"`
	ConstantBytes int64            `json:"constant_bytes"`
	Named         map[string]int64 `json:"named_data"`
}

type segmentView struct {
	Index      int    `json:"index"`
	Offset     uint64 `json:"offset"`
	Size       uint64 `json:"size"`
	FileOffset int64  `json:"file_offset"`
	Role       string `json:"role"`
}

type namedView struct {
	Key     string `json:"key"`
	Segment uint32 `json:"segment"`
}

func newInspectView(name string, p *pte.Program) *inspectView {
	v := &inspectView{File: name, Size: p.Size, Identifier: pte.FileIdentifier, ProgramSize: p.ProgramSize,
		Metadata: p.Metadata(), ConstBufs: len(p.ConstantBuffers), Methods: []methodView{},
		Segments: []segmentView{}, Named: []namedView{}}
	if h := p.Header; h != nil {
		v.Header = &headerView{h.Length, h.ProgramSize, h.SegmentBaseOffset, h.SegmentDataSize}
	}
	for i := range p.Methods {
		mv := newMethodView(&p.Methods[i])
		if !mv.Constant {
			c := p.Coverage(&p.Methods[i])
			mv.Coverage = &c
		}
		v.Methods = append(v.Methods, mv)
	}
	roles := segmentRoles(p)
	for i, s := range p.Segments {
		v.Segments = append(v.Segments, segmentView{i, s.Offset, s.Size, s.FileOffset, roles[i]})
	}
	for _, nd := range p.NamedData {
		v.Named = append(v.Named, namedView{nd.Key, nd.SegmentIndex})
	}
	return v
}

func newMethodView(m *pte.Method) methodView {
	mv := methodView{Name: m.Name, Constant: m.IsConstant(), Inputs: len(m.Inputs), Outputs: len(m.Outputs),
		Values: len(m.Values), Instructions: m.InstructionCount(), KernelCalls: m.Count(pte.InstrKernelCall),
		DelegateCalls: m.Count(pte.InstrDelegateCall), Backends: m.Backends(), Operators: []string{},
		Delegates: []delegateView{}}
	if mv.Backends == nil {
		mv.Backends = []string{}
	}
	for _, op := range m.Operators {
		name := op.Name
		if op.Overload != "" {
			name += "." + op.Overload
		}
		mv.Operators = append(mv.Operators, name)
	}
	for _, d := range m.Delegates {
		specs := map[string]string{}
		for _, cs := range d.CompileSpecs {
			specs[cs.Key] = specValue(cs.Value)
		}
		dv := delegateView{ID: d.ID, Location: d.Location.String(), Index: d.Index, Offset: d.BlobOffset,
			Size: d.BlobSize, Signature: d.Signature, CompileSpecs: specs, GraphError: d.GraphError}
		if g := d.Graph; g != nil {
			dv.Graph = &graphView{g.Format, g.Inputs, g.Outputs, g.Nodes, g.Linears, g.Ops, g.ConstantBytes, g.Named}
		}
		mv.Delegates = append(mv.Delegates, dv)
	}
	return mv
}

// specValue shows a compile-spec value as text when it is printable, else as (short) hex.
func specValue(b []byte) string {
	printable := len(b) > 0
	for _, r := range string(b) {
		printable = printable && r < unicode.MaxASCII && unicode.IsPrint(r)
	}
	if printable {
		return string(b)
	}
	if len(b) > 16 {
		return fmt.Sprintf("0x%s… (%d bytes)", hex.EncodeToString(b[:16]), len(b))
	}
	return "0x" + hex.EncodeToString(b)
}

// segmentRoles says what each segment holds, from the references to it.
func segmentRoles(p *pte.Program) map[int]string {
	roles := map[int][]string{}
	add := func(i int, role string) {
		if !slices.Contains(roles[i], role) {
			roles[i] = append(roles[i], role)
		}
	}
	if cs := p.ConstantSegment; cs != nil && len(cs.Offsets) > 0 {
		add(int(cs.SegmentIndex), fmt.Sprintf("constants (%d offsets)", len(cs.Offsets)))
	}
	for i, ms := range p.MutableDataSegments {
		add(int(ms.SegmentIndex), fmt.Sprintf("mutable data %d", i))
	}
	for _, m := range p.Methods {
		for _, d := range m.Delegates {
			if d.Location == pte.Segment {
				add(int(d.Index), "delegate blob "+d.ID)
			}
		}
	}
	for _, nd := range p.NamedData {
		add(int(nd.SegmentIndex), "named data "+nd.Key)
	}
	out := map[int]string{}
	for i, r := range roles {
		out[i] = strings.Join(r, ", ")
	}
	return out
}

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
