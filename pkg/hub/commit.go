package hub

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"

	"github.com/hashicorp/go-retryablehttp"

	"github.com/experimentalmachines/exe-expo/internal/fileutil"
)

// CommitFile is one file to add or replace. Give LocalPath for anything large: it is
// streamed from disk, never loaded. Content is for small generated files (README.md,
// config.json). Size and SHA256, when known (from the export report), spare a second pass
// over the file.
type CommitFile struct {
	PathInRepo string
	LocalPath  string
	Content    []byte
	Size       int64
	SHA256     string
}

// CommitRequest is one atomic commit: the publisher's unit of work.
type CommitRequest struct {
	Repo string
	// Branch is the revision to commit to; empty is main.
	Branch      string
	Summary     string // commit title, required
	Description string
	// ParentCommit is the sha the commit must land on; a moved branch fails with
	// ErrStaleParent (HTTP 412) and nothing is written.
	ParentCommit string
	Add          []CommitFile
	// Delete lists paths to remove; a path ending in "/" removes a folder.
	Delete []string
}

// CommitResult reports what the Hub created.
type CommitResult struct {
	OID string // new commit sha
	URL string
	// Unchanged lists paths left out because the Hub already had identical content.
	Unchanged []string
	// Ignored lists paths the repo's .gitignore excluded.
	Ignored []string
	// Uploaded lists LFS objects that were sent (objects the Hub already stored are not).
	Uploaded []string
	// Recovered says the commit's answer was lost and a re-read found everything already
	// in place: it landed, under a commit id this client never saw (OID and URL are empty).
	Recovered bool
}

// plannedFile is a CommitFile after preupload.
type plannedFile struct {
	CommitFile
	lfs bool
}

// Commit uploads the files and creates one commit: preupload to learn each file's upload
// mode, LFS batch upload of the large ones (multipart parts in parallel), then the NDJSON
// commit with parentCommit. LFS objects stay on the Hub when the commit fails, so a retry
// after ErrStaleParent or ErrConflict uploads nothing again. The commit POST itself is not
// retried on a 5xx, since a retry could land twice.
func (c *Client) Commit(ctx context.Context, req CommitRequest) (*CommitResult, error) {
	if err := firstErr(checkRepo("commit", req.Repo), checkRev("commit", req.Branch), checkDeletes(req.Delete)); err != nil {
		return nil, err
	}
	if strings.TrimSpace(req.Summary) == "" {
		return nil, fmt.Errorf("hub: commit to %s: the summary (commit title) is empty", req.Repo)
	}
	req.Branch = orMain(req.Branch)
	files, err := sizeFiles(req.Add)
	if err != nil {
		return nil, err
	}
	res := &CommitResult{}
	planned, err := c.preupload(ctx, req.Repo, req.Branch, files, res)
	if err != nil {
		return nil, err
	}
	if err := c.uploadLFS(ctx, req.Repo, req.Branch, planned, res); err != nil {
		return nil, err
	}
	if len(planned) == 0 && len(req.Delete) == 0 {
		return nil, fmt.Errorf("hub: commit to %s: nothing to commit (every file is unchanged or ignored): %w", req.Repo, ErrNoChanges)
	}
	oid, url, err := c.postCommit(ctx, req, planned)
	if err != nil {
		return nil, err
	}
	res.OID, res.URL = oid, url
	return res, nil
}

// ErrNoChanges means every file of a commit is already on the Hub with the same content.
var ErrNoChanges = errors.New("no changes")

// sizeFiles fills in missing sizes from disk and checks each file has one source.
func sizeFiles(in []CommitFile) ([]CommitFile, error) {
	out := make([]CommitFile, len(in))
	for i, f := range in {
		if err := checkPath(fmt.Sprintf("commit file %d", i), f.PathInRepo); err != nil {
			return nil, err
		}
		switch {
		case f.LocalPath != "" && f.Content != nil:
			return nil, fmt.Errorf("hub: commit file %s: set LocalPath or Content, not both", f.PathInRepo)
		case f.LocalPath != "":
			st, err := os.Stat(f.LocalPath)
			if err != nil {
				return nil, fmt.Errorf("hub: commit file %s: %w", f.PathInRepo, err)
			}
			if f.Size != 0 && f.Size != st.Size() {
				return nil, fmt.Errorf("hub: commit file %s: %s is %d bytes, the report says %d", f.PathInRepo, f.LocalPath, st.Size(), f.Size)
			}
			f.Size = st.Size()
		default:
			f.Size = int64(len(f.Content))
		}
		out[i] = f
	}
	return out, nil
}

