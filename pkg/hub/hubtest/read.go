package hubtest

import (
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"gopkg.in/yaml.v3"
)

func (s *Server) whoami(w http.ResponseWriter, r *http.Request) {
	c := s.who(r)
	if c.Bad || c.anonymous() {
		badToken(w)
		return
	}
	role := "read"
	if c.Write {
		role = "write"
	}
	writeJSON(w, http.StatusOK, map[string]any{"type": "user", "name": c.User,
		"auth": map[string]any{"type": "access_token", "accessToken": map[string]any{"displayName": "hubtest", "role": role}}})
}

// revision resolves rev in rp or answers RevisionNotFound.
func revision(w http.ResponseWriter, rp *repo, rev string) *commit {
	c := rp.resolve(rev)
	if c == nil {
		writeError(w, http.StatusNotFound, "RevisionNotFound", fmt.Sprintf("Invalid rev id: %s", rev))
	}
	return c
}

// readableAt is the repo and commit caller c may read of id at rev, with s.mu held; the
// commit is nil when it has already answered with the error (no access, no such repo or
// revision).
func (s *Server) readableAt(w http.ResponseWriter, c caller, id, rev string) (*repo, *commit) {
	rp := s.readable(w, c, id)
	if rp == nil {
		return nil, nil
	}
	return rp, revision(w, rp, rev)
}

func (s *Server) modelInfo(w http.ResponseWriter, r *http.Request, id, rev string) {
	c := s.who(r) // before s.mu: who takes it
	s.mu.Lock()
	defer s.mu.Unlock()
	rp, cm := s.readableAt(w, c, id, rev)
	if cm == nil {
		return
	}
	q := r.URL.Query()
	props, ok := expandParam(w, q, infoExpand)
	if !ok {
		return
	}
	if len(props) > 0 && (q.Get("blobs") != "" || q.Get("securityStatus") != "") {
		writeError(w, http.StatusBadRequest, "", `"expand" cannot be used together with "blobs" or "securityStatus"`)
		return
	}
	info := s.info(rp, cm, q.Get("blobs") == "true", true)
	writeJSON(w, http.StatusOK, expand(info, props))
}

// infoExpand are the properties model info takes in expand: huggingface_hub's
// ExpandModelProperty_T (hf_api.py). listExpand are those a listing takes: the same but
// baseModels, childrenModelCount and usedStorage, which the Hub refuses in a listing
// (huggingface_hub pull request 3182). An unknown one is a 400, as huggingface_hub's
// test_model_info_expand_unexpected_value finds on huggingface.co.
var (
	infoExpand = map[string]bool{
		"author": true, "baseModels": true, "cardData": true, "childrenModelCount": true, "config": true,
		"createdAt": true, "disabled": true, "downloads": true, "downloadsAllTime": true, "gated": true,
		"gguf": true, "inference": true, "inferenceProviderMapping": true, "lastModified": true,
		"library_name": true, "likes": true, "mask_token": true, "model-index": true, "pipeline_tag": true,
		"private": true, "resourceGroup": true, "safetensors": true, "sha": true, "siblings": true,
		"spaces": true, "tags": true, "transformersInfo": true, "trendingScore": true, "usedStorage": true,
		"widgetData": true, "xetEnabled": true,
	}
	listExpand = func() map[string]bool {
		m := map[string]bool{}
		for k := range infoExpand {
			m[k] = k != "baseModels" && k != "childrenModelCount" && k != "usedStorage"
		}
		return m
	}()
)

// expandParam is the expand properties of q, given as expand=… or expand[]=… (the Hub's
// query parser reads both as one list); an unknown one answers 400 and ok is false.
func expandParam(w http.ResponseWriter, q map[string][]string, known map[string]bool) (props []string, ok bool) {
	props = append(append(props, q["expand"]...), q["expand[]"]...)
	for _, p := range props {
		if !known[p] {
			writeError(w, http.StatusBadRequest, "", fmt.Sprintf("%q is not a property expand can return", p))
			return nil, false
		}
	}
	return props, true
}

