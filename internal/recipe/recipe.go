// Package recipe turns (config, model, backend, window, chip) into everything an export
// needs: the files to write, the command lines, their environment, the outputs and their
// published names, and what the exported program must say about itself. It runs nothing:
// every builder is pure, so the golden files in testdata pin each backend's recipe. The
// builders themselves are the backends' own (internal/backend/<name>); this package holds what
// they share: the request, the recipe's shape, and the app's naming rules every published
// file is held to.
package recipe

import (
	"fmt"
	"path/filepath"
	"strings"

	"github.com/experimentalmachines/exe-expo/internal/check"
	"github.com/experimentalmachines/exe-expo/internal/config"
	"github.com/experimentalmachines/exe-expo/internal/family"
	"github.com/experimentalmachines/exe-expo/internal/model"
)

// Request is one export: one model, one backend, one window, and one chip for the NPUs.
type Request struct {
	Backend string
	Source  *model.Source
	// Verdict is what backend.Evaluate decided of Source: the builders take the family
	// from it (Verdict.Fam) and Build the app token the published name reads as, so the
	// recipe builds what the verdict decided instead of deciding it again.
	Verdict *family.Verdict
	Window  int
	SoC     string
	// QMode overrides the recipe's qmode ("fp32" builds the unquantized reference).
	QMode string
	// Codes is a GPTQ codes file; empty means int4 codes rounded to nearest.
	Codes string
	// KVCache is the KV cache the size model decided for this window (plan's row): the
	// recipe builds that one. Empty: the recipe's int8_kv_cache_from alone decides.
	KVCache string
	// Calibration is a calibration file (absolute) that a calibrate-only export wrote for
	// this model and chip: the window is built from its encodings and calibrates nothing,
	// so the workflow pays the calibration once per model and chip, not once per window.
	Calibration string
	// CalibrationOut (absolute), when set, makes the export calibrate only: the tool
	// calibrates at Window, writes the encodings there and builds no program.
	CalibrationOut string
	// Work is the working folder (absolute); the tools run there and write their files.
	Work string
	// SourceDir holds the downloaded source (config, weights, tokenizer).
	SourceDir string
	// Python runs ExecuTorch (a venv's python). MTKPython is the MediaTek tool venv's.
	Python    string
	MTKPython string
	// ExecuTorch is an ExecuTorch source tree at EXECUTORCH_COMMIT (QNN params files,
	// examples/mediatek).
	ExecuTorch string
}

// Family is the family the request's verdict decided; a request without a verdict, or
// whose verdict found no family, is refused, since a builder would otherwise have to
// decide the family again.
func (req Request) Family() (*family.Family, error) {
	if req.Verdict == nil || req.Verdict.Fam == nil {
		id := "the model"
		if req.Source != nil {
			id = req.Source.ID
		}
		return nil, fmt.Errorf("recipe: %s has no verdict with a family: backend.Evaluate decides the model before a recipe is built", id)
	}
	return req.Verdict.Fam, nil
}

// Step is one tool run.
type Step struct {
	Name string   `json:"name"`
	Argv []string `json:"argv"`
	Dir  string   `json:"dir"`
	// Env is what the recipe adds to the tool's environment (PATH and HOME come from the
	// host).
	Env map[string]string `json:"env"`
	// Stages names the backend whose stage rules time this tool.
	Stages string `json:"stages"`
}

// Output is one file a tool writes and where it is published.
type Output struct {
	// From is where the tool writes it: a path, or a glob that must match exactly one file.
	From string `json:"from"`
	// To is its path in the output repo ("xnnpack/Qwen3-1.7B-8da4w-8k.pte").
	To   string `json:"to"`
	Kind string `json:"kind"` // "pte" or "embedding"
	// Expect is what a .pte must say about itself.
	Expect *check.Expect `json:"expect,omitempty"`
	// Bytes, when set, is the size the file must have (MediaTek's embedding table).
	Bytes int64 `json:"bytes,omitempty"`
}

