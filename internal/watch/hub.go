package watch

import (
	"context"
	"fmt"

	"github.com/experimentalmachines/exe-expo/internal/model"
	"github.com/experimentalmachines/exe-expo/internal/source"
	"github.com/experimentalmachines/exe-expo/pkg/hub"
)

// HubSource is the Hub as the watcher reads it: org listings page by page and one
// model's metadata and config, never its weights.
type HubSource struct {
	Client *hub.Client
	Source source.HubReader
}

// ListOrg lists the org's newest repos, every page until limit.
func (h HubSource) ListOrg(ctx context.Context, org string, limit int) ([]Listed, error) {
	var out []Listed
	opts := hub.ListOptions{Author: org, Sort: "createdAt", Max: limit, PageSize: 500, Expand: []string{"createdAt", "sha"}}
	for m, err := range h.Client.ListModels(ctx, opts) {
		if err != nil {
			return nil, fmt.Errorf("could not list the models of %s on the Hub: %w", org, err)
		}
		out = append(out, Listed{ID: m.ID, SHA: m.SHA, CreatedAt: m.CreatedAt})
	}
	return out, nil
}

// Fetch reads one model's metadata and config at revision; a gated repo is a refusal in
// the source (its AccessError), not an error.
func (h HubSource) Fetch(ctx context.Context, id, revision string) (*model.Source, error) {
	src, files, err := h.Source.Source(ctx, id, revision)
	if err != nil {
		return nil, err
	}
	if src.AccessError == "" {
		if err := model.Load(ctx, src, files); err != nil {
			return nil, fmt.Errorf("could not read %s at %s: %w", id, revision, err)
		}
	}
	return src, nil
}
