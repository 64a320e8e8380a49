package hub

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"sort"
	"strconv"
	"strings"
	"sync"

	"github.com/hashicorp/go-retryablehttp"

	"github.com/experimentalmachines/exe-expo/internal/fileutil"
)

var lfsHeader = http.Header{
	"Accept":       {"application/vnd.git-lfs+json"},
	"Content-Type": {"application/vnd.git-lfs+json"},
}

type lfsAction struct {
	Href   string            `json:"href"`
	Header map[string]string `json:"header,omitempty"`
}

type lfsObject struct {
	OID     string `json:"oid"`
	Size    int64  `json:"size"`
	Actions *struct {
		Upload *lfsAction `json:"upload,omitempty"`
		Verify *lfsAction `json:"verify,omitempty"`
	} `json:"actions,omitempty"`
	Error *struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
	} `json:"error,omitempty"`
}

// uploadLFS hashes the LFS files that lack a sha256, asks the batch endpoint (100 objects at
// a time) where to put them, and uploads the ones the Hub does not have yet.
func (c *Client) uploadLFS(ctx context.Context, repo, branch string, files []plannedFile, res *CommitResult) error {
	var lfs []*plannedFile
	for i := range files {
		if files[i].lfs {
			if _, err := files[i].sha256Hex(); err != nil {
				return err
			}
			lfs = append(lfs, &files[i])
		}
	}
	for start := 0; start < len(lfs); start += 100 {
		chunk := lfs[start:min(start+100, len(lfs))]
		objs, err := c.lfsBatch(ctx, repo, branch, chunk)
		if err != nil {
			return err
		}
		byOID := map[string]*plannedFile{}
		for _, f := range chunk {
			byOID[f.SHA256] = f
		}
		for _, o := range objs {
			f := byOID[o.OID]
			if f == nil {
				return fmt.Errorf("hub: LFS batch of %s answered for an object we did not send (%s)", repo, o.OID)
			}
			if o.Error != nil {
				return fmt.Errorf("hub: LFS batch of %s refused %s: %d %s", repo, f.PathInRepo, o.Error.Code, o.Error.Message)
			}
			if o.Actions == nil || o.Actions.Upload == nil {
				continue // already stored
			}
			if err := c.uploadObject(ctx, f, o); err != nil {
				return err
			}
			res.Uploaded = append(res.Uploaded, f.PathInRepo)
		}
	}
	return nil
}

func (c *Client) lfsBatch(ctx context.Context, repo, branch string, files []*plannedFile) ([]lfsObject, error) {
	type obj struct {
		OID  string `json:"oid"`
		Size int64  `json:"size"`
	}
	body := map[string]any{
		"operation": "upload",
		"transfers": []string{"basic", "multipart"}, // never "xet": the Hub then serves plain LFS
		"hash_algo": "sha256",
		"ref":       map[string]string{"name": branch},
	}
	var objs []obj
	for _, f := range files {
		objs = append(objs, obj{OID: f.SHA256, Size: f.Size})
	}
	body["objects"] = objs
	payload, _ := json.Marshal(body)
	var ans struct {
		Transfer string      `json:"transfer"`
		Objects  []lfsObject `json:"objects"`
	}
	u := c.repoPage(repo) + ".git/info/lfs/objects/batch"
	if err := c.postJSON(ctx, call{method: "POST", url: u, body: payload, header: lfsHeader, repo: repo, revision: branch}, &ans); err != nil {
		return nil, err
	}
	if ans.Transfer != "" && ans.Transfer != "basic" && ans.Transfer != "multipart" {
		return nil, fmt.Errorf("hub: LFS batch of %s chose transfer %q, which this client does not speak", repo, ans.Transfer)
	}
	return ans.Objects, nil
}

// uploadObject sends one object: a single presigned PUT, or parts in parallel and a
// completion call when the server gave a chunk_size; then the optional verify call.
func (c *Client) uploadObject(ctx context.Context, f *plannedFile, o lfsObject) error {
	up := o.Actions.Upload
	var err error
	if cs, ok := up.Header["chunk_size"]; ok {
		err = c.uploadMultipart(ctx, f, up, cs)
	} else {
		err = c.putPart(ctx, f, up.Href, 0, f.Size, nil)
	}
	if err != nil {
		return err
	}
	if v := o.Actions.Verify; v != nil {
		payload, _ := json.Marshal(map[string]any{"oid": f.SHA256, "size": f.Size})
		h := lfsHeader.Clone()
		for k, val := range v.Header {
			h.Set(k, val)
		}
		if err := c.postJSON(ctx, call{method: "POST", url: v.Href, body: payload, header: h, path: f.PathInRepo}, nil); err != nil {
			return fmt.Errorf("hub: verify upload of %s: %w", f.PathInRepo, err)
		}
	}
	return nil
}

