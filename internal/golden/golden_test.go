package golden

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// recorder is a testing.TB that keeps the failures Check reports instead of failing.
type recorder struct {
	testing.TB
	errors []string
}

func (r *recorder) Helper() {}

func (r *recorder) Errorf(format string, args ...any) {
	r.errors = append(r.errors, fmt.Sprintf(format, args...))
}

func TestCheck(t *testing.T) {
	if Update() {
		t.Skip("-update rewrites golden files; this test checks the comparison")
	}
	path := filepath.Join(t.TempDir(), "out.txt")
	require.NoError(t, os.WriteFile(path, []byte("one\ntwo\nthree\n"), 0o644))

	r := &recorder{TB: t}
	assert.True(t, Check(r, path, []byte("one\ntwo\nthree\n")))
	assert.Empty(t, r.errors)

	r = &recorder{TB: t}
	assert.False(t, Check(r, path, []byte("one\n2\nthree\n")))
	require.Len(t, r.errors, 1)
	for _, want := range []string{path + " differs from what the test produced", "go test ./internal/golden -run '^TestCheck$' -update",
		"--- " + path, "+++ got", "-two\n", "+2\n"} {
		assert.Contains(t, r.errors[0], want)
	}

	r = &recorder{TB: t}
	assert.False(t, Check(r, filepath.Join(t.TempDir(), "none.txt"), nil))
	require.Len(t, r.errors, 1)
	assert.Contains(t, r.errors[0], "no such file or directory; go test ./internal/golden -run '^TestCheck$' -update creates it")
}

func TestCheckUpdate(t *testing.T) {
	old := *update
	*update = true
	t.Cleanup(func() { *update = old })
	path := filepath.Join(t.TempDir(), "new", "out.txt")
	r := &recorder{TB: t}
	assert.True(t, Check(r, path, []byte("made\n")))
	assert.Empty(t, r.errors)
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	assert.Equal(t, "made\n", string(b))
}

func TestDiffFinalNewline(t *testing.T) {
	assert.Contains(t, Diff("f", []byte("a\n"), []byte("a")), "-\n")
	assert.Contains(t, Diff("f", []byte("a"), []byte("a")), "no line differs")
}
