package model

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/experimentalmachines/exe-expo/internal/fileutil"
)

// Source is one source model as the pipeline sees it: its metadata and architecture,
// wherever it was read from.
type Source struct {
	// ID is the Hub id ("Qwen/Qwen3-1.7B"); for a local folder, the id given with --id, or
	// else the folder's base name (then IDFromFolder is set, and the name rules read a
	// folder name the user chose, which plan says).
	ID           string `json:"id"`
	IDFromFolder bool   `json:"id_from_folder,omitempty"`
	Revision     string `json:"revision,omitempty"`
	// RevisionNote says why Revision was not checked (the offline snapshot has no
	// revisions); empty when the Hub answered for that revision.
	RevisionNote string `json:"revision_note,omitempty"`
	SHA          string `json:"sha,omitempty"`
	// PipelineTag and Gated come from the Hub's model info; empty offline.
	PipelineTag string `json:"pipeline_tag,omitempty"`
	// Card is the model card's metadata (cardData: license, license_name, license_link).
	Card map[string]any `json:"-"`
	// AccessError is set when the repo is gated and the token has no access.
	AccessError string `json:"access_error,omitempty"`
	// Origin says where the metadata came from, for the plan's first line.
	Origin string `json:"origin"`

	// Config is config.json, decoded once when the model was opened (Load): its Features,
	// Arch and Family are what every reader of the architecture takes. Nil when the repo
	// gave none (a gated repo's source).
	Config     *Config        `json:"-"`
	Generation map[string]any `json:"-"`
	// TokenizerEOS is the id of tokenizer_config.json's eos_token, the token a chat turn
	// ends with, when the file names one among its added tokens; nil otherwise. Qwen3.5 has
	// no generation_config.json and its config names only <|endoftext|>, so without it a
	// file would never stop at <|im_end|>.
	TokenizerEOS *int64  `json:"-"`
	Params       *Params `json:"params,omitempty"`
	// ParamsError says why no count could be read (then Params may be computed).
	ParamsError string `json:"params_error,omitempty"`
}

// Name is the repo part of the id ("Qwen3-1.7B").
func (s *Source) Name() string { return path.Base(s.ID) }

