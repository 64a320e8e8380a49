// Package source connects the Hub client to model analysis and export: a Hub repo at a
// revision becomes a model.Source (metadata, access, files by range), and an export's
// source files are downloaded into its work folder.
package source

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"net"
	"time"

	"github.com/experimentalmachines/exe-expo/internal/model"
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
