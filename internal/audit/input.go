package audit

import (
	"fmt"

	"github.com/experimentalmachines/exe-expo/internal/backend"
	"github.com/experimentalmachines/exe-expo/internal/model"
)

// Field is an option of the audit request, named as its Options field. The library's
// refusals name options by Field, never by a command line's spelling, so each front end
// words them its own way (the CLI as SOURCE_MODEL, --backend, --context), as export's
// refusals do.
type Field string

// The fields a refusal can be about.
const (
	FieldSource  Field = "Source"
	FieldBackend Field = "Backend"
	FieldWindow  Field = "Window"
)

// InputError is a request the audit refuses before any download: Field is the option to
// fix. Error words options as the Options fields, Sentence as the caller names them.
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

func refuse(field Field, format string, args ...any) *InputError {
	return &InputError{Field: field, format: format, args: args}
}

// check refuses a source that is no Hub id, a negative window and a backend whose files
// the gate cannot run, before anything is read or run.
func (o Options) check() error {
	if !model.ValidID(o.Source) {
		// model.CheckID's sentence, with the field worded by the caller
		return refuse(FieldSource, "%s %q is not a Hub repo id (%s)", FieldSource, o.Source, model.IDRule)
	}
	if o.Window < 0 {
		return refuse(FieldWindow, "%s %d: a window is a positive number of tokens (0: the first file)", FieldWindow, o.Window)
	}
	if b := backend.ByName(o.Backend); b == nil || !b.Smoke {
		return refuse(FieldBackend, "%s %s: the gate runs files on ExecuTorch's x86 runner, which runs only %s files", FieldBackend, o.Backend, smokeBackends())
	}
	return nil
}
