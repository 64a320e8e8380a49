package cli

import (
	"strings"

	"github.com/experimentalmachines/exe-expo/internal/backend"
)

// Backend lists for help and messages come from the backends' definitions, so a new
// backend appears in every command's help without touching the CLI.

// exportable names the backends export builds.
func exportable() []string { return backend.NamesOf(backend.Exportable()) }

// words joins names as a sentence does: "a, b, c or d".
func words(names []string, last string) string {
	if len(names) < 2 {
		return strings.Join(names, "")
	}
	return strings.Join(names[:len(names)-1], ", ") + " " + last + " " + names[len(names)-1]
}
