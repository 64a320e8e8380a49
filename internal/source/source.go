// Package source connects the Hub client to model analysis and export: a Hub repo at a
// revision becomes a model.Source (metadata, access, files by range), and an export's
// source files are downloaded into its work folder.
package source

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/experimentalmachines/exe-expo/internal/model"
	"github.com/experimentalmachines/exe-expo/internal/report"
	"github.com/experimentalmachines/exe-expo/pkg/hub"
)

// Hub reads models from a Hub endpoint.
type Hub struct {
	Client *hub.Client
	// Progress, when set, receives one line per downloaded file.
	Progress func(format string, args ...any)
	// ProbeTimeout bounds the reachability check (default 3 s).
	ProbeTimeout time.Duration
	// Dial replaces the reachability check's TCP dial (tests give it a DNS failure);
	// nil dials for real.
	Dial func(ctx context.Context, network, addr string) (net.Conn, error)
}

// UnreachableError is a Hub that did not take a TCP connection: no network, a name that
// does not resolve, a refused port. It matches ErrUnreachable, so Open falls back to the
// snapshot and export refuses at once, neither waiting out the client's retries.
type UnreachableError struct {
	Endpoint string // the Hub's base URL (HF_ENDPOINT or the default)
	Reason   string // why, in a few words: "its host name does not resolve"
}

func (e *UnreachableError) Error() string {
	return fmt.Sprintf("the Hugging Face Hub at %s could not be reached (%s)", e.Endpoint, e.Reason)
}

// Is matches ErrUnreachable.
func (e *UnreachableError) Is(target error) bool { return target == ErrUnreachable }

// Offline stands in for the Hub when EXE_EXPO_OFFLINE=1 promises that nothing leaves the
// host: it refuses every Hub model at once, without a client and so without a dial.
type Offline struct {
	// Why names what keeps the Hub off ("EXE_EXPO_OFFLINE=1").
	Why string
}

// Source implements HubReader by refusing.
func (o Offline) Source(_ context.Context, id, _ string) (*model.Source, model.Files, error) {
	return nil, nil, o.refuse(id)
}

// Fetch implements export.Fetcher by refusing.
func (o Offline) Fetch(_ context.Context, id, _, _ string, _ bool) (*model.Source, error) {
	return nil, o.refuse(id)
}

func (o Offline) refuse(id string) error {
	return fmt.Errorf("%s is a Hub id and %s keeps exe-expo off the Hub: give a local model folder instead", id, o.Why)
}

// Source implements HubReader. A Hub that cannot be reached at all answers
// ErrUnreachable at once (one TCP dial), so an offline plan falls back to the snapshot
// without waiting out the client's retries.
func (h Hub) Source(ctx context.Context, id, revision string) (*model.Source, model.Files, error) {
	if err := h.probe(ctx); err != nil {
		return nil, nil, err
	}
	info, err := h.Client.ModelInfo(ctx, id, hub.InfoOptions{Revision: revision, Expand: hub.ExpandForExport})
	if errors.Is(err, hub.ErrGated) {
		return &model.Source{ID: id, Revision: revision, Origin: "Hugging Face Hub " + h.Client.Endpoint(), AccessError: accessError(h.Client, id)}, nil, nil
	}
	if err != nil {
		return nil, nil, fmt.Errorf("model info of %s at %s: %w", id, revision, err)
	}
	src := &model.Source{
		ID: id, Revision: revision, SHA: info.SHA, PipelineTag: info.PipelineTag, Card: info.CardData,
		Origin: fmt.Sprintf("Hugging Face Hub %s, %s at %s", h.Client.Endpoint(), id, short(info.SHA)),
	}
	src.Params = hubParams(info.Safetensors)
	rev := info.SHA
	if rev == "" {
		rev = revision
	}
	files := h.Client.Files(id, rev)
	hf := &hubFiles{f: files, c: h.Client, id: id, rev: rev, have: siblingSet(info.Siblings)}
	if cfg := wholeConfig(id, info); cfg != nil {
		hf.config, src.Config = info.Config, cfg
		return src, hf, nil
	}
	// Model info of a gated repo is public; its files are not. Ask for config.json once
	// here so that a gated repo becomes a refusal with the sentence, not an error; the
	// bytes are kept, so model.Load does not ask again.
	cfg, err := files.ReadFile(ctx, "config.json")
	if errors.Is(err, hub.ErrGated) {
		src.AccessError = accessError(h.Client, id)
		return src, nil, nil
	}
	if err == nil {
		hf.config = cfg
	}
	return src, hf, nil
}

