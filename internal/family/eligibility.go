package family

import (
	"fmt"
	"strings"

	"github.com/experimentalmachines/exe-expo/internal/config"
	"github.com/experimentalmachines/exe-expo/internal/model"
)

// Verdict is the answer to "can this model be exported, and where?".
type Verdict struct {
	ModelID  string `json:"model_id"`
	SHA      string `json:"sha,omitempty"`
	Family   string `json:"family,omitempty"`
	Variant  string `json:"variant"`
	Eligible bool   `json:"eligible"`
	// Reasons are model-wide refusals; any one makes the model ineligible.
	Reasons []string `json:"reasons"`
	// Notes are what the verdict took into account without refusing: the text model of a
	// multimodal wrapper exported alone, a name the app reads no size from.
	Notes []string `json:"notes,omitempty"`
	// Backends maps each backend to "" (exported) or why not, in Backends order.
	Backends []BackendVerdict `json:"backends"`
	// Fam is the family Family names, nil for none. Evaluate looks it up once, and every
	// later step of the command (the sizing model, the recipe, the checkpoint conversion)
	// takes it from here, so what the verdict decided is what is built (Lookups counts).
	Fam *Family `json:"-"`
	// AppToken is the app's family token for the name the model is published under
	// (config.RepoFor), "" when it has none (a refusal in Reasons says so). The recipe holds
	// each published file's installed name to it instead of reading the repo's name again.
	AppToken string `json:"-"`
}

// BackendVerdict is one backend's answer.
type BackendVerdict struct {
	Backend string `json:"backend"`
	OK      bool   `json:"ok"`
	Reason  string `json:"reason,omitempty"`
}

// Supported lists the backends the model goes to.
func (v *Verdict) Supported() []string {
	var out []string
	for _, b := range v.Backends {
		if b.OK {
			out = append(out, b.Backend)
		}
	}
	return out
}

// Backend returns one backend's verdict.
func (v *Verdict) Backend(name string) BackendVerdict {
	for _, b := range v.Backends {
		if b.Backend == name {
			return b
		}
	}
	return BackendVerdict{Backend: name, Reason: "unknown backend"}
}

// instructTokens mark chat checkpoints; families whose plain release is the chat model
// count as instruct unless the name says base.
var (
	instructTokens       = map[string]bool{"instruct": true, "it": true, "chat": true}
	instructUnlessBase   = map[string]bool{"qwen3": true, "qwen3_5": true, "lfm2": true, "smollm3": true}
	multimodalArchSuffix = []string{"ForConditionalGeneration", "ForVision2Seq", "ForImageTextToText"}
)

// Variant reads instruct or base from the name.
func Variant(name, family string) string {
	tokens := strings.FieldsFunc(strings.ToLower(name), func(r rune) bool { return r == '-' || r == '_' || r == '.' })
	hasBase := false
	for _, t := range tokens {
		if instructTokens[t] {
			return "instruct"
		}
		hasBase = hasBase || t == "base"
	}
	if instructUnlessBase[family] && !hasBase {
		return "instruct"
	}
	return "base"
}

// folderHint ends the refusals that read a local folder's own name when no --id was given:
// the name rules mean the Hub name, and a folder's name is whatever the user chose.
const folderHint = "; that is the local folder's name: pass --id ORG/NAME, the Hub id the folder holds"

// NameReasons are the refusals the name alone gives; the watcher uses them without any
// network call.
func NameReasons(cfg *config.Config, modelID string) []string {
	reasons, _ := nameReasons(cfg, modelID, nil, "")
	return reasons
}

