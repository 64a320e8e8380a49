package export

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/experimentalmachines/exe-expo/pkg/family"
	"github.com/experimentalmachines/exe-expo/pkg/model"
	"github.com/experimentalmachines/exe-expo/pkg/plan"
	"github.com/experimentalmachines/exe-expo/pkg/report"
	"github.com/experimentalmachines/exe-expo/pkg/source"
)

// InputError is a request the export refuses before doing any work: a missing or
// impossible flag, a file it cannot read, a folder it cannot write. Flag names the option
// as the CLI spells it ("context", "soc"; empty for the MODEL argument), so a caller can
// point at it; the message is a sentence that already names it.
type InputError struct {
	Flag string
	Msg  string
}

func (e *InputError) Error() string { return e.Msg }

func inputErr(flag, format string, args ...any) *InputError {
	return &InputError{Flag: flag, Msg: fmt.Sprintf(format, args...)}
}

// Backends are the export's backends, in the order the messages list them.
var Backends = []string{"xnnpack", "vulkan", "qnn", "mediatek"}

// Validate checks the request against the configuration and this host before anything
// runs, so that a mistyped flag costs a second, not a download and a conversion. It
// fills the defaults (absolute folders, revision, python) and creates --out and --work
// when they are missing, proving each writable; Run removes what it created if the
// export then fails. The window's fit with the model is checked once its config.json is
// read (checkModelWindow).
func (o *Options) Validate() error {
	for _, check := range []func() error{o.checkBackend, o.checkSoC, o.checkQuant, o.checkWindow, o.checkTimeout, o.checkModel, o.checkTools} {
		if err := check(); err != nil {
			return err
		}
	}
	return o.checkFolders()
}

func (o *Options) checkBackend() error {
	switch {
	case o.Backend == "":
		return inputErr("backend", "--backend is required: one of %s", strings.Join(Backends, ", "))
	case !slices.Contains(Backends, o.Backend):
		return inputErr("backend", "--backend %s is not one of %s", o.Backend, strings.Join(Backends, ", "))
	}
	return nil
}

// checkSoC takes the chips configured for the backend, the very list plan prints, so
// that export builds no chip that plan does not offer.
func (o *Options) checkSoC() error {
	var chips []string
	var vendor, key string
	switch o.Backend {
	case "qnn":
		chips, vendor, key = o.Config.Export.QNN.SoCs, "Qualcomm", "export.qnn.socs"
	case "mediatek":
		chips, vendor, key = o.Config.Export.MediaTek.SoCs, "MediaTek", "export.mediatek.socs"
	default:
		if o.SoC != "" {
			return inputErr("soc", "--soc %s does not apply to %s: only qnn and mediatek files are built per chip", o.SoC, o.Backend)
		}
		return nil
	}
	if o.SoC == "" {
		return inputErr("soc", "--soc is required for %s: one of %s (%s in pipeline.yaml)", o.Backend, strings.Join(chips, ", "), key)
	}
	for _, c := range chips {
		if strings.EqualFold(c, o.SoC) {
			o.SoC = c
			return nil
		}
	}
	return inputErr("soc", "--soc %s is not a %s chip configured for export: the configured ones are %s (%s in pipeline.yaml)", o.SoC, vendor, strings.Join(chips, ", "), key)
}

