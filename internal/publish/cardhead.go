package publish

import (
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/experimentalmachines/exe-expo/internal/runtimecompat"
)

// hubURL is where the card links models; the Hub serves the same page under any mirror.
const hubURL = "https://huggingface.co/"

// baseTags are the tags every published repo carries, beside its backend folders.
var baseTags = []string{"android", "executorch", "on-device", "openweights"}

// loadsOn says, for each ExecuTorch release the files were made with, the runtimes that
// load them without a warning (internal/runtimecompat): "made with ExecuTorch 2.3.1, they
// load on 2.3.1 to 2.4.x".
func loadsOn(rs []placed) string {
	var made []string
	for _, p := range rs {
		if v := p.Report.Toolchain["executorch"]; !slices.Contains(made, v) {
			made = append(made, v)
		}
	}
	sort.Strings(made)
	var out []string
	for _, v := range made {
		if r, err := runtimecompat.LoadsOn(v); err == nil {
			out = append(out, fmt.Sprintf("made with ExecuTorch %s, they load on %s", v, r))
		} else {
			out = append(out, "made with ExecuTorch "+v)
		}
	}
	return strings.Join(out, "; ")
}

func frontMatter(b *strings.Builder, rs []placed) {
	l := rs[0].Report.Source.License
	b.WriteString("---\n")
	for _, kv := range [][2]string{{"license", l.License}, {"license_name", l.LicenseName}, {"license_link", l.LicenseLink}} {
		if kv[1] != "" {
			fmt.Fprintf(b, "%s: %s\n", kv[0], kv[1])
		}
	}
	fmt.Fprintf(b, "base_model:\n- %s\nbase_model_relation: quantized\nlibrary_name: executorch\npipeline_tag: text-generation\ntags:\n", rs[0].Report.Source.ID)
	tags := append([]string(nil), baseTags...)
	for _, p := range rs {
		tags = append(tags, strings.Split(p.Path, "/")[0])
	}
	sort.Strings(tags)
	for i, t := range tags {
		if i == 0 || tags[i-1] != t {
			fmt.Fprintf(b, "- %s\n", t)
		}
	}
	b.WriteString("---\n\n")
}

// revisions names the source revision(s) the files were built from.
func revisions(rs []placed) string {
	var shas []string
	for _, p := range rs {
		if s := short(p.Report.Source.SHA); s != "" && !contains(shas, s) {
			shas = append(shas, s)
		}
	}
	switch len(shas) {
	case 0:
		return "revision unknown"
	case 1:
		return "revision `" + shas[0] + "`"
	}
	return "revisions `" + strings.Join(shas, "`, `") + "`; see each variant's `source_revision`"
}

func short(sha string) string {
	if len(sha) > 12 {
		return sha[:12]
	}
	return sha
}
