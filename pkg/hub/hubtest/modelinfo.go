package hubtest

import (
	"fmt"
	"net/http"
	"sort"
	"strings"
	"time"
)

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