// info is the JSON of a model at a commit.
func (s *Server) info(rp *repo, cm *commit, blobs, full bool) map[string]any {
	paths := sortedPaths(cm.Files)
	siblings := make([]map[string]any, 0, len(paths))
	var used int64
	for _, p := range paths {
		e := cm.Files[p]
		used += e.Size
		sib := map[string]any{"rfilename": p}
		if blobs {
			sib["size"] = e.Size
			sib["blobId"] = blobID(e)
			if e.LFS {
				sib["lfs"] = map[string]any{"size": e.Size, "sha256": e.OID, "pointerSize": len(lfsPointer(e))}
			}
		}
		siblings = append(siblings, sib)
	}
	var gated any = false
	if rp.Gated != "" {
		gated = rp.Gated
	}
	author, _, _ := strings.Cut(rp.ID, "/")
	m := map[string]any{
		"_id": rp.ID, "id": rp.ID, "modelId": rp.ID, "author": author, "sha": cm.SHA,
		"private": rp.Private, "gated": gated, "disabled": rp.Disabled,
		"tags": nonNil(rp.Tags), "downloads": 0, "likes": 0,
		"createdAt": rp.Created.UTC().Format(time.RFC3339Nano), "lastModified": cm.Time.UTC().Format(time.RFC3339Nano),
		"siblings": siblings, "usedStorage": used,
	}
	if rp.PipelineTag != "" {
		m["pipeline_tag"] = rp.PipelineTag
	}
	if rp.LibraryName != "" {
		m["library_name"] = rp.LibraryName
	}
	if !full {
		return m
	}
	if cfg := infoConfig(rp, cm); cfg != nil {
		m["config"] = cfg
	}
	if card := cardData(cm); card != nil {
		m["cardData"] = card
	}
	if st := safetensorsTotals(cm); st != nil && !rp.NoSafetensors {
		m["safetensors"] = st
	}
	return m
}

