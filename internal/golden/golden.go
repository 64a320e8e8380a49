// Package golden holds a test's output to a file committed under testdata, for the tests
// whose output is too long to spell in the test: plans, cards, recipes, rendered workflows,
// the CLI's outputs. Every such test calls Check, so the one -update flag rewrites every
// golden file and a difference reads the same in every package: which file, the lines that
// changed, and the command that accepts the change.
//
// It is for tests only: importing it registers the -update flag.
package golden

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pmezard/go-difflib/difflib"
)

// update is the one -update flag of every test binary that checks golden files; a package
// that defined its own would panic at start, which keeps the flag single.
var update = flag.Bool("update", false, "rewrite the golden files under testdata with what the tests produce")

// Update reports whether the test run was asked to rewrite its golden files. Check
// answers it for one file; a test whose golden is a whole tree (the rendered workflows)
// reads it to rewrite the tree.
func Update() bool { return *update }

// Check compares got with the golden file at path (relative to the package's folder, as
// tests run there). With -update it writes got to path instead, making its folder, and
// reports true. A difference, or a missing file, fails the test with the lines that differ
// and the command that rewrites the file; Check then reports false, so a caller can add
// what else to rerun.
func Check(t testing.TB, path string, got []byte) bool {
	t.Helper()
	if *update {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Errorf("golden: %v", err)
			return false
		}
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Errorf("golden: %v", err)
			return false
		}
		return true
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Errorf("golden: %v; %s creates it", err, command(t))
		return false
	}
	if bytes.Equal(want, got) {
		return true
	}
	t.Errorf("golden: %s differs from what the test produced (-golden +got); if the change is meant, %s accepts it:\n%s",
		path, command(t), Diff(path, want, got))
	return false
}

// Diff is the unified diff from want (the golden file at path) to got, line by line; a
// difference only in the last line's newline is said in words, as diff shows none.
func Diff(path string, want, got []byte) string {
	d, err := difflib.GetUnifiedDiffString(difflib.UnifiedDiff{
		A: difflib.SplitLines(string(want)), B: difflib.SplitLines(string(got)),
		FromFile: path, ToFile: "got", Context: 3,
	})
	if err != nil || d == "" {
		return fmt.Sprintf("(no line differs: the golden file has %d bytes, the output %d; look at the final newline)\n", len(want), len(got))
	}
	return d
}

// command is the go test line that rewrites the golden files of t's top-level test.
func command(t testing.TB) string {
	test, _, _ := strings.Cut(t.Name(), "/")
	return fmt.Sprintf("go test %s -run '^%s$' -update", packageDir(), test)
}

// packageDir is the test's package as go test names it from the module root (./internal/plan),
// or "." when the module root cannot be found.
func packageDir() string {
	wd, err := os.Getwd()
	if err != nil {
		return "."
	}
	for dir := wd; ; dir = filepath.Dir(dir) {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			rel, err := filepath.Rel(dir, wd)
			if err != nil || rel == "." {
				return "."
			}
			return "./" + filepath.ToSlash(rel)
		}
		if filepath.Dir(dir) == dir {
			return "."
		}
	}
}
