package hubtest

import (
	"bytes"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"

	"github.com/experimentalmachines/exe-expo/internal/model"
)

// RepoOption sets a property of a seeded repo.
type RepoOption func(*repo)

// Gated gates downloads ("auto" or "manual"); only authorized users and the owner may
// download anything but README.md and .gitattributes.
func Gated(mode string) RepoOption { return func(r *repo) { r.Gated = mode } }

// Private hides the repo from everyone but its namespace.
func Private() RepoOption { return func(r *repo) { r.Private = true } }

// Authorize lets a user past the gate (as if they accepted the license).
func Authorize(user string) RepoOption {
	return func(r *repo) { r.Authorized[user] = true }
}

// Tags sets the repo's tags; PipelineTag and Library set those fields.
func Tags(tags ...string) RepoOption { return func(r *repo) { r.Tags = tags } }

// PipelineTag sets pipeline_tag.
func PipelineTag(t string) RepoOption { return func(r *repo) { r.PipelineTag = t } }

// Library sets library_name.
func Library(l string) RepoOption { return func(r *repo) { r.LibraryName = l } }

// WholeConfigInInfo makes the model info's config the whole of config.json, as it is
// written (numbers keep their spelling), instead of the summary huggingface.co serves
// (docs/research/hub.md#config-in-model-info). No Hub we know of does this; it lets a test
// reach a client's path for a server that does.
func WholeConfigInInfo() RepoOption { return func(r *repo) { r.WholeConfig = true } }

// NoSafetensorsInInfo leaves the safetensors totals out of the model info (a repo the Hub
// has not indexed), so a client must read the headers itself.
func NoSafetensorsInInfo() RepoOption { return func(r *repo) { r.NoSafetensors = true } }

// Disabled makes every access answer the Hub's "disabled" 403.
func Disabled() RepoOption { return func(r *repo) { r.Disabled = true } }

// AddModel creates the repo if needed, applies opts and commits files to main in one
// commit. Files over RegularMax, with a binary sample or a weights extension are stored as
// LFS, like a real upload. It returns the new head sha.
func (s *Server) AddModel(id string, files map[string][]byte, opts ...RepoOption) (string, error) {
	srcs := map[string]func() ([]byte, string, error){}
	for p, b := range files {
		srcs[p] = func() ([]byte, string, error) { return b, "", nil }
	}
	return s.seed(id, "Upload "+id, srcs, opts)
}

// AddModelDir is AddModel with the files of a local folder (recursively); large files are
// streamed into the store, never loaded.
func (s *Server) AddModelDir(id, dir string, opts ...RepoOption) (string, error) {
	srcs := map[string]func() ([]byte, string, error){}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, err := filepath.Rel(dir, p)
		if err != nil {
			return err
		}
		srcs[filepath.ToSlash(rel)] = func() ([]byte, string, error) { return nil, p, nil }
		return nil
	})
	if err != nil {
		return "", fmt.Errorf("hubtest: walk %s: %w", dir, err)
	}
	return s.seed(id, "Upload "+id+" from "+filepath.Base(dir), srcs, opts)
}

// MustAddModel is AddModel for tests that cannot go on without the repo.
func (s *Server) MustAddModel(t interface{ Fatalf(string, ...any) }, id string, files map[string][]byte, opts ...RepoOption) string {
	sha, err := s.AddModel(id, files, opts...)
	if err != nil {
		t.Fatalf("hubtest: add %s: %v", id, err)
	}
	return sha
}

func (s *Server) seed(id, title string, srcs map[string]func() ([]byte, string, error), opts []RepoOption) (string, error) {
	if !model.ValidID(id) {
		return "", fmt.Errorf("hubtest: repo id %q is not a Hub repo id (%s)", id, model.IDRule)
	}
	entries := map[string]entry{}
	for p, src := range srcs {
		if msg := badPath(p); msg != "" {
			return "", fmt.Errorf("hubtest: seed %s: %s", id, msg)
		}
		e, err := s.storeSeed(p, src)
		if err != nil {
			return "", fmt.Errorf("hubtest: seed %s/%s: %w", id, p, err)
		}
		entries[p] = e
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	rp := s.repos[id]
	if rp == nil {
		rp = s.createLocked(id)
	}
	for _, o := range opts {
		o(rp)
	}
	if len(entries) == 0 {
		return rp.head().SHA, nil
	}
	head := rp.head()
	files := copyTree(head.Files)
	for p, e := range entries {
		files[p] = e
	}
	return rp.addCommit("main", head, title, "", "hubtest", files, s.now()).SHA, nil
}

func (s *Server) storeSeed(path string, src func() ([]byte, string, error)) (entry, error) {
	b, local, err := src()
	if err != nil {
		return entry{}, err
	}
	if local != "" {
		st, err := os.Stat(local)
		if err != nil {
			return entry{}, err
		}
		f, err := os.Open(local)
		if err != nil {
			return entry{}, err
		}
		defer f.Close()
		if st.Size() > 0 && (st.Size() > s.RegularMax || lfsByName(path)) {
			return s.blobs.putLFSReader(f)
		}
		if b, err = readAll(f); err != nil {
			return entry{}, err
		}
	}
	if len(b) > 0 && (int64(len(b)) > s.RegularMax || lfsByName(path) || bytes.IndexByte(b[:min(512, len(b))], 0) >= 0) {
		return s.blobs.putLFSReader(bytes.NewReader(b))
	}
	return s.blobs.putRegular(b)
}

func readAll(f *os.File) ([]byte, error) {
	var buf bytes.Buffer
	_, err := buf.ReadFrom(f)
	return buf.Bytes(), err
}

// Head is the sha main points at in repo id ("" when there is no such repo).
func (s *Server) Head(id string) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	if rp := s.repos[id]; rp != nil {
		return rp.head().SHA
	}
	return ""
}

// History lists the commit shas of main, newest first, and their titles.
func (s *Server) History(id string) (shas, titles []string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	rp := s.repos[id]
	if rp == nil {
		return nil, nil
	}
	for _, c := range rp.history(rp.head()) {
		shas = append(shas, c.SHA)
		titles = append(titles, c.Title)
	}
	return shas, titles
}

// Files lists the paths in repo id at rev, sorted.
func (s *Server) Files(id, rev string) []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	rp := s.repos[id]
	if rp == nil {
		return nil
	}
	c := rp.resolve(rev)
	if c == nil {
		return nil
	}
	out := sortedPaths(c.Files)
	sort.Strings(out)
	return out
}

// FileInfo returns where a file's content lives on disk, and whether it is in LFS.
func (s *Server) FileInfo(id, rev, path string) (disk string, size int64, lfs bool, err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	rp := s.repos[id]
	if rp == nil {
		return "", 0, false, fmt.Errorf("hubtest: no repo %s", id)
	}
	c := rp.resolve(rev)
	if c == nil {
		return "", 0, false, fmt.Errorf("hubtest: no revision %s in %s", rev, id)
	}
	e, ok := c.Files[path]
	if !ok {
		return "", 0, false, fmt.Errorf("hubtest: no file %s in %s@%s", path, id, rev)
	}
	return e.Blob, e.Size, e.LFS, nil
}

// FileBytes reads a small file's content, for assertions.
func (s *Server) FileBytes(id, rev, path string) ([]byte, error) {
	disk, _, _, err := s.FileInfo(id, rev, path)
	if err != nil {
		return nil, err
	}
	return os.ReadFile(disk)
}