func blobID(e entry) string {
	if e.LFS {
		return gitSHA1([]byte(lfsPointer(e)))
	}
	return e.OID
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

func sortedPaths(files map[string]entry) []string {
	out := make([]string, 0, len(files))
	for p := range files {
		out = append(out, p)
	}
	sort.Strings(out)
	return out
}

// expand keeps only the requested properties, as ?expand= does.
func expand(m map[string]any, keys []string) map[string]any {
	if len(keys) == 0 {
		return m
	}
	out := map[string]any{"_id": m["_id"], "id": m["id"]}
	for _, k := range keys {
		if v, ok := m[k]; ok {
			out[k] = v
		}
	}
	return out
}

// Keys of the model info's config, as huggingface.co builds it: a summary of config.json
// (the keys huggingface.js types in ModelData.config, tasks/src/model-data.ts) with
// tokenizer_config.json's special tokens and chat template under tokenizer_config
// (tasks/src/tokenizer-data.ts), never the whole file: huggingface_hub issue 1759 shows
// {"architectures": […], "model_type": "mistral"} for a whole Mistral config.json
// (docs/research/hub.md#config-in-model-info).
var (
	summaryConfigKeys    = []string{"architectures", "auto_map", "model_type", "quantization_config"}
	summaryTokenizerKeys = []string{"bos_token", "eos_token", "unk_token", "sep_token", "pad_token", "cls_token",
		"mask_token", "chat_template", "use_default_system_prompt"}
)

// infoConfig is the model info's config of a commit: the Hub's summary, or config.json
// whole (as written) for a repo seeded with WholeConfigInInfo; nil when there is nothing
// to say.
func infoConfig(rp *repo, cm *commit) any {
	raw := readJSONFile(cm, "config.json")
	if rp.WholeConfig {
		if raw == nil {
			return nil
		}
		return raw
	}
	out := map[string]any{}
	pick(out, raw, summaryConfigKeys)
	tok := map[string]any{}
	pick(tok, readJSONFile(cm, "tokenizer_config.json"), summaryTokenizerKeys)
	if len(tok) > 0 {
		out["tokenizer_config"] = tok
	}
	if len(out) == 0 {
		return nil
	}
	return out
}

// pick copies keys of the JSON object raw (when it is one) into out.
func pick(out map[string]any, raw json.RawMessage, keys []string) {
	var m map[string]json.RawMessage
	if raw == nil || json.Unmarshal(raw, &m) != nil {
		return
	}
	for _, k := range keys {
		if v, ok := m[k]; ok {
			out[k] = v
		}
	}
}

// readJSONFile is a small JSON file of the commit as written, or nil when it is missing,
// large or not JSON.
func readJSONFile(cm *commit, name string) json.RawMessage {
	e, ok := cm.Files[name]
	if !ok || e.Size > 16<<20 {
		return nil
	}
	b, err := os.ReadFile(e.Blob)
	if err != nil || !json.Valid(b) {
		return nil
	}
	return b
}

// cardData parses the YAML front matter of README.md.
func cardData(cm *commit) map[string]any {
	e, ok := cm.Files["README.md"]
	if !ok || e.Size > 16<<20 {
		return nil
	}
	b, err := os.ReadFile(e.Blob)
	if err != nil {
		return nil
	}
	text := strings.ReplaceAll(string(b), "\r\n", "\n")
	rest, ok := strings.CutPrefix(text, "---\n")
	if !ok {
		return nil
	}
	front, _, ok := strings.Cut(rest, "\n---")
	if !ok {
		return nil
	}
	var m map[string]any
	if yaml.Unmarshal([]byte(front), &m) != nil {
		return nil
	}
	return m
}

// safetensorsTotals sums parameters per dtype over the safetensors files of the commit, as
// the Hub's "safetensors" property does.
func safetensorsTotals(cm *commit) map[string]any {
	params := map[string]int64{}
	found := false
	for p, e := range cm.Files {
		if !strings.HasSuffix(p, ".safetensors") {
			continue
		}
		counts, err := headerCounts(e.Blob)
		if err != nil {
			continue
		}
		found = true
		for k, v := range counts {
			params[k] += v
		}
	}
	if !found {
		return nil
	}
	var total int64
	for _, v := range params {
		total += v
	}
	return map[string]any{"parameters": params, "total": total}
}

func headerCounts(path string) (map[string]int64, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var n uint64
	if err := binary.Read(f, binary.LittleEndian, &n); err != nil || n > 25_000_000 {
		return nil, fmt.Errorf("bad safetensors header in %s", path)
	}
	var hdr map[string]json.RawMessage
	if err := json.NewDecoder(io.LimitReader(f, int64(n))).Decode(&hdr); err != nil {
		return nil, err
	}
	out := map[string]int64{}
	for k, v := range hdr {
		if k == "__metadata__" {
			continue
		}
		var t struct {
			DType string  `json:"dtype"`
			Shape []int64 `json:"shape"`
		}
		if json.Unmarshal(v, &t) != nil {
			continue
		}
		c := int64(1)
		for _, d := range t.Shape {
			c *= d
		}
		out[t.DType] += c
	}
	return out, nil
}

// listModels serves GET /api/models: filters, newest first, pages linked by a cursor.
func (s *Server) listModels(w http.ResponseWriter, r *http.Request) {
	c := s.who(r)
	if c.Bad {
		badToken(w)
		return
	}
	q := r.URL.Query()
	props, ok := expandParam(w, q, listExpand)
	if !ok {
		return
	}
	s.mu.Lock()
	var all []*repo
	for _, rp := range s.repos {
		if rp.Private && !s.owns(c, rp) || rp.head() == nil {
			continue
		}
		if !matches(rp, q) {
			continue
		}
		all = append(all, rp)
	}
	sort.Slice(all, func(i, j int) bool {
		if !all[i].Created.Equal(all[j].Created) {
			return all[i].Created.After(all[j].Created)
		}
		return all[i].ID < all[j].ID
	})
	limit := s.PageSize
	if l, err := strconv.Atoi(q.Get("limit")); err == nil && l > 0 && l < limit {
		limit = l
	}
	start := 0
	if cur := q.Get("cursor"); cur != "" {
		b, _ := base64.RawURLEncoding.DecodeString(cur)
		start, _ = strconv.Atoi(string(b))
	}
	end := min(start+limit, len(all))
	full := q.Get("full") == "true" || q.Get("full") == "1"
	items := []map[string]any{}
	for _, rp := range all[min(start, len(all)):end] {
		m := s.info(rp, rp.head(), false, slices.ContainsFunc(props, func(p string) bool {
			return p == "config" || p == "cardData" || p == "safetensors" // read from the files
		}))
		if !full {
			if !slices.Contains(props, "siblings") {
				delete(m, "siblings")
			}
			if !slices.Contains(props, "sha") { // the Hub lists the sha when asked to expand it
				delete(m, "sha")
			}
		}
		items = append(items, expand(m, props))
	}
	s.mu.Unlock()
	if end < len(all) {
		q.Set("cursor", base64.RawURLEncoding.EncodeToString([]byte(strconv.Itoa(end))))
		w.Header().Set("Link", fmt.Sprintf(`<%s/api/models?%s>; rel="next"`, base(r), q.Encode()))
	}
	writeJSON(w, http.StatusOK, items)
}

func matches(rp *repo, q map[string][]string) bool {
	get := func(k string) string {
		if v := q[k]; len(v) > 0 {
			return v[0]
		}
		return ""
	}
	if a := get("author"); a != "" && !strings.HasPrefix(rp.ID, a+"/") {
		return false
	}
	if s := get("search"); s != "" && !strings.Contains(strings.ToLower(rp.ID), strings.ToLower(s)) {
		return false
	}
	if p := get("pipeline_tag"); p != "" && p != rp.PipelineTag {
		return false
	}
	for _, f := range q["filter"] {
		if !contains(rp.Tags, f) {
			return false
		}
	}
	return true
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// tree serves GET /api/models/{id}/tree/{rev}[/{path}].
func (s *Server) tree(w http.ResponseWriter, r *http.Request, id, rev, dir string) {
	c := s.who(r) // before s.mu: who takes it
	s.mu.Lock()
	defer s.mu.Unlock()
	_, cm := s.readableAt(w, c, id, rev)
	if cm == nil {
		return
	}
	recursive := r.URL.Query().Get("recursive") == "true" || r.URL.Query().Get("recursive") == "1"
	prefix := ""
	if dir != "" {
		prefix = strings.TrimSuffix(dir, "/") + "/"
	}
	out := []map[string]any{}
	dirs := map[string]bool{}
	for _, p := range sortedPaths(cm.Files) {
		rel, ok := strings.CutPrefix(p, prefix)
		if !ok {
			continue
		}
		if i := strings.IndexByte(rel, '/'); i >= 0 {
			d := prefix + rel[:i]
			if !dirs[d] {
				dirs[d] = true
				out = append(out, map[string]any{"type": "directory", "oid": gitSHA1([]byte(d)), "size": 0, "path": d})
			}
			if !recursive {
				continue
			}
		}
		e := cm.Files[p]
		item := map[string]any{"type": "file", "oid": blobID(e), "size": e.Size, "path": p}
		if e.LFS {
			item["lfs"] = map[string]any{"oid": e.OID, "size": e.Size, "pointerSize": len(lfsPointer(e))}
		}
		out = append(out, item)
	}
	if dir != "" && len(out) == 0 {
		writeError(w, http.StatusNotFound, "EntryNotFound", fmt.Sprintf("%s does not exist on %q", dir, rev))
		return
	}
	writeJSON(w, http.StatusOK, out)
}

// resolve serves a file: regular files directly, LFS files by a redirect to the CDN.
func (s *Server) resolve(w http.ResponseWriter, r *http.Request, id, rev, path string, raw bool) {
	c := s.who(r)
	s.mu.Lock()
	rp := s.readable(w, c, id)
	if rp == nil {
		s.mu.Unlock()
		return
	}
	if path != "README.md" && path != ".gitattributes" && !gateOpen(w, c, rp) {
		s.mu.Unlock()
		return
	}
	cm := revision(w, rp, rev)
	if cm == nil {
		s.mu.Unlock()
		return
	}
	e, ok := cm.Files[path]
	sha := cm.SHA
	s.mu.Unlock()
	if !ok {
		writeError(w, http.StatusNotFound, "EntryNotFound", "Entry not found")
		return
	}
	w.Header().Set("X-Repo-Commit", sha)
	w.Header().Set("Accept-Ranges", "bytes")
	if e.LFS && raw {
		w.Header().Set("ETag", `"`+blobID(e)+`"`)
		http.ServeContent(w, r, "", time.Time{}, strings.NewReader(lfsPointer(e)))
		return
	}
	if e.LFS {
		w.Header().Set("X-Linked-Etag", `"`+e.OID+`"`)
		w.Header().Set("X-Linked-Size", strconv.FormatInt(e.Size, 10))
		w.Header().Set("ETag", `"`+blobID(e)+`"`)
		http.Redirect(w, r, base(r)+"/lfs-cdn/"+e.OID+"?repo="+id, http.StatusFound)
		return
	}
	w.Header().Set("ETag", `"`+e.OID+`"`)
	serveFile(w, r, e.Blob)
}

// serveCDN serves an LFS object with Range support, like the Hub's CDN.
func (s *Server) serveCDN(w http.ResponseWriter, r *http.Request, oid string) {
	if s.blobs.hasLFS(oid) < 0 {
		writeError(w, http.StatusNotFound, "", "NoSuchKey")
		return
	}
	w.Header().Set("ETag", `"`+oid+`"`)
	serveFile(w, r, s.blobs.lfsPath(oid))
}

func serveFile(w http.ResponseWriter, r *http.Request, path string) {
	f, err := os.Open(path)
	if err != nil {
		writeError(w, http.StatusInternalServerError, "", "hubtest: "+err.Error())
		return
	}
	defer f.Close()
	w.Header().Set("Content-Type", "application/octet-stream")
	http.ServeContent(w, r, "", time.Time{}, f)
}

func (s *Server) commits(w http.ResponseWriter, r *http.Request, id, rev string) {
	c := s.who(r) // before s.mu: who takes it
	s.mu.Lock()
	defer s.mu.Unlock()
	rp, cm := s.readableAt(w, c, id, rev)
	if cm == nil {
		return
	}
	out := []map[string]any{}
	for _, h := range rp.history(cm) {
		out = append(out, map[string]any{"id": h.SHA, "title": h.Title, "message": h.Message,
			"date": h.Time.UTC().Format(time.RFC3339Nano), "authors": []map[string]string{{"user": h.Author}}, "parents": parents(h)})
	}
	writeJSON(w, http.StatusOK, out)
}

func parents(c *commit) []string {
	if c.Parent == "" {
		return []string{}
	}
	return []string{c.Parent}
}

func (s *Server) refs(w http.ResponseWriter, r *http.Request, id string) {
	c := s.who(r)
	s.mu.Lock()
	defer s.mu.Unlock()
	rp := s.readable(w, c, id)
	if rp == nil {
		return
	}
	branches := []map[string]string{}
	for _, name := range sortedKeys(rp.Branches) {
		branches = append(branches, map[string]string{"name": name, "ref": "refs/heads/" + name, "targetCommit": rp.Branches[name]})
	}
	writeJSON(w, http.StatusOK, map[string]any{"branches": branches, "tags": []any{}, "converts": []any{}})
}

func sortedKeys(m map[string]string) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

func (s *Server) authCheck(w http.ResponseWriter, r *http.Request, id string) {
	c := s.who(r)
	s.mu.Lock()
	defer s.mu.Unlock()
	rp := s.readable(w, c, id)
	if rp == nil || !gateOpen(w, c, rp) {
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{})
}