// wholeConfig is the model info's config, decoded, when it can stand for config.json, so
// that plan need not ask for the file; nil otherwise, and config.json is read. The decoded
// config is the source's (model.Load keeps it), labelled as Load labels a Hub repo's file,
// so the file is decoded once either way.
//
// huggingface.co's config is a summary, never the file: architectures, model_type,
// auto_map, quantization_config and tokenizer_config.json's special tokens under
// tokenizer_config (docs/research/hub.md#config-in-model-info). Taking it for the file
// would lose the sizes plan reads, so against the Hub this is always nil. A server that
// hands out the whole file is recognised by all of these together:
//   - the repo is not gated: a gated repo's info is public and its files are not, so
//     config.json is the access check;
//   - the config holds transformers_version, which transformers writes into every
//     config.json it saves and the summary never holds;
//   - it holds no tokenizer_config, which only the summary merges in;
//   - it decodes to an architecture (model.Config.Arch), as plan will read.
//
// Anything short of that costs the one request it saves, never a wrong plan.
func wholeConfig(id string, info *hub.ModelInfo) *model.Config {
	if info.Gated != "" || len(info.Config) == 0 {
		return nil
	}
	// The Hub's summary is told apart by its keys before it is decoded, so that it costs
	// no decode of a config that is then thrown away.
	var top map[string]json.RawMessage
	if json.Unmarshal(info.Config, &top) != nil || top["transformers_version"] == nil || top["tokenizer_config"] != nil {
		return nil
	}
	cfg, err := model.ParseConfig(id+"/config.json", info.Config)
	if err != nil {
		return nil
	}
	if _, err := cfg.Arch(); err != nil {
		return nil
	}
	return cfg
}

// siblingSet is the set of a repo's file paths from its model info, or nil when the info
// listed none (then every file is asked for).
func siblingSet(sibs []hub.Sibling) map[string]bool {
	if len(sibs) == 0 {
		return nil
	}
	have := make(map[string]bool, len(sibs))
	for _, s := range sibs {
		have[s.Path] = true
	}
	return have
}

// hubFiles reads a Hub repo's files for model analysis with as few requests as the model
// info allows: config.json comes from the read Source already made, a file the model info
// does not list is missing without a request (no 404 for model.safetensors on a sharded
// repo, none for an absent generation_config.json), and a gated answer becomes the access
// sentence.
type hubFiles struct {
	f      *hub.RepoFiles
	c      *hub.Client
	id     string
	rev    string
	have   map[string]bool // nil: the model info listed no files, so ask for each
	config []byte          // config.json as Source read it, or the model info's whole config
	held   heldRanges      // the latest range reads, for one that continues them
}

func (g *hubFiles) ReadFile(ctx context.Context, name string) ([]byte, error) {
	if name == "config.json" && g.config != nil {
		return g.config, nil
	}
	if err := g.absent(name); err != nil {
		return nil, err
	}
	b, err := g.f.ReadFile(ctx, name)
	return b, g.wrap(err)
}

// ReadRange reads n bytes of name at off. A read that starts inside the latest read of the
// same file (a safetensors header longer than the speculative read, which model.ReadHeader
// asks for again from byte 8) takes the bytes it already has and asks only for the rest,
// from where that read stopped.
func (g *hubFiles) ReadRange(ctx context.Context, name string, off, n int64) ([]byte, error) {
	if err := g.absent(name); err != nil {
		return nil, err
	}
	if n <= 0 {
		b, err := g.f.ReadRange(ctx, name, off, n)
		return b, g.wrap(err)
	}
	have := g.held.take(name, off, n)
	if int64(len(have)) == n {
		return have, nil
	}
	from := off + int64(len(have))
	b, err := g.f.ReadRange(ctx, name, from, n-int64(len(have)))
	if err != nil {
		return nil, g.wrap(err)
	}
	b = append(have, b...)
	if int64(len(b)) == n { // a short read is the end of the file: nothing follows it
		g.held.keep(name, off, b)
	}
	return b, nil
}

// Bounds of what hubFiles keeps for a continuation: the latest reads of up to heldReads
// files (model.CountParams reads 8 shards at once), each at most heldBytes.
const (
	heldReads = 16
	heldBytes = 1 << 20
)

// heldRanges are the latest range reads, newest last, so that a read continuing one asks
// only for what follows it.
type heldRanges struct {
	mu    sync.Mutex
	reads []heldRange
}

type heldRange struct {
	name string
	off  int64
	b    []byte
}

