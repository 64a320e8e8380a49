package mtkoverlay

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/experimentalmachines/exe-expo/internal/fileutil"
	"github.com/experimentalmachines/exe-expo/internal/pinned"
)

// copied are the folders of examples/mediatek the LLM scripts import or read (helpers,
// prompts, templates, model definitions, the scripts); skipped holds what is never needed
// and may be large: example weights and the outputs of earlier runs.
var (
	copied  = []string{"aot_utils", "models", "model_export_scripts"}
	skipped = []string{filepath.Join("models", "llm_models", "weights"), "__pycache__"}
)

// patch is one stock file the overlay edits: the sha256 of the pinned release's blob, and
// edits that each replace text occurring exactly once in it.
type patch struct {
	path   string // relative to examples/mediatek
	sha256 string
	edits  []edit
}

type edit struct{ old, new string }

// patches are the overlay's edits to the pinned release's helpers: lfm2 among the supported models,
// and LFM2's config and chunk classes in the lookups by model_type. The tokenizer needs no
// edit: Lfm2Config asks for the stock "pretrained_fast" one.
var patches = []patch{
	{
		path:   "aot_utils/llm_utils/sanity_checks.py",
		sha256: "1e4a2ad515581d95b9f7e23429c971b2ca213b805cd0ff81808ba3cda6f158f4",
		edits: []edit{{
			old: "        \"gemma3\",\n        \"whisper\",\n    ]\n",
			new: "        \"gemma3\",\n        \"whisper\",\n        \"lfm2\",  # exe-expo overlay\n    ]\n",
		}},
	},
	{
		path:   "aot_utils/llm_utils/utils.py",
		sha256: "4354436110605d1cf51115008cef5b75930fa853ec6cf9b8005c07567cfd252b",
		edits: []edit{
			{ // resolve_model_classes
				old: "            from models.llm_models.modeling_gemma import Gemma3ModelChunk as chunk_class\n    else:\n",
				new: "            from models.llm_models.modeling_gemma import Gemma3ModelChunk as chunk_class\n" +
					"        elif config_file[\"model_type\"] == \"lfm2\":  # exe-expo overlay\n" +
					"            from models.llm_models.configuration_lfm2 import Lfm2Config as config_class\n" +
					"            from models.llm_models.modeling_lfm2 import Lfm2ModelChunk as chunk_class\n" +
					"    else:\n",
			},
			{ // get_normalized_config
				old: "        elif config_file[\"model_type\"] in [\"gemma1\", \"gemma2\", \"gemma3\"]:\n" +
					"            from models.llm_models.configuration_gemma import (\n" +
					"                GemmaConfig as config_class,\n" +
					"            )\n    else:\n",
				new: "        elif config_file[\"model_type\"] in [\"gemma1\", \"gemma2\", \"gemma3\"]:\n" +
					"            from models.llm_models.configuration_gemma import (\n" +
					"                GemmaConfig as config_class,\n" +
					"            )\n" +
					"        elif config_file[\"model_type\"] == \"lfm2\":  # exe-expo overlay\n" +
					"            from models.llm_models.configuration_lfm2 import Lfm2Config as config_class\n" +
					"    else:\n",
			},
		},
	},
}

// Check refuses an examples/mediatek folder whose files the family's overlay patches are
// not the pinned ExecuTorch's, or are missing; it writes nothing. A stock family passes.
func Check(examples, family string) error {
	if _, ok := For(family); !ok {
		return nil
	}
	for _, p := range patches {
		if _, err := p.source(examples); err != nil {
			return err
		}
	}
	return nil
}

// Apply copies the folders of examples the scripts read into to (replacing whatever was
// there), then, when the family needs it, writes the overlay's files and patches the
// stock ones in the copy. examples itself is only read.
func Apply(examples, to, family string) error {
	if err := Check(examples, family); err != nil {
		return err
	}
	if err := apart(examples, to); err != nil {
		return err
	}
	if err := os.RemoveAll(to); err != nil {
		return fileutil.Error("clear", to, err)
	}
	for _, dir := range copied {
		if err := copyTree(filepath.Join(examples, dir), filepath.Join(to, dir)); err != nil {
			return err
		}
	}
	if err := os.MkdirAll(to, 0o755); err != nil {
		return fileutil.Error("create", to, err)
	}
	if _, ok := For(family); !ok {
		return nil
	}
	if err := writeFiles(to); err != nil {
		return err
	}
	for _, p := range patches {
		if err := p.apply(examples, to); err != nil {
			return err
		}
	}
	return nil
}

