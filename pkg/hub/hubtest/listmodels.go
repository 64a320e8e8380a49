package hubtest

import (
	"encoding/base64"
	"fmt"
	"net/http"
	"slices"
	"sort"
	"strconv"
	"strings"
)

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
