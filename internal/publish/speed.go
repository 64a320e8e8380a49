package publish

import (
	"fmt"
	"path"
	"sort"
	"strings"

	"github.com/experimentalmachines/exe-expo/internal/report"
	"github.com/experimentalmachines/exe-expo/internal/speed"
)

// VariantSpeed is a variant's speed in config.json: the runner's figures on each prompt and
// the memory after load, labelled with the host they were measured on (the export host,
// not a phone), and the slow-path findings; the app may show it and ignores it otherwise.
type VariantSpeed struct {
	// MeasuredOn says where: "the export host, not a phone: arm64, 8 CPUs (...)".
	MeasuredOn        string      `json:"measured_on"`
	Host              speed.Host  `json:"host"`
	Runs              []speed.Run `json:"runs"`
	RSSAfterLoadBytes int64       `json:"rss_after_load_bytes"`
	// KVCache is the cache the file keeps, beside its speed: what the int8 cache saves in
	// memory is paid in its dequantization, which is NEON code on ARM and a scalar loop on
	// x86.
	KVCache string `json:"kv_cache,omitempty"`
	// SlowPath are the findings that the file prefills one token a call (empty: none).
	SlowPath []string `json:"slow_path"`
	// NotMeasured is why there are no figures (the runner failed to load the file).
	NotMeasured string `json:"not_measured,omitempty"`
}

// variantSpeed is the report's speed block for config.json; nil when none was measured.
func variantSpeed(r *report.Report) *VariantSpeed {
	s := r.Speed
	if s == nil {
		return nil
	}
	return &VariantSpeed{MeasuredOn: measuredOn(s.Host), Host: s.Host, Runs: s.Runs, RSSAfterLoadBytes: s.RSSAfterLoadBytes,
		KVCache: recordedCache(r), SlowPath: append([]string{}, s.SlowPath...), NotMeasured: s.RunnerError}
}

// measuredOn is the host label every figure carries: they are the export host's.
func measuredOn(h speed.Host) string {
	return "the export host, not a phone: " + h.Describe()
}

// speedSection is the card's speed table: each measured file's prefill and decode rates,
// first token and memory after load on each prompt, the host named, and the slow paths.
func speedSection(b *strings.Builder, rs []placed) {
	var rows, notes []string
	hosts := map[string]bool{}
	x86Int8 := false
	for _, p := range rs {
		r := p.Report
		if r.Speed == nil {
			continue
		}
		file := speedFile(r)
		hosts[measuredOn(r.Speed.Host)] = true
		if r.Speed.RunnerError != "" {
			notes = append(notes, fmt.Sprintf("- `%s`: not measured: %s", file, r.Speed.RunnerError))
		}
		for _, run := range r.Speed.Runs {
			rows = append(rows, speedRow(r, file, run))
		}
		for _, why := range r.Speed.SlowPath {
			notes = append(notes, fmt.Sprintf("- **Slow path** `%s`: %s.", file, why))
		}
		x86Int8 = x86Int8 || r.Speed.Host.Arch != "arm64" && cacheKind(r) == "int8"
	}
	if len(rows) == 0 && len(notes) == 0 {
		return
	}
	b.WriteString("## Speed\n\n")
	fmt.Fprintf(b, "Measured with ExecuTorch's text LLM runner (greedy, %d new tokens after prompts cut from a fixed text), on %s.\n\n",
		speed.NewTokens, strings.Join(keys(hosts), "; "))
	if len(rows) > 0 {
		b.WriteString("| File | KV cache | Prompt | Prefill | Decode | First token | Memory after load |\n|---|---|---|---|---|---|---|\n")
		b.WriteString(strings.Join(rows, "\n") + "\n\n")
	}
	if x86Int8 {
		b.WriteString("The int8 KV cache saves memory and is paid in its dequantization, which is NEON code on ARM phones and a scalar loop on x86: its figures measured on x86 understate it on a phone.\n\n")
	}
	if len(notes) > 0 {
		b.WriteString(strings.Join(notes, "\n") + "\n\n")
	}
}

func speedRow(r *report.Report, file string, run speed.Run) string {
	if run.RunnerError != "" {
		return fmt.Sprintf("| `%s` | %s | %s | runner error: %s | | | |", file, cacheKind(r), run.Name, run.RunnerError)
	}
	return fmt.Sprintf("| `%s` | %s | %s (%d tokens) | %.1f tokens/s | %s | %.2f s | %.0f MB |", file, cacheKind(r), run.Name,
		run.PromptTokens, run.PrefillTokPerSec, run.Decode(), run.FirstTokenSeconds, float64(r.Speed.RSSAfterLoadBytes)/1e6)
}

// speedFile is the report's program, as the files table names it.
func speedFile(r *report.Report) string {
	for _, f := range r.Files {
		if strings.HasSuffix(f.Path, ".pte") {
			return f.Path
		}
	}
	return path.Base(r.OutputRepo)
}

func keys(m map[string]bool) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
