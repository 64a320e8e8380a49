package cli

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/experimentalmachines/exe-expo/internal/fileutil"
	"github.com/experimentalmachines/exe-expo/internal/handoff"
	"github.com/experimentalmachines/exe-expo/internal/result"
)

func handoffCommand() Command {
	return Command{
		Name: "handoff",
		Summary: "after smoke and gate ran over an export folder, hand on what a workflow's check step outputs: " +
			"the files that passed, every skipped window, the windows for the fp32 fallback; keep the reports publish reads",
		Usage: "OUT --check RESULT [--check RESULT] --status N [--skipped JSON]... [--files JSON] [--checked DIR] [--fallback DIR [--qmode Q]]",
		Flags: handoffFlags,
	}
}

// handoffOpts are handoff's flags.
type handoffOpts struct {
	checks, skipped   listFlag
	status            int
	files             string
	checked, fallback string
	qmode             string
}

func handoffFlags(fs *flag.FlagSet) func(Env, []string) error {
	var o handoffOpts
	fs.Var(&o.checks, "check", "a check's --result file, in the order the checks ran (repeat); one that does not exist is a check that did not run")
	fs.IntVar(&o.status, "status", 0, "the exit status of the last check that ran, as the shell saw it (0 when none ran)")
	fs.Var(&o.skipped, "skipped", "a JSON list of windows skipped before the checks, as plan's result lists them (repeat, in order)")
	fs.StringVar(&o.files, "files", "", "a JSON list of files an earlier job checked, handed on with these (the fp32 fallback's check)")
	fs.StringVar(&o.checked, "checked", "checked", "folder the passing export reports are copied into, under their path in OUT, for publish")
	fs.StringVar(&o.fallback, "fallback", "", "folder the gate's result is kept in (as gate.json) when it refused quantized files: those windows go to the fp32 fallback and the step passes")
	fs.StringVar(&o.qmode, "qmode", "", "the recipe's quantization the files were built with; fp32 files have no fallback")
	return func(env Env, args []string) error {
		if len(args) != 1 {
			return failf(ExitFailed, "handoff: give exactly one OUT folder, the one smoke and gate checked")
		}
		in, err := o.input(args[0])
		if err != nil {
			return failf(ExitFailed, "handoff: %w", err)
		}
		h, err := handoff.Decide(in)
		if err != nil {
			// the outputs are still set, so no job downstream reads an unset list
			if oerr := setOutputs(env, h); oerr != nil {
				return oerr
			}
			return failf(ExitFailed, "handoff: %s: %w", args[0], err)
		}
		if err := o.keep(args[0], h); err != nil {
			return failf(ExitFailed, "handoff: %w", err)
		}
		return handOn(env, h)
	}
}

// input reads the flags' files and lists into the decision's input.
func (o handoffOpts) input(out string) (handoff.Input, error) {
	in := handoff.Input{Status: o.status, Fallback: o.fallback != "" && o.qmode != "fp32"}
	entries, err := os.ReadDir(out)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return in, fmt.Errorf("read the export folder %s: %w", out, err)
	}
	in.Exported = len(entries) > 0
	for _, p := range o.checks {
		r, err := result.ReadChecks(p)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return in, err
		}
		in.Checks = append(in.Checks, r)
	}
	for _, s := range o.skipped {
		var list []result.Skipped
		if err := decodeList("--skipped", s, &list); err != nil {
			return in, err
		}
		in.Before = append(in.Before, list...)
	}
	return in, decodeList("--files", o.files, &in.Files)
}

// decodeList decodes a workflow output's JSON list; an empty one (an output never set) is
// no entries.
func decodeList(name, s string, v any) error {
	if strings.TrimSpace(s) == "" {
		return nil
	}
	if err := json.Unmarshal([]byte(s), v); err != nil {
		return fmt.Errorf("%s is not a JSON list as a result's outputs hold it: %w (%.80q)", name, err, s)
	}
	return nil
}

// keep copies the passing reports into the checked folder under their path in out, and
// the gate's result into the fallback folder when windows go to the fp32 fallback.
func (o handoffOpts) keep(out string, h handoff.Handoff) error {
	if err := os.MkdirAll(o.checked, 0o755); err != nil {
		return fmt.Errorf("make the checked folder: %w", err)
	}
	for _, rel := range h.Reports {
		if !filepath.IsLocal(rel) {
			return fmt.Errorf("a check listed the report %q, which is not a path inside %s", rel, out)
		}
		if _, err := fileutil.Place(filepath.Join(out, rel), filepath.Join(o.checked, rel), fileutil.Copy); err != nil {
			return fmt.Errorf("keep the checked report %s: %w", rel, err)
		}
	}
	if h.FallbackFrom == nil {
		return nil
	}
	if err := result.Write(filepath.Join(o.fallback, "gate.json"), h.FallbackFrom); err != nil {
		return fmt.Errorf("keep the gate's result for the fp32 fallback: %w", err)
	}
	return nil
}

// handOn prints what the step hands on, sets the step's outputs (files, checked, skipped,
// failed: JSON lists a workflow hands to fromJSON) and records them in the result.
func handOn(env Env, h handoff.Handoff) error {
	res := env.outputs()
	res.Files, res.Skipped, res.Reports, res.Failed = h.Files, h.Skipped, h.Reports, h.Failed
	line := fmt.Sprintf("handoff: %d file(s) passed here, %d handed on in all; %d window(s) skipped; %d to the fp32 fallback",
		len(h.Checked), len(h.Files), len(h.Skipped), len(h.Failed))
	fmt.Fprintln(env.Stdout, line)
	for _, s := range h.Skipped {
		fmt.Fprintf(env.Stdout, "  skipped %s: %s\n", windowName(s.Window, s.SoC), s.Reason)
	}
	for _, f := range h.Failed {
		fmt.Fprintf(env.Stdout, "  to the fp32 fallback %s: %s\n", windowName(f.Window, f.SoC), f.Reason)
	}
	stepSummary(env, "### handoff\n\n"+line+"\n")
	if err := setOutputs(env, h); err != nil {
		return err
	}
	if h.Code != ExitOK {
		return failf(h.Code, "handoff: %s", h.Reason)
	}
	return nil
}

// setOutputs sets the step's outputs when it runs in Actions: files, checked, skipped
// and failed, each a JSON list a workflow hands to fromJSON as it is.
func setOutputs(env Env, h handoff.Handoff) error {
	if os.Getenv("GITHUB_OUTPUT") == "" {
		return nil
	}
	a := actionsFor(env)
	for _, o := range []struct {
		name string
		v    any
	}{{"files", h.Files}, {"checked", h.Checked}, {"skipped", h.Skipped}, {"failed", h.Windows()}} {
		b, err := json.Marshal(o.v)
		if err != nil {
			return failf(ExitFailed, "handoff: encode the %s output: %w", o.name, err)
		}
		a.SetOutput(o.name, string(b))
	}
	return nil
}

// windowName is a window as a log line names it: its tokens, and its chip when it has one.
func windowName(window int, soc string) string {
	if soc == "" {
		return fmt.Sprintf("window %d", window)
	}
	return fmt.Sprintf("window %d on %s", window, soc)
}

// listFlag is a flag given once per value, in order.
type listFlag []string

func (l *listFlag) String() string { return strings.Join(*l, " ") }

func (l *listFlag) Set(s string) error {
	*l = append(*l, s)
	return nil
}