// checkQuant checks --qmode and --codes, which only the export_llm recipes take.
func (o *Options) checkQuant() error {
	llm := o.Backend == "xnnpack" || o.Backend == "vulkan"
	switch {
	case o.QMode != "" && !llm:
		return inputErr("qmode", "--qmode applies to xnnpack and vulkan; the %s recipe's precision is fixed in pipeline.yaml", o.Backend)
	case o.QMode != "" && o.QMode != "8da4w" && o.QMode != "fp32":
		return inputErr("qmode", "--qmode %s is not one the recipes know: 8da4w or fp32", o.QMode)
	case o.Codes == "":
		return nil
	case !llm:
		return inputErr("codes", "--codes applies to xnnpack and vulkan, not %s", o.Backend)
	case o.QMode == "fp32":
		return inputErr("codes", "--codes holds int4 GPTQ codes, and --qmode fp32 quantizes nothing")
	}
	f, err := os.Open(o.Codes)
	if err != nil {
		return inputErr("codes", "--codes %s cannot be read: %s", o.Codes, report.Reason(err))
	}
	defer f.Close()
	if st, err := f.Stat(); err != nil || st.IsDir() {
		return inputErr("codes", "--codes %s is not a file: give the codes file of the GPTQ solve", o.Codes)
	}
	return nil
}

// checkWindow takes 0 (automatic) or one of the backend's configured windows, the ones
// plan prints.
func (o *Options) checkWindow() error {
	ws := plan.Windows(o.Config, o.Backend)
	if o.Window == 0 || slices.Contains(ws, o.Window) {
		return nil
	}
	list := make([]string, len(ws))
	for i, w := range ws {
		list[i] = strconv.Itoa(w)
	}
	if o.Window < 0 {
		return inputErr("context", "--context %d is negative: leave it out (or give 0) for the automatic window, or give one of %s", o.Window, strings.Join(list, ", "))
	}
	return inputErr("context", "--context %d is not a configured window for %s: give one of %s (export.context_tiers in pipeline.yaml)", o.Window, o.Backend, strings.Join(list, ", "))
}

func (o *Options) checkTimeout() error {
	if o.Timeout < 0 {
		return inputErr("timeout", "--timeout %s is negative: give a duration such as 90m, or 0 for no limit", o.Timeout)
	}
	return nil
}

// checkModel tells a local folder from a Hub id before either is opened.
func (o *Options) checkModel() error {
	if o.Revision == "" {
		o.Revision = "main"
	}
	if o.ID != "" && !model.ValidID(o.ID) {
		return inputErr("id", "--id %q is not a Hugging Face model id (org/name)", o.ID)
	}
	if source.IsDir(o.Model) {
		dir, err := filepath.Abs(o.Model)
		if err != nil {
			return inputErr("", "model folder %s: %v", o.Model, err)
		}
		o.srcDir = dir
		return nil
	}
	if !model.ValidID(o.Model) {
		return inputErr("", "%q is neither a local model folder nor a Hugging Face model id (org/name)", o.Model)
	}
	if o.ID != "" {
		return inputErr("id", "--id names the Hub id of a local model folder, and %s is a Hub id already", o.Model)
	}
	if o.Fetcher == nil {
		return inputErr("", "%s is a Hub id and this export has no Hub client to download it with: give a local model folder", o.Model)
	}
	return nil
}

// checkTools finds the pythons and the ExecuTorch source tree the backend's recipe runs.
func (o *Options) checkTools() error {
	et := o.Config.Versions.ExecuTorch
	if o.Backend == "mediatek" {
		if o.MTKPython == "" {
			return inputErr("mtk-python", "--mtk-python is required for mediatek: the python of the NeuroPilot tool virtualenv (or MTK_PYTHON)")
		}
		if _, err := exec.LookPath(o.MTKPython); err != nil {
			return inputErr("mtk-python", "--mtk-python %s cannot be run (%s): point --mtk-python or MTK_PYTHON at the NeuroPilot tool virtualenv's python", o.MTKPython, lookReason(err))
		}
		if o.ExecuTorch == "" {
			return inputErr("executorch", "--executorch is required for mediatek: an ExecuTorch %s source tree, whose examples/mediatek holds the export scripts (or EXECUTORCH_SRC)", et)
		}
		if !source.IsDir(filepath.Join(o.ExecuTorch, "examples", "mediatek")) {
			return inputErr("executorch", "--executorch %s has no examples/mediatek folder: give an ExecuTorch %s source tree (or EXECUTORCH_SRC)", o.ExecuTorch, et)
		}
		return nil
	}
	if o.Python == "" {
		o.Python = "python3"
	}
	if _, err := exec.LookPath(o.Python); err != nil {
		return inputErr("python", "--python %s cannot be run (%s): point --python or EXE_EXPO_PYTHON at a python with ExecuTorch %s", o.Python, lookReason(err), et)
	}
	if o.ExecuTorch != "" && !source.IsDir(o.ExecuTorch) {
		return inputErr("executorch", "--executorch %s is not a folder: give an ExecuTorch %s source tree (or EXECUTORCH_SRC)", o.ExecuTorch, et)
	}
	return nil
}

