package export

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/experimentalmachines/exe-expo/internal/check"
	"github.com/experimentalmachines/exe-expo/internal/config"
	"github.com/experimentalmachines/exe-expo/internal/drivers"
	"github.com/experimentalmachines/exe-expo/internal/family"
	"github.com/experimentalmachines/exe-expo/internal/fileutil"
	"github.com/experimentalmachines/exe-expo/internal/model"
	"github.com/experimentalmachines/exe-expo/internal/mtkoverlay"
	"github.com/experimentalmachines/exe-expo/internal/recipe"
	"github.com/experimentalmachines/exe-expo/internal/report"
	"github.com/experimentalmachines/exe-expo/internal/run"
	"github.com/experimentalmachines/exe-expo/pkg/pte"
)

func (o *Options) newReport(src *model.Source, v *family.Verdict, r *recipe.Recipe, g *gated) *report.Report {
	var total int64
	if src.Params != nil {
		total = src.Params.Total
	}
	rep := &report.Report{
		Backend: r.Backend, Target: r.Target, TargetName: r.TargetName,
		OutputRepo: o.Config.RepoFor(src.Name()),
		Source: report.Source{
			ID: src.ID, SHA: src.SHA, Revision: o.Revision, TotalParams: total,
			Family: v.Family, Variant: v.Variant, License: license(src), LicenseFiles: []string{},
		},
		Toolchain: map[string]string{"executorch": o.Config.Versions.ExecuTorch},
		Recipe:    r.Fields,
		Window: report.Window{
			Context: g.window, Reason: g.reason, DeviceResident: g.row.ResidentBytes,
			PhoneBudgetBytes: o.Config.Export.DeviceBudgetBytes, FitsPhoneBudget: g.row.FitsPhone,
			PhoneClasses:    o.Config.Export.PhoneClasses,
			FitsPhonesGiB:   config.Fits(o.Config.Export.PhoneClasses, g.row.ResidentBytes),
			ResidentByCache: g.row.ResidentByCache,
		},
		Estimates: report.Estimates{PTEBytesEstimate: g.row.PTEBytes, ExportPeakBytesEstimate: g.row.ExportPeakBytes,
			HostNeedBytes: g.row.HostNeedBytes, DiskNeedBytes: g.disk},
		Files:           []report.File{},
		Host:            report.Host{HostFacts: g.host, RunnerLabel: o.Runner},
		Metadata:        pte.Metadata{},
		StructuralCheck: []check.Result{},
		Stages:          []report.StageReport{},
	}
	b := o.spec()
	if b.LLM { // the NPU runtimes keep 16-bit caches: no fp32 figure
		kv := g.row.KVBytesPerToken
		rep.Window.KVBytesPerToken = &kv
	}
	if b.Tools.Versions != nil {
		maps.Copy(rep.Toolchain, b.Tools.Versions(o.Config.Versions))
	}
	if o.RunURL != "" {
		rep.Run = &report.Run{URL: o.RunURL, ID: o.RunID}
	}
	rep.Fallback = o.fallback
	return rep
}

func license(src *model.Source) report.License {
	var l report.License
	if src.Card != nil {
		l.License, _ = src.Card["license"].(string)
		l.LicenseName, _ = src.Card["license_name"].(string)
		l.LicenseLink, _ = src.Card["license_link"].(string)
	}
	return l
}

// build converts, runs the tool, places and checks every output, and fills the report; fam
// is the verdict's family, which the conversion maps the tensors by.
func (o *Options) build(ctx context.Context, src *model.Source, fam *family.Family, r *recipe.Recipe, rep *report.Report) error {
	if err := o.writeFiles(r); err != nil {
		return err
	}
	if r.Checkpoint != "" {
		if err := o.convert(ctx, src, fam, r, rep); err != nil {
			return err
		}
	}
	if err := prepare(r.Prepare); err != nil {
		return err
	}
	for _, st := range r.Steps {
		res, err := run.Tool(ctx, run.Spec{
			Name: st.Name, Argv: st.Argv, Dir: st.Dir, Env: toolEnv(st.Env), Timeout: o.Timeout,
			Output: o.Log, Stages: stagesOf(st.Stages), SampleEvery: o.SampleEvery,
		})
		rep.Stages = append(rep.Stages, report.StageReport{Tool: st.Name, Timings: res.Timings})
		rep.Host.Memory = res.Memory
		rep.Host.PeakRSSExportBytes = res.MaxRSSBytes
		rep.Host.ExportSeconds += res.Seconds
		if err != nil {
			return err
		}
	}
	if r.Inputs != "" {
		if err := o.readInputs(src, r, rep); err != nil {
			return err
		}
	}
	if r.QDQ != "" {
		if err := o.simulate(ctx, r, rep); err != nil {
			return err
		}
	}
	if err := o.copySideFiles(src, rep); err != nil {
		return err
	}
	return o.collect(r, rep)
}