// Recipe is everything one export runs and produces.
type Recipe struct {
	Backend    string `json:"backend"`
	Target     string `json:"target"`
	TargetName string `json:"target_name,omitempty"`
	Window     int    `json:"window"`
	Label      string `json:"label"`
	// Folder is the backend folder in the output repo ("xnnpack", "qnn/sm8750").
	Folder string `json:"folder"`
	// Files are written under Work before the steps run (paths relative to Work).
	Files map[string][]byte `json:"-"`
	// Checkpoint, when set, is where the converted ExecuTorch checkpoint goes (the export
	// converts the source's safetensors into it first).
	Checkpoint string `json:"checkpoint,omitempty"`
	// Prepare, when set, is the tree export lays out under Work before the steps run (the
	// MediaTek scripts' copy of examples/mediatek and their weights folder).
	Prepare *Prepare `json:"prepare,omitempty"`
	Steps   []Step   `json:"steps"`
	Outputs []Output `json:"outputs"`
	// Fields is the report's recipe block.
	Fields map[string]any `json:"recipe"`
	// Inputs, when set, is the JSON file a step writes of what its tool read (the QNN
	// launcher's record: model files and calibration rows); export checks it and copies
	// it into the report.
	Inputs string `json:"inputs,omitempty"`
	// QDQ, when set, is the quantized program (torch.export, quantize/dequantize ops) a step
	// saves before lowering for hardware the x86 gate cannot run (Qualcomm's
	// artifact/decode_qdq.pt2): export runs it on the CPU over the fidelity text and records
	// the figures as simulated in the report's quality block.
	QDQ string `json:"qdq,omitempty"`
}

// Builder is one backend's recipe: it turns a prepared request into the files, steps and
// outputs of an export. Each backend's folder (internal/backend/<name>) holds its builder.
type Builder func(cfg *config.Config, req Request) (*Recipe, error)

// Build prepares the request, runs the backend's builder, and holds every published .pte to
// the app's naming rules that depend on the file's path; appBackend is the backend the app
// must read from a file's path. The rules of the repo's name are the verdict's
// (family.Evaluate), which a request must carry.
func Build(cfg *config.Config, req Request, build Builder, appBackend string) (*Recipe, error) {
	if req.Source == nil || req.Source.Config == nil {
		return nil, fmt.Errorf("recipe: no source model loaded")
	}
	if _, err := req.Family(); err != nil {
		return nil, err
	}
	if !filepath.IsAbs(req.Work) {
		return nil, fmt.Errorf("recipe: work folder %q must be absolute", req.Work)
	}
	if req.Python == "" {
		req.Python = "python3"
	}
	r, err := build(cfg, req)
	if err != nil {
		return nil, err
	}
	for _, o := range r.Outputs {
		if o.Kind != "pte" {
			continue
		}
		if problems := FileRules(cfg.RepoFor(req.Source.Name()), o.To, appBackend, req.Verdict.AppToken); len(problems) > 0 {
			return nil, fmt.Errorf("%s breaks the naming rules of %s: %s", o.To, family.TheApp, strings.Join(problems, "; "))
		}
	}
	return r, nil
}

// AppRules lists why the app would mis-read a published file: the backend it infers from
// the path (appBackend is the one it must infer), the family it infers from the installed
// name, the size in the repo name.
//
// Publish, which reads a report and has no verdict, holds files to these; an export holds
// its files to FileRules, the verdict having held the repo's name to the rest.
func AppRules(repo, filePath, appBackend string) []string {
	var problems []string
	name := repo[strings.LastIndex(repo, "/")+1:]
	if b := family.AppRepoBackend(name); b != "" {
		problems = append(problems, fmt.Sprintf("the repo name contains %s, which the app reads as the backend of every file", b))
	}
	problems = append(problems, FileRules(repo, filePath, appBackend, "")...)
	if len(family.SizeHints(name)) == 0 {
		problems = append(problems, "the repo name carries no size")
	}
	return problems
}

// FileRules lists why the app would mis-read one published file for what its path adds to
// the repo's name: the backend it infers from the path, and the family it infers from the
// installed name, which must be token (the repo name's, as the verdict read it) or, with
// token empty, any family the app knows.
func FileRules(repo, filePath, appBackend, token string) []string {
	var problems []string
	if got := family.AppBackend(filePath); got != appBackend {
		problems = append(problems, fmt.Sprintf("the app reads the backend of %s as %s, not %s", filePath, got, appBackend))
	}
	installed := family.AppModelName(repo, filePath)
	switch got := family.AppFamily(installed); {
	case got == "":
		problems = append(problems, fmt.Sprintf("the installed name %s reads as no app family (the app takes %s)", installed, family.AppNames()))
	case token != "" && got != token:
		problems = append(problems, fmt.Sprintf("the installed name %s reads as app family %s, the repo's name as %s", installed, got, token))
	}
	return problems
}
