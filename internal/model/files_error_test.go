package model

import (
	"context"
	"io/fs"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestDirErrorsNameTheFileOnce(t *testing.T) {
	d := Dir(t.TempDir())
	want := filepath.Join(string(d), "config.json")
	for name, read := range map[string]func() error{
		"ReadFile":  func() error { _, err := d.ReadFile(context.Background(), "config.json"); return err },
		"ReadRange": func() error { _, err := d.ReadRange(context.Background(), "config.json", 0, 8); return err },
	} {
		err := read()
		require.Error(t, err, name)
		assert.ErrorIs(t, err, fs.ErrNotExist, name)
		assert.Equal(t, 1, strings.Count(err.Error(), want), "%s: %v", name, err)
	}
}
