package exeexpo

import (
	"bytes"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// The sizes the repository keeps to, so a reader can hold a file or a function in view:
// a file (Go or Python driver) holds one idea, a function one step.
const (
	maxFileLines = 400
	maxFuncLines = 80
)

// TestFilesAndFunctionsStaySmall names every tracked Go or Python file (testdata aside) over maxFileLines
// lines and every Go function (tests included) over maxFuncLines, from its func line to its
// closing brace, so a file or function that grows past them fails here rather than in
// review.
func TestFilesAndFunctionsStaySmall(t *testing.T) {
	out, err := exec.Command("git", "ls-files", "*.go", "*.py").Output()
	if err != nil {
		t.Skipf("not a git checkout: %v", err)
	}
	files := strings.Fields(string(out))
	require.NotEmpty(t, files)
	for _, f := range files {
		if strings.Contains(f, "/testdata/") {
			continue // upstream sources tests read (ExecuTorch's scripts), kept as released
		}
		src, err := os.ReadFile(f)
		if os.IsNotExist(err) {
			continue // deleted in the work tree, not yet in the index
		}
		require.NoError(t, err)
		if n := bytes.Count(src, []byte("\n")); n > maxFileLines {
			t.Errorf("%s has %d lines, over %d: split it by idea", f, n, maxFileLines)
		}
		if filepath.Ext(f) == ".go" {
			for _, long := range longFuncs(t, f, src) {
				t.Error(long)
			}
		}
	}
}

// longFuncs names the functions of the Go file src over maxFuncLines lines.
func longFuncs(t *testing.T, name string, src []byte) []string {
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, name, src, parser.SkipObjectResolution)
	require.NoError(t, err, name)
	var out []string
	for _, d := range f.Decls {
		fn, ok := d.(*ast.FuncDecl)
		if !ok || fn.Body == nil {
			continue
		}
		start, end := fset.Position(fn.Pos()).Line, fset.Position(fn.End()).Line
		if n := end - start + 1; n > maxFuncLines {
			out = append(out, fmt.Sprintf("%s:%d: %s has %d lines, over %d: split it", name, start, fn.Name.Name, n, maxFuncLines))
		}
	}
	return out
}
