package publish

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path"
	"sort"
	"time"

	"github.com/experimentalmachines/exe-expo/internal/report"
	"github.com/experimentalmachines/exe-expo/pkg/hub"
)

// DefaultAttempts bounds the rebuilds in a row while the repo does not move (a 409 or 412
// that no other writer explains, or an answer lost while nothing landed): the reference
// implementation's six. Races lost to other windows landing do not count
// (hub.CommitOnHead).
const DefaultAttempts = 6

// Options are how a window is published.
type Options struct {
	Client *hub.Client
	// Attempts bounds the re-reads after a race (default DefaultAttempts); Wait is the pause
	// before attempt n+1 (default hub.RetryWait).
	Attempts int
	Wait     func(int) time.Duration
}

// Plan is the commit a publish makes on top of Head.
type Plan struct {
	Repo string
	// Head is the commit the plan was read at ("" for a repo that does not exist yet).
	Head    string
	Summary string
	Add     []hub.CommitFile
	Delete  []string
	// Card and OldCard are the README.md the commit writes and the one it replaces.
	Card, OldCard string
	// Warnings are the window's files the app would offer a phone class that cannot hold
	// their KV cache (appview), which publish says and does not refuse.
	Warnings []string
}

// Result is what a publish did.
type Result struct {
	Repo string
	// URL and OID name the new commit; both are empty when nothing changed (NoOp).
	URL, OID string
	NoOp     bool
	// Unchanged lists the files the Hub already held with the same content.
	Unchanged []string
	// Recovered says the commit's answer was lost and a re-read found the window in place
	// (hub.CommitResult.Recovered): it landed, under a commit id publish never saw.
	Recovered bool
	// Warnings are the plan's (Plan.Warnings) of the commit made.
	Warnings []string
}

// Publish commits w into its repo (created if missing) on the revision it read, and
// rebuilds on a race, a bounded number of times. Publishing a window the repo already
// holds unchanged makes no commit.
func Publish(ctx context.Context, w *Window, o Options) (*Result, error) {
	if _, err := o.Client.CreateRepo(ctx, w.Repo, hub.RepoOptions{License: w.Report.Source.License.License}); err != nil {
		return nil, fmt.Errorf("create the output repo %s: %w", w.Repo, err)
	}
	attempts := o.Attempts
	if attempts <= 0 {
		attempts = DefaultAttempts
	}
	var warnings []string
	res, err := o.Client.CommitOnHead(ctx, w.Repo, "main", attempts, o.Wait, func(ctx context.Context, head string) (hub.CommitRequest, error) {
		p, err := Build(ctx, o.Client, w, head)
		if err != nil {
			return hub.CommitRequest{}, err
		}
		warnings = p.Warnings
		return hub.CommitRequest{Summary: p.Summary, Add: p.Add, Delete: p.Delete}, nil
	})
	if errors.Is(err, hub.ErrNoChanges) {
		return &Result{Repo: w.Repo, NoOp: true, Warnings: warnings}, nil
	}
	if err != nil {
		return nil, fmt.Errorf("publish %s %s to %s: %w", w.Folder, w.Label, w.Repo, err)
	}
	return &Result{Repo: w.Repo, URL: res.URL, OID: res.OID, Unchanged: res.Unchanged, Recovered: res.Recovered, Warnings: warnings}, nil
}

// DryRun builds the commit a publish would make now, without writing anything.
func DryRun(ctx context.Context, c *hub.Client, w *Window) (*Plan, error) {
	head, err := c.HeadSHA(ctx, w.Repo, "main")
	if errors.Is(err, hub.ErrRepoNotFound) {
		return Build(ctx, c, w, "")
	}
	if err != nil {
		return nil, err
	}
	return Build(ctx, c, w, head)
}