// writeFiles writes the drivers and the recipe's files under Work. The drivers go first:
// the converter runs them, and a recipe's step may run one (the codes export, the QNN
// launcher).
func (o *Options) writeFiles(r *recipe.Recipe) error {
	if _, err := drivers.WriteScripts(filepath.Join(o.Work, "drivers")); err != nil {
		return err
	}
	for name, data := range r.Files {
		if err := report.WriteAtomic(filepath.Join(o.Work, name), data); err != nil {
			return err
		}
	}
	return nil
}

// checkPrepare refuses, before any download, an ExecuTorch tree the recipe's overlay cannot
// be applied to (its patched files are not the pinned release's).
func (o *Options) checkPrepare(r *recipe.Recipe) error {
	if r.Prepare == nil {
		return nil
	}
	if err := mtkoverlay.Check(r.Prepare.Examples, r.Prepare.Overlay); err != nil {
		return refuse(FieldExecuTorch, "%s: %s", FieldExecuTorch, err.Error())
	}
	return nil
}

// prepare lays out the tree the MediaTek scripts run in: a copy of examples/mediatek with
// the overlay applied, and the source's files linked beside the weights config.json.
func prepare(p *recipe.Prepare) error {
	if p == nil {
		return nil
	}
	if err := mtkoverlay.Apply(p.Examples, p.Copy, p.Overlay); err != nil {
		return err
	}
	return linkFiles(p.Source, p.Weights)
}

// linkFiles links every file of src into dst, except those dst already holds (the
// recipe's config.json) and torch pickles (.bin, .pt, .pth): the scripts read safetensors,
// and refuse a folder holding both kinds.
func linkFiles(src, dst string) error {
	entries, err := os.ReadDir(src)
	if err != nil {
		return report.FileError("list", src, err)
	}
	if err := os.MkdirAll(dst, 0o755); err != nil {
		return report.FileError("create", dst, err)
	}
	for _, e := range entries {
		name := e.Name()
		switch strings.ToLower(filepath.Ext(name)) {
		case ".bin", ".pt", ".pth":
			continue
		}
		if e.IsDir() {
			continue
		}
		to := filepath.Join(dst, name)
		if _, err := os.Lstat(to); err == nil {
			continue
		}
		from, err := filepath.Abs(filepath.Join(src, name))
		if err != nil {
			return report.FileError("resolve", filepath.Join(src, name), err)
		}
		if err := os.Symlink(from, to); err != nil {
			return report.FileError("link", to, err)
		}
	}
	return nil
}

// toolEnv is the host's PATH and HOME (and the SDK variables a vendor tool reads) plus
// what the recipe adds; nothing else of this process's environment reaches a tool.
func toolEnv(add map[string]string) []string {
	env := run.EnvFrom("PATH", "HOME", "TMPDIR", "LANG", "HF_HOME", "QNN_SDK_ROOT", "OMP_NUM_THREADS")
	keys := make([]string, 0, len(add))
	for k := range add {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		v := add[k]
		if k == "LD_LIBRARY_PATH" {
			if cur := os.Getenv(k); cur != "" {
				v += ":" + cur
			}
		}
		env = append(env, k+"="+v)
	}
	return env
}

// convert turns the source's safetensors into the recipe's ExecuTorch checkpoint, mapping
// the tensors by fam, the family the verdict decided.
func (o *Options) convert(ctx context.Context, src *model.Source, fam *family.Family, r *recipe.Recipe, rep *report.Report) error {
	dir := o.srcDir
	shards, err := drivers.ShardFiles(dir)
	if err != nil {
		return fmt.Errorf("convert %s: %w", src.ID, err)
	}
	var names []string
	for _, s := range shards {
		h, err := model.ReadHeader(ctx, model.Dir(dir), filepath.Base(s))
		if err != nil {
			return err
		}
		for n := range h.Tensors {
			names = append(names, n)
		}
	}
	sort.Strings(names) // a refusal names the same tensor every run
	a, err := src.Config.Arch()
	if err != nil {
		return err
	}
	conv, err := drivers.PlanConvert(drivers.Arch{
		Family: fam.Key, Layers: int(a.Layers), Heads: int(a.Heads), KVHeads: int(a.KVHeads), HeadDim: int(a.HeadDim),
		TiedEmbeddings: a.Tied, Tensors: names,
	}, shards, r.Checkpoint)
	if err != nil {
		return fmt.Errorf("convert %s: %w", src.ID, err)
	}
	fmt.Fprintf(o.Log, "exe-expo: converting %d safetensors file(s) of %s into %s\n", len(shards), src.ID, r.Checkpoint)
	res, err := drivers.Runner{Python: o.Python, Dir: filepath.Join(o.Work, "drivers"), Log: o.Log}.Convert(ctx, conv)
	if err != nil {
		return fmt.Errorf("checkpoint conversion: %w", err)
	}
	rep.Conversion = &report.Conversion{Tensors: res.Tensors, TiedEmbeddings: res.TiedEmbeddings, Dtypes: res.Dtypes}
	rep.Host.PeakRSSConvertBytes = res.Process.PeakRSSBytes
	rep.Host.ConvertSeconds = res.Process.Seconds
	return nil
}

