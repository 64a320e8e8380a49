// Package tinymodel builds tiny real Hugging Face model folders for the tests that run the
// real ExecuTorch toolchain: each family's real config.json with its sizes scaled down,
// random weights made by transformers' own model class and saved as safetensors, a
// byte-level BPE tokenizer.json trained with the `tokenizers` library, and the family's real
// chat template. Nothing is downloaded. It is test support, never shipped.
//
// A random model is confident about nothing, and the checks after an export need a model
// that is (the smoke run's reply, the decision gate's graded rows, the solve's calibration
// replies), so each model is taught one reply on the conversations the checks render
// (tinymodel.py says how).
package tinymodel

import (
	"bytes"
	"context"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"

	"github.com/experimentalmachines/exe-expo/internal/config"
	"github.com/experimentalmachines/exe-expo/internal/gate"
	"github.com/experimentalmachines/exe-expo/internal/smoke"
)

//go:embed tinymodel.py
var script []byte

// Family is one model family the plan sends to export_llm, by the Hub model whose real
// files (in families/) its tiny model is built from.
type Family struct {
	// Name is the family's short name in test names.
	Name string
	// ID is the Hub id a test exports the tiny folder under.
	ID string
	// Files names the Hub model whose files are in families/ (default ID).
	Files string
	// License is the license lines of ID's real model card (its README.md front matter),
	// which the tiny model's card carries: the export records them and publish requires them.
	License string
}

// Families are every family the tests export: those export_llm builds for XNNPACK and
// Vulkan, and Gemma 3 and SmolLM3 (exported through optimum-executorch). LFM2 goes by
// LFM2.5, the generation the app publishes, built from the Base checkpoint's files (the same
// architecture and tokenizer; families/SOURCES.md).
var Families = []Family{
	{Name: "qwen3", ID: "Qwen/Qwen3-0.6B", License: "license: apache-2.0\nlicense_link: https://huggingface.co/Qwen/Qwen3-0.6B/blob/main/LICENSE\n"},
	{Name: "qwen2.5", ID: "Qwen/Qwen2.5-0.5B-Instruct", License: "license: apache-2.0\nlicense_link: https://huggingface.co/Qwen/Qwen2.5-0.5B-Instruct/blob/main/LICENSE\n"},
	{Name: "llama3.2", ID: "meta-llama/Llama-3.2-1B-Instruct", License: "license: llama3.2\n"},
	{Name: "smollm2", ID: "HuggingFaceTB/SmolLM2-135M-Instruct", License: "license: apache-2.0\n"},
	{Name: "lfm2.5", ID: "LiquidAI/LFM2.5-1.2B-Instruct", Files: "LiquidAI/LFM2.5-1.2B-Base", License: "license: other\nlicense_name: lfm1.0\nlicense_link: LICENSE\n"},
	{Name: "phi4mini", ID: "microsoft/Phi-4-mini-instruct", License: "license: mit\nlicense_link: https://huggingface.co/microsoft/Phi-4-mini-instruct/resolve/main/LICENSE\n"},
	{Name: "qwen3.5", ID: "Qwen/Qwen3.5-0.8B", License: "license: apache-2.0\nlicense_link: https://huggingface.co/Qwen/Qwen3.5-0.8B/blob/main/LICENSE\n"},
	{Name: "gemma3", ID: "google/gemma-3-270m-it", License: "license: gemma\n"},
	{Name: "smollm3", ID: "HuggingFaceTB/SmolLM3-3B", License: "license: apache-2.0\n"},
}

// Card is the tiny model's model card (README.md): YAML front matter with the real card's
// license, and a line saying what the model is.
func (f Family) Card() []byte {
	return []byte("---\n" + f.License + "---\n\n# Tiny " + f.ID + " (test model)\n\n" +
		"A tiny model with " + f.ID + "'s architecture, scaled down, random weights and a test tokenizer, for exe-expo's tests.\n")
}

func (f Family) filesDir() string {
	id := f.Files
	if id == "" {
		id = f.ID
	}
	return filepath.Join(familiesDir(), strings.Replace(id, "/", "__", 1))
}

// Lookup is the family named name.
func Lookup(name string) (Family, error) {
	for _, f := range Families {
		if f.Name == name {
			return f, nil
		}
	}
	return Family{}, fmt.Errorf("no tiny model family %q", name)
}

// Options shape one tiny model.
type Options struct {
	// Seed fixes the random weights and the teaching.
	Seed int
	// Reply is what the model is taught to answer every conversation with; empty leaves
	// the weights random.
	Reply string
	// Steps are the teaching's optimizer steps (default 40).
	Steps int
}

// Result is what the builder reports.
type Result struct {
	Out           string         `json:"out"`
	VocabSize     int            `json:"vocab_size"`
	SpecialTokens map[string]int `json:"special_tokens"`
	Tensors       int            `json:"tensors"`
	Bytes         int64          `json:"bytes"`
	Teach         *struct {
		LossFirst float64 `json:"loss_first"`
		LossLast  float64 `json:"loss_last"`
		Sequences int     `json:"sequences"`
		Tokens    int     `json:"tokens"`
	} `json:"teach"`
}