// Build reads the repo at head ("" for none yet) and decides the commit: the window's
// files, the folder's config.json from all its reports, the README from every report,
// the root files, and the deletion of the window's old files that are not sent again.
func Build(ctx context.Context, c *hub.Client, w *Window, head string) (*Plan, error) {
	p := &Plan{Repo: w.Repo, Head: head, Summary: fmt.Sprintf("%s %s: %s@%s", w.Folder, w.Label, w.Report.Source.ID, short(w.Report.Source.SHA))}
	reports := []placed{{Path: w.ReportPath, Report: w.Report}}
	var stale []string
	var siblings []hub.Sibling
	skipped := map[string][]SkippedWindow{}
	if head != "" {
		// blobs=true: the siblings' blob ids tell which files changed since an earlier read.
		info, err := c.ModelInfo(ctx, w.Repo, hub.InfoOptions{Revision: head, Blobs: true})
		if err != nil {
			return nil, err
		}
		siblings = info.Siblings
		for _, s := range info.Siblings {
			switch {
			case superseded(s.Path, w.Folder, w.Label):
				stale = append(stale, s.Path)
			case s.Path == "README.md":
				old, err := w.read(ctx, c, head, s)
				if err != nil {
					return nil, err
				}
				p.OldCard = string(old)
			case isReport(s.Path) && path.Dir(s.Path) != ".":
				b, err := w.read(ctx, c, head, s)
				if err != nil {
					return nil, err
				}
				r, err := decodeReport(w.Repo, s.Path, b)
				if err != nil {
					return nil, err
				}
				reports = append(reports, placed{Path: s.Path, Report: r})
			}
			if isFolderConfig(s.Path) {
				if skipped[path.Dir(s.Path)], err = w.skippedIn(ctx, c, head, s); err != nil {
					return nil, err
				}
			}
		}
	}
	var folder []placed
	for _, r := range reports {
		if r.folder() == w.Folder {
			folder = append(folder, r)
		}
	}
	skipped[w.Folder] = mergeSkipped(skipped[w.Folder], w.Skipped, folder)
	cfg, err := folderConfig(folder, skipped[w.Folder])
	if err != nil {
		return nil, err
	}
	p.Card = CardWith(reports, skipped)
	p.Add = append(append([]hub.CommitFile(nil), w.Files...),
		hub.CommitFile{PathInRepo: path.Join(w.Folder, "config.json"), Content: cfg})
	p.Add = append(p.Add, w.Root...)
	p.Add = append(p.Add, hub.CommitFile{PathInRepo: "README.md", Content: []byte(p.Card)})
	sent := map[string]bool{}
	for _, f := range p.Add {
		sent[f.PathInRepo] = true
	}
	for _, s := range stale {
		if !sent[s] {
			p.Delete = append(p.Delete, s)
		}
	}
	sort.Strings(p.Delete)
	if err := checkUnique(p.Add, p.Delete); err != nil {
		return nil, fmt.Errorf("publish %s %s to %s: %w", w.Folder, w.Label, w.Repo, err)
	}
	if p.Warnings, err = w.appCheck(siblings, p, cfg); err != nil {
		return nil, err
	}
	return p, nil
}

// read returns a repo file's bytes at head, downloading it only when its blob differs
// from the one read before: a rebuild after a lost race re-reads only what changed.
func (w *Window) read(ctx context.Context, c *hub.Client, head string, s hub.Sibling) ([]byte, error) {
	if got, ok := w.seen[s.Path]; ok && s.BlobID != "" && got.blob == s.BlobID {
		return got.data, nil
	}
	b, err := c.ReadFile(ctx, w.Repo, head, s.Path)
	if err != nil {
		return nil, err
	}
	if w.seen == nil {
		w.seen = map[string]seenFile{}
	}
	w.seen[s.Path] = seenFile{blob: s.BlobID, data: b}
	return b, nil
}

// seenFile is a repo file as a publish read it, by its git blob id.
type seenFile struct {
	blob string
	data []byte
}

// decodeReport decodes one published report.
func decodeReport(repo, p string, b []byte) (*report.Report, error) {
	var r report.Report
	if err := json.Unmarshal(b, &r); err != nil {
		return nil, fmt.Errorf("%s in %s is not an export report (%v): fix or delete it on the Hub before publishing", p, repo, err)
	}
	return &r, nil
}