func lookReason(err error) string {
	var ee *exec.Error
	if errors.As(err, &ee) {
		if errors.Is(ee.Err, exec.ErrNotFound) {
			return "not found on PATH"
		}
		return report.Reason(ee.Err)
	}
	return report.Reason(err)
}

// checkFolders makes --out and --work absolute, distinct and writable, creating each
// when missing (and recording that, for the clean-up of a failed export).
func (o *Options) checkFolders() error {
	for _, f := range []struct {
		flag string
		dir  *string
	}{{"out", &o.Out}, {"work", &o.Work}} {
		if *f.dir == "" {
			return inputErr(f.flag, "--%s is required", f.flag)
		}
		abs, err := filepath.Abs(*f.dir)
		if err != nil {
			return inputErr(f.flag, "--%s %s: %v", f.flag, *f.dir, err)
		}
		*f.dir = abs
	}
	if o.Work == o.Out {
		return inputErr("work", "--work and --out must differ: the work folder is removed after a success")
	}
	if inside(o.Out, o.Work) {
		return inputErr("work", "--work %s is inside --out %s: the work folder would be published", o.Work, o.Out)
	}
	if inside(o.Work, o.Out) {
		return inputErr("out", "--out %s is inside --work %s: the work folder is removed after a success", o.Out, o.Work)
	}
	var err error
	if o.madeOut, err = writable("out", o.Out); err != nil {
		return err
	}
	if o.madeWork, err = writable("work", o.Work); err != nil {
		return err
	}
	if o.srcDir == "" {
		o.srcDir = filepath.Join(o.Work, "source")
	}
	return nil
}

// inside reports whether dir lies under parent.
func inside(parent, dir string) bool {
	rel, err := filepath.Rel(parent, dir)
	return err == nil && rel != "." && !strings.HasPrefix(rel, "..")
}

// writable creates dir when it is missing (made reports that) and proves it writable by
// creating and removing a file in it.
func writable(flag, dir string) (made bool, err error) {
	if _, err := os.Stat(dir); errors.Is(err, os.ErrNotExist) {
		made = true
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return false, inputErr(flag, "--%s %s cannot be created: %s", flag, dir, report.Reason(err))
	}
	f, err := os.CreateTemp(dir, ".exe-expo-write-check-*")
	if err != nil {
		return made, inputErr(flag, "--%s %s is not writable: %s", flag, dir, report.Reason(err))
	}
	f.Close()
	os.Remove(f.Name())
	return made, nil
}

// checkModelWindow holds the window to the model's max_position_embeddings, once its
// config.json is read: a window past what the model was trained for would export, and
// then generate nonsense past that point.
func (o *Options) checkModelWindow(src *model.Source) error {
	if limit := modelLimit(src); limit > 0 && int64(o.Window) > limit {
		return inputErr("context", "--context %d is over %s's %s-token limit (max_position_embeddings in its config.json)", o.Window, src.ID, family.Commas(limit))
	}
	return nil
}

// modelLimit is the model's max_position_embeddings; 0 when its config.json has none, or
// says something no model can (which Load refused, and the architecture read refuses).
func modelLimit(src *model.Source) int64 {
	f, err := model.FeaturesOf(src.Config)
	if err != nil {
		return 0
	}
	return f.MaxPositions
}