// checkDeletes refuses a path to delete that the Hub would refuse; a trailing '/' names a
// folder.
func checkDeletes(paths []string) error {
	for _, p := range paths {
		if err := checkPath("commit deletion", strings.TrimSuffix(p, "/")); err != nil {
			return err
		}
	}
	return nil
}

// open returns a reader over the file's content.
func (f CommitFile) open() (io.ReadCloser, error) {
	if f.LocalPath == "" {
		return io.NopCloser(strings.NewReader(string(f.Content))), nil
	}
	r, err := os.Open(f.LocalPath)
	if err != nil {
		return nil, fileutil.Error("open", f.LocalPath, err)
	}
	return r, nil
}

// sample is the first 512 bytes, which the Hub sniffs for binary content.
func (f CommitFile) sample() ([]byte, error) {
	r, err := f.open()
	if err != nil {
		return nil, err
	}
	defer r.Close()
	buf := make([]byte, 512)
	n, err := io.ReadFull(r, buf)
	if err != nil && err != io.ErrUnexpectedEOF && err != io.EOF {
		return nil, fmt.Errorf("hub: read sample of %s: %w", f.PathInRepo, err)
	}
	return buf[:n], nil
}

// sha256Hex returns the known sha256 (the export report carries it, see fileutil.Hash) or
// computes it once.
func (f *CommitFile) sha256Hex() (string, error) {
	if f.SHA256 != "" {
		return strings.ToLower(f.SHA256), nil
	}
	if f.LocalPath == "" {
		sum := sha256.Sum256(f.Content)
		f.SHA256 = hex.EncodeToString(sum[:])
		return f.SHA256, nil
	}
	d, err := fileutil.Hash(f.LocalPath) // its errors name the file
	if err != nil {
		return "", err
	}
	f.SHA256 = d.SHA256
	return f.SHA256, nil
}

type preuploadFile struct {
	Path   string `json:"path"`
	Size   int64  `json:"size"`
	Sample string `json:"sample"`
}

type preuploadAnswer struct {
	Files []struct {
		Path         string `json:"path"`
		UploadMode   string `json:"uploadMode"`
		ShouldIgnore bool   `json:"shouldIgnore"`
		OID          string `json:"oid"`
	} `json:"files"`
	CommitOID string `json:"commitOid"`
}

// preupload asks the Hub, 256 files at a time, which files go through LFS, which are
// ignored, and which it already has.
func (c *Client) preupload(ctx context.Context, repo, branch string, files []CommitFile, res *CommitResult) ([]plannedFile, error) {
	var out []plannedFile
	for start := 0; start < len(files); start += 256 {
		chunk := files[start:min(start+256, len(files))]
		body := struct {
			Files []preuploadFile `json:"files"`
		}{}
		for _, f := range chunk {
			s, err := f.sample()
			if err != nil {
				return nil, err
			}
			body.Files = append(body.Files, preuploadFile{Path: f.PathInRepo, Size: f.Size, Sample: base64.StdEncoding.EncodeToString(s)})
		}
		payload, _ := json.Marshal(body)
		var ans preuploadAnswer
		u := c.modelURL(repo, "preupload", orMain(branch))
		if err := c.postJSON(ctx, call{method: "POST", url: u, body: payload, header: jsonHeader, repo: repo, revision: branch}, &ans); err != nil {
			return nil, err
		}
		modes := map[string]int{}
		for i, a := range ans.Files {
			modes[a.Path] = i
		}
		for _, f := range chunk {
			i, ok := modes[f.PathInRepo]
			if !ok {
				return nil, fmt.Errorf("hub: preupload of %s: the Hub did not answer for %s", repo, f.PathInRepo)
			}
			a := ans.Files[i]
			if a.ShouldIgnore {
				res.Ignored = append(res.Ignored, f.PathInRepo)
				continue
			}
			lfs := a.UploadMode == "lfs" && f.Size > 0 // empty files are always regular
			if a.UploadMode != "lfs" && a.UploadMode != "regular" {
				return nil, fmt.Errorf("hub: preupload of %s: unknown upload mode %q for %s", repo, a.UploadMode, f.PathInRepo)
			}
			same, err := unchanged(&f, lfs, a.OID)
			if err != nil {
				return nil, err
			}
			if same {
				res.Unchanged = append(res.Unchanged, f.PathInRepo)
				continue
			}
			out = append(out, plannedFile{CommitFile: f, lfs: lfs})
		}
	}
	return out, nil
}

