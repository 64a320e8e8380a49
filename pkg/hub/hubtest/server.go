// Package hubtest is a local Hugging Face Hub for tests and local runs. It speaks the Hub
// protocol that huggingface_hub and @huggingface/hub speak (model info and listing, tree,
// resolve with Range and LFS redirects, preupload, LFS batch with basic and multipart
// transfers, NDJSON commits with a real parent chain) and keeps file contents on disk. Gated
// and private repos, tokens and fault injection (5xx, 429, cut connections, slow answers)
// let tests reach every error path of a client.
package hubtest

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"
)

// Server is a running local Hub. Its knobs may be changed between requests.
type Server struct {
	// URL is the base URL, e.g. http://127.0.0.1:41234; use it as HF_ENDPOINT.
	URL string

	// MultipartThreshold is the object size from which the LFS batch answers with a
	// multipart transfer (default 20 MiB); ChunkSize is the part size (default 8 MiB).
	MultipartThreshold int64
	ChunkSize          int64
	// RegularMax is the largest file preupload accepts as a regular (non-LFS) file.
	RegularMax int64
	// PageSize caps GET /api/models pages (default 100; a request's limit may lower it).
	PageSize int
	// Verify adds a verify action to LFS batch answers, as the Hub does for some storage.
	Verify bool

	dir   string
	blobs blobStore

	mu      sync.Mutex
	repos   map[string]*repo
	tokens  map[string]Token
	faults  []*Fault
	uploads map[string]*multipart
	now     func() time.Time

	// logMu guards log alone: handlers may answer while holding mu, and the log is written
	// as the answer starts, so sharing mu would deadlock.
	logMu sync.Mutex
	log   []Request

	srv *http.Server
	ln  net.Listener
}

// Token is an account a bearer token stands for.
type Token struct {
	User  string
	Write bool
}

// Request is one request the server saw, for assertions.
type Request struct {
	Method string
	Path   string // escaped path and query
	Auth   bool   // an Authorization header was sent
	Range  string // the Range header, when one was sent
	Status int
}

// New starts a server on loopback in a temporary folder and closes it when the test ends.
func New(t testing.TB) *Server {
	t.Helper()
	s, err := Listen(t.TempDir(), "127.0.0.1:0")
	if err != nil {
		t.Fatalf("hubtest: %v", err)
	}
	t.Cleanup(func() { _ = s.Close() })
	return s
}

// NewServer starts a server on a free loopback port that keeps its files under dir.
func NewServer(dir string) (*Server, error) { return Listen(dir, "127.0.0.1:0") }

// Listen starts a server on addr that keeps its files under dir.
func Listen(dir, addr string) (*Server, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("hubtest: create %s: %w", dir, err)
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, fmt.Errorf("hubtest: %s: %w", dir, err)
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("hubtest: listen on %s: %w", addr, err)
	}
	s := &Server{
		URL:                "http://" + ln.Addr().String(),
		MultipartThreshold: 20 << 20,
		ChunkSize:          8 << 20,
		RegularMax:         10 << 20,
		PageSize:           100,
		dir:                abs,
		blobs:              blobStore{dir: abs},
		repos:              map[string]*repo{},
		tokens:             map[string]Token{},
		uploads:            map[string]*multipart{},
		now:                time.Now,
		ln:                 ln,
	}
	s.srv = &http.Server{Handler: s, ReadHeaderTimeout: 30 * time.Second}
	go func() { _ = s.srv.Serve(ln) }()
	return s, nil
}

// Close stops the server; files stay in its folder.
func (s *Server) Close() error {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	if err := s.srv.Shutdown(ctx); err != nil && !errors.Is(err, context.DeadlineExceeded) {
		return err
	}
	return s.srv.Close()
}

// Dir is the folder that holds the server's files.
func (s *Server) Dir() string { return s.dir }

// AddToken registers a token. While none is registered, any token that starts with hf_ is
// accepted as the writer "hubtest"; once one is, only registered tokens are valid.
func (s *Server) AddToken(token string, t Token) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.tokens[token] = t
}

// maxLog bounds the request log.
const maxLog = 100_000

// Requests returns the requests seen so far (the most recent ones past maxLog). A request
// is logged before its status line goes out, so a client that has its answer finds it here.
func (s *Server) Requests() []Request {
	s.logMu.Lock()
	defer s.logMu.Unlock()
	return append([]Request(nil), s.log...)
}

func (s *Server) record(req Request) {
	s.logMu.Lock()
	defer s.logMu.Unlock()
	if len(s.log) >= maxLog { // a long-running cmd/hubtest keeps the recent ones
		s.log = append(s.log[:0], s.log[maxLog/2:]...)
	}
	s.log = append(s.log, req)
}

// ServeHTTP applies faults, then routes the request.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	rec := &statusWriter{ResponseWriter: w, logged: func(status int) {
		s.record(Request{Method: r.Method, Path: r.URL.RequestURI(), Auth: r.Header.Get("Authorization") != "", Range: r.Header.Get("Range"), Status: status})
	}}
	defer rec.log(http.StatusOK) // a handler that wrote nothing answers 200
	ww, done := s.applyFaults(rec, r)
	if done {
		return
	}
	s.route(ww, r)
}

// statusWriter logs the request once, with its status, just before the status line is sent.
type statusWriter struct {
	http.ResponseWriter
	logged func(status int)
	done   bool
}

func (w *statusWriter) log(status int) {
	if !w.done {
		w.done = true
		w.logged(status)
	}
}

func (w *statusWriter) WriteHeader(code int) {
	w.log(code)
	w.ResponseWriter.WriteHeader(code)
}

func (w *statusWriter) Write(b []byte) (int, error) {
	w.log(http.StatusOK)
	return w.ResponseWriter.Write(b)
}

func (w *statusWriter) Flush() {
	w.log(http.StatusOK) // flushing sends the status line: 200 unless one was written
	if f, ok := w.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}
