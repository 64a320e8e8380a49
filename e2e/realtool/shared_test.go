package realtool

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/experimentalmachines/exe-expo/internal/tinymodel"
)

// The package's costly work (a tiny model's teaching, a real export, a solve, the Meta
// original/ conversion) is done once per package run for each set of options and shared by
// every test that asks for the same: CI runs the package within a time limit (.ci/run) and
// every repeated build is minutes on its two cores. A shared folder is read, never written:
// a test that writes into an export (smoke, gate) works on copyExport's copy.

var (
	buildsMu sync.Mutex
	builds   = map[string]int{}
)

// built counts one build of kind and logs it with its time, so -v output shows what each
// test paid for and the package's totals (buildSummary) can be compared across changes.
func built(t *testing.T, kind, what string, start time.Time) {
	t.Helper()
	buildsMu.Lock()
	builds[kind]++
	n := builds[kind]
	buildsMu.Unlock()
	t.Logf("realtool build: %s #%d, %s, in %s", kind, n, what, time.Since(start).Round(time.Second))
}

// buildSummary is the count of every kind built in this run, TestMain's last line.
func buildSummary() string {
	buildsMu.Lock()
	defer buildsMu.Unlock()
	var kinds []string
	for k, n := range builds {
		kinds = append(kinds, fmt.Sprintf("%d %s", n, k))
	}
	sort.Strings(kinds)
	if len(kinds) == 0 {
		return "realtool builds: none"
	}
	return "realtool builds: " + strings.Join(kinds, ", ")
}

// onceBy is a once per key: the first caller builds, the others wait for its result.
type onceBy struct {
	mu   sync.Mutex
	byID map[string]*shared
}

// shared is one key's result. ok stays false when the build failed in the test that ran
// it (a require there ends that test inside once.Do); the others then fail with err.
type shared struct {
	once sync.Once
	dir  string
	err  string
	ok   bool
}

func (o *onceBy) get(key string) *shared {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.byID == nil {
		o.byID = map[string]*shared{}
	}
	s, ok := o.byID[key]
	if !ok {
		s = &shared{}
		o.byID[key] = s
	}
	return s
}

// do runs build once for key and returns its folder, or fails t with why it is missing.
func (o *onceBy) do(t *testing.T, what, key string, build func() (string, error)) string {
	t.Helper()
	s := o.get(key)
	s.once.Do(func() {
		dir, err := build()
		if err != nil {
			s.err = err.Error()
			return
		}
		s.dir, s.ok = dir, true
	})
	require.Empty(t, s.err, "%s %s", what, key)
	require.True(t, s.ok, "%s %s failed in the test that built it (see its output)", what, key)
	return s.dir
}

var (
	solves    onceBy
	originals onceBy
)

// solveOnce is exe-expo solve's output folder (codes.pt where the route takes codes,
// solve.json, gate.json) for the family's tiny model taught reply, made once per package
// run under the package's folder.
func solveOnce(t *testing.T, family, reply string, seed int) string {
	t.Helper()
	python(t) // skip (or fail) here, not inside the once
	key := fmt.Sprintf("%s|%s|%d", family, reply, seed)
	return solves.do(t, "the solve of", key, func() (string, error) {
		f, err := tinymodel.Lookup(family)
		if err != nil {
			return "", err
		}
		model := tiny(t, family, reply, seed)
		base, err := os.MkdirTemp(root, "solve-")
		if err != nil {
			return "", err
		}
		dir := filepath.Join(base, "codes")
		start := time.Now()
		args := []string{"solve", model, "--id", f.ID, "--out", filepath.Join(dir, "codes.pt"), "--work", filepath.Join(base, "work"), "--python", python(t)}
		code, stdout, stderr := exeExpo(t, args...)
		if code != 0 {
			return "", fmt.Errorf("exe-expo %s: exit %d\n%s\n%s", strings.Join(args, " "), code, stdout, lastLines(stderr, 40))
		}
		built(t, "solve", key, start)
		return dir, nil
	})
}

// sharedOriginal is metaOriginal's folder of the tiny Llama 3.2 with Meta's original/
// beside it, laid out once per package run: the QNN tests read it and write nothing into it
// (their work and output folders are their own).
func sharedOriginal(t *testing.T) string {
	t.Helper()
	python(t)
	return originals.do(t, "the tiny Llama 3.2 with original/", "llama3.2", func() (string, error) {
		base, err := os.MkdirTemp(root, "original-")
		if err != nil {
			return "", err
		}
		tiny(t, "llama3.2", replyA, 1) // its own build, counted apart
		start := time.Now()
		src := metaOriginal(t, base)
		built(t, "Meta original/ layout", "llama3.2", start)
		return src, nil
	})
}

// otherModel is the model every check holds an export against as "another model": the tiny
// Qwen3 taught replyB (seed 2). A gate or simulated measure runs the fp32 model and the
// export on the same tokens (the source folder's tokenizer and chat template), so another
// family's model taught another reply does what a same-family one did, fail the export
// and sit further from it by every fidelity figure, and one build serves the gate of every
// family, the solve's gate and the QNN simulated measure instead of one build each.
func otherModel(t *testing.T) string {
	t.Helper()
	return tiny(t, "qwen3", replyB, 2)
}
