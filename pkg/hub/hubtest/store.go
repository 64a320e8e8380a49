package hubtest

import (
	"crypto/sha1"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"
)

// entry is one file in a commit's tree.
type entry struct {
	Size int64
	OID  string // git blob sha1 (regular) or sha256 (LFS)
	LFS  bool
	Blob string // path of the content on disk
}

// commit is one node of a repo's commit chain; it holds the whole tree, which keeps lookups
// trivial for the small repos a test server holds.
type commit struct {
	SHA     string
	Parent  string
	Title   string
	Message string
	Author  string
	Time    time.Time
	Files   map[string]entry
}

// repo is a model repo: settings, branches and commits.
type repo struct {
	ID          string
	Private     bool
	Gated       string // "", "auto" or "manual"
	Disabled    bool
	Authorized  map[string]bool // users who accepted the gate
	Tags        []string
	PipelineTag string
	LibraryName string
	// WholeConfig serves config.json whole as the model info's config, where the Hub
	// serves its summary (infoConfig); see the WholeConfigInInfo option.
	WholeConfig bool
	// NoSafetensors leaves the safetensors totals out of the model info, as the Hub does
	// for a repo it has not indexed yet; see the NoSafetensorsInInfo option.
	NoSafetensors bool
	Created       time.Time
	Branches      map[string]string
	Commits       map[string]*commit
}

func newRepo(id string, now time.Time) *repo {
	return &repo{ID: id, Authorized: map[string]bool{}, Created: now, Branches: map[string]string{}, Commits: map[string]*commit{}}
}

// resolve maps a revision (branch, HEAD, full or 7+ character sha) to a commit.
func (r *repo) resolve(rev string) *commit {
	if rev == "" || rev == "HEAD" {
		rev = "main"
	}
	if sha, ok := r.Branches[rev]; ok {
		return r.Commits[sha]
	}
	if c, ok := r.Commits[rev]; ok {
		return c
	}
	if len(rev) >= 7 {
		for sha, c := range r.Commits {
			if strings.HasPrefix(sha, rev) {
				return c
			}
		}
	}
	return nil
}

// head is the commit main points at.
func (r *repo) head() *commit { return r.resolve("main") }

// addCommit records a new commit on branch and moves the branch.
func (r *repo) addCommit(branch string, parent *commit, title, message, author string, files map[string]entry, now time.Time) *commit {
	h := sha1.New()
	parentSHA := ""
	if parent != nil {
		parentSHA = parent.SHA
	}
	fmt.Fprintf(h, "%s\x00%s\x00%s\x00%d\x00%d", r.ID, parentSHA, title, now.UnixNano(), len(r.Commits))
	paths := make([]string, 0, len(files))
	for p := range files {
		paths = append(paths, p)
	}
	sort.Strings(paths)
	for _, p := range paths {
		fmt.Fprintf(h, "\x00%s\x00%s", p, files[p].OID)
	}
	c := &commit{SHA: hex.EncodeToString(h.Sum(nil)), Parent: parentSHA, Title: title, Message: message, Author: author, Time: now, Files: files}
	r.Commits[c.SHA] = c
	r.Branches[branch] = c.SHA
	return c
}

// history walks the first-parent chain from c.
func (r *repo) history(c *commit) []*commit {
	var out []*commit
	for c != nil {
		out = append(out, c)
		c = r.Commits[c.Parent]
	}
	return out
}

func copyTree(in map[string]entry) map[string]entry {
	out := make(map[string]entry, len(in))
	for k, v := range in {
		out[k] = v
	}
	return out
}

// blobStore keeps file contents on disk, named by their oid.
type blobStore struct{ dir string }

func (b blobStore) lfsPath(oid string) string { return filepath.Join(b.dir, "lfs", oid) }
func (b blobStore) gitPath(oid string) string { return filepath.Join(b.dir, "git", oid) }

