package hubtest

import (
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"testing"
)

// JSClient is node and the folder of the official @huggingface/hub client's driver
// (testdata/js/driver.mjs, installed by `npm ci` there, as .ci/run does), for the tests
// that check our Hub against the official client. Without them the test skips and says
// why, or fails under EXE_EXPO_CI=1, where a missing tool is an error.
func JSClient(t testing.TB) (node, dir string) {
	t.Helper()
	_, file, _, ok := runtime.Caller(0)
	if !ok {
		t.Fatal("hubtest: cannot locate its own source folder")
	}
	dir = filepath.Join(filepath.Dir(file), "testdata", "js")
	node, err := exec.LookPath("node")
	if err == nil {
		_, err = os.Stat(filepath.Join(dir, "node_modules", "@huggingface", "hub", "package.json"))
	}
	if err != nil {
		msg := "the official JS client needs node 20+ and `npm ci` in pkg/hub/hubtest/testdata/js: " + err.Error()
		if os.Getenv("EXE_EXPO_CI") == "1" {
			t.Fatal(msg)
		}
		t.Skip(msg)
	}
	return node, dir
}
