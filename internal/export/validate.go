package export

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/experimentalmachines/exe-expo/internal/backend"
	"github.com/experimentalmachines/exe-expo/internal/config"
	"github.com/experimentalmachines/exe-expo/internal/drivers"
	"github.com/experimentalmachines/exe-expo/internal/family"
	"github.com/experimentalmachines/exe-expo/internal/model"
	"github.com/experimentalmachines/exe-expo/internal/option"
	"github.com/experimentalmachines/exe-expo/internal/report"
	"github.com/experimentalmachines/exe-expo/internal/source"
)

// Field is an option of the export request, named as its Options field ("SoC", "Window"):
// export's refusals name options by Field, and each front end words them its own way (the
// CLI as its flags: --soc, --context).
type Field = option.Field

// The fields a refusal can be about; FieldModel is the MODEL argument.
const (
	FieldModel          Field = "Model"
	FieldID             Field = "ID"
	FieldBackend        Field = "Backend"
	FieldSoC            Field = "SoC"
	FieldWindow         Field = "Window"
	FieldQMode          Field = "QMode"
	FieldCodes          Field = "Codes"
	FieldTimeout        Field = "Timeout"
	FieldPython         Field = "Python"
	FieldMTKPython      Field = "MTKPython"
	FieldExecuTorch     Field = "ExecuTorch"
	FieldOut            Field = "Out"
	FieldWork           Field = "Work"
	FieldFallback       Field = "Fallback"
	FieldCalibration    Field = "Calibration"
	FieldCalibrateOnly  Field = "CalibrateOnly"
	FieldCalibrationOut Field = "CalibrationOut"
)

// InputError is a request the export refuses before doing any work: a missing or
// impossible option, a file it cannot read, a folder it cannot write. Field is the option
// to fix, so a caller can point at it.
type InputError = option.Refusal

// refuse is an *InputError about field; args that are Fields are option names.
var refuse = option.Refuse

// Validate checks the request against the configuration and this host before anything
// runs, so that a mistyped option costs a second, not a download and a conversion. It
// fills the defaults (absolute folders, revision, python) and creates Out and Work
// when they are missing, proving each writable; Run removes what it created if the
// export then fails. The window's fit with the model is checked once its config.json is
// read (checkModelWindow).
func (o *Options) Validate() error {
	for _, check := range []func() error{o.checkBackend, o.checkSoC, o.checkFallback, o.checkQuant, o.checkCalibration, o.checkWindow, o.checkTimeout, o.checkModel, o.checkTools} {
		if err := check(); err != nil {
			return err
		}
	}
	return o.checkFolders()
}

