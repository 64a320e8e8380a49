package drivers

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// fakePython writes a shell script that stands in for python: it is called as
// `python <script>` and runs body with the plan on stdin and $1 the script path.
func fakePython(t *testing.T, body string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "python")
	if err := os.WriteFile(p, []byte("#!/bin/sh\n"+body+"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	return p
}

func samplePlan(dir string) Convert {
	return Convert{Shards: []string{"a.safetensors"}, Output: filepath.Join(dir, "ckpt", "consolidated.pth"),
		Tensors: map[string]Rule{"model.norm.weight": {To: "norm.weight"}}, ExpectTensors: 1}
}

func TestRunnerPassesPlanAndReadsResult(t *testing.T) {
	dir := t.TempDir()
	got := filepath.Join(dir, "plan.json")
	py := fakePython(t, `cat > `+got+`
echo "$(basename "$1")" > `+got+`.script
echo 'some library chatter'
echo 'progress line' >&2
echo '{"tensors": 1, "tied_embeddings": true, "dtypes": {"bfloat16": 1}}'`)
	var log bytes.Buffer
	plan := samplePlan(dir)
	res, err := Runner{Python: py, Log: &log}.Convert(context.Background(), plan)
	if err != nil {
		t.Fatal(err)
	}
	if res.Tensors != 1 || !res.TiedEmbeddings || res.Dtypes["bfloat16"] != 1 {
		t.Errorf("result %+v", res)
	}
	if res.Process.Seconds <= 0 || res.Process.PeakRSSBytes < 100<<10 {
		t.Errorf("process stats %+v, want the child's time and peak RSS", res.Process)
	}
	b, err := os.ReadFile(got)
	if err != nil {
		t.Fatal(err)
	}
	var sent Convert
	if err := json.Unmarshal(b, &sent); err != nil || sent.Output != plan.Output || sent.Tensors["model.norm.weight"].To != "norm.weight" {
		t.Errorf("driver got plan %s (%v)", b, err)
	}
	if s, _ := os.ReadFile(got + ".script"); strings.TrimSpace(string(s)) != ConvertScript {
		t.Errorf("ran script %q, want %s", s, ConvertScript)
	}
	if log.String() != "progress line\n" {
		t.Errorf("log got %q", log.String())
	}
	if _, err := os.Stat(filepath.Dir(plan.Output)); err != nil {
		t.Errorf("checkpoint folder not created: %v", err)
	}
}

func TestRunnerErrors(t *testing.T) {
	cases := []struct {
		name, body string
		check      func(t *testing.T, err error)
	}{
		{"json error", `echo 'Traceback: boom' >&2; echo '{"error": "tensor x is not in the conversion plan", "tensor": "x"}'; exit 1`,
			func(t *testing.T, err error) {
				var de *Error
				if !errors.As(err, &de) || de.Status != 1 || de.Subject != "x" || de.Stderr != "Traceback: boom" {
					t.Fatalf("error %#v", err)
				}
				if err.Error() != "convert.py exited with status 1: tensor x is not in the conversion plan" {
					t.Errorf("message %q", err)
				}
			}},
		{"crash without json", `echo 'Segmentation fault' >&2; exit 139`,
			func(t *testing.T, err error) {
				var de *Error
				if !errors.As(err, &de) || de.Status != 139 || de.Message != "" || !strings.Contains(err.Error(), "Segmentation fault") {
					t.Fatalf("error %#v", err)
				}
			}},
		{"no json on success", `echo 'done'`,
			func(t *testing.T, err error) {
				if err == nil || err.Error() != `convert.py finished without printing its JSON result: its last line of output is "done"` {
					t.Fatalf("error %v", err)
				}
			}},
		{"missing interpreter", "",
			func(t *testing.T, err error) {
				var de *Error
				if err == nil || errors.As(err, &de) || !strings.Contains(err.Error(), "cannot be run to start convert.py (no such file or directory)") {
					t.Fatalf("error %v", err)
				}
			}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			py := filepath.Join(t.TempDir(), "no-such-python")
			if tc.body != "" {
				py = fakePython(t, tc.body)
			}
			_, err := Runner{Python: py}.Convert(context.Background(), samplePlan(t.TempDir()))
			tc.check(t, err)
		})
	}
}

