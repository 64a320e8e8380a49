package audit

import (
	"github.com/experimentalmachines/exe-expo/internal/backend"
	"github.com/experimentalmachines/exe-expo/internal/model"
	"github.com/experimentalmachines/exe-expo/internal/option"
)

// Field is an option of the audit request, named as its Options field; each front end
// words it its own way (the CLI as SOURCE_MODEL, --backend, --context), as export's
// refusals are.
type Field = option.Field

// The fields a refusal can be about.
const (
	FieldSource  Field = "Source"
	FieldBackend Field = "Backend"
	FieldWindow  Field = "Window"
)

// InputError is a request the audit refuses before any download: Field is the option to
// fix.
type InputError = option.Refusal

var refuse = option.Refuse

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
