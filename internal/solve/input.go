package solve

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/experimentalmachines/exe-expo/internal/report"
)

// Field is an option of the solve request, named as its Options field. The library's
// refusals name options by Field, never by a command line's spelling, so each front end
// words them its own way (the CLI as its flags: --out), as export's refusals do.
type Field string

// The options the solve checks itself; the others are checked by
// export.PrepareCheckpoint, whose refusals are *export.InputError.
const (
	FieldOut       Field = "Out"
	FieldConfigDir Field = "ConfigDir"
)

// InputError is a request the solve refuses before any work: Field is the option to fix.
// Error words options as the Options fields, Sentence as the caller names them.
type InputError struct {
	Field Field
	// format and args are the sentence; args that are Fields are worded by Sentence.
	format string
	args   []any
}

func (e *InputError) Error() string { return e.Sentence(func(f Field) string { return string(f) }) }

// Sentence is the refusal with every option it names worded by name: the CLI passes its
// flag names, so that the sentence it prints points at what the user typed.
func (e *InputError) Sentence(name func(Field) string) string {
	args := make([]any, len(e.args))
	for i, a := range e.args {
		if f, ok := a.(Field); ok {
			a = name(f)
		}
		args[i] = a
	}
	return fmt.Sprintf(e.format, args...)
}

// Unwrap is the error the refusal words, if any: the configuration's own.
func (e *InputError) Unwrap() error {
	for _, a := range e.args {
		if err, ok := a.(error); ok {
			return err
		}
	}
	return nil
}

func refuse(field Field, format string, args ...any) *InputError {
	return &InputError{Field: field, format: format, args: args}
}

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
