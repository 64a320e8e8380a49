// Package verify runs the checks before publish on an export's reports
// (docs/research/checks.md): the size check on every backend's files, the smoke run and the
// decision gate where ExecuTorch's x86 runner runs them, and writes each verdict back into
// the report it judged, so publish reads one record.
package verify

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/experimentalmachines/exe-expo/internal/backend"
	"github.com/experimentalmachines/exe-expo/internal/check"
	"github.com/experimentalmachines/exe-expo/internal/drivers"
	"github.com/experimentalmachines/exe-expo/internal/report"
	"github.com/experimentalmachines/exe-expo/internal/smoke"
)

// Reports lists the export reports under out (report.Find: qnn/sm8750/ and mtk/mt6991/ as
// well as xnnpack/), for one backend when name is set. None is an error: there is nothing
// to check.
func Reports(out, name string) ([]string, error) {
	if name != "" && backend.ByName(name) == nil {
		return nil, fmt.Errorf("unknown backend %q (known: %s)", name, strings.Join(backend.Names(), ", "))
	}
	paths, err := report.Find(out, name, "")
	if err != nil {
		return nil, err
	}
	if len(paths) == 0 {
		what := "export-report-*.json in a backend folder"
		if name != "" {
			what = name + "'s " + what
		}
		return nil, fmt.Errorf("%s holds no export report (%s)", out, what)
	}
	return paths, nil
}

// spec is the report's backend.
func spec(rep *report.Report) (*backend.Backend, error) {
	b := backend.ByName(rep.Backend)
	if b == nil {
		return nil, fmt.Errorf("the report names backend %q, which exe-expo does not know", rep.Backend)
	}
	return b, nil
}

// Size is the size check of the report's files against its estimate.
func Size(rep *report.Report) (check.SizeResult, error) {
	b, err := spec(rep)
	if err != nil {
		return check.SizeResult{}, err
	}
	return check.Size(b.Check, rep.TotalBytes(), rep.Estimates.PTEBytesEstimate), nil
}

// Smoke runs the checks a report's files can get on this host: the size check always, the
// smoke run where the backend's files run on the x86 runner. out is the folder the
// report's file paths are relative to (the tokenizer beside them); source, when set, is the
// model folder whose chat template renders the prompt.
func Smoke(ctx context.Context, r drivers.Runner, out, source, path string) (*report.Report, error) {
	rep, err := report.Read(path)
	if err != nil {
		return nil, err
	}
	size, err := Size(rep)
	if err != nil {
		return nil, err
	}
	rep.SizeCheck = &size
	b, _ := spec(rep)
	if b.Smoke {
		pte, err := onePTE(rep)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		if rep.Tokenizer == "" {
			return nil, fmt.Errorf("%s names no tokenizer for the runner", path)
		}
		got, _, err := r.Smoke(ctx, drivers.NewSmokeRun(filepath.Join(out, filepath.FromSlash(pte)),
			filepath.Join(out, rep.Tokenizer), source))
		if err != nil {
			return nil, fmt.Errorf("smoke run of %s: %w", pte, err)
		}
		v := smoke.Judge(got, rep.Source.TotalParams)
		rep.Smoke = &v
	}
	return rep, report.Write(path, rep)
}

// onePTE is the report's single program (the backends the runner runs write one).
func onePTE(rep *report.Report) (string, error) {
	var ptes []string
	for _, f := range rep.Files {
		if strings.HasSuffix(f.Path, ".pte") {
			ptes = append(ptes, f.Path)
		}
	}
	if len(ptes) != 1 {
		return "", fmt.Errorf("the report lists %d .pte files, and the runner takes one", len(ptes))
	}
	return ptes[0], nil
}

// Summary is the step summary's lines for one report: which check the files passed, and
// each verdict.
func Summary(path string, rep *report.Report) []string {
	lines := []string{fmt.Sprintf("%s: checked by %s", path, orNone(rep.Checked()))}
	if rep.SizeCheck != nil {
		lines = append(lines, "  "+rep.SizeCheck.Verdict())
	}
	if rep.Smoke != nil {
		lines = append(lines, "  "+rep.Smoke.Verdict())
	}
	if rep.Gate != nil {
		lines = append(lines, "  "+rep.Gate.Verdict())
		if l := rep.Gate.FidelityLine(); l != "" {
			lines = append(lines, "  "+l)
		}
	}
	if rep.Speed != nil {
		lines = append(lines, "  "+rep.Speed.Line())
	}
	if q := rep.Quality; q != nil && !q.Measured && q.Simulated != nil {
		lines = append(lines, "  quality: "+q.SimulatedLine())
	} else if q != nil && !q.Measured && q.NotMeasured != "" {
		lines = append(lines, "  quality: "+q.NotMeasured)
	}
	for _, b := range rep.Blockers() {
		lines = append(lines, "  not publishable: "+b)
	}
	return lines
}

func orNone(s string) string {
	if s == "" {
		return "no passed check"
	}
	return s
}
