// Package mtkoverlay holds what the pinned ExecuTorch's examples/mediatek lacks for the families
// exe-expo exports to MediaTek without a stock script: LFM2's model definition
// (configuration_lfm2.py, modeling_lfm2.py), its export script (lfm2.py), and the two
// lines that let the stock helpers find them (lfm2 among sanity_checks.py's supported
// models, and in utils.py's model-class lookup). The Python files are ours, embedded here,
// written after the layout of ExecuTorch's qwen scripts and keeping their license header.
//
// Apply lays the overlay over a copy of the user's examples/mediatek in the export's work
// folder, never over the user's tree: the same tree then serves every export, a failed
// export leaves it as it was, and the scripts' outputs (pte/, the embedding table, Python
// caches) land in the work folder that export cleans up. A patch applies only to the file
// it was written against: each target's sha256 must be the pinned release's, else Apply
// and Check refuse the tree, naming the file.
package mtkoverlay

import (
	"embed"
	"fmt"
	"io/fs"
	"slices"
	"sort"
	"strings"

	"github.com/experimentalmachines/exe-expo/internal/model"
	"github.com/experimentalmachines/exe-expo/internal/pinned"
)

//go:embed files
var files embed.FS

// Family is what the overlay adds for one family: the export script, and the model_type
// the patched helpers map to its model definition.
type Family struct {
	Key       string
	Script    string
	ModelType string
	// ConvKernel, when set, is the only conv_L_cache the model definition builds.
	ConvKernel int64
}

// families are the families the overlay enables; the test applies the overlay to
// the pinned release's files and imports every script and model definition named here.
var families = []Family{
	{Key: "lfm2", Script: "lfm2.py", ModelType: "lfm2", ConvKernel: 3},
}

// stockScripts are the LLM export scripts the pinned ExecuTorch ships in
// examples/mediatek/model_export_scripts (the rest there are vision and speech models).
var stockScripts = []string{"gemma.py", "llama.py", "phi.py", "qwen.py", "whisper.py"}

// For returns the overlay's entry for a family key; ok is false for a family the overlay
// does not enable, whose MediaTek export then needs a stock script.
func For(family string) (Family, bool) {
	for _, f := range families {
		if f.Key == family {
			return f, true
		}
	}
	return Family{}, false
}

// Families lists the family keys the overlay enables, sorted: the families MediaTek takes
// only because of it.
func Families() []string {
	var keys []string
	for _, f := range families {
		keys = append(keys, f.Key)
	}
	sort.Strings(keys)
	return keys
}

// Stock reports whether the pinned ExecuTorch ships the export script itself, in which case
// the export runs it unpatched.
func Stock(script string) bool { return slices.Contains(stockScripts, script) }

// Support says whether a family's MediaTek export with script can run on the pinned
// ExecuTorch with this overlay: "" when it ships the script or the overlay adds it for the family
// and its model definition builds the model's features, else the refusal. Plan offers
// MediaTek only where this is "", so it never offers what export cannot run.
func Support(family, script string, ft model.Features) string {
	if Stock(script) {
		return ""
	}
	f, ok := For(family)
	if !ok || f.Script != script {
		return fmt.Sprintf("%s has no %s, and exe-expo's overlay adds none for %s", pinned.Say("mediatek.stock-scripts"), script, family)
	}
	if f.ConvKernel != 0 && ft.ConvLCache != 0 && ft.ConvLCache != f.ConvKernel {
		return fmt.Sprintf("conv_L_cache is %d, and the MediaTek %s model builds its short convolution with a kernel of %d", ft.ConvLCache, family, f.ConvKernel)
	}
	return ""
}

// Files lists the paths, relative to examples/mediatek, that the overlay writes for a
// family (the files it adds, then the files it patches; none for a family it does not
// enable), so the export report can say which files of the run were not ExecuTorch's.
// The overlay is one set of files: every family it enables gets all of them.
func Files(family string) []string {
	if _, ok := For(family); !ok {
		return nil
	}
	var out []string
	fs.WalkDir(files, "files", func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			out = append(out, strings.TrimPrefix(p, "files/"))
		}
		return err
	})
	for _, p := range patches {
		out = append(out, p.path)
	}
	return out
}
