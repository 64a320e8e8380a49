package hub

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"io"
	"net/http"
	"os"
	"strconv"
	"strings"
)

// FileMeta is what a HEAD on the resolve URL tells about a file
// (docs/research/hub.md#file-metadata-by-head).
type FileMeta struct {
	Commit string // X-Repo-Commit: the commit the revision resolved to
	ETag   string // git blob sha1 for regular files, sha256 for LFS files
	Size   int64
	// Location is the CDN URL an LFS file redirects to; empty for regular files.
	Location string
}

// IsLFS reports whether ETag is a sha256 (LFS/Xet) rather than a git blob sha1.
func (m FileMeta) IsLFS() bool { return len(m.ETag) == 64 }

// FileMeta HEADs a file without following redirects to other hosts, like the Python client.
func (c *Client) FileMeta(ctx context.Context, repo, rev, path string) (FileMeta, error) {
	if err := checkFile("file metadata", repo, rev, path); err != nil {
		return FileMeta{}, err
	}
	cl := call{method: "HEAD", url: c.resolveURL(repo, rev, path), repo: repo, revision: rev, path: path,
		header: http.Header{"Accept-Encoding": {"identity"}}, noRedirect: true}
	resp, err := c.do(ctx, cl)
	if err != nil {
		return FileMeta{}, err
	}
	defer drain(resp.Body)
	m := FileMeta{Commit: resp.Header.Get("X-Repo-Commit"), Location: resp.Header.Get("Location")}
	m.ETag = normalizeETag(firstHeader(resp.Header, "X-Linked-Etag", "ETag"))
	size := firstHeader(resp.Header, "X-Linked-Size", "Content-Length")
	if m.Size, err = strconv.ParseInt(size, 10, 64); err != nil || m.Size < 0 {
		if size == "" {
			return FileMeta{}, fmt.Errorf("hub: HEAD %s: the answer gives no file size (neither X-Linked-Size nor Content-Length)", cl.url)
		}
		return FileMeta{}, fmt.Errorf("hub: HEAD %s: the answer gives the file size as %q, not a byte count", cl.url, size)
	}
	return m, nil
}

// FileExists is FileMeta reduced to yes or no; a gated repo is an error, not a no.
func (c *Client) FileExists(ctx context.Context, repo, rev, path string) (bool, error) {
	_, err := c.FileMeta(ctx, repo, rev, path)
	switch {
	case err == nil:
		return true, nil
	case errors.Is(err, ErrGated):
		return false, err
	case errors.Is(err, ErrEntryNotFound), errors.Is(err, ErrRepoNotFound), errors.Is(err, ErrRevisionNotFound):
		return false, nil
	}
	return false, err
}

func firstHeader(h http.Header, keys ...string) string {
	for _, k := range keys {
		if v := h.Get(k); v != "" {
			return v
		}
	}
	return ""
}

func normalizeETag(s string) string {
	return strings.Trim(strings.TrimPrefix(s, "W/"), `"`)
}

// ReadRange reads up to length bytes of a file from off with one Range request. It returns
// fewer bytes only when the file ends first, and an empty slice past the end.
func (c *Client) ReadRange(ctx context.Context, repo, rev, path string, off, length int64) ([]byte, error) {
	if err := checkFile("read range", repo, rev, path); err != nil {
		return nil, err
	}
	if off < 0 || length < 0 {
		return nil, fmt.Errorf("hub: read %s of %s: negative range %d+%d", path, repo, off, length)
	}
	if length == 0 {
		return []byte{}, nil
	}
	cl := call{method: "GET", url: c.resolveURL(repo, rev, path), repo: repo, revision: rev, path: path,
		header: http.Header{"Range": {fmt.Sprintf("bytes=%d-%d", off, off+length-1)}}}
	resp, err := c.do(ctx, cl)
	if errors.Is(err, ErrRangeNotSatisfiable) {
		return []byte{}, nil
	}
	if err != nil {
		return nil, err
	}
	defer drain(resp.Body)
	if resp.StatusCode == http.StatusOK && off > 0 { // the server ignored Range
		if _, err := io.CopyN(io.Discard, resp.Body, off); err != nil {
			return []byte{}, nil // the file is shorter than off
		}
	}
	buf, err := io.ReadAll(io.LimitReader(resp.Body, length))
	if err != nil {
		return nil, fmt.Errorf("hub: read %s of %s at %d: %w", path, repo, off, err)
	}
	return buf, nil
}

// MaxReadFile bounds ReadFile: it is for configs and indexes, never for weights.
const MaxReadFile = 64 << 20

// ReadFile downloads a small file whole into memory.
func (c *Client) ReadFile(ctx context.Context, repo, rev, path string) ([]byte, error) {
	if err := checkFile("read file", repo, rev, path); err != nil {
		return nil, err
	}
	cl := call{method: "GET", url: c.resolveURL(repo, rev, path), repo: repo, revision: rev, path: path}
	resp, err := c.do(ctx, cl)
	if err != nil {
		return nil, err
	}
	defer drain(resp.Body)
	if resp.ContentLength > MaxReadFile {
		return nil, fmt.Errorf("hub: read %s of %s: %d bytes is too large to hold in memory; use Download", path, repo, resp.ContentLength)
	}
	b, err := io.ReadAll(io.LimitReader(resp.Body, MaxReadFile+1))
	if err != nil {
		return nil, fmt.Errorf("hub: read %s of %s: %w", path, repo, err)
	}
	if len(b) > MaxReadFile {
		return nil, fmt.Errorf("hub: read %s of %s: larger than %d bytes; use Download", path, repo, MaxReadFile)
	}
	return b, nil
}

