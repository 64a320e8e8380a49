package source

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/experimentalmachines/exe-expo/internal/model"
	"github.com/experimentalmachines/exe-expo/internal/snapshot"
)

// HubReader is what opening a model needs from the Hub: the repo's metadata at a revision
// (sha, pipeline tag, access) and its files for range reads. Hub and Offline are the two
// the CLI uses; tests give their own.
type HubReader interface {
	Source(ctx context.Context, id, revision string) (*model.Source, model.Files, error)
}

// ErrUnreachable marks a Hub that could not be reached at all (no network, DNS, refused),
// as opposed to one that answered with an error: the first falls back to the snapshot
// (Open) or refuses at once (export), the second is the model's own answer.
// *UnreachableError matches it.
var ErrUnreachable = errors.New("the Hugging Face Hub could not be reached")

// IDError is an id given for a local folder that is not a Hub id (org/name). It names no
// flag; a command line words it with its own.
type IDError struct{ ID string }

func (e *IDError) Error() string {
	return fmt.Sprintf("the model id %q is not a Hugging Face model id (org/name)", e.ID)
}

// Open finds MODEL: a local folder holding config.json, else a Hub id read from the Hub, or
// from the embedded snapshot when the Hub cannot be reached (or hub is nil), so that a plan
// works offline. The source's Origin says which, and offline reports the snapshot case;
// the snapshot cannot answer for a revision, so its source carries a RevisionNote saying
// the revision was not checked.
func Open(ctx context.Context, ref, revision string, hub HubReader) (src *model.Source, offline bool, err error) {
	if IsDir(ref) {
		src, err := OpenDir(ctx, ref, "")
		return src, false, err
	}
	if !model.ValidID(ref) {
		return nil, false, fmt.Errorf("%q is neither a local model folder nor a Hugging Face model id (org/name)", ref)
	}
	why := "no Hub client"
	if hub != nil {
		src, files, err := hub.Source(ctx, ref, revision)
		switch {
		case err == nil:
			if src.AccessError == "" {
				if err := model.Load(ctx, src, files); err != nil {
					return nil, false, err
				}
			}
			return src, false, nil
		case errors.Is(err, ErrUnreachable):
			why = err.Error()
		default:
			return nil, false, err
		}
	}
	return openSnapshot(ctx, ref, revision, why)
}

// openSnapshot reads ref from the embedded snapshot; why says what kept the Hub out.
func openSnapshot(ctx context.Context, ref, revision, why string) (*model.Source, bool, error) {
	src, err := snapshot.Load(ctx, ref)
	if err != nil {
		return nil, true, fmt.Errorf("%s; and %w", why, err)
	}
	src.Revision = revision
	if revision != "" {
		src.RevisionNote = "not checked: the embedded snapshot is not tied to any revision"
	}
	src.Origin = fmt.Sprintf("embedded snapshot %s (offline: %s)", snapshot.Name, why)
	return src, true, nil
}

// IsDir reports whether ref names a local folder (rather than a Hub id): MODEL arguments
// are told apart by it before either kind is opened.
func IsDir(ref string) bool {
	st, err := os.Stat(ref)
	return err == nil && st.IsDir()
}

// OpenDir loads a local model folder. id names the Hub id the folder holds (the name rules,
// the output repo and ExecuTorch's Qualcomm registry go by it); empty means the folder's
// name, and the source says so (IDFromFolder). An id that is no Hub id is an *IDError.
func OpenDir(ctx context.Context, dir, id string) (*model.Source, error) {
	if _, err := os.Stat(filepath.Join(dir, "config.json")); err != nil {
		return nil, fmt.Errorf("%s is a folder without config.json; give a model folder or a Hub id (org/name)", dir)
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, fmt.Errorf("model folder %s: %w", dir, err)
	}
	src := &model.Source{ID: id, Origin: "local folder " + abs}
	if id == "" {
		src.ID, src.IDFromFolder = filepath.Base(abs), true
	} else if !model.ValidID(id) {
		return nil, &IDError{ID: id}
	}
	if err := model.Load(ctx, src, model.Dir(abs)); err != nil {
		return nil, err
	}
	card, err := readCard(filepath.Join(abs, "README.md"))
	if err != nil {
		return nil, err
	}
	src.Card = card
	return src, nil
}

// readCard reads the metadata of a local folder's model card (README.md's YAML front
// matter), as the Hub serves a repo's cardData: the license an export records and publish
// requires comes from it. A folder without README.md has none.
func readCard(p string) (map[string]any, error) {
	b, err := os.ReadFile(p)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read the model card %s: %w", p, err)
	}
	card, err := model.ParseCard(b)
	if err != nil {
		return nil, fmt.Errorf("model card %s: %w", p, err)
	}
	return card, nil
}
