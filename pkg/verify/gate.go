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

	"github.com/experimentalmachines/exe-expo/pkg/drivers"
	"github.com/experimentalmachines/exe-expo/pkg/fileutil"
	"github.com/experimentalmachines/exe-expo/pkg/gate"
	"github.com/experimentalmachines/exe-expo/pkg/report"
)

// Gate is what the decision gate runs on: the rows, the prompt they are rendered under, and
// the fp32 source folder (its weights for the reference, its chat template for both sides).
type Gate struct {
	Rows     gate.Rows
	Prompt   gate.Prompt
	PromptID gate.PromptID
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
		return ref, nil
	case !errors.Is(err, fs.ErrNotExist):
		return ref, fileutil.Error("read", path, err)
	}
	rows, _, err := r.GateReference(ctx, g.probe("hf", g.Source))
	if err != nil {
		return ref, fmt.Errorf("fp32 reference of %s: %w", g.Source, err)
	}
	ref = gate.Reference{Rows: rows, Confident: []string{}, Prompt: g.PromptID}
	for q, t := range rows {
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

// Measure runs the gate on the report's program and writes the verdict into the report.
// Files the x86 runner cannot run are left ungated (nil, no error).
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
		return rep, nil
	}
	pte, err := onePTE(rep)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	res, err := g.MeasureFile(ctx, r, filepath.Join(out, filepath.FromSlash(pte)), ref)
	if err != nil {
		return nil, err
	}
	rep.Gate = &res
	return rep, report.Write(path, rep)
}

// MeasureFile runs the export's program over the rows and grades it against ref.
func (g Gate) MeasureFile(ctx context.Context, r drivers.Runner, pte string, ref gate.Reference) (gate.Result, error) {
	rows, _, err := r.GateMeasure(ctx, g.probe("pte", pte), ref.Rows)
	if err != nil {
		return gate.Result{}, fmt.Errorf("gate measure of %s: %w", pte, err)
	}
	res, err := gate.Score(g.Rows, ref, gate.Measured{Rows: rows, Prompt: g.PromptID})
	if err != nil {
		return gate.Result{}, fmt.Errorf("gate of %s: %w", pte, err)
	}
	return res, nil
}
