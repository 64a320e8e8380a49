package run

import (
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// fakeprog is the path of the stand-in tool built from internal/fakeprog for this test run.
var fakeprog string

func TestMain(m *testing.M) {
	flag.Parse()
	dir, err := os.MkdirTemp("", "run-fakeprog-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	fakeprog = filepath.Join(dir, "fakeprog")
	// go test puts its own GOROOT/bin first in PATH, so this is the go that runs the tests.
	goTool, err := exec.LookPath("go")
	if err != nil {
		fmt.Fprintln(os.Stderr, "build fakeprog: no go command in PATH:", err)
		os.RemoveAll(dir)
		os.Exit(1)
	}
	build := exec.Command(goTool, "build", "-o", fakeprog, "./internal/fakeprog")
	build.Stdout, build.Stderr = os.Stderr, os.Stderr
	if err := build.Run(); err != nil {
		fmt.Fprintln(os.Stderr, "build fakeprog:", err)
		os.RemoveAll(dir)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}