// nameReasons ends the refusals that read the name with hint; fam, when the architecture is
// known, narrows the family names the app would take. token is the app's family token for
// the published repo's name, read once here for every rule that needs it.
func nameReasons(cfg *config.Config, modelID string, fam *Family, hint string) (reasons []string, token string) {
	name := modelID[strings.LastIndex(modelID, "/")+1:]
	norm := Normalize(name)
	var hits []string
	for _, m := range cfg.Watch.NameExclude {
		if strings.Contains(norm, m) {
			hits = append(hits, m)
		}
	}
	if len(hits) > 0 {
		reasons = append(reasons, fmt.Sprintf("name matches excluded marker(s) %s: quantized, converted or non-chat repos are not sources", strings.Join(hits, ", ")))
	}
	sizes := SizeHints(name)
	switch {
	case len(sizes) > 1:
		reasons = append(reasons, fmt.Sprintf("name carries several sizes (%s), and %s would read the first%s", strings.Join(sizes, ", "), TheApp, hint))
	case len(sizes) == 1 && NominalBillions(sizes[0]) > cfg.Watch.MaxNominalBillions:
		reasons = append(reasons, fmt.Sprintf("named size %s is above %gB, the largest a phone is meant to run", sizes[0], cfg.Watch.MaxNominalBillions))
	}
	out := cfg.RepoFor(name)
	if b := AppRepoBackend(out[strings.LastIndex(out, "/")+1:]); b != "" {
		reasons = append(reasons, fmt.Sprintf("it would be published as %s, whose name contains %s, which %s reads as the backend of every file in the repo%s", out, b, TheApp, hint))
	}
	token = AppFamily(AppModelName(out, "x.pte"))
	if token == "" {
		reasons = append(reasons, NoTemplateReason(out, fam)+hint)
	}
	return reasons, token
}

// BackendRule is one backend as eligibility sees it: its name and whether it takes the
// model ("" when it does, else why not). The backends' definitions (internal/backend) supply
// them, so this package holds no backend's rules.
type BackendRule struct {
	Name    string
	Support func(src *model.Source, fam *Family) string
}

// Evaluate decides eligibility and, through each backend's rule, per-backend support for a
// loaded source model; a model no backend takes is not eligible.
func Evaluate(cfg *config.Config, src *model.Source, backends []BackendRule) *Verdict {
	v := &Verdict{ModelID: src.ID, SHA: src.SHA, Reasons: []string{}}
	fam := Of(src.Config)
	if fam != nil {
		v.Family, v.Fam = fam.Key, fam
	}
	v.Variant = Variant(src.Name(), v.Family)
	add := func(format string, args ...any) { v.Reasons = append(v.Reasons, fmt.Sprintf(format, args...)) }

	if src.PipelineTag != "" && src.PipelineTag != cfg.Watch.PipelineTag {
		add("pipeline tag is %s; only %s models are exported", src.PipelineTag, cfg.Watch.PipelineTag)
	}
	hint := ""
	if src.IDFromFolder {
		hint = folderHint
	}
	if v.Variant == "base" {
		add("%s is a base checkpoint, and only chat models are published%s", src.Name(), hint)
	}
	names, token := nameReasons(cfg, src.ID, fam, hint)
	v.Reasons, v.AppToken = append(v.Reasons, names...), token
	if note := sizeNote(src.Name()); note != "" {
		v.Notes = append(v.Notes, note)
	}
	switch {
	case src.AccessError != "":
		add("%s", src.AccessError)
	case src.Config == nil:
		add("repo has no config.json")
	default:
		reasons, notes := checkpointReasons(src.Config, fam)
		v.Reasons, v.Notes = append(v.Reasons, reasons...), append(v.Notes, notes...)
	}
	if fam != nil {
		v.Reasons = append(v.Reasons, sizeReasons(cfg, src)...)
		v.Reasons = append(v.Reasons, appNameReasons(src, fam, token)...)
	}
	v.Backends = backendVerdicts(src, fam, backends)
	v.Eligible = len(v.Reasons) == 0 && len(v.Supported()) > 0
	return v
}

// checkpointReasons refuses what the config shows: MoE, multimodal, pre-quantized, unknown.
// A multimodal wrapper of a family exported as its text model (Family.TextModel) is no
// refusal: the note says what is exported and what is left out.
func checkpointReasons(c *model.Config, fam *Family) (reasons, notes []string) {
	ft, err := c.Features()
	if err != nil {
		return []string{err.Error()}, nil
	}
	var out []string
	archs := c.Architectures()
	if isMoE(ft, archs) {
		out = append(out, "mixture-of-experts checkpoint: only dense models fit the export recipes and a phone's memory")
	}
	if fam != nil && fam.TextModel {
		notes = append(notes, textModelNote(c))
	} else {
		out = append(out, multimodalReasons(ft, archs)...)
	}
	if ft.Quantized {
		out = append(out, fmt.Sprintf("pre-quantized checkpoint (quant_method %q): the export needs the original bf16/fp16 weights", ft.QuantMethod))
	}
	if fam == nil && len(out) == 0 {
		out = append(out, fmt.Sprintf("architecture %v has no recipe: supported are Qwen3, Qwen3.5, Qwen2.5, Llama 3.2 / SmolLM2, LFM2.5, Gemma 3, SmolLM3 and Phi-4-mini", archs))
	}
	return out, notes
}

