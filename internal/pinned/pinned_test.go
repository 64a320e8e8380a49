package pinned

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestFactsCheckedOnThePin is the bump's checklist: a fact last checked on another release
// than versions.env pins must be checked again (and its checked_on moved) before the move
// lands. Each failure names the fact and where it was read.
func TestFactsCheckedOnThePin(t *testing.T) {
	require.NotEmpty(t, Facts())
	for _, f := range Facts() {
		assert.Equal(t, Version(), f.CheckedOn,
			"fact %s was checked on ExecuTorch %s, and config/versions.env pins %s: check it again on %s (%s) and move its checked_on",
			f.ID, f.CheckedOn, Version(), Version(), f.Evidence)
	}
}

func TestSay(t *testing.T) {
	got := Say("export_llm.no-gemma3")
	assert.Equal(t, "Gemma 3 is not in ExecuTorch "+Version()+" export_llm's model list", got)
	assert.NotContains(t, got, "{version}")
	assert.PanicsWithValue(t, `pinned: no fact "no.such-fact" in config/runtime-facts.yaml`, func() { Say("no.such-fact") })
	assert.Equal(t, "ExecuTorch "+Version(), ExecuTorch())
}

func TestParseFactsRefuses(t *testing.T) {
	const ok = "  - id: a.b\n    checked_on: 1.5.1\n    text: \"t {version}\"\n    evidence: e\n"
	for _, tc := range []struct{ name, doc, want string }{
		{"unknown field", "facts:\n  - id: a.b\n    checked: 1.5.1\n", "field checked not found"},
		{"bad id", "facts:\n  - id: nodot\n    checked_on: 1.5.1\n    text: t\n    evidence: e\n", `id "nodot" is not a dotted name`},
		{"bad release", "facts:\n  - id: a.b\n    checked_on: 1.5\n    text: t\n    evidence: e\n", `checked_on "1.5" is not a release`},
		{"no text", "facts:\n  - id: a.b\n    checked_on: 1.5.1\n    text: ' '\n    evidence: e\n", "(a.b): text is empty"},
		{"no evidence", "facts:\n  - id: a.b\n    checked_on: 1.5.1\n    text: t\n    evidence: ''\n", "(a.b): evidence is empty"},
		{"version in text", "facts:\n  - id: a.b\n    checked_on: 1.5.1\n    text: t 1.5.1\n    evidence: e\n", "text names 1.5.1; write {version}"},
		{"duplicate", "facts:\n" + ok + ok, "id a.b is given twice"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ParseFacts("f.yaml", []byte(tc.doc))
			require.Error(t, err)
			assert.Contains(t, err.Error(), tc.want)
			assert.Contains(t, err.Error(), "f.yaml")
		})
	}
	got, err := ParseFacts("f.yaml", []byte("facts:\n"+ok))
	require.NoError(t, err)
	assert.Equal(t, "t 1.5.1", got["a.b"].Sentence())
}

// TestNoGoSourceNamesTheRuntime holds issue 33's rule: outside tests and testdata, no Go
// file names the pinned ExecuTorch release (or the one before it); messages read it from
// versions.env through this package, and facts that hold for one release live in
// config/runtime-facts.yaml.
func TestNoGoSourceNamesTheRuntime(t *testing.T) {
	root := filepath.Join("..", "..")
	pin := regexp.QuoteMeta(Version())
	// The pin, and 1.4.0/1.4 (the release before it), as a version: not inside a longer number.
	re := regexp.MustCompile(`(^|[^0-9.])(` + pin + `|1\.4\.0|v1\.4\b)([^0-9]|$)`)
	var hits []string
	require.NoError(t, filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			switch d.Name() {
			case "testdata", ".git", "node_modules":
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(p, ".go") || strings.HasSuffix(p, "_test.go") {
			return nil
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		for i, line := range strings.Split(string(b), "\n") {
			if re.MatchString(line) {
				hits = append(hits, filepath.ToSlash(p)+":"+itoa(i+1)+": "+strings.TrimSpace(line))
			}
		}
		return nil
	}))
	assert.Empty(t, hits, "Go sources naming a runtime version; read it from pinned.Version() or a fact")
}

func itoa(n int) string {
	const digits = "0123456789"
	if n < 10 {
		return digits[n : n+1]
	}
	return itoa(n/10) + digits[n%10:n%10+1]
}
