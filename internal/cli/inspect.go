package cli

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

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
