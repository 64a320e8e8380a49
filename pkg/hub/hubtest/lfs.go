package hubtest

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"hash/crc32"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"sync"
)

// multipart is an LFS upload in progress, addressed by presigned-style URLs.
type multipart struct {
	oid   string
	size  int64
	chunk int64 // 0 for a single PUT
	sig   string
	path  string // the object being assembled

	mu    sync.Mutex
	etags map[int]string
}

const lfsContentType = "application/vnd.git-lfs+json"

func (s *Server) routeLFS(w http.ResponseWriter, r *http.Request, id, action string) {
	switch {
	case action == "batch" && r.Method == http.MethodPost:
		s.lfsBatch(w, r, id)
	case action == "verify" && r.Method == http.MethodPost:
		s.lfsVerify(w, r, id)
	default:
		writeError(w, http.StatusNotFound, "", "hubtest: no LFS route "+action)
	}
}

// lfsBatch answers the git-lfs batch API with basic or multipart upload actions.
func (s *Server) lfsBatch(w http.ResponseWriter, r *http.Request, id string) {
	c := s.who(r)
	var req struct {
		Operation string   `json:"operation"`
		Transfers []string `json:"transfers"`
		HashAlgo  string   `json:"hash_algo"`
		Ref       *struct {
			Name string `json:"name"`
		} `json:"ref"`
		Objects []struct {
			OID  string `json:"oid"`
			Size int64  `json:"size"`
		} `json:"objects"`
	}
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil || req.Operation != "upload" {
		writeError(w, http.StatusBadRequest, "", "hubtest: want an LFS upload batch")
		return
	}
	if req.HashAlgo != "" && req.HashAlgo != "sha256" && req.HashAlgo != "sha_256" {
		writeError(w, http.StatusBadRequest, "", "unsupported hash_algo "+req.HashAlgo)
		return
	}
	if req.Ref != nil && refuseRev(w, req.Ref.Name) {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.writable(w, c, id) == nil {
		return
	}
	multi := contains(req.Transfers, "multipart")
	transfer := "basic"
	objects := []map[string]any{}
	for _, o := range req.Objects {
		item := map[string]any{"oid": o.OID, "size": o.Size}
		switch {
		case len(o.OID) != 64 || o.Size < 0:
			item["error"] = map[string]any{"code": 422, "message": "invalid oid or size"}
		case s.blobs.hasLFS(o.OID) == o.Size:
			// already stored: no actions
		default:
			up := s.newUpload(o.OID, o.Size, multi && o.Size >= s.MultipartThreshold)
			item["authenticated"] = true
			item["actions"] = s.actions(r, id, up)
			if up.chunk > 0 {
				transfer = "multipart"
			}
		}
		objects = append(objects, item)
	}
	w.Header().Set("Content-Type", lfsContentType)
	w.WriteHeader(http.StatusOK)
	_ = json.NewEncoder(w).Encode(map[string]any{"transfer": transfer, "objects": objects})
}

func (s *Server) newUpload(oid string, size int64, multi bool) *multipart {
	up := &multipart{oid: oid, size: size, sig: randomHex(16), etags: map[int]string{},
		path: filepath.Join(s.dir, "uploads", oid+"-"+randomHex(4))}
	if multi {
		up.chunk = s.ChunkSize
	}
	s.uploads[uploadKey(oid, up.sig)] = up // like presigned URLs, one never voids another
	return up
}

func (s *Server) actions(r *http.Request, id string, up *multipart) map[string]any {
	store := base(r) + "/lfs-storage/" + up.oid
	acts := map[string]any{}
	if up.chunk == 0 {
		acts["upload"] = map[string]any{"href": store + "?X-Amz-Signature=" + up.sig, "expires_in": 86400}
	} else {
		header := map[string]string{"chunk_size": strconv.FormatInt(up.chunk, 10)}
		n := (up.size + up.chunk - 1) / up.chunk
		for i := int64(1); i <= n; i++ {
			header[fmt.Sprintf("%05d", i)] = fmt.Sprintf("%s/part/%d?X-Amz-Signature=%s", store, i, up.sig)
		}
		acts["upload"] = map[string]any{"href": store + "/complete?X-Amz-Signature=" + up.sig, "header": header, "expires_in": 86400}
	}
	if s.Verify {
		acts["verify"] = map[string]any{"href": base(r) + "/" + id + ".git/info/lfs/objects/verify", "header": map[string]string{"X-Hubtest": "verify"}}
	}
	return acts
}

func (s *Server) lfsVerify(w http.ResponseWriter, r *http.Request, id string) {
	c := s.who(r)
	var req struct {
		OID  string `json:"oid"`
		Size int64  `json:"size"`
	}
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
		writeError(w, http.StatusBadRequest, "", "bad verify body")
		return
	}
	s.mu.Lock()
	ok := s.writable(w, c, id) != nil
	s.mu.Unlock()
	if !ok {
		return
	}
	if s.blobs.hasLFS(req.OID) != req.Size {
		writeError(w, http.StatusNotFound, "", "object "+req.OID+" is not stored with that size")
		return
	}
	w.Header().Set("Content-Type", lfsContentType)
	w.WriteHeader(http.StatusOK)
}