// unchanged compares the Hub's oid of a path with the local one: sha256 for LFS files, the
// git blob sha1 for regular ones.
func unchanged(f *CommitFile, lfs bool, remote string) (bool, error) {
	if remote == "" {
		return false, nil
	}
	if lfs {
		sha, err := f.sha256Hex()
		return sha == remote, err
	}
	r, err := f.open()
	if err != nil {
		return false, err
	}
	defer r.Close()
	oid, err := GitBlobSHA1(r, f.Size)
	if err != nil {
		return false, fmt.Errorf("hub: %s: %w", f.PathInRepo, err)
	}
	return oid == remote, nil
}

// postCommit sends the NDJSON commit; the body is generated while it is sent, so regular
// files are base64-encoded straight from disk.
func (c *Client) postCommit(ctx context.Context, req CommitRequest, files []plannedFile) (string, string, error) {
	u := c.modelURL(req.Repo, "commit", orMain(req.Branch))
	body := retryablehttp.ReaderFunc(func() (io.Reader, error) {
		pr, pw := io.Pipe()
		go func() { pw.CloseWithError(writeNDJSON(pw, req, files)) }()
		return pr, nil
	})
	var out struct {
		CommitOID string `json:"commitOid"`
		CommitURL string `json:"commitUrl"`
	}
	err := c.postJSON(ctx, call{method: "POST", url: u, body: body, noRetry: true, repo: req.Repo, revision: req.Branch,
		header: http.Header{"Content-Type": {"application/x-ndjson"}}}, &out)
	if err != nil {
		return "", "", err
	}
	if out.CommitOID == "" {
		return "", "", fmt.Errorf("hub: commit to %s: the answer has no commitOid", req.Repo)
	}
	return out.CommitOID, out.CommitURL, nil
}

// writeNDJSON writes the header line and one line per operation.
func writeNDJSON(w io.Writer, req CommitRequest, files []plannedFile) error {
	enc := json.NewEncoder(w)
	header := map[string]any{"summary": req.Summary, "description": req.Description}
	if req.ParentCommit != "" {
		header["parentCommit"] = req.ParentCommit
	}
	if err := enc.Encode(map[string]any{"key": "header", "value": header}); err != nil {
		return err
	}
	for _, f := range files {
		if err := writeFileLine(w, enc, f); err != nil {
			return err
		}
	}
	for _, p := range req.Delete {
		key := "deletedFile"
		if strings.HasSuffix(p, "/") {
			key = "deletedFolder"
		}
		if err := enc.Encode(map[string]any{"key": key, "value": map[string]string{"path": p}}); err != nil {
			return err
		}
	}
	return nil
}

func writeFileLine(w io.Writer, enc *json.Encoder, f plannedFile) error {
	if f.lfs {
		return enc.Encode(map[string]any{"key": "lfsFile", "value": map[string]any{
			"path": f.PathInRepo, "algo": "sha256", "oid": f.SHA256, "size": f.Size}})
	}
	// {"key":"file","value":{"path":…,"encoding":"base64","content":"<streamed>"}}
	p, _ := json.Marshal(f.PathInRepo)
	if _, err := fmt.Fprintf(w, `{"key":"file","value":{"path":%s,"encoding":"base64","content":"`, p); err != nil {
		return err
	}
	r, err := f.open()
	if err != nil {
		return err
	}
	defer r.Close()
	b64 := base64.NewEncoder(base64.StdEncoding, w)
	if _, err := io.Copy(b64, r); err != nil {
		return fmt.Errorf("hub: encode %s: %w", f.PathInRepo, err)
	}
	if err := b64.Close(); err != nil {
		return err
	}
	_, err = io.WriteString(w, "\"}}\n")
	return err
}