// Downloaded describes a file written by Download.
type Downloaded struct {
	Path   string // local path
	Size   int64
	SHA256 string // computed while writing, so the file is never read twice
	Commit string // X-Repo-Commit of the last response, when the server sent it
}

// Download streams a file to dst. It writes dst.incomplete first and resumes from its size
// with a Range request, both after a dropped connection and across runs; it checks the size
// and, for LFS files, the sha256 the server announced before renaming to dst.
func (c *Client) Download(ctx context.Context, repo, rev, path, dst string) (*Downloaded, error) {
	if err := checkFile("download", repo, rev, path); err != nil {
		return nil, err
	}
	part := dst + ".incomplete"
	f, err := os.OpenFile(part, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, fmt.Errorf("hub: download %s: %w", path, err)
	}
	defer f.Close()
	h := sha256.New()
	have, err := io.Copy(h, f) // hash what an earlier run left
	if err != nil {
		return nil, fmt.Errorf("hub: read partial download %s: %w", part, err)
	}
	meta, err := c.FileMeta(ctx, repo, rev, path) // the Hub's sha256 and commit: the CDN has neither
	if err != nil {
		return nil, err
	}
	d := &downloader{c: c, repo: repo, rev: rev, path: path, f: f, h: h, have: have, etag: meta.ETag, commit: meta.Commit, size: meta.Size}
	if err := d.run(ctx); err != nil {
		return nil, err
	}
	if err := f.Close(); err != nil {
		return nil, fmt.Errorf("hub: close %s: %w", part, err)
	}
	if err := os.Rename(part, dst); err != nil {
		return nil, fmt.Errorf("hub: download %s: %w", path, err)
	}
	return &Downloaded{Path: dst, Size: d.have, SHA256: hex.EncodeToString(h.Sum(nil)), Commit: d.commit}, nil
}

// downloader holds the state of one resumable download.
type downloader struct {
	c               *Client
	repo, rev, path string
	f               *os.File
	h               hash.Hash
	have, total     int64
	size            int64 // announced by the Hub
	etag, commit    string
}

// maxResumes bounds how many dropped connections one download survives.
const maxResumes = 8

func (d *downloader) run(ctx context.Context) error {
	var lastErr error
	for attempt := 0; attempt <= maxResumes; attempt++ {
		done, err := d.once(ctx)
		if done {
			return d.verify()
		}
		var he *Error
		if errors.As(err, &he) || ctx.Err() != nil {
			return err
		}
		lastErr = err
		d.c.log.Debug("hub: download interrupted, resuming", "path", d.path, "have", d.have, "err", err)
	}
	return fmt.Errorf("hub: download %s of %s: gave up after %d resumes: %w", d.path, d.repo, maxResumes, lastErr)
}

// once sends one GET from the current offset and copies the body; done is true when the
// whole file is on disk.
func (d *downloader) once(ctx context.Context) (bool, error) {
	cl := call{method: "GET", url: d.c.resolveURL(d.repo, d.rev, d.path), repo: d.repo, revision: d.rev, path: d.path, header: http.Header{}}
	if d.have > 0 {
		cl.header.Set("Range", fmt.Sprintf("bytes=%d-", d.have))
	}
	resp, err := d.c.do(ctx, cl)
	if errors.Is(err, ErrRangeNotSatisfiable) && d.total == 0 {
		// The partial file is already complete (or longer than the file): start over.
		return false, d.restart()
	}
	if err != nil {
		return false, err
	}
	defer resp.Body.Close()
	d.noteHeaders(resp)
	if resp.StatusCode == http.StatusOK && d.have > 0 {
		if err := d.restart(); err != nil { // the server ignored Range: take it from the top
			return false, err
		}
	}
	if _, err := d.f.Seek(d.have, io.SeekStart); err != nil {
		return false, fmt.Errorf("hub: seek %s: %w", d.f.Name(), err)
	}
	n, err := io.Copy(io.MultiWriter(d.f, d.h), resp.Body)
	d.have += n
	if err != nil {
		return false, fmt.Errorf("hub: download %s of %s at byte %d: %w", d.path, d.repo, d.have, err)
	}
	return d.total < 0 || d.have >= d.total, nil
}

func (d *downloader) restart() error {
	d.have = 0
	d.h.Reset()
	if err := d.f.Truncate(0); err != nil {
		return fmt.Errorf("hub: truncate %s: %w", d.f.Name(), err)
	}
	return nil
}

// noteHeaders learns the total size, the announced hash and the commit.
func (d *downloader) noteHeaders(resp *http.Response) {
	d.total = -1
	if cr := resp.Header.Get("Content-Range"); cr != "" {
		if i := strings.LastIndexByte(cr, '/'); i >= 0 {
			if t, err := strconv.ParseInt(cr[i+1:], 10, 64); err == nil {
				d.total = t
			}
		}
	} else if resp.StatusCode == http.StatusOK && resp.ContentLength >= 0 {
		d.total = resp.ContentLength
	}
}

func (d *downloader) verify() error {
	if d.have != d.size {
		return fmt.Errorf("hub: download %s of %s: got %d bytes, the Hub announced %d", d.path, d.repo, d.have, d.size)
	}
	if d.total >= 0 && d.have != d.total {
		return fmt.Errorf("hub: download %s of %s: got %d bytes, want %d", d.path, d.repo, d.have, d.total)
	}
	if len(d.etag) == 64 {
		if got := hex.EncodeToString(d.h.Sum(nil)); got != d.etag {
			return fmt.Errorf("hub: download %s of %s: sha256 %s does not match the Hub's %s; delete %s and retry", d.path, d.repo, got, d.etag, d.f.Name())
		}
	}
	return nil
}
