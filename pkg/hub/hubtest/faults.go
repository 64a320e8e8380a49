package hubtest

import (
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"
)

// Fault makes matching requests fail or misbehave, so that a client's retry, resume and
// error paths run for real.
type Fault struct {
	// Method and PathContains select requests ("" matches any).
	Method       string
	PathContains string
	// Times is how many matching requests the fault hits; 0 means once, -1 forever.
	Times int
	// Status answers with this status instead of serving (a 5xx, or 429).
	Status int
	// RetryAfter and RateLimit are sent with Status, e.g. "1" and `"api";r=0;t=1`.
	RetryAfter string
	RateLimit  string
	// CutAfter drops the connection after this many body bytes: of the request body when
	// the request has one (an upload), else of the response body (a download).
	CutAfter int64
	// Delay sleeps before answering (a slow response).
	Delay time.Duration
	// LoseAnswer serves the request in full (a commit lands) and then drops the connection
	// without answering: the client cannot tell whether it happened.
	LoseAnswer bool

	hits int
}

// Hits is how many requests the fault has hit so far.
func (f *Fault) Hits() int { return f.hits }

// Inject adds a fault and returns it, so that a test can read Hits.
func (s *Server) Inject(f Fault) *Fault {
	s.mu.Lock()
	defer s.mu.Unlock()
	p := &f
	s.faults = append(s.faults, p)
	return p
}

// ClearFaults removes every fault.
func (s *Server) ClearFaults() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.faults = nil
}

// take returns the first fault matching r and counts the hit.
func (s *Server) take(r *http.Request) *Fault {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, f := range s.faults {
		if f.Method != "" && f.Method != r.Method {
			continue
		}
		if f.PathContains != "" && !strings.Contains(r.URL.RequestURI(), f.PathContains) {
			continue
		}
		limit := f.Times
		if limit == 0 {
			limit = 1
		}
		if limit > 0 && f.hits >= limit {
			continue
		}
		f.hits++
		return f
	}
	return nil
}

// applyFaults answers the request itself when a fault says so (done), or returns the writer
// to serve through.
func (s *Server) applyFaults(w http.ResponseWriter, r *http.Request) (http.ResponseWriter, bool) {
	f := s.take(r)
	if f == nil {
		return w, false
	}
	if f.Delay > 0 {
		select {
		case <-time.After(f.Delay):
		case <-r.Context().Done():
			return w, true
		}
	}
	if f.Status != 0 {
		if f.RetryAfter != "" {
			w.Header().Set("Retry-After", f.RetryAfter)
		}
		if f.RateLimit != "" {
			w.Header().Set("RateLimit", f.RateLimit)
			w.Header().Set("RateLimit-Policy", `"fixed window";"api";q=500;w=300`)
		}
		msg := fmt.Sprintf("hubtest: injected %d", f.Status)
		if f.Status == http.StatusTooManyRequests {
			msg = "You have exceeded our hourly quotas for action: api. Retry later."
		}
		writeError(w, f.Status, "", msg)
		return w, true
	}
	if f.LoseAnswer {
		s.route(&discardWriter{header: http.Header{}}, r)
		panic(http.ErrAbortHandler)
	}
	if f.CutAfter > 0 && r.ContentLength > 0 {
		r.Body = &cutReader{ReadCloser: r.Body, left: f.CutAfter}
		return w, false
	}
	if f.CutAfter > 0 {
		return &cutWriter{ResponseWriter: w, left: f.CutAfter}, false
	}
	return w, false
}

// cutWriter lets left body bytes through, then aborts the connection mid-body.
type cutWriter struct {
	http.ResponseWriter
	left int64
}

func (c *cutWriter) Write(p []byte) (int, error) {
	if int64(len(p)) <= c.left {
		c.left -= int64(len(p))
		return c.ResponseWriter.Write(p)
	}
	n, _ := c.ResponseWriter.Write(p[:c.left])
	c.left = 0
	if f, ok := c.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
	_ = n
	panic(http.ErrAbortHandler)
}

func (c *cutWriter) Flush() {
	if f, ok := c.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

// cutReader lets left request bytes through, then aborts the connection.
type cutReader struct {
	io.ReadCloser
	left int64
}

func (c *cutReader) Read(p []byte) (int, error) {
	if c.left <= 0 {
		panic(http.ErrAbortHandler)
	}
	if int64(len(p)) > c.left {
		p = p[:c.left]
	}
	n, err := c.ReadCloser.Read(p)
	c.left -= int64(n)
	return n, err
}

// discardWriter takes a whole answer and sends none of it.
type discardWriter struct{ header http.Header }

func (d *discardWriter) Header() http.Header         { return d.header }
func (d *discardWriter) Write(p []byte) (int, error) { return len(p), nil }
func (d *discardWriter) WriteHeader(int)             {}
