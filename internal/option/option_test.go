package option_test

import (
	"errors"
	"fmt"
	"io/fs"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/experimentalmachines/exe-expo/internal/option"
)

// TestReword: a refusal reads with the library's names on its own, with the caller's names
// through Reword (a field without one keeps the library's), wrapped context kept; an
// error holding no refusal is not one.
func TestReword(t *testing.T) {
	const out, work option.Field = "Out", "Work"
	r := option.Refuse(work, "%s and %s must differ", work, out)
	assert.Equal(t, "Work and Out must differ", r.Error())
	wrapped := fmt.Errorf("export of org/m: %w", r)
	got, ok := option.Reword(wrapped, map[option.Field]string{out: "--out"})
	assert.True(t, ok)
	assert.Equal(t, "export of org/m: Work and --out must differ", got)
	_, ok = option.Reword(errors.New("plain"), nil)
	assert.False(t, ok)

	inner := option.Refuse(out, "%s cannot be read: %v", out, fs.ErrNotExist)
	assert.ErrorIs(t, inner, fs.ErrNotExist, "the refusal unwraps to the error it words")
}