// checkCalibration checks the shared calibration's options: a file to build from, or a
// calibrate-only run that writes one (at the backend's calibration window, which it sets).
func (o *Options) checkCalibration() error {
	b := o.spec()
	switch {
	case o.Calibration == "" && !o.CalibrateOnly && o.CalibrationOut == "":
		return nil
	case b.Calibration == nil:
		return refuse(FieldCalibration, "%s, %s and %s apply to %s, whose recipe can calibrate once per model and chip, not to %s", FieldCalibration, FieldCalibrateOnly, FieldCalibrationOut, strings.Join(backend.ExportableWhere(func(b *backend.Backend) bool { return b.Calibration != nil }), " and "), o.Backend)
	case o.CalibrateOnly != (o.CalibrationOut != ""):
		return refuse(FieldCalibrateOnly, "%s and %s go together: a calibrate-only export writes its calibration to that file", FieldCalibrateOnly, FieldCalibrationOut)
	case o.CalibrateOnly && o.Calibration != "":
		return refuse(FieldCalibration, "%s builds a window from a calibration, and %s makes one: give one of them", FieldCalibration, FieldCalibrateOnly)
	case o.CalibrateOnly && o.Fallback != "":
		return refuse(FieldCalibrateOnly, "%s builds no file, so there is no %s window to build", FieldCalibrateOnly, FieldFallback)
	case o.Calibration != "":
		f, err := os.Stat(o.Calibration)
		if err != nil {
			return refuse(FieldCalibration, "%s %s cannot be read: %s", FieldCalibration, o.Calibration, report.Reason(err))
		}
		if f.IsDir() {
			return refuse(FieldCalibration, "%s %s is a folder: give the file a calibrate-only export wrote", FieldCalibration, o.Calibration)
		}
		abs, err := filepath.Abs(o.Calibration) // the tool runs in the work folder
		if err != nil {
			return refuse(FieldCalibration, "%s %s: %s", FieldCalibration, o.Calibration, report.Reason(err))
		}
		o.Calibration = abs
		return nil
	}
	w := b.Calibration.Window(o.Config)
	if w == 0 {
		return refuse(FieldCalibrateOnly, "%s calibrates at export.%s.calib_window, which is 0 in pipeline.yaml", FieldCalibrateOnly, o.Backend)
	}
	if o.Window != 0 && o.Window != w {
		return refuse(FieldWindow, "%s %d: %s calibrates at export.%s.calib_window (%d), the window every longer one is built from; leave %s out", FieldWindow, o.Window, FieldCalibrateOnly, o.Backend, w, FieldWindow)
	}
	o.Window = w
	abs, err := filepath.Abs(o.CalibrationOut)
	if err != nil {
		return refuse(FieldCalibrationOut, "%s %s: %s", FieldCalibrationOut, o.CalibrationOut, report.Reason(err))
	}
	if st, err := os.Stat(abs); err == nil && st.IsDir() {
		return refuse(FieldCalibrationOut, "%s %s is a folder: give the file to write", FieldCalibrationOut, o.CalibrationOut)
	}
	if work, err := filepath.Abs(o.Work); err == nil && o.Work != "" && (filepath.Dir(abs) == work || inside(work, abs)) {
		return refuse(FieldCalibrationOut, "%s %s is inside %s %s, which is removed after a success", FieldCalibrationOut, o.CalibrationOut, FieldWork, o.Work)
	}
	if _, err := writable(FieldCalibrationOut, filepath.Dir(abs)); err != nil {
		return err
	}
	o.CalibrationOut = abs
	return nil
}

func (o *Options) checkBackend() error {
	names := strings.Join(backend.NamesOf(backend.Exportable()), ", ")
	switch b := o.spec(); {
	case o.Backend == "":
		return refuse(FieldBackend, "%s is required: one of %s", FieldBackend, names)
	case b == nil || b.Recipe == nil:
		return refuse(FieldBackend, "%s %s is not one of %s", FieldBackend, o.Backend, names)
	}
	return nil
}

// checkSoC takes the chips configured for the backend, the very list plan prints, so
// that export builds no chip that plan does not offer.
func (o *Options) checkSoC() error {
	chips := o.spec().Chips
	if chips == nil {
		if o.SoC != "" {
			return refuse(FieldSoC, "%s %s does not apply to %s: only %s files are built per chip", FieldSoC, o.SoC, o.Backend, strings.Join(perChip(), " and "))
		}
		return nil
	}
	list := chips.List(o.Config)
	if o.SoC == "" {
		return refuse(FieldSoC, "%s is required for %s: one of %s (%s in pipeline.yaml)", FieldSoC, o.Backend, strings.Join(list, ", "), chips.Key)
	}
	for _, c := range list {
		if strings.EqualFold(c, o.SoC) {
			o.SoC = c
			return nil
		}
	}
	return refuse(FieldSoC, "%s %s is not a %s chip configured for export: the configured ones are %s (%s in pipeline.yaml)", FieldSoC, o.SoC, chips.Vendor, strings.Join(list, ", "), chips.Key)
}

// perChip names the backends whose files are built per chip.
func perChip() []string {
	return backend.ExportableWhere(func(b *backend.Backend) bool { return b.Chips != nil })
}

