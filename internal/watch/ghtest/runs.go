package ghtest

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"strings"
)

func (s *Server) dispatch(w http.ResponseWriter, r *http.Request) {
	var body struct {
		Ref    string            `json:"ref"`
		Inputs map[string]string `json:"inputs"`
	}
	if err := json.NewDecoder(r.Body).Decode(&body); err != nil || body.Ref == "" {
		fail(w, http.StatusUnprocessableEntity, "ref is required")
		return
	}
	if refuseWorkflow(w, r.PathValue("file")) || refuseRef(w, body.Ref) {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	d := Dispatch{Workflow: r.PathValue("file"), Ref: body.Ref, Model: body.Inputs["model_id"], Revision: body.Inputs["revision"], Status: http.StatusNoContent}
	created := true
	if s.fault != nil {
		if st, c := s.fault(d); st != 0 && st != http.StatusNoContent {
			d.Status, created = st, c
		}
	}
	s.dispatches = append(s.dispatches, d)
	if created {
		title := fmt.Sprintf("%s: %s@%s", strings.TrimSuffix(d.Workflow, ".yml"), d.Model, d.Revision)
		s.runs = append(s.runs, &Run{Workflow: d.Workflow, Title: title, Status: "queued"})
	}
	if d.Status != http.StatusNoContent {
		fail(w, d.Status, http.StatusText(d.Status))
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

func (s *Server) listRuns(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	defer s.mu.Unlock()
	file := r.PathValue("file")
	if refuseWorkflow(w, file) {
		return
	}
	if st := s.failRuns[file]; st != 0 {
		fail(w, st, http.StatusText(st))
		return
	}
	status := r.URL.Query().Get("status")
	runs := []map[string]any{}
	for i, run := range s.runs {
		if run.Workflow == file && (status == "" || run.Status == status) {
			runs = append(runs, map[string]any{"id": i + 1, "name": file, "display_title": run.Title, "status": run.Status})
		}
	}
	perPage, page := atoiOr(r.URL.Query().Get("per_page"), 30), atoiOr(r.URL.Query().Get("page"), 1)
	total := len(runs)
	from, to := min((page-1)*perPage, total), min(page*perPage, total)
	if to < total {
		q := r.URL.Query()
		q.Set("page", strconv.Itoa(page+1))
		w.Header().Set("Link", fmt.Sprintf(`<%s%s?%s>; rel="next"`, "http://"+r.Host, r.URL.Path, q.Encode()))
	}
	writeJSON(w, http.StatusOK, map[string]any{"total_count": total, "workflow_runs": runs[from:to]})
}

func atoiOr(s string, def int) int {
	if n, err := strconv.Atoi(s); err == nil && n > 0 {
		return n
	}
	return def
}