// collect places every output under Out, hashes it once, reads each .pte back and checks
// it against the request.
func (o *Options) collect(r *recipe.Recipe, rep *report.Report) error {
	for _, out := range r.Outputs {
		from, err := resolve(out.From)
		if err != nil {
			return err
		}
		dst := filepath.Join(o.Out, filepath.FromSlash(out.To))
		d, err := fileutil.Place(from, dst, fileutil.Move)
		if err != nil {
			return err
		}
		f := report.File{Path: out.To, Bytes: d.Bytes, SHA256: d.SHA256}
		rep.Files = append(rep.Files, f)
		if out.Bytes > 0 && f.Bytes != out.Bytes {
			return fmt.Errorf("%s has %d bytes, vocab × hidden × 4 is %d", out.To, f.Bytes, out.Bytes)
		}
		if out.Kind != "pte" {
			continue
		}
		rep.Estimates.PTEBytesActual += f.Bytes
		prog, err := pte.OpenFile(dst)
		if err != nil {
			return fmt.Errorf("read back %s: %w", out.To, err)
		}
		want := *out.Expect
		if want.KVCache != "" && rep.Window.KVBytesPerToken != nil {
			want.KVBytesPerToken = *rep.Window.KVBytesPerToken // the size model's figure, held to the file's
		}
		res := check.Structural(prog, o.spec().Check, want)
		rep.StructuralCheck = append(rep.StructuralCheck, res)
		for k, v := range res.Metadata {
			rep.Metadata[k] = v
		}
		if !res.Passed {
			return fmt.Errorf("%s: exported program disagrees with the request: %s", out.To, strings.Join(res.Problems, "; "))
		}
	}
	return nil
}

// resolve turns an output's From (a path or a glob) into exactly one existing file.
func resolve(from string) (string, error) {
	if !strings.ContainsAny(from, "*?[") {
		if _, err := os.Stat(from); err != nil {
			return "", fmt.Errorf("the tool did not write %s", from)
		}
		return from, nil
	}
	m, err := filepath.Glob(from)
	if err != nil {
		return "", fmt.Errorf("output pattern %s: %w", from, err)
	}
	switch len(m) {
	case 1:
		return m[0], nil
	case 0:
		return "", fmt.Errorf("the tool wrote no file matching %s", from)
	}
	return "", fmt.Errorf("the tool wrote %d files matching %s, expected one: %s", len(m), from, strings.Join(m, ", "))
}

// copySideFiles copies the tokenizer and the upstream license files to the output root.
func (o *Options) copySideFiles(src *model.Source, rep *report.Report) error {
	dir := o.srcDir
	if o.spec().LLM { // the app reads the tokenizer beside an export_llm file
		for _, tk := range []string{"tokenizer.json", "tokenizer.model"} {
			if _, err := os.Stat(filepath.Join(dir, tk)); err == nil {
				d, err := fileutil.Place(filepath.Join(dir, tk), filepath.Join(o.Out, tk), fileutil.Copy)
				if err != nil {
					return err
				}
				rep.Tokenizer = tk
				rep.RootFiles = append(rep.RootFiles, report.File{Path: tk, Bytes: d.Bytes, SHA256: d.SHA256})
				break
			}
		}
		if rep.Tokenizer == "" {
			return fmt.Errorf("%s has neither tokenizer.json nor tokenizer.model, and %s needs one beside the file", src.ID, family.TheApp)
		}
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return report.FileError("list", dir, err)
	}
	for _, e := range entries {
		n := strings.ToLower(e.Name())
		if e.IsDir() || !(strings.HasPrefix(n, "license") || strings.HasPrefix(n, "use_policy") || strings.HasPrefix(n, "notice")) {
			continue
		}
		d, err := fileutil.Place(filepath.Join(dir, e.Name()), filepath.Join(o.Out, e.Name()), fileutil.Copy)
		if err != nil {
			return err
		}
		rep.Source.LicenseFiles = append(rep.Source.LicenseFiles, e.Name())
		rep.RootFiles = append(rep.RootFiles, report.File{Path: e.Name(), Bytes: d.Bytes, SHA256: d.SHA256})
	}
	return nil
}

// ExitCode maps an export error to the CLI's exit code.
func ExitCode(err error) int {
	var skip *SkipError
	switch {
	case err == nil:
		return 0
	case errors.As(err, &skip):
		return 4
	}
	return 2
}