// source reads the stock file the patch edits and checks it is the pinned release's.
func (p patch) source(examples string) (string, error) {
	path := filepath.Join(examples, filepath.FromSlash(p.path))
	b, err := os.ReadFile(path)
	if err != nil {
		return "", fileutil.Error("read", path, err)
	}
	sum := sha256.Sum256(b)
	if got := hex.EncodeToString(sum[:]); got != p.sha256 {
		return "", fmt.Errorf("%s is not the file of %s (sha256 %s, expected %s): exe-expo's MediaTek overlay patches that version of the file only, so give the source tree of %s (config/versions.env's EXECUTORCH_COMMIT)", path, pinned.Say("mediatek.stock-scripts"), got[:12], p.sha256[:12], pinned.ExecuTorch())
	}
	return string(b), nil
}

// apply writes the patched file into to.
func (p patch) apply(examples, to string) error {
	s, err := p.source(examples)
	if err != nil {
		return err
	}
	for _, e := range p.edits {
		// the hash pins the text, so this only fails if an edit was written wrong
		if n := strings.Count(s, e.old); n != 1 {
			return fmt.Errorf("overlay patch of %s: the text to replace occurs %d times, not once", p.path, n)
		}
		s = strings.Replace(s, e.old, e.new, 1)
	}
	dst := filepath.Join(to, filepath.FromSlash(p.path))
	if err := os.WriteFile(dst, []byte(s), 0o644); err != nil {
		return fileutil.Error("write", dst, err)
	}
	return nil
}

// writeFiles writes the embedded files under to, replacing any copied file of that name.
func writeFiles(to string) error {
	return fs.WalkDir(files, "files", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := files.ReadFile(p)
		if err != nil {
			return err
		}
		dst := filepath.Join(to, filepath.FromSlash(strings.TrimPrefix(p, "files/")))
		if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
			return fileutil.Error("create", filepath.Dir(dst), err)
		}
		if err := os.WriteFile(dst, b, 0o644); err != nil {
			return fileutil.Error("write", dst, err)
		}
		return nil
	})
}

// apart refuses a copy that would land inside the tree it copies, or hold it: clearing
// the destination must never touch the user's files.
func apart(from, to string) error {
	a, err := filepath.Abs(from)
	if err != nil {
		return fileutil.Error("resolve", from, err)
	}
	b, err := filepath.Abs(to)
	if err != nil {
		return fileutil.Error("resolve", to, err)
	}
	if within(a, b) || within(b, a) {
		return fmt.Errorf("the MediaTek scripts' copy %s and ExecuTorch's %s overlap: the work folder must lie outside the ExecuTorch tree", to, from)
	}
	return nil
}

func within(dir, p string) bool {
	rel, err := filepath.Rel(dir, p)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator))
}

// copyTree copies the regular files and folders under from into to; a missing from copies
// nothing (a tree without the folder fails in the script, which names what it misses).
func copyTree(from, to string) error {
	return filepath.WalkDir(from, func(p string, d fs.DirEntry, err error) error {
		if errors.Is(err, fs.ErrNotExist) && p == from {
			return nil
		}
		if err != nil {
			return fileutil.Error("read", p, err)
		}
		rel, _ := filepath.Rel(from, p) // p is under from
		if d.IsDir() && skip(filepath.Join(filepath.Base(from), rel)) {
			return filepath.SkipDir
		}
		dst := filepath.Join(to, rel)
		switch {
		case d.IsDir():
			if err := os.MkdirAll(dst, 0o755); err != nil {
				return fileutil.Error("create", dst, err)
			}
		case d.Type().IsRegular():
			return copyFile(p, dst)
		}
		return nil
	})
}

func skip(rel string) bool {
	for _, s := range skipped {
		if rel == s || filepath.Base(rel) == s {
			return true
		}
	}
	return false
}

func copyFile(src, dst string) error {
	in, err := os.Open(src)
	if err != nil {
		return fileutil.Error("read", src, err)
	}
	defer in.Close()
	out, err := os.Create(dst)
	if err != nil {
		return fileutil.Error("create", dst, err)
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return fileutil.Error("copy", src, err)
	}
	if err := out.Close(); err != nil {
		return fileutil.Error("write", dst, err)
	}
	return nil
}
