package export

import (
	"context"
	"fmt"
	"io"
	"path/filepath"
	"strings"

	"github.com/experimentalmachines/exe-expo/internal/backend"
	"github.com/experimentalmachines/exe-expo/internal/drivers"
	"github.com/experimentalmachines/exe-expo/internal/family"
	"github.com/experimentalmachines/exe-expo/internal/model"
	"github.com/experimentalmachines/exe-expo/internal/recipe"
	"github.com/experimentalmachines/exe-expo/internal/report"
)

// Checkpoint is a model made ready for the GPTQ solve: the source folder (weights,
// tokenizer, chat template) and ExecuTorch's checkpoint with the params file and model
// class an XNNPACK export would build the same model from, so the codes fit the linears
// the export quantizes.
type Checkpoint struct {
	Source *model.Source
	// Dir holds the source's files: the local folder, or Work/source.
	Dir string
	// Work is the working folder, absolute; the drivers are written to Work/drivers.
	Work       string
	Checkpoint string
	Params     string
	ModelClass string
	Arch       model.Arch
	// LFM2 asks for the short-convolution state fix the export applies too.
	LFM2 bool
}

// PrepareCheckpoint checks the model, the python and the work folder as Run does, refuses
// a model the solve's backend cannot build, downloads a Hub model with its weights into
// Work/source and converts it as an export to the backend that runs the solve would
// (backend.GPTQ, from the backend table: XNNPACK; the export_llm recipes build the same
// eager model from the same params and checkpoint), without building any program; a route
// that loads the folder itself (optimum-executorch's) converts nothing and leaves
// Checkpoint empty. Only
// Config, Model, ID, Revision, Work, Python, Fetcher and Log are read; the work folder stays
// after a success (the solve writes its rows there) and goes after a failure when this call
// created it.
func PrepareCheckpoint(ctx context.Context, o Options) (ck *Checkpoint, err error) {
	solver := backend.GPTQ()
	if solver == nil {
		return nil, fmt.Errorf("no backend runs the GPTQ solve (%s)", strings.Join(backend.Names(), ", "))
	}
	o.Backend, o.Window, o.SoC, o.QMode, o.Codes, o.Out = solver.Name, 0, "", "", "", ""
	if o.Log == nil {
		o.Log = io.Discard
	}
	defer func() {
		if err != nil {
			o.cleanUp()
		}
	}()
	for _, check := range []func() error{o.checkModel, o.checkTools, o.checkWork} {
		if err := check(); err != nil {
			return nil, err
		}
	}
	src, err := o.source(ctx)
	if err != nil {
		return nil, err
	}
	v, err := o.eligible(src, ", whose codes the solve makes")
	if err != nil {
		return nil, err
	}
	r, err := backend.Build(o.Config, recipe.Request{Backend: o.Backend, Source: src, Verdict: v, Window: o.spec().Windows(o.Config)[0],
		Work: o.Work, SourceDir: o.srcDir, Python: o.Python})
	if err != nil {
		return nil, err
	}
	if _, err := o.checkToolchain(ctx, drivers.DistTorch, drivers.DistTransformers); err != nil {
		return nil, err
	}
	if err := o.download(ctx, src); err != nil {
		return nil, err
	}
	return o.writeCheckpoint(ctx, src, v.Fam, r)
}

// writeCheckpoint writes the drivers and the recipe's files (the params file among them)
// and converts the source; fam is the verdict's family.
func (o *Options) writeCheckpoint(ctx context.Context, src *model.Source, fam *family.Family, r *recipe.Recipe) (*Checkpoint, error) {
	const params = "params.json"
	// a route that exports from the downloaded folder itself (optimum-executorch's, no
	// Checkpoint) has nothing to convert and no codes to solve for: the folder is the model
	converts := r.Checkpoint != ""
	if _, ok := r.Files[params]; converts && !ok {
		return nil, fmt.Errorf("the %s recipe of %s writes no %s", o.Backend, src.ID, params)
	}
	if err := o.writeFiles(r); err != nil {
		return nil, err
	}
	a, err := src.Config.Arch()
	if err != nil {
		return nil, err
	}
	ck := &Checkpoint{Source: src, Dir: o.srcDir, Work: o.Work, Arch: a}
	if !converts {
		return ck, nil
	}
	if err := o.convert(ctx, src, fam, r, &report.Report{}); err != nil {
		return nil, err
	}
	ck.Checkpoint, ck.Params, ck.LFM2 = r.Checkpoint, filepath.Join(o.Work, params), fam != nil && fam.Key == "lfm2"
	ck.ModelClass, _ = r.Fields["model_class"].(string)
	return ck, nil
}

// checkWork makes Work absolute and writable, creating it when missing; the source goes
// under it unless the model is a local folder.
func (o *Options) checkWork() error {
	if err := absField(FieldWork, &o.Work); err != nil {
		return err
	}
	var err error
	if o.madeWork, err = writable(FieldWork, o.Work); err != nil {
		return err
	}
	if o.srcDir == "" {
		o.srcDir = filepath.Join(o.Work, "source")
	}
	return nil
}