// checkQuant checks QMode and Codes, which only the export_llm recipes take.
func (o *Options) checkQuant() error {
	llm := o.spec().LLM
	llms := strings.Join(backend.LLMNames(), " and ")
	switch {
	case o.QMode != "" && !llm:
		return refuse(FieldQMode, "%s applies to %s; the %s recipe's precision is fixed in pipeline.yaml", FieldQMode, llms, o.Backend)
	case o.QMode != "" && !config.KnownQMode(o.QMode):
		return refuse(FieldQMode, "%s %s is not one the recipes know: %s", FieldQMode, o.QMode, strings.Join(config.QModes(), " or "))
	case o.Codes == "":
		return nil
	case !llm:
		return refuse(FieldCodes, "%s applies to %s, not %s", FieldCodes, llms, o.Backend)
	case o.QMode == "fp32":
		return refuse(FieldCodes, "%s holds int4 GPTQ codes, and %s fp32 quantizes nothing", FieldCodes, FieldQMode)
	}
	f, err := os.Open(o.Codes)
	if err != nil {
		return refuse(FieldCodes, "%s %s cannot be read: %s", FieldCodes, o.Codes, report.Reason(err))
	}
	defer f.Close()
	if st, err := f.Stat(); err != nil || st.IsDir() {
		return refuse(FieldCodes, "%s %s is not a file: give the codes file of the GPTQ solve", FieldCodes, o.Codes)
	}
	// The tool runs in the work folder, so a relative path (the workflow's codes/codes.pt)
	// would name nothing there.
	abs, err := filepath.Abs(o.Codes)
	if err != nil {
		return refuse(FieldCodes, "%s %s: %s", FieldCodes, o.Codes, report.Reason(err))
	}
	o.Codes = abs
	return nil
}

// checkWindow takes 0 (automatic) or one of the backend's configured windows, the ones
// plan prints.
func (o *Options) checkWindow() error {
	ws := o.spec().Windows(o.Config)
	if o.Window == 0 || slices.Contains(ws, o.Window) {
		return nil
	}
	list := make([]string, len(ws))
	for i, w := range ws {
		list[i] = strconv.Itoa(w)
	}
	if o.Window < 0 {
		return refuse(FieldWindow, "%s %d is negative: leave it out (or give 0) for the automatic window, or give one of %s", FieldWindow, o.Window, strings.Join(list, ", "))
	}
	return refuse(FieldWindow, "%s %d is not a configured window for %s: give one of %s (export.context_tiers in pipeline.yaml)", FieldWindow, o.Window, o.Backend, strings.Join(list, ", "))
}

func (o *Options) checkTimeout() error {
	if o.Timeout < 0 {
		return refuse(FieldTimeout, "%s %s is negative: give a duration such as 90m, or 0 for no limit", FieldTimeout, o.Timeout)
	}
	return nil
}

// checkModel tells a local folder from a Hub id before either is opened.
func (o *Options) checkModel() error {
	if o.Revision == "" {
		o.Revision = "main"
	}
	if o.ID != "" && !model.ValidID(o.ID) {
		return refuse(FieldID, "%s %q is not a Hugging Face model id (org/name)", FieldID, o.ID)
	}
	if source.IsDir(o.Model) {
		dir, err := filepath.Abs(o.Model)
		if err != nil {
			return refuse(FieldModel, "model folder %s: %v", o.Model, err)
		}
		o.srcDir = dir
		return nil
	}
	if !model.ValidID(o.Model) {
		return refuse(FieldModel, "%q is neither a local model folder nor a Hugging Face model id (org/name)", o.Model)
	}
	if o.ID != "" {
		return refuse(FieldID, "%s names the Hub id of a local model folder, and %s is a Hub id already", FieldID, o.Model)
	}
	if o.Fetcher == nil {
		return refuse(FieldModel, "%s is a Hub id and this export has no Hub client to download it with: give a local model folder", o.Model)
	}
	return nil
}

// checkSourceTree requires the ExecuTorch source tree and the folder of it the recipe runs.
func (o *Options) checkSourceTree(dir string) error {
	et := o.Config.Versions.ExecuTorch
	if dir == "" {
		return nil
	}
	if o.ExecuTorch == "" {
		return refuse(FieldExecuTorch, "%s is required for %s: an ExecuTorch %s source tree, whose %s holds the export scripts (or EXECUTORCH_SRC)", FieldExecuTorch, o.Backend, et, dir)
	}
	if !source.IsDir(filepath.Join(o.ExecuTorch, filepath.FromSlash(dir))) {
		return refuse(FieldExecuTorch, "%s %s has no %s folder: give an ExecuTorch %s source tree (or EXECUTORCH_SRC)", FieldExecuTorch, o.ExecuTorch, dir, et)
	}
	return nil
}