// multimodalReasons refuses a multimodal class, or a vision_config, of a family that is not
// exported as its text model.
func multimodalReasons(ft model.Features, archs []string) []string {
	var out []string
	for _, a := range archs {
		for _, suf := range multimodalArchSuffix {
			if strings.HasSuffix(a, suf) {
				out = append(out, fmt.Sprintf("multimodal checkpoint (%s): only the text decoder of a text-only release is exported", a))
			}
		}
	}
	if ft.Vision && len(out) == 0 {
		out = append(out, "multimodal checkpoint (it has a vision_config): only text-only releases are exported")
	}
	return out
}

// textModelNote says that a multimodal wrapper is exported as its text model, and what of
// the checkpoint that leaves out of the files, the parameter count and the sizes.
func textModelNote(c *model.Config) string {
	left := "the vision tower"
	if l := c.LeftOut(); len(l) > 0 {
		left = strings.Join(l, "*, ") + "*"
	}
	return fmt.Sprintf("multimodal checkpoint (%s): exe-expo exports its text model (text_config) only, as ExecuTorch's own recipe does; %s are left out of the files, the parameter count and the sizes",
		strings.Join(c.Architectures(), ", "), left)
}

// sizeNote says that a name carries no size: no refusal, since the app reads the size from
// the name only for its device-size filter, which keeps a repo without one on every phone
// (docs/research/app-rules.md, rule 6).
func sizeNote(name string) string {
	if len(SizeHints(name)) > 0 {
		return ""
	}
	return fmt.Sprintf("%q carries no size (such as 1.7B or 350M): %s reads the size from the name only for its device-size filter, which then shows the repo on every phone", name, TheApp)
}

// isMoE reads mixture-of-experts from an architecture's name (Qwen3MoeForCausalLM) or
// from the config's expert keys.
func isMoE(ft model.Features, archs []string) bool {
	for _, a := range archs {
		if strings.Contains(strings.ToLower(a), "moe") {
			return true
		}
	}
	return ft.Experts
}

func sizeReasons(cfg *config.Config, src *model.Source) []string {
	if src.Params == nil {
		return []string{"no safetensors parameter count: the repo has neither model.safetensors nor its index"}
	}
	if src.Params.Total >= cfg.Watch.MaxParams {
		how := ""
		if src.Params.Computed {
			how = " (computed from the architecture)"
		}
		return []string{fmt.Sprintf("%s parameters%s is not below %s", Commas(src.Params.Total), how, Commas(cfg.Watch.MaxParams))}
	}
	return nil
}

// appNameReasons holds the app's family token of the published name (token, read by
// nameReasons) to the architecture's family.
func appNameReasons(src *model.Source, fam *Family, token string) []string {
	if token == "" {
		return nil // NameReasons already said so
	}
	ok := false
	for _, t := range fam.AppTokens {
		ok = ok || t == token
	}
	if !ok {
		return []string{fmt.Sprintf("name reads as app family '%s', architecture is '%s': %s picks a chat template by that family name and would pick the wrong one; a %s release's name must carry %s",
			token, fam.Key, TheApp, fam.Key, AppNames(fam.AppTokens...))}
	}
	if !fam.NamePattern.MatchString(src.Name()) {
		return []string{fmt.Sprintf("%s is not named like a %s release (a later version on the same architecture?)", src.Name(), fam.Key)}
	}
	return nil
}

func backendVerdicts(src *model.Source, fam *Family, backends []BackendRule) []BackendVerdict {
	out := make([]BackendVerdict, 0, len(backends))
	for _, b := range backends {
		if reason := b.Support(src, fam); reason != "" {
			out = append(out, BackendVerdict{Backend: b.Name, Reason: reason})
		} else {
			out = append(out, BackendVerdict{Backend: b.Name, OK: true})
		}
	}
	return out
}

// Commas writes n with thousands separators (4,500,000,000).
func Commas(n int64) string {
	s := fmt.Sprint(n)
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	var b strings.Builder
	for i, r := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(r)
	}
	if neg {
		return "-" + b.String()
	}
	return b.String()
}
