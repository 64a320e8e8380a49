package solve

import (
	"os"
	"path/filepath"

	"github.com/experimentalmachines/exe-expo/internal/option"
	"github.com/experimentalmachines/exe-expo/internal/report"
)

// Field is an option of the solve request, named as its Options field; each front end
// words it its own way (the CLI as its flags: --out), as export's refusals are.
type Field = option.Field

// The options the solve checks itself; the others are checked by
// export.PrepareCheckpoint, whose refusals are *export.InputError.
const (
	FieldOut       Field = "Out"
	FieldConfigDir Field = "ConfigDir"
)

// InputError is a request the solve refuses before any work: Field is the option to fix.
type InputError = option.Refusal

var refuse = option.Refuse

// checkOut refuses an Out that is missing or names a folder, and creates the folder it
// goes in, before any download. It returns Out made absolute, which the solve driver
// writes to from its own folder.
func (o *Options) checkOut() (string, error) {
	if o.Out == "" {
		return "", refuse(FieldOut, "%s is required: the codes file to write, such as codes/codes.pt", FieldOut)
	}
	if info, err := os.Stat(o.Out); err == nil && info.IsDir() {
		return "", refuse(FieldOut, "%s %s is a folder: give the codes file to write, such as %s", FieldOut, o.Out, filepath.Join(o.Out, "codes.pt"))
	}
	if err := os.MkdirAll(filepath.Dir(o.Out), 0o755); err != nil {
		return "", refuse(FieldOut, "%s %s: its folder cannot be created: %s", FieldOut, o.Out, report.Reason(err))
	}
	abs, err := filepath.Abs(o.Out)
	if err != nil {
		return "", refuse(FieldOut, "%s %s: %v", FieldOut, o.Out, err)
	}
	return abs, nil
}