// tempFile opens a new file under dir/tmp for a streamed write.
func (b blobStore) tempFile() (*os.File, error) {
	if err := os.MkdirAll(filepath.Join(b.dir, "tmp"), 0o755); err != nil {
		return nil, err
	}
	return os.CreateTemp(filepath.Join(b.dir, "tmp"), "upload-*")
}

// putRegular stores a small file and returns its tree entry.
func (b blobStore) putRegular(content []byte) (entry, error) {
	oid := gitSHA1(content)
	p := b.gitPath(oid)
	if err := writeOnce(p, content); err != nil {
		return entry{}, err
	}
	return entry{Size: int64(len(content)), OID: oid, Blob: p}, nil
}

// putLFSReader streams r into the LFS store and returns its entry.
func (b blobStore) putLFSReader(r io.Reader) (entry, error) {
	f, err := b.tempFile()
	if err != nil {
		return entry{}, err
	}
	defer os.Remove(f.Name())
	h := sha256.New()
	n, err := io.Copy(io.MultiWriter(f, h), r)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return entry{}, fmt.Errorf("store LFS object: %w", err)
	}
	oid := hex.EncodeToString(h.Sum(nil))
	if err := b.adoptLFS(f.Name(), oid); err != nil {
		return entry{}, err
	}
	return entry{Size: n, OID: oid, LFS: true, Blob: b.lfsPath(oid)}, nil
}

// adoptLFS moves a finished upload into place under its oid.
func (b blobStore) adoptLFS(tmp, oid string) error {
	dst := b.lfsPath(oid)
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		return err
	}
	return os.Rename(tmp, dst)
}

// hasLFS reports the size of a stored LFS object, or -1.
func (b blobStore) hasLFS(oid string) int64 {
	st, err := os.Stat(b.lfsPath(oid))
	if err != nil {
		return -1
	}
	return st.Size()
}

func writeOnce(p string, content []byte) error {
	if _, err := os.Stat(p); err == nil {
		return nil
	}
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		return err
	}
	// Each writer gets its own temporary file: two requests storing the same blob at once
	// must not rename one shared name from under each other.
	f, err := os.CreateTemp(filepath.Dir(p), filepath.Base(p)+".tmp*")
	if err != nil {
		return err
	}
	tmp := f.Name()
	if _, err := f.Write(content); err != nil {
		f.Close()
		os.Remove(tmp)
		return err
	}
	if err := f.Close(); err != nil {
		os.Remove(tmp)
		return err
	}
	if err := os.Chmod(tmp, 0o644); err != nil {
		os.Remove(tmp)
		return err
	}
	return os.Rename(tmp, p)
}

func gitSHA1(content []byte) string {
	h := sha1.New()
	fmt.Fprintf(h, "blob %d\x00", len(content))
	h.Write(content)
	return hex.EncodeToString(h.Sum(nil))
}

// lfsPointer is the git-lfs pointer file that /raw/ serves for an LFS file.
func lfsPointer(e entry) string {
	return fmt.Sprintf("version https://git-lfs.github.com/spec/v1\noid sha256:%s\nsize %d\n", e.OID, e.Size)
}

// defaultGitattributes is the start of the .gitattributes the Hub puts in a new repo.
const defaultGitattributes = `*.bin filter=lfs diff=lfs merge=lfs -text
*.gguf filter=lfs diff=lfs merge=lfs -text
*.onnx filter=lfs diff=lfs merge=lfs -text
*.pt filter=lfs diff=lfs merge=lfs -text
*.pte filter=lfs diff=lfs merge=lfs -text
*.safetensors filter=lfs diff=lfs merge=lfs -text
*.model filter=lfs diff=lfs merge=lfs -text
*.zip filter=lfs diff=lfs merge=lfs -text
`

// lfsByName reports whether the default .gitattributes sends a path to LFS.
func lfsByName(path string) bool {
	for _, ext := range []string{".bin", ".gguf", ".onnx", ".pt", ".pte", ".safetensors", ".model", ".zip"} {
		if strings.HasSuffix(path, ext) {
			return true
		}
	}
	return false
}
