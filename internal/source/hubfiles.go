package source

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"strings"
	"sync"

	"github.com/experimentalmachines/exe-expo/pkg/hub"
)

// hubFiles reads a Hub repo's files for model analysis with as few requests as the model
// info allows: config.json comes from the read Source already made, a file the model info
// does not list is missing without a request (no 404 for model.safetensors on a sharded
// repo, none for an absent generation_config.json), and a gated answer becomes the access
// sentence.
type hubFiles struct {
	f      *hub.RepoFiles
	c      *hub.Client
	id     string
	rev    string
	have   map[string]bool // nil: the model info listed no files, so ask for each
	config []byte          // config.json as Source read it, or the model info's whole config
	held   heldRanges      // the latest range reads, for one that continues them
}

func (g *hubFiles) ReadFile(ctx context.Context, name string) ([]byte, error) {
	if name == "config.json" && g.config != nil {
		return g.config, nil
	}
	if err := g.absent(name); err != nil {
		return nil, err
	}
	b, err := g.f.ReadFile(ctx, name)
	return b, g.wrap(err)
}

// ReadRange reads n bytes of name at off. A read that starts inside the latest read of the
// same file (a safetensors header longer than the speculative read, which model.ReadHeader
// asks for again from byte 8) takes the bytes it already has and asks only for the rest,
// from where that read stopped.
func (g *hubFiles) ReadRange(ctx context.Context, name string, off, n int64) ([]byte, error) {
	if err := g.absent(name); err != nil {
		return nil, err
	}
	if n <= 0 {
		b, err := g.f.ReadRange(ctx, name, off, n)
		return b, g.wrap(err)
	}
	have := g.held.take(name, off, n)
	if int64(len(have)) == n {
		return have, nil
	}
	from := off + int64(len(have))
	b, err := g.f.ReadRange(ctx, name, from, n-int64(len(have)))
	if err != nil {
		return nil, g.wrap(err)
	}
	b = append(have, b...)
	if int64(len(b)) == n { // a short read is the end of the file: nothing follows it
		g.held.keep(name, off, b)
	}
	return b, nil
}

// Bounds of what hubFiles keeps for a continuation: the latest reads of up to heldReads
// files (model.CountParams reads 8 shards at once), each at most heldBytes.
const (
	heldReads = 16
	heldBytes = 1 << 20
)

// heldRanges are the latest range reads, newest last, so that a read continuing one asks
// only for what follows it.
type heldRanges struct {
	mu    sync.Mutex
	reads []heldRange
}

type heldRange struct {
	name string
	off  int64
	b    []byte
}

// take returns a copy of the held bytes of name from off (at most n), and forgets them: a
// header is continued once. It returns nil when no held read covers off.
func (h *heldRanges) take(name string, off, n int64) []byte {
	h.mu.Lock()
	defer h.mu.Unlock()
	for i, r := range h.reads {
		if r.name != name || off < r.off || off >= r.off+int64(len(r.b)) {
			continue
		}
		h.reads = append(h.reads[:i], h.reads[i+1:]...)
		part := r.b[off-r.off:]
		return append([]byte(nil), part[:min(int64(len(part)), n)]...)
	}
	return nil
}

// keep holds a read of name at off, dropping the oldest past heldReads.
func (h *heldRanges) keep(name string, off int64, b []byte) {
	if len(b) > heldBytes {
		return
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	h.reads = append(h.reads, heldRange{name: name, off: off, b: append([]byte(nil), b...)})
	if len(h.reads) > heldReads {
		h.reads = append(h.reads[:0], h.reads[len(h.reads)-heldReads:]...)
	}
}

// absent is a missing-file error (matching fs.ErrNotExist and hub.ErrEntryNotFound, as the
// Hub's own 404 does) for a name the model info does not list, and nil otherwise.
func (g *hubFiles) absent(name string) error {
	if g.have == nil || g.have[name] {
		return nil
	}
	return &notListedError{name: name, id: g.id, rev: short(g.rev)}
}

// notListedError is a file the model info does not list: missing, like the Hub's 404 for
// it, without having asked.
type notListedError struct{ name, id, rev string }

func (e *notListedError) Error() string {
	return fmt.Sprintf("file %q is not in %s at revision %s", e.name, e.id, e.rev)
}

// Is matches fs.ErrNotExist (what model.Files promises) and hub.ErrEntryNotFound.
func (e *notListedError) Is(target error) bool {
	return target == fs.ErrNotExist || target == hub.ErrEntryNotFound
}

func (g *hubFiles) wrap(err error) error {
	if errors.Is(err, hub.ErrGated) {
		return fmt.Errorf("%s: %w", accessError(g.c, g.id), err)
	}
	return err
}

func accessError(c *hub.Client, id string) string {
	return fmt.Sprintf("gated repo and the HF_TOKEN account has no access: accept the license at %s/%s with that account", strings.TrimSuffix(c.Endpoint(), "/"), id)
}

func short(sha string) string {
	if len(sha) > 12 {
		return sha[:12]
	}
	return sha
}
