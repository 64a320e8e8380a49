package catalog

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path"
	"sort"
	"strings"
	"time"

	"github.com/experimentalmachines/exe-expo/pkg/hub"
)

// folderOf is the folder of a folder config.json ("xnnpack", "mtk/mt6991"), or "" for any
// other path.
func folderOf(p string) string {
	if path.Base(p) != "config.json" || path.Dir(p) == "." {
		return ""
	}
	return path.Dir(p)
}

// ReadModel reads every folder's config.json of an output repo at rev, and the commit rev
// resolved to.
func ReadModel(ctx context.Context, c *hub.Client, repo, rev string) (map[string][]byte, string, error) {
	info, err := c.ModelInfo(ctx, repo, hub.InfoOptions{Revision: rev})
	if err != nil {
		return nil, "", fmt.Errorf("read %s: %w", repo, err)
	}
	configs := map[string][]byte{}
	for _, s := range info.Siblings {
		folder := folderOf(s.Path)
		if folder == "" {
			continue
		}
		b, err := c.ReadFile(ctx, repo, info.SHA, s.Path)
		if err != nil {
			return nil, "", fmt.Errorf("read %s/%s: %w", repo, s.Path, err)
		}
		configs[folder] = b
	}
	return configs, info.SHA, nil
}

// read is the catalog at head of its repo, or a new one when the repo has none yet.
func read(ctx context.Context, c *hub.Client, catalogRepo, org, head string) (*Catalog, error) {
	if head == "" {
		return New(org), nil
	}
	b, err := c.ReadFile(ctx, catalogRepo, head, File)
	if errors.Is(err, hub.ErrEntryNotFound) {
		return New(org), nil
	}
	if err != nil {
		return nil, fmt.Errorf("read %s/%s: %w", catalogRepo, File, err)
	}
	return Decode(catalogRepo+"/"+File, b)
}

// Options are how the catalog is committed: the attempts and waits of hub.CommitOnHead.
type Options struct {
	Attempts int
	Wait     func(int) time.Duration
}

// Update sets repo's entry in the org's catalog from the model repo's folders as they are
// now, committed on the catalog's head; a race with another publisher rebuilds the entry on
// the new head (reading the model repo again), and a catalog that already holds the entry
// makes no commit (changed is false). The catalog repo is created when missing.
func Update(ctx context.Context, c *hub.Client, catalogRepo, org, repo string, o Options) (changed bool, err error) {
	return commit(ctx, c, catalogRepo, org, "catalog: "+repo, o, func(ctx context.Context, cat *Catalog) error {
		configs, rev, err := ReadModel(ctx, c, repo, "main")
		if err != nil {
			return err
		}
		return cat.SetModel(repo, rev, configs)
	})
}

// Write commits cat as the catalog (a rebuild), replacing what is there.
func Write(ctx context.Context, c *hub.Client, catalogRepo string, cat *Catalog, o Options) (bool, error) {
	return commit(ctx, c, catalogRepo, cat.Org, "catalog: rebuilt from the model repos", o, func(_ context.Context, old *Catalog) error {
		*old = *cat
		return nil
	})
}

func commit(ctx context.Context, c *hub.Client, catalogRepo, org, summary string, o Options, change func(context.Context, *Catalog) error) (bool, error) {
	if _, err := c.CreateRepo(ctx, catalogRepo, hub.RepoOptions{}); err != nil {
		return false, fmt.Errorf("create the catalog repo %s: %w", catalogRepo, err)
	}
	attempts := o.Attempts
	if attempts <= 0 {
		attempts = 6
	}
	_, err := c.CommitOnHead(ctx, catalogRepo, "main", attempts, o.Wait, func(ctx context.Context, head string) (hub.CommitRequest, error) {
		cat, err := read(ctx, c, catalogRepo, org, head)
		if err != nil {
			return hub.CommitRequest{}, err
		}
		if err := change(ctx, cat); err != nil {
			return hub.CommitRequest{}, err
		}
		data, err := cat.Encode()
		if err != nil {
			return hub.CommitRequest{}, err
		}
		return hub.CommitRequest{Summary: summary, Add: []hub.CommitFile{{PathInRepo: File, Content: data}}}, nil
	})
	if errors.Is(err, hub.ErrNoChanges) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("update the catalog %s: %w", catalogRepo, err)
	}
	return true, nil
}

// Rebuild builds the catalog from every model repo of org (but the catalog's own), for a
// catalog that was lost or drifted.
func Rebuild(ctx context.Context, c *hub.Client, org, catalogRepo string) (*Catalog, error) {
	cat := New(org)
	for m, err := range c.ListModels(ctx, hub.ListOptions{Author: org}) {
		if err != nil {
			return nil, fmt.Errorf("list %s's models: %w", org, err)
		}
		if m.ID == catalogRepo || !strings.HasPrefix(m.ID, org+"/") {
			continue
		}
		configs, rev, err := ReadModel(ctx, c, m.ID, "main")
		if err != nil {
			return nil, err
		}
		if err := cat.SetModel(m.ID, rev, configs); err != nil {
			return nil, err
		}
	}
	return cat, nil
}

// Check compares the catalog with the model repos it lists (and the org's repos it
// misses): one sentence per difference, none when they agree.
func Check(ctx context.Context, c *hub.Client, cat *Catalog, catalogRepo string) ([]string, error) {
	fresh, err := Rebuild(ctx, c, cat.Org, catalogRepo)
	if err != nil {
		return nil, err
	}
	var out []string
	for repo, m := range fresh.Models {
		old, ok := cat.Models[repo]
		if !ok {
			out = append(out, repo+" is published but not in the catalog")
			continue
		}
		for folder, f := range m.Folders {
			of, ok := old.Folders[folder]
			switch {
			case !ok:
				out = append(out, fmt.Sprintf("%s/%s is published but not in the catalog", repo, folder))
			case !sameFolder(of, f):
				out = append(out, fmt.Sprintf("%s/%s in the catalog differs from the repo's config.json", repo, folder))
			}
		}
		for folder := range old.Folders {
			if _, ok := m.Folders[folder]; !ok {
				out = append(out, fmt.Sprintf("%s/%s is in the catalog but not in the repo", repo, folder))
			}
		}
	}
	for repo := range cat.Models {
		if _, ok := fresh.Models[repo]; !ok {
			out = append(out, repo+" is in the catalog but holds no published folder")
		}
	}
	sort.Strings(out)
	return out, nil
}

// sameFolder compares two entries as the repo shows them: the older runtimes a catalog keeps
// are history a rebuild cannot see.
func sameFolder(a, b *Folder) bool {
	ac, bc := *a, *b
	ac.Older, bc.Older = nil, nil
	x, err1 := json.Marshal(&ac)
	y, err2 := json.Marshal(&bc)
	return err1 == nil && err2 == nil && bytes.Equal(x, y)
}