var (
	repoID   = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,95}/[A-Za-z0-9][A-Za-z0-9._-]{0,95}$`)
	dotTrick = regexp.MustCompile(`\.\.|\.$|\./|/\.`)
	// dashTrick is the Hub's rule on '-': never doubled, never ending a part.
	dashTrick = regexp.MustCompile(`--|-$|-/`)
)

// IDRule says in words what ValidID accepts, for the messages that refuse an id.
const IDRule = "namespace/name of letters, digits, '.', '_', '-'; each part 1-96 characters, " +
	"starting with a letter or digit, not ending in '-' or '.', without '--' or '..', the name not ending in '.git'"

// ValidID reports whether id is a Hub repo id: namespace/name by the Hub's own rules
// (huggingface_hub's validate_repo_id, docs/research/hub.md#names-checked-before-any-request),
// except that a part must start with a letter or digit where the Hub also allows '_'. Source
// and output repo ids reach URLs, file names and workflow inputs, so every one is checked
// before any use: a name the Hub would refuse, or one that could climb out of its URL
// segment ("../X", "a/b?c"), never leaves this process.
func ValidID(id string) bool {
	return repoID.MatchString(id) && !dotTrick.MatchString(id) && !dashTrick.MatchString(id) &&
		!strings.HasSuffix(id, ".git")
}

// CheckID is nil for a valid repo id, else an error that names where the id came from
// (field, e.g. "--repo") and the id itself, and gives the rule.
func CheckID(field, id string) error {
	if ValidID(id) {
		return nil
	}
	return fmt.Errorf("%s %q is not a Hub repo id (%s)", field, id, IDRule)
}

// Load reads config.json (required), generation_config.json (optional) and the parameter
// count (safetensors headers; computed from the architecture when the repo has none at
// hand) through f. A gated or missing repo surfaces as the error f returns. config.json is
// decoded here, once (ParseConfig), and every reader takes its Features, Arch and family
// from s.Config; a source that holds its Config already (source.Hub's, when the model
// info carried the whole file) keeps it, so the file is not decoded twice.
func Load(ctx context.Context, s *Source, f Files) error {
	if s.Config == nil {
		b, err := f.ReadFile(ctx, "config.json")
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				return fmt.Errorf("%s has no config.json: %w", s.ID, err)
			}
			return fmt.Errorf("read config.json of %s: %w", s.ID, err)
		}
		cfg, err := ParseConfig(fileLabel(s, f, "config.json"), b)
		if err != nil {
			return err
		}
		s.Config = cfg
	}
	cfg := s.Config
	if g, err := f.ReadFile(ctx, "generation_config.json"); err == nil {
		var m map[string]any
		if err := json.Unmarshal(g, &m); err != nil {
			return fmt.Errorf("generation_config.json of %s is not valid: %s", s.ID, fileutil.Reason(err))
		}
		s.Generation = m
	} else if !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("read generation_config.json of %s: %w", s.ID, err)
	}
	if err := loadTokenizerEOS(ctx, s, f); err != nil {
		return err
	}
	if s.Params != nil && !s.Params.Computed && len(cfg.LeftOut()) == 0 {
		return nil // the Hub's own count, from the same headers (source.Hub)
	}
	// A text-only export of a multimodal wrapper counts its own tensors: the Hub's total
	// holds the vision tower too.
	p, err := CountParams(ctx, f, cfg)
	switch {
	case err == nil:
		s.Params = &p
	case errors.Is(err, ErrNoSafetensors), errors.Is(err, ErrTextNotCounted):
		s.ParamsError = err.Error()
		if a, aerr := cfg.Arch(); aerr == nil {
			how := "computed from the architecture"
			if len(cfg.LeftOut()) > 0 {
				how += ", text model only"
			}
			s.Params = &Params{Total: a.ComputedParams(), Source: how, Computed: true}
		}
	default:
		return fmt.Errorf("count parameters of %s: %w", s.ID, err)
	}
	return nil
}

// fileLabel names a file of the repo for error sentences: its path for a local folder
// (which the user can open), else the model id and the file name.
func fileLabel(s *Source, f Files, name string) string {
	if d, ok := f.(Dir); ok {
		return filepath.Join(string(d), name)
	}
	return s.ID + "/" + name
}

// SpecialTokens returns BOS (nil when none) and the EOS list: generation_config first,
// config.json second, duplicates dropped in order.
func (s *Source) SpecialTokens() (bos *int64, eos []int64) {
	for _, m := range []map[string]any{s.Generation, s.Config.Text, s.Config.Top} {
		if m == nil {
			continue
		}
		if bos == nil {
			if ids := IDs(m["bos_token_id"]); len(ids) > 0 {
				b := ids[0]
				bos = &b
			}
		}
		if eos == nil {
			eos = IDs(m["eos_token_id"])
		}
	}
	if s.TokenizerEOS != nil {
		eos = append(slices.Clone(eos), *s.TokenizerEOS)
	}
	seen := map[int64]bool{}
	out := eos[:0:0]
	for _, e := range eos {
		if !seen[e] {
			seen[e] = true
			out = append(out, e)
		}
	}
	return bos, out
}

// loadTokenizerEOS reads tokenizer_config.json (optional) for the id of its eos_token.
func loadTokenizerEOS(ctx context.Context, s *Source, f Files) error {
	b, err := f.ReadFile(ctx, "tokenizer_config.json")
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("read tokenizer_config.json of %s: %w", s.ID, err)
	}
	var tc struct {
		EOS   json.RawMessage       `json:"eos_token"`
		Added map[string]addedToken `json:"added_tokens_decoder"`
	}
	if err := json.Unmarshal(b, &tc); err != nil {
		return fmt.Errorf("tokenizer_config.json of %s is not valid: %s", s.ID, fileutil.Reason(err))
	}
	s.TokenizerEOS = tokenID(tc.EOS, tc.Added)
	return nil
}

// addedToken is an entry of tokenizer_config.json's added_tokens_decoder, and the object
// form of a token name ({"content": ...}).
type addedToken struct {
	Content string `json:"content"`
}

// tokenID is the lowest id of the added token named as a string or as {"content": ...};
// nil when the name is absent or not among the added tokens.
func tokenID(name json.RawMessage, added map[string]addedToken) *int64 {
	var content string
	if json.Unmarshal(name, &content) != nil {
		var obj addedToken
		if json.Unmarshal(name, &obj) != nil {
			return nil
		}
		content = obj.Content
	}
	if content == "" {
		return nil
	}
	var best *int64
	for k, v := range added {
		id, err := strconv.ParseInt(k, 10, 64)
		if err != nil || v.Content != content {
			continue
		}
		if best == nil || id < *best {
			best = &id
		}
	}
	return best
}