// take returns a copy of the held bytes of name from off (at most n), and forgets them: a
// header is continued once. It returns nil when no held read covers off.
func (h *heldRanges) take(name string, off, n int64) []byte {
	h.mu.Lock()
	defer h.mu.Unlock()
	for i, r := range h.reads {
		if r.name != name || off < r.off || off >= r.off+int64(len(r.b)) {
			continue
		}
		h.reads = append(h.reads[:i], h.reads[i+1:]...)
		part := r.b[off-r.off:]
		return append([]byte(nil), part[:min(int64(len(part)), n)]...)
	}
	return nil
}

// keep holds a read of name at off, dropping the oldest past heldReads.
func (h *heldRanges) keep(name string, off int64, b []byte) {
	if len(b) > heldBytes {
		return
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	h.reads = append(h.reads, heldRange{name: name, off: off, b: append([]byte(nil), b...)})
	if len(h.reads) > heldReads {
		h.reads = append(h.reads[:0], h.reads[len(h.reads)-heldReads:]...)
	}
}

// absent is a missing-file error (matching fs.ErrNotExist and hub.ErrEntryNotFound, as the
// Hub's own 404 does) for a name the model info does not list, and nil otherwise.
func (g *hubFiles) absent(name string) error {
	if g.have == nil || g.have[name] {
		return nil
	}
	return &notListedError{name: name, id: g.id, rev: short(g.rev)}
}

// notListedError is a file the model info does not list: missing, like the Hub's 404 for
// it, without having asked.
type notListedError struct{ name, id, rev string }

func (e *notListedError) Error() string {
	return fmt.Sprintf("file %q is not in %s at revision %s", e.name, e.id, e.rev)
}

// Is matches fs.ErrNotExist (what model.Files promises) and hub.ErrEntryNotFound.
func (e *notListedError) Is(target error) bool {
	return target == fs.ErrNotExist || target == hub.ErrEntryNotFound
}

func (g *hubFiles) wrap(err error) error {
	if errors.Is(err, hub.ErrGated) {
		return fmt.Errorf("%s: %w", accessError(g.c, g.id), err)
	}
	return err
}

func accessError(c *hub.Client, id string) string {
	return fmt.Sprintf("gated repo and the HF_TOKEN account has no access: accept the license at %s/%s with that account", strings.TrimSuffix(c.Endpoint(), "/"), id)
}

func short(sha string) string {
	if len(sha) > 12 {
		return sha[:12]
	}
	return sha
}

// probe dials the endpoint once, so that a Hub this host cannot reach is one short
// *UnreachableError at once rather than the client's retries (about 23 s) ending in a
// message that quotes the request URL twice.
func (h Hub) probe(ctx context.Context) error {
	endpoint := h.Client.Endpoint()
	u, err := url.Parse(endpoint)
	if err != nil || u.Host == "" {
		return fmt.Errorf("the Hub endpoint %q (HF_ENDPOINT) is not a URL such as https://huggingface.co", endpoint)
	}
	host := u.Host
	if u.Port() == "" {
		port := "443"
		if u.Scheme == "http" {
			port = "80"
		}
		host = net.JoinHostPort(u.Hostname(), port)
	}
	t := h.ProbeTimeout
	if t == 0 {
		t = 3 * time.Second
	}
	dial := h.Dial
	if dial == nil {
		d := net.Dialer{Timeout: t}
		dial = d.DialContext
	}
	dctx, cancel := context.WithTimeout(ctx, t)
	defer cancel()
	conn, err := dial(dctx, "tcp", host)
	if err != nil {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		return &UnreachableError{Endpoint: endpoint, Reason: dialReason(err, t)}
	}
	conn.Close()
	return nil
}

// dialReason says in a few words why a dial failed, without the "dial tcp 1.2.3.4:443:"
// prefix that repeats the address.
func dialReason(err error, timeout time.Duration) string {
	var dns *net.DNSError
	var ne net.Error
	var op *net.OpError
	switch {
	case errors.As(err, &dns) && dns.IsNotFound:
		return "its host name does not resolve"
	case errors.As(err, &dns):
		return "the host name lookup failed: " + dns.Err
	case errors.Is(err, syscall.ECONNREFUSED):
		return "connection refused"
	case errors.Is(err, context.DeadlineExceeded), errors.As(err, &ne) && ne.Timeout():
		return fmt.Sprintf("no answer within %s", timeout)
	case errors.As(err, &op) && op.Err != nil:
		return op.Err.Error()
	}
	return err.Error()
}

// sideFiles are the small files an export copies or needs besides the weights.
var sideFiles = map[string]bool{
	"config.json": true, "generation_config.json": true, "tokenizer.json": true, "tokenizer.model": true,
	"tokenizer_config.json": true, "special_tokens_map.json": true, "chat_template.jinja": true, "README.md": true,
	model.IndexFile: true,
}

// metaCheckpoint are the files ExecuTorch's Qualcomm script takes for Llama 3.2.
var metaCheckpoint = map[string]bool{"original/consolidated.00.pth": true, "original/params.json": true, "original/tokenizer.model": true}

// Wanted says whether an export downloads path: the side files, the license files, the
// safetensors weights when weights is set, and Meta's original checkpoint for QNN.
func Wanted(path string, weights bool) bool {
	lower := strings.ToLower(path)
	switch {
	case sideFiles[path]:
		return true
	case !strings.Contains(path, "/") && (strings.HasPrefix(lower, "license") || strings.HasPrefix(lower, "use_policy") || strings.HasPrefix(lower, "notice")):
		return true
	case weights && !strings.Contains(path, "/") && strings.HasSuffix(path, ".safetensors"):
		return true
	case !weights && metaCheckpoint[path]:
		return true
	}
	return false
}

// Fetch implements export.Fetcher: the files an export needs, at the sha model info
// reports (so every file comes from one commit), streamed to dir. Like Source it dials
// once first, so an unreachable Hub fails at once.
func (h Hub) Fetch(ctx context.Context, id, revision, dir string, weights bool) (*model.Source, error) {
	if err := h.probe(ctx); err != nil {
		return nil, err
	}
	info, err := h.Client.ModelInfo(ctx, id, hub.InfoOptions{Revision: revision, Expand: hub.ExpandForExport})
	if errors.Is(err, hub.ErrGated) {
		return &model.Source{ID: id, Revision: revision, AccessError: accessError(h.Client, id)}, nil
	}
	if err != nil {
		return nil, fmt.Errorf("model info of %s at %s: %w", id, revision, err)
	}
	rev := info.SHA
	if rev == "" {
		rev = revision
	}
	for _, s := range info.Siblings {
		if !Wanted(s.Path, weights) {
			continue
		}
		dst := filepath.Join(dir, filepath.FromSlash(s.Path))
		if !strings.HasPrefix(dst, filepath.Clean(dir)+string(os.PathSeparator)) {
			return nil, fmt.Errorf("%s lists a file outside the repo: %q", id, s.Path)
		}
		if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
			return nil, report.FileError("create", filepath.Dir(dst), err)
		}
		stop := h.watch(s.Path, dst+".incomplete")
		d, err := h.Client.Download(ctx, id, rev, s.Path, dst)
		stop()
		if errors.Is(err, hub.ErrGated) {
			return &model.Source{ID: id, Revision: revision, SHA: info.SHA, AccessError: accessError(h.Client, id)}, nil
		}
		if err != nil {
			return nil, fmt.Errorf("download %s of %s: %w", s.Path, id, err)
		}
		if h.Progress != nil {
			h.Progress("downloaded %s (%d bytes)", s.Path, d.Size)
		}
	}
	return &model.Source{
		ID: id, Revision: revision, SHA: info.SHA, PipelineTag: info.PipelineTag, Card: info.CardData,
		Origin: fmt.Sprintf("Hugging Face Hub %s, %s at %s", h.Client.Endpoint(), id, short(info.SHA)),
	}, nil
}

