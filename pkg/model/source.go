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

	Config     *Config        `json:"-"`
	Generation map[string]any `json:"-"`
	Params     *Params        `json:"params,omitempty"`
	// ParamsError says why no count could be read (then Params may be computed).
	ParamsError string `json:"params_error,omitempty"`
}

// Name is the repo part of the id ("Qwen3-1.7B").
func (s *Source) Name() string { return path.Base(s.ID) }

var (
	repoID   = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,95}/[A-Za-z0-9][A-Za-z0-9._-]{0,95}$`)
	dotTrick = regexp.MustCompile(`\.\.|\.$|/\.`)
)

// ValidID reports whether id is a Hub model id we accept: org/name with the Hub's
// characters and no path tricks. Model ids reach file names and workflow inputs, so they
// are checked before any use.
func ValidID(id string) bool {
	return repoID.MatchString(id) && !dotTrick.MatchString(id)
}

// Load reads config.json (required), generation_config.json (optional) and the parameter
// count (safetensors headers; computed from the architecture when the repo has none at
// hand) through f. A gated or missing repo surfaces as the error f returns.
func Load(ctx context.Context, s *Source, f Files) error {
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
	if g, err := f.ReadFile(ctx, "generation_config.json"); err == nil {
		var m map[string]any
		if err := json.Unmarshal(g, &m); err != nil {
			return fmt.Errorf("%s/generation_config.json: %w", s.ID, err)
		}
		s.Generation = m
	} else if !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("read generation_config.json of %s: %w", s.ID, err)
	}
	p, err := CountParams(ctx, f, cfg)
	switch {
	case err == nil:
		s.Params = &p
	case errors.Is(err, ErrNoSafetensors):
		s.ParamsError = err.Error()
		if a, aerr := ArchOf(cfg); aerr == nil {
			s.Params = &Params{Total: a.ComputedParams(), Source: "computed from the architecture", Computed: true}
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
