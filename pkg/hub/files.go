package hub

import "context"

// RepoFiles is a repo at one revision seen as model.Files: plan reads config.json and
// safetensors headers through it with range requests, never downloading weights.
type RepoFiles struct {
	c        *Client
	Repo     string
	Revision string
}

// Files returns the files of repo at revision (empty: the default branch). Pin revision to
// a commit sha so that every read sees the same snapshot.
func (c *Client) Files(repo, revision string) *RepoFiles {
	if revision == "" {
		revision = "main"
	}
	return &RepoFiles{c: c, Repo: repo, Revision: revision}
}

// ReadFile implements model.Files; a missing file matches fs.ErrNotExist and ErrEntryNotFound.
func (f *RepoFiles) ReadFile(ctx context.Context, name string) ([]byte, error) {
	return f.c.ReadFile(ctx, f.Repo, f.Revision, name)
}

// ReadRange implements model.Files.
func (f *RepoFiles) ReadRange(ctx context.Context, name string, off, length int64) ([]byte, error) {
	return f.c.ReadRange(ctx, f.Repo, f.Revision, name, off, length)
}