// checkTools finds the pythons and the ExecuTorch source tree the backend's recipe runs.
func (o *Options) checkTools() error {
	et := o.Config.Versions.ExecuTorch
	if tools := o.spec().Tools; tools.MTKPython {
		if o.MTKPython == "" {
			return refuse(FieldMTKPython, "%s is required for %s: the python of the NeuroPilot tool virtualenv (or MTK_PYTHON)", FieldMTKPython, o.Backend)
		}
		if _, err := exec.LookPath(o.MTKPython); err != nil {
			return refuse(FieldMTKPython, "%s %s cannot be run (%s): point %s or MTK_PYTHON at the NeuroPilot tool virtualenv's python", FieldMTKPython, o.MTKPython, drivers.LookReason(err), FieldMTKPython)
		}
		return o.checkSourceTree(tools.SourceTree)
	}
	if o.Python == "" {
		o.Python = "python3"
	}
	if _, err := exec.LookPath(o.Python); err != nil {
		return refuse(FieldPython, "%s %s cannot be run (%s): point %s or EXE_EXPO_PYTHON at a python with ExecuTorch %s", FieldPython, o.Python, drivers.LookReason(err), FieldPython, et)
	}
	if o.ExecuTorch != "" && !source.IsDir(o.ExecuTorch) {
		return refuse(FieldExecuTorch, "%s %s is not a folder: give an ExecuTorch %s source tree (or EXECUTORCH_SRC)", FieldExecuTorch, o.ExecuTorch, et)
	}
	return o.checkSourceTree(o.spec().Tools.SourceTree)
}

// checkFolders makes Out and Work absolute, distinct and writable, creating each
// when missing (and recording that, for the clean-up of a failed export).
func (o *Options) checkFolders() error {
	if err := absField(FieldOut, &o.Out); err != nil {
		return err
	}
	if err := absField(FieldWork, &o.Work); err != nil {
		return err
	}
	if o.Work == o.Out {
		return refuse(FieldWork, "%s and %s must differ: the work folder is removed after a success", FieldWork, FieldOut)
	}
	if inside(o.Out, o.Work) {
		return refuse(FieldWork, "%s %s is inside %s %s: the work folder would be published", FieldWork, o.Work, FieldOut, o.Out)
	}
	if inside(o.Work, o.Out) {
		return refuse(FieldOut, "%s %s is inside %s %s: the work folder is removed after a success", FieldOut, o.Out, FieldWork, o.Work)
	}
	var err error
	if o.madeOut, err = writable(FieldOut, o.Out); err != nil {
		return err
	}
	return o.checkWork()
}

// absField refuses an empty folder field and makes it absolute.
func absField(field Field, dir *string) error {
	if *dir == "" {
		return refuse(field, "%s is required", field)
	}
	abs, err := filepath.Abs(*dir)
	if err != nil {
		return refuse(field, "%s %s: %v", field, *dir, err)
	}
	*dir = abs
	return nil
}

// inside reports whether dir lies under parent.
func inside(parent, dir string) bool {
	rel, err := filepath.Rel(parent, dir)
	return err == nil && rel != "." && !strings.HasPrefix(rel, "..")
}

// writable creates dir when it is missing (made reports that) and proves it writable by
// creating and removing a file in it.
func writable(field Field, dir string) (made bool, err error) {
	if _, err := os.Stat(dir); errors.Is(err, os.ErrNotExist) {
		made = true
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return false, refuse(field, "%s %s cannot be created: %s", field, dir, report.Reason(err))
	}
	f, err := os.CreateTemp(dir, ".exe-expo-write-check-*")
	if err != nil {
		return made, refuse(field, "%s %s is not writable: %s", field, dir, report.Reason(err))
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
		return refuse(FieldWindow, "%s %d is over %s's %s-token limit (max_position_embeddings in its config.json)", FieldWindow, o.Window, src.ID, family.Commas(limit))
	}
	return nil
}

// modelLimit is the model's max_position_embeddings; 0 when its config.json has none, or
// says something no model can (which Load refused, and the architecture read refuses).
func modelLimit(src *model.Source) int64 {
	f, err := src.Config.Features()
	if err != nil {
		return 0
	}
	return f.MaxPositions
}