// Build writes family's tiny model into out with python (which has torch, transformers
// and tokenizers), taught on cfg's conversations.
func Build(ctx context.Context, python string, cfg *config.Config, f Family, out string, o Options) (*Result, error) {
	plan, err := buildPlan(cfg, f, out, o)
	if err != nil {
		return nil, err
	}
	work, err := os.MkdirTemp("", "tinymodel-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(work)
	planPath, scriptPath := filepath.Join(work, "plan.json"), filepath.Join(work, "tinymodel.py")
	if err := os.WriteFile(planPath, plan, 0o644); err != nil {
		return nil, err
	}
	if err := os.WriteFile(scriptPath, script, 0o644); err != nil {
		return nil, err
	}
	var stdout, stderr bytes.Buffer
	cmd := exec.CommandContext(ctx, python, scriptPath, planPath)
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return nil, fmt.Errorf("build the tiny %s model: %v\n%s\n%s", f.Name, err, stdout.String(), tail(stderr.String(), 4000))
	}
	var r Result
	if err := json.Unmarshal(lastLine(stdout.Bytes()), &r); err != nil {
		return nil, fmt.Errorf("the tiny %s model's builder answered %q: %w", f.Name, stdout.String(), err)
	}
	if err := os.WriteFile(filepath.Join(out, "README.md"), f.Card(), 0o644); err != nil {
		return nil, err
	}
	return &r, nil
}

type conversation struct {
	Messages []gate.Turn      `json:"messages"`
	Tools    []map[string]any `json:"tools"`
}

func buildPlan(cfg *config.Config, f Family, out string, o Options) ([]byte, error) {
	files := map[string]any{}
	for _, name := range []string{"config.json", "generation_config.json", "tokenizer_config.json"} {
		var v any
		b, err := os.ReadFile(filepath.Join(f.filesDir(), name))
		if name == "generation_config.json" && errors.Is(err, fs.ErrNotExist) {
			continue // Qwen3.5 publishes none
		}
		if err != nil {
			return nil, err
		}
		if err := json.Unmarshal(b, &v); err != nil {
			return nil, fmt.Errorf("%s of %s: %w", name, f.ID, err)
		}
		files[name] = v
	}
	var template *string
	if b, err := os.ReadFile(filepath.Join(f.filesDir(), "chat_template.jinja")); err == nil {
		s := string(b)
		template = &s
	}
	convs, corpus, err := conversations(cfg)
	if err != nil {
		return nil, err
	}
	plan := map[string]any{
		"out": out, "seed": o.Seed, "config": files["config.json"],
		"generation_config": files["generation_config.json"], "tokenizer_config": files["tokenizer_config.json"],
		"chat_template": template, "corpus": corpus, "teach": nil,
	}
	if o.Reply != "" {
		steps := o.Steps
		if steps == 0 {
			steps = 40
		}
		plan["teach"] = map[string]any{"reply": o.Reply, "steps": steps, "conversations": convs}
		plan["corpus"] = append(corpus, o.Reply)
	}
	return json.Marshal(plan)
}

// conversations are what the checks render: every gate row and calibration row under the
// gate's prompt file with its tools, the general calibration prompts and the smoke question
// plain. The corpus the tokenizer is trained on is their text.
func conversations(cfg *config.Config) ([]conversation, []string, error) {
	p, _, err := gate.LoadPrompt(cfg.Gate.PromptFile)
	if err != nil {
		return nil, nil, err
	}
	tools, err := json.Marshal(p.Tools)
	if err != nil {
		return nil, nil, err
	}
	corpus := []string{p.System, string(tools)}
	for _, t := range p.Primer {
		corpus = append(corpus, t.Content)
	}
	app := func(user string) conversation {
		m := append([]gate.Turn{{Role: "system", Content: p.System}}, p.Primer...)
		return conversation{Messages: append(m, gate.Turn{Role: "user", Content: user}), Tools: p.Tools}
	}
	plain := func(user string) conversation {
		return conversation{Messages: []gate.Turn{{Role: "user", Content: user}}}
	}
	var out []conversation
	rows := gate.RowsFrom(cfg.Gate)
	for _, r := range rows.Search {
		out, corpus = append(out, app(r.User)), append(corpus, r.User)
	}
	for _, q := range rows.Quiet {
		out, corpus = append(out, app(q)), append(corpus, q)
	}
	// A few calibration rows of each kind: the model answers the rest alike.
	trailer, c := cfg.Gate.Trailer, cfg.Calibration
	for _, r := range c.Search[:min(4, len(c.Search))] {
		u := r.Question + " " + strings.ReplaceAll(trailer, "{subject}", r.Subject)
		out, corpus = append(out, app(u)), append(corpus, u)
	}
	for _, q := range c.Known[:min(4, len(c.Known))] {
		out, corpus = append(out, app(q)), append(corpus, q)
	}
	for _, q := range append(append([]string{}, c.General[:min(4, len(c.General))]...), smoke.Question) {
		out, corpus = append(out, plain(q)), append(corpus, q)
	}
	return out, corpus, nil
}

func familiesDir() string {
	_, self, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(self), "families")
}

func lastLine(b []byte) []byte {
	lines := bytes.Split(bytes.TrimSpace(b), []byte("\n"))
	return lines[len(lines)-1]
}

func tail(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return "…" + s[len(s)-n:]
}