// routeStorage is the presigned storage: PUT {oid}, PUT {oid}/part/{n}, POST {oid}/complete.
// Like S3 it refuses an Authorization header next to the signature and a body without a
// Content-Length.
func (s *Server) routeStorage(w http.ResponseWriter, r *http.Request, seg []string) {
	s.mu.Lock()
	up := s.uploads[uploadKey(seg[0], r.URL.Query().Get("X-Amz-Signature"))]
	s.mu.Unlock()
	if up == nil {
		writeError(w, http.StatusForbidden, "", "SignatureDoesNotMatch")
		return
	}
	if r.Header.Get("Authorization") != "" {
		writeError(w, http.StatusBadRequest, "", "InvalidArgument: Only one auth mechanism allowed; only the X-Amz-Algorithm query parameter, Signature query string parameter or the Authorization header should be specified")
		return
	}
	switch {
	case len(seg) == 1 && r.Method == http.MethodPut && up.chunk == 0:
		s.putObject(w, r, up)
	case len(seg) == 3 && seg[1] == "part" && r.Method == http.MethodPut && up.chunk > 0:
		n, err := strconv.Atoi(seg[2])
		if err != nil {
			writeError(w, http.StatusBadRequest, "", "bad part number")
			return
		}
		s.putPart(w, r, up, n)
	case len(seg) == 2 && seg[1] == "complete" && r.Method == http.MethodPost && up.chunk > 0:
		s.complete(w, r, up)
	default:
		writeError(w, http.StatusMethodNotAllowed, "", "hubtest: storage does not take "+r.Method+" here")
	}
}

// uploadKey names an upload by its object and signature: two publishers sending the same
// object at once each hold a valid URL, as with S3's presigned URLs.
func uploadKey(oid, sig string) string { return oid + " " + sig }

func needLength(w http.ResponseWriter, r *http.Request, want int64) bool {
	if r.ContentLength < 0 {
		writeError(w, http.StatusLengthRequired, "", "MissingContentLength: You must provide the Content-Length HTTP header.")
		return false
	}
	if r.ContentLength != want {
		writeError(w, http.StatusBadRequest, "", fmt.Sprintf("IncompleteBody: got Content-Length %d, want %d", r.ContentLength, want))
		return false
	}
	return true
}

