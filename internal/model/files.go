package model

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
)

// Files is a model repository seen as named files readable in byte ranges. It is all that
// model analysis needs, so the same code reads a local folder, an embedded snapshot or the
// Hub (through range requests) without ever downloading weights.
type Files interface {
	// ReadFile returns a small file whole (config.json, an index). A missing file is an
	// error that wraps fs.ErrNotExist.
	ReadFile(ctx context.Context, name string) ([]byte, error)
	// ReadRange returns up to length bytes of name starting at off. It returns fewer only
	// when the file ends first. A missing file wraps fs.ErrNotExist.
	ReadRange(ctx context.Context, name string, off, length int64) ([]byte, error)
}

// Dir is a local model folder.
type Dir string

// ReadFile implements Files.
func (d Dir) ReadFile(_ context.Context, name string) ([]byte, error) {
	p, err := d.path(name)
	if err != nil {
		return nil, err
	}
	b, err := os.ReadFile(p)
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", p, bare(err))
	}
	return b, nil
}

// ReadRange implements Files.
func (d Dir) ReadRange(_ context.Context, name string, off, length int64) ([]byte, error) {
	p, err := d.path(name)
	if err != nil {
		return nil, err
	}
	f, err := os.Open(p)
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", p, bare(err))
	}
	defer f.Close()
	buf := make([]byte, length)
	n, err := f.ReadAt(buf, off)
	if err != nil && !errors.Is(err, io.EOF) {
		return nil, fmt.Errorf("read %s at byte %d: %w", p, off, bare(err))
	}
	return buf[:n], nil
}

// bare drops the operation and path an *fs.PathError repeats, so an error names the file
// once; the cause (and so errors.Is(err, fs.ErrNotExist)) is kept.
func bare(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

// path refuses names that would leave the folder.
func (d Dir) path(name string) (string, error) {
	if !fs.ValidPath(name) {
		return "", fmt.Errorf("file name %q: not a plain relative path inside the model folder", name)
	}
	return filepath.Join(string(d), filepath.FromSlash(name)), nil
}