// TestRunnerWordsFailures: however a driver fails, its error is one sentence naming the
// driver (and the python, when that is at fault), with no Go internals (fork/exec, json:)
// and no traceback in it.
func TestRunnerWordsFailures(t *testing.T) {
	dir := t.TempDir()
	notExec := filepath.Join(dir, "python-not-executable")
	require.NoError(t, os.WriteFile(notExec, []byte("#!/bin/sh\n"), 0o644))
	noShebang := filepath.Join(dir, "python-no-shebang")
	require.NoError(t, os.WriteFile(noShebang, []byte("\x7fELF not really"), 0o755))
	traceback := `cat >/dev/null
cat >&2 <<'TB'
Traceback (most recent call last):
  File "/w/drivers/gate_probe.py", line 67, in pte_model
    from executorch.extension.pybindings.portable_lib import _load_for_executorch
    ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^
%s
TB
exit 1`
	tests := []struct {
		name, python, body string
		keep               bool
		want               string
	}{
		{"python not found", filepath.Join(dir, "no-such-python"), "", false,
			"python " + filepath.Join(dir, "no-such-python") + " cannot be run to start convert.py (no such file or directory): " + PythonHint},
		{"python not executable", notExec, "", false,
			"python " + notExec + " cannot be run to start convert.py (permission denied): " + PythonHint},
		{"python not a program", noShebang, "", false,
			"python " + noShebang + " cannot be run to start convert.py (exec format error): " + PythonHint},
		{"module missing", "", fmt.Sprintf(traceback, "ModuleNotFoundError: No module named 'executorch'"), false,
			"convert.py cannot run: python %PY% has no module executorch: " + PythonHint},
		{"exception", "", fmt.Sprintf(traceback, "RuntimeError: method forward failed"), false,
			"convert.py exited with status 1: RuntimeError: method forward failed"},
		{"silent failure", "", "exit 4", false, "convert.py exited with status 4 and said nothing on stderr"},
		{"killed", "", "kill -9 $$", false,
			"convert.py was killed (SIGKILL) before it finished: the kernel's out-of-memory killer does that when memory runs out"},
		{"nothing printed", "", "exit 0", false, "convert.py finished without printing its JSON result: nothing came on stdout"},
		{"not JSON, script kept", "", "echo 'loading weights'", true,
			filepath.Join(dir, "kept", ConvertScript) + ` finished without printing its JSON result: its last line of output is "loading weights"`},
		{"wrong field", "", `echo '{"tensors": "one"}'`, false,
			`convert.py printed a result this exe-expo cannot read: field "tensors" is a string, not a number; is the driver from another exe-expo release?`},
		{"invalid number", "", `echo '{"tensors": 1e999}'`, false,
			`convert.py printed a result this exe-expo cannot read: field "tensors" is the number 1e999, not a number; is the driver from another exe-expo release?`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			py := tc.python
			if py == "" {
				py = fakePython(t, tc.body)
			}
			r := Runner{Python: py}
			if tc.keep {
				r.Dir = filepath.Join(dir, "kept")
			}
			_, err := r.Convert(context.Background(), samplePlan(t.TempDir()))
			require.Error(t, err)
			msg := err.Error()
			assert.Equal(t, strings.ReplaceAll(tc.want, "%PY%", py), msg)
			for _, internal := range []string{"fork/exec", "dial tcp", `Get "`, "json: ", "Traceback", "File \"", "\n"} {
				assert.NotContains(t, msg, internal)
			}
		})
	}
}

func TestRunnerRefusesBeforeStarting(t *testing.T) {
	py := fakePython(t, `touch ran; exit 0`)
	dir := t.TempDir()
	plan := samplePlan(dir)
	plan.Output = filepath.Join(dir, "Qwen3-8da4w-4k", "consolidated.pth")
	if _, err := (Runner{Python: py, Dir: dir}).Convert(context.Background(), plan); err == nil || !strings.Contains(err.Error(), "8da4w") {
		t.Errorf("8da4w path: error %v", err)
	}
	bad := NewGPTQ(filepath.Join(dir, "codes.pt"), nil)
	if _, err := (Runner{Python: py, Dir: dir}).GPTQ(context.Background(), bad); err == nil || !strings.Contains(err.Error(), "no linears") {
		t.Errorf("empty GPTQ plan: error %v", err)
	}
	if _, err := os.Stat(filepath.Join(dir, "ran")); err == nil {
		t.Errorf("the driver ran despite a refused plan")
	}
}

// TestRunnerTimeout ends the context while the driver sleeps for 30 s. Whether the
// deadline comes before or after the driver starts, the run fails; returning well before
// the sleep ends shows the driver was killed rather than waited for.
func TestRunnerTimeout(t *testing.T) {
	py := fakePython(t, `exec sleep 30`)
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	start := time.Now()
	_, err := Runner{Python: py}.Convert(ctx, samplePlan(t.TempDir()))
	require.Error(t, err)
	assert.Less(t, time.Since(start), 20*time.Second, "Convert waited for the driver instead of killing it")
}

func TestRunnerKeepsScriptsInDir(t *testing.T) {
	dir := t.TempDir()
	py := fakePython(t, `echo '{"out": "c", "seconds": 1, "linears": []}'`)
	plan := NewGPTQ(filepath.Join(dir, "codes.pt"), []Linear{{Name: "l", Weight: "w.pt", Hessian: "h.pt"}})
	if _, err := (Runner{Python: py, Dir: dir}).GPTQ(context.Background(), plan); err != nil {
		t.Fatal(err)
	}
	for _, n := range Names() {
		want, _ := Source(n)
		got, err := os.ReadFile(filepath.Join(dir, n))
		if err != nil || !bytes.Equal(got, want) {
			t.Errorf("%s in Dir: %v", n, err)
		}
	}
}

func TestTailKeepsLastLines(t *testing.T) {
	tl := &tail{max: 16}
	for _, l := range []string{"first line\n", "second line\n", "third\n"} {
		tl.Write([]byte(l))
	}
	if got := tl.String(); got != "third\n" {
		t.Errorf("tail %q, want the last whole line", got)
	}
}

func TestFindTorchPython(t *testing.T) {
	noTorch := fakePython(t, `echo "ModuleNotFoundError: No module named 'torch'" >&2; exit 1`)
	withTorch := fakePython(t, `[ "$1" = "-c" ] && echo 2.9.1`)
	ctx := context.Background()
	py, version, err := FindTorchPython(ctx, "/no/such/python", noTorch, withTorch)
	if err != nil || py != withTorch || version != "2.9.1" {
		t.Fatalf("got %q %q %v, want the candidate with torch", py, version, err)
	}
	_, _, err = FindTorchPython(ctx, "/no/such/python", noTorch)
	if err == nil || !strings.Contains(err.Error(), "/no/such/python (not found)") || !strings.Contains(err.Error(), noTorch+" (no torch)") {
		t.Fatalf("error %v, want each candidate named with its reason", err)
	}
}