// putPart PUTs [off, off+n) of the file to a presigned URL: no token, an explicit
// Content-Length, and a body that is re-opened on each retry. It returns the ETag.
func (c *Client) putPart(ctx context.Context, f *plannedFile, href string, off, n int64, etag *string) error {
	var body retryablehttp.ReaderFunc
	if f.LocalPath != "" {
		fh, err := os.Open(f.LocalPath)
		if err != nil {
			return fileutil.Error("open", f.LocalPath, err)
		}
		defer fh.Close()
		body = func() (io.Reader, error) { return io.NewSectionReader(fh, off, n), nil }
	} else {
		body = func() (io.Reader, error) { return bytes.NewReader(f.Content[off : off+n]), nil }
	}
	cl := call{method: "PUT", url: href, body: body, length: n, noAuth: true, path: f.PathInRepo}
	if n == 0 {
		cl.body = []byte{}
	}
	resp, err := c.do(ctx, cl)
	if err != nil {
		return fmt.Errorf("hub: upload %s (bytes %d-%d): %w", f.PathInRepo, off, off+n, err)
	}
	defer drain(resp.Body)
	if etag != nil {
		*etag = resp.Header.Get("ETag")
		if *etag == "" {
			return fmt.Errorf("hub: upload %s (bytes %d-%d): the storage answered without an ETag", f.PathInRepo, off, off+n)
		}
	}
	return nil
}

type partURL struct {
	num int
	url string
}

// uploadMultipart sends the parts named by the all-digit header keys, c.parallel at a time,
// then POSTs the completion with every part's ETag.
func (c *Client) uploadMultipart(ctx context.Context, f *plannedFile, up *lfsAction, chunkSize string) error {
	chunk, err := strconv.ParseInt(chunkSize, 10, 64)
	if err != nil || chunk <= 0 {
		return fmt.Errorf("hub: upload %s: bad chunk_size %q", f.PathInRepo, chunkSize)
	}
	var parts []partURL
	for k, v := range up.Header {
		if n, err := strconv.Atoi(k); err == nil && strings.Trim(k, "0123456789") == "" {
			parts = append(parts, partURL{n, v})
		}
	}
	sort.Slice(parts, func(i, j int) bool { return parts[i].num < parts[j].num })
	if want := (f.Size + chunk - 1) / chunk; int64(len(parts)) != want {
		return fmt.Errorf("hub: upload %s: the server gave %d part URLs for %d parts of %d bytes", f.PathInRepo, len(parts), want, chunk)
	}
	etags, err := c.sendParts(ctx, f, parts, chunk)
	if err != nil {
		return err
	}
	type done struct {
		PartNumber int    `json:"partNumber"`
		ETag       string `json:"etag"`
	}
	complete := struct {
		OID   string `json:"oid"`
		Parts []done `json:"parts"`
	}{OID: f.SHA256}
	for i, p := range parts {
		complete.Parts = append(complete.Parts, done{p.num, etags[i]})
	}
	payload, _ := json.Marshal(complete)
	if err := c.postJSON(ctx, call{method: "POST", url: up.Href, body: payload, header: lfsHeader, noAuth: true, path: f.PathInRepo}, nil); err != nil {
		return fmt.Errorf("hub: complete multipart upload of %s: %w", f.PathInRepo, err)
	}
	return nil
}

func (c *Client) sendParts(ctx context.Context, f *plannedFile, parts []partURL, chunk int64) ([]string, error) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	etags := make([]string, len(parts))
	errs := make(chan error, len(parts))
	sem := make(chan struct{}, c.parallel)
	var wg sync.WaitGroup
	for i, p := range parts {
		off := int64(i) * chunk
		n := min(chunk, f.Size-off)
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer func() { <-sem; wg.Done() }()
			if err := c.putPart(ctx, f, p.url, off, n, &etags[i]); err != nil {
				errs <- err
				cancel()
			}
		}()
	}
	wg.Wait()
	close(errs)
	if err := <-errs; err != nil {
		return nil, err
	}
	return etags, nil
}
