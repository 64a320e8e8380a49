package watch

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"

	"github.com/google/go-github/v62/github"

	"github.com/experimentalmachines/exe-expo/internal/fileutil"
)

// Store is where the state lives between runs.
type Store interface {
	// Load returns the saved state, nil when there is none yet (the first run).
	Load(ctx context.Context) (*State, error)
	// Save writes the state; it fails with ErrConflict when another run saved first.
	Save(ctx context.Context, s *State) error
}

// ErrConflict is a save refused because the state changed since it was loaded: another
// watcher saved first. Its dispatches are in flight, so the next run does not repeat them.
var ErrConflict = errors.New("the state changed since this run read it: another watcher run saved first")

// FileStore keeps the state in a local file (a checkout of the state branch).
type FileStore struct{ Path string }

// Load reads the file; a missing file is the first run.
func (f FileStore) Load(context.Context) (*State, error) {
	data, err := os.ReadFile(f.Path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fileutil.Error("read the state file", f.Path, err)
	}
	return ParseState(f.Path, data)
}

// Save writes the file whole or not at all.
func (f FileStore) Save(_ context.Context, s *State) error {
	tmp := f.Path + ".tmp"
	if err := os.WriteFile(tmp, s.Marshal(), 0o644); err != nil {
		return fileutil.Error("write the state file", tmp, err)
	}
	if err := os.Rename(tmp, f.Path); err != nil {
		return fileutil.Error("replace the state file", f.Path, err)
	}
	return nil
}

// BranchStore keeps the state as one file on a branch of its own (an orphan "state"
// branch), read and written through the GitHub API. A save is a new commit on the commit
// that was loaded and moves the branch only as a fast-forward, so of two concurrent runs
// one wins and the other gets ErrConflict.
type BranchStore struct {
	GitHub *GitHub
	Branch string
	Path   string

	base string // the commit Load read, "" when the branch did not exist
}

// Load reads the file at the branch's head; no branch or no file is the first run.
func (b *BranchStore) Load(ctx context.Context) (*State, error) {
	if err := b.check(); err != nil {
		return nil, err
	}
	g := b.GitHub
	owner, repo := escaped(g.Owner), escaped(g.Repo)
	ref, _, err := g.Client.Git.GetRef(ctx, owner, repo, "heads/"+b.Branch)
	if statusOf(err) == 404 {
		b.base = ""
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("could not read the %s branch of %s/%s: %w", b.Branch, g.Owner, g.Repo, apiError(err))
	}
	b.base = ref.GetObject().GetSHA()
	file, _, _, err := g.Client.Repositories.GetContents(ctx, owner, repo, b.Path, &github.RepositoryContentGetOptions{Ref: b.base})
	if statusOf(err) == 404 {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("could not read %s on the %s branch: %w", b.Path, b.Branch, apiError(err))
	}
	if file == nil {
		return nil, fmt.Errorf("%s on the %s branch is a folder, not the state file", b.Path, b.Branch)
	}
	text, err := file.GetContent()
	if err != nil {
		return nil, fmt.Errorf("could not decode %s on the %s branch: %w", b.Path, b.Branch, err)
	}
	return ParseState(b.Path+" on the "+b.Branch+" branch", []byte(text))
}

// Save commits the state on the loaded commit and fast-forwards the branch to it.
func (b *BranchStore) Save(ctx context.Context, s *State) error {
	if err := b.check(); err != nil {
		return err
	}
	g := b.GitHub
	owner, repo := escaped(g.Owner), escaped(g.Repo)
	fail := func(what string, err error) error {
		return fmt.Errorf("could not save the state on the %s branch (%s): %w", b.Branch, what, apiError(err))
	}
	tree, _, err := g.Client.Git.CreateTree(ctx, owner, repo, "", []*github.TreeEntry{{
		Path: github.String(b.Path), Mode: github.String("100644"), Type: github.String("blob"), Content: github.String(string(s.Marshal())),
	}})
	if err != nil {
		return fail("tree", err)
	}
	commit := &github.Commit{Message: github.String("watch: " + s.stampOrSeeded()), Tree: &github.Tree{SHA: tree.SHA}}
	if b.base != "" {
		commit.Parents = []*github.Commit{{SHA: github.String(b.base)}}
	}
	made, _, err := g.Client.Git.CreateCommit(ctx, owner, repo, commit, nil)
	if err != nil {
		return fail("commit", err)
	}
	ref := &github.Reference{Ref: github.String("refs/heads/" + b.Branch), Object: &github.GitObject{SHA: made.SHA}}
	if b.base == "" {
		_, _, err = g.Client.Git.CreateRef(ctx, owner, repo, ref)
	} else {
		_, _, err = g.Client.Git.UpdateRef(ctx, owner, repo, ref, false)
	}
	if code := statusOf(err); code == 409 || code == 422 {
		return fmt.Errorf("could not save the state on the %s branch: %w", b.Branch, ErrConflict)
	}
	if err != nil {
		return fail("branch", err)
	}
	b.base = made.GetSHA()
	return nil
}

// check refuses, before any request, a repository, branch or state path GitHub would
// refuse.
func (b *BranchStore) check() error {
	return errors.Join(b.GitHub.check(), CheckBranch("the state branch", b.Branch), CheckStatePath("the state file", b.Path))
}

// stampOrSeeded names a state commit; the message matters only to people reading the log.
func (s *State) stampOrSeeded() string {
	return fmt.Sprintf("%d models", len(s.Models))
}