// putObject takes a whole object and checks its sha256 against the oid.
func (s *Server) putObject(w http.ResponseWriter, r *http.Request, up *multipart) {
	if !needLength(w, r, up.size) {
		return
	}
	e, err := s.blobs.putLFSReader(io.LimitReader(r.Body, up.size+1))
	if err != nil {
		writeError(w, http.StatusInternalServerError, "", err.Error())
		return
	}
	if e.OID != up.oid || e.Size != up.size {
		_ = os.Remove(e.Blob)
		writeError(w, http.StatusBadRequest, "", fmt.Sprintf("BadDigest: content has sha256 %s and %d bytes, the batch announced %s and %d", e.OID, e.Size, up.oid, up.size))
		return
	}
	w.Header().Set("ETag", `"`+up.oid[:32]+`"`)
	w.WriteHeader(http.StatusOK)
}

// putPart writes a part in place in the object file, so completion needs no copy.
func (s *Server) putPart(w http.ResponseWriter, r *http.Request, up *multipart, n int) {
	off := int64(n-1) * up.chunk
	if n < 1 || off >= up.size {
		writeError(w, http.StatusBadRequest, "", "part number out of range")
		return
	}
	if !needLength(w, r, min(up.chunk, up.size-off)) {
		return
	}
	if err := os.MkdirAll(filepath.Dir(up.path), 0o755); err != nil {
		writeError(w, http.StatusInternalServerError, "", err.Error())
		return
	}
	f, err := os.OpenFile(up.path, os.O_WRONLY|os.O_CREATE, 0o644)
	if err != nil {
		writeError(w, http.StatusInternalServerError, "", err.Error())
		return
	}
	defer f.Close()
	crc := crc32.NewIEEE()
	got, err := io.Copy(io.MultiWriter(io.NewOffsetWriter(f, off), crc), r.Body)
	if err != nil || got != r.ContentLength {
		writeError(w, http.StatusBadRequest, "", fmt.Sprintf("IncompleteBody: part %d got %d bytes: %v", n, got, err))
		return
	}
	etag := fmt.Sprintf(`"%08x%08x"`, crc.Sum32(), uint32(got))
	up.mu.Lock()
	up.etags[n] = etag
	up.mu.Unlock()
	w.Header().Set("ETag", etag)
	w.WriteHeader(http.StatusOK)
}

// complete checks every part's ETag and the object's sha256, then stores it.
func (s *Server) complete(w http.ResponseWriter, r *http.Request, up *multipart) {
	var req struct {
		OID   string `json:"oid"`
		Parts []struct {
			PartNumber int    `json:"partNumber"`
			ETag       string `json:"etag"`
		} `json:"parts"`
	}
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil || req.OID != up.oid {
		writeError(w, http.StatusBadRequest, "", "bad completion body")
		return
	}
	want := int((up.size + up.chunk - 1) / up.chunk)
	up.mu.Lock()
	bad := len(req.Parts) != want
	for _, p := range req.Parts {
		if up.etags[p.PartNumber] == "" || up.etags[p.PartNumber] != p.ETag {
			bad = true
		}
	}
	up.mu.Unlock()
	if bad {
		writeError(w, http.StatusBadRequest, "", fmt.Sprintf("InvalidPart: want %d parts with the ETags the uploads returned", want))
		return
	}
	if err := checkSHA256(up.path, up.oid, up.size); err != nil {
		writeError(w, http.StatusBadRequest, "", err.Error())
		return
	}
	if err := s.blobs.adoptLFS(up.path, up.oid); err != nil {
		writeError(w, http.StatusInternalServerError, "", err.Error())
		return
	}
	s.mu.Lock()
	delete(s.uploads, uploadKey(up.oid, up.sig))
	s.mu.Unlock()
	w.Header().Set("Content-Type", lfsContentType)
	w.WriteHeader(http.StatusOK)
}

func checkSHA256(path, oid string, size int64) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	h := sha256.New()
	n, err := io.Copy(h, f)
	if err != nil {
		return err
	}
	if got := hex.EncodeToString(h.Sum(nil)); got != oid || n != size {
		return fmt.Errorf("BadDigest: assembled object has sha256 %s and %d bytes, want %s and %d", got, n, oid, size)
	}
	return nil
}
