package publish

import (
	"fmt"
	"strings"

	"github.com/experimentalmachines/exe-expo/internal/backend"
	"github.com/experimentalmachines/exe-expo/internal/report"
)

func memory(b *strings.Builder, rs []placed) {
	var lines []string
	for _, p := range rs {
		r := p.Report
		kv := kvPerToken(r)
		if kv == nil {
			continue
		}
		per, n := *kv, int64(r.Window.Context)
		lines = append(lines, fmt.Sprintf("- %s at %s tokens: the KV cache costs %s bytes per token (%s), %s bytes for the whole window, allocated in full when the model loads.",
			title(r), thousands(n), thousands(per), cacheKind(r), thousands(per*n)))
	}
	if len(lines) == 0 {
		return
	}
	b.WriteString("## Memory\n\n" + strings.Join(lines, "\n") + "\n\n")
}

// cacheKind is how a file keeps its KV cache as its recipe recorded it; a report from
// before the recipe recorded it had the cache its backend's card names (the NPU backends
// keep their own 16-bit ones), else the only cache export_llm files then had, fp32.
func cacheKind(r *report.Report) string {
	if kv := recordedCache(r); kv != "" {
		return kv
	}
	if b := backend.ByName(r.Backend); b != nil && b.Card.KVCache != "" {
		return b.Card.KVCache
	}
	return "fp32"
}

// recordedCache is the KV cache the export's recipe recorded (kv_cache_dtype), "" for an
// NPU backend's report or one from before it was recorded.
func recordedCache(r *report.Report) string {
	kv, _ := r.Recipe["kv_cache_dtype"].(string)
	return kv
}

// kvPerToken is the KV cache's bytes per token as the structural check read it back from
// the file, or, for a report from before it was read, the size model's figure; nil for the
// NPU backends.
func kvPerToken(r *report.Report) *int64 {
	for _, c := range r.StructuralCheck {
		if c.KVCache != nil {
			per := c.KVCache.BytesPerToken
			return &per
		}
	}
	return r.Window.KVBytesPerToken
}
