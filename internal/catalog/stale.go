package catalog

import (
	"fmt"
	"maps"
	"slices"
)

// Stale is a published folder whose files were built for another runtime than the one the
// pipeline builds for now: config/versions.env moved, and the folder is due for a rebuild.
type Stale struct {
	Repo, Source, Folder string
	Built                *Folder
	Want                 Runtime
}

// Stale lists every folder of the catalog whose runtime is not want(backend), by repo and
// folder. `catalog --check` prints them and `watch` queues their rebuild, from this one list.
func (c *Catalog) Stale(want func(backend string) Runtime) []Stale {
	var out []Stale
	for _, repo := range slices.Sorted(maps.Keys(c.Models)) {
		m := c.Models[repo]
		for _, folder := range slices.Sorted(maps.Keys(m.Folders)) {
			f := m.Folders[folder]
			if w := want(f.Backend); f.Runtime != w {
				out = append(out, Stale{Repo: repo, Source: m.Source, Folder: folder, Built: f, Want: w})
			}
		}
	}
	return out
}

// String is the line `catalog --check` prints for the folder.
func (s Stale) String() string {
	return fmt.Sprintf("%s/%s was built for %s; the pipeline builds for %s now: due for a rebuild (watch queues it)",
		s.Repo, s.Folder, s.Built.Runtime, s.Want)
}
