package source

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/experimentalmachines/exe-expo/internal/model"
	"github.com/experimentalmachines/exe-expo/internal/report"
	"github.com/experimentalmachines/exe-expo/pkg/hub"
)

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