// ProgressEvery is how often a download in progress is reported.
var ProgressEvery = 15 * time.Second

// watch reports the growth of a download's partial file until stop is called, so a
// multi-gigabyte shard shows progress in the job log.
func (h Hub) watch(name, partial string) (stop func()) {
	if h.Progress == nil {
		return func() {}
	}
	done := make(chan struct{})
	go func() {
		start, last := time.Now(), int64(0)
		t := time.NewTicker(ProgressEvery)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-t.C:
				st, err := os.Stat(partial)
				if err != nil || st.Size() == last {
					continue
				}
				last = st.Size()
				h.Progress("downloading %s: %.2f GB so far, %.0f MB/s", name, float64(last)/1e9, float64(last)/1e6/time.Since(start).Seconds())
			}
		}
	}()
	return func() { close(done) }
}

// hubParams is the parameter count the Hub computed from the repo's safetensors headers
// (model info's safetensors: per dtype and the total), so that opening a model need not
// read a header for it: a one-file repo then costs the model info and config.json. Nil
// when the Hub gives none, or a total its parts do not add up to; the headers are then
// read.
func hubParams(t *hub.ParamTotals) *model.Params {
	if t == nil || t.Total <= 0 || t.Total > model.MaxParams {
		return nil
	}
	var sum int64
	for _, n := range t.Parameters {
		if n < 0 || n > model.MaxParams {
			return nil
		}
		sum += n
	}
	if sum != t.Total {
		return nil
	}
	return &model.Params{Total: t.Total, ByDtype: maps.Clone(t.Parameters), Source: "the Hub's safetensors total (model info)"}
}
