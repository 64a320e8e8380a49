package verify

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"

	"github.com/experimentalmachines/exe-expo/internal/drivers"
	"github.com/experimentalmachines/exe-expo/internal/fileutil"
	"github.com/experimentalmachines/exe-expo/internal/gate"
	"github.com/experimentalmachines/exe-expo/internal/report"
)

// Gate is what the decision gate runs on: the rows, the prompt they are rendered under, the
// fidelity text, and the fp32 source folder (its weights for the reference, its chat
// template and tokenizer for both sides).
type Gate struct {
	Rows     gate.Rows
	Prompt   gate.Prompt
	PromptID gate.PromptID
	// Fidelity is the fidelity text a new reference reads (gate.fidelity_text); nil makes
	// references without it. A reference that has it is measured whatever this is.
	Fidelity *gate.FidelityText
	Source   string
}

func (g Gate) probe(kind, path string) drivers.GateProbe {
	return drivers.GateProbe{Model: drivers.GateModel{Kind: kind, Path: path, Tokenizer: g.Source},
		Prompt: g.Prompt, Rows: drivers.GateRowsFrom(g.Rows)}
}

// Reference reads gate.json at path when it exists and was made with the same prompt file;
// otherwise it runs the fp32 model and writes it, so every window of a model is graded
// against one reference.
func (g Gate) Reference(ctx context.Context, r drivers.Runner, path string) (gate.Reference, error) {
	var ref gate.Reference
	b, err := os.ReadFile(path)
	switch {
	case err == nil:
		if err := json.Unmarshal(b, &ref); err != nil {
			return ref, fmt.Errorf("%s is not a gate reference: %s", path, fileutil.Reason(err))
		}
		if ref.Prompt.SHA256 != g.PromptID.SHA256 {
			return ref, fmt.Errorf("%s was made with prompt file %s, not %s: remove it to make a new reference", path, ref.Prompt, g.PromptID)
		}
		if f, want := ref.Fidelity, g.Fidelity; f != nil && want != nil &&
			(f.Text.SHA256 != want.ID.SHA256 || f.TopK != want.TopK || len(f.Tokens) != want.Tokens) {
			return ref, fmt.Errorf("%s was made with fidelity text %s, %d tokens, top %d, not %s, %d tokens, top %d: remove it to make a new reference",
				path, f.Text, len(f.Tokens), f.TopK, want.ID, want.Tokens, want.TopK)
		}
		if ref.Fidelity != nil {
			if err := ref.Fidelity.CheckReference(); err != nil {
				return ref, fmt.Errorf("%s: %w", path, err)
			}
		}
		return ref, nil
	case !errors.Is(err, fs.ErrNotExist):
		return ref, fileutil.Error("read", path, err)
	}
	plan := g.probe("hf", g.Source)
	if g.Fidelity != nil {
		plan.Fidelity = drivers.FidelityPlan(*g.Fidelity)
	}
	got, _, err := r.GateReference(ctx, plan)
	if err != nil {
		return ref, fmt.Errorf("fp32 reference of %s: %w", g.Source, err)
	}
	ref = gate.Reference{Rows: got.Rows, Confident: []string{}, Prompt: g.PromptID, Fidelity: got.Fidelity}
	if ref.Fidelity != nil {
		ref.Fidelity.Text = g.Fidelity.ID
	}
	for q, t := range got.Rows {
		if t.P > gate.Confident {
			ref.Confident = append(ref.Confident, q)
		}
	}
	sort.Strings(ref.Confident)
	out, err := json.MarshalIndent(ref, "", "  ")
	if err != nil {
		return ref, fmt.Errorf("encode %s: %w", path, err)
	}
	return ref, report.WriteAtomic(path, append(out, '\n'))
}

// Measure runs the gate on the report's program and writes the verdict and the quality
// block into the report. Files the x86 runner cannot run are left ungated, and their
// quality block says so, keeping the simulated figure the export measured.
func (g Gate) Measure(ctx context.Context, r drivers.Runner, out, path string, ref gate.Reference) (*report.Report, error) {
	rep, err := report.Read(path)
	if err != nil {
		return nil, err
	}
	b, err := spec(rep)
	if err != nil {
		return nil, err
	}
	if !b.Smoke {
		q := gate.NotMeasuredHere(b.Title)
		if rep.Quality != nil { // the export's simulated figure (a QNN file's QDQ program) stays
			q.Simulated, q.SimulatedMissing = rep.Quality.Simulated, rep.Quality.SimulatedMissing
		}
		rep.Quality = &q
		return rep, report.Write(path, rep)
	}
	pte, err := onePTE(rep)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	kv, _ := rep.Recipe["kv_cache_dtype"].(string)
	res, err := g.MeasureFile(ctx, r, filepath.Join(out, filepath.FromSlash(pte)), kv, ref)
	if err != nil {
		return nil, err
	}
	rep.Gate = &res
	q := res.Quality()
	rep.Quality = &q
	return rep, report.Write(path, rep)
}

// MeasureFile runs the export's program over the rows, and over the fidelity text when ref
// has it, and grades it against ref; kv is how the file keeps its KV cache ("int8" has its
// deep positions graded).
func (g Gate) MeasureFile(ctx context.Context, r drivers.Runner, pte, kv string, ref gate.Reference) (gate.Result, error) {
	got, _, err := r.GateMeasure(ctx, g.probe("pte", pte), ref.Rows, ref.Fidelity)
	if err != nil {
		return gate.Result{}, fmt.Errorf("gate measure of %s: %w", pte, err)
	}
	res, err := gate.Score(g.Rows, ref, gate.Measured{Rows: got.Rows, Prompt: g.PromptID, Fidelity: got.Fidelity, KVCache: kv})
	if err != nil {
		return gate.Result{}, fmt.Errorf("gate of %s: %w", pte, err)
	}
	return res, nil
}
