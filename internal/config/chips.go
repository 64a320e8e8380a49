package config

import (
	"fmt"
	"strings"
)

// ChipBackend is a backend whose files are built per chip, as the backend registry
// (internal/backend) describes it: config is the lowest package and cannot ask the registry, so
// the registry installs ChipBackends and validation checks pipeline.yaml's chips against
// what it returns.
type ChipBackend struct {
	// Name is what chips.<chip>.backend says for the backend's chips.
	Name string
	// Key is where pipeline.yaml lists the chips it builds for ("export.qnn.socs").
	Key string
	// Platform, when set, is why each of its chips must name its platform.
	Platform string
}

// ChipBackends lists the per-chip backends the program links, in plan order. While it is
// nil or lists none (a program or test that links no backend), chips.<chip>.backend and
// the backend of a chip list are left unchecked: config alone knows no backend.
var ChipBackends func() []ChipBackend

// chipBackends is what ChipBackends returns, or nothing.
func chipBackends() []ChipBackend {
	if ChipBackends == nil {
		return nil
	}
	return ChipBackends()
}

// chipBackendAt is the backend whose chips pipeline.yaml lists at key, if one is linked.
func chipBackendAt(key string) (ChipBackend, bool) {
	for _, cb := range chipBackends() {
		if cb.Key == key {
			return cb, true
		}
	}
	return ChipBackend{}, false
}

// checkChips holds a chip list to the chips described under chips and, when a linked
// backend lists its chips at path, to that backend's.
func (c *Config) checkChips(v *validator, path string, socs []string) {
	v.check(len(socs) > 0, path, "no chip is listed")
	cb, linked := chipBackendAt(path)
	for i, s := range socs {
		ch, ok := c.Chips[s]
		p := fmt.Sprintf("%s.%d", path, i)
		v.check(ok, p, "chip %q is not described under chips", s)
		v.check(!ok || !linked || ch.Backend == cb.Name, p, "chip %q is a %s chip, not %s", s, ch.Backend, cb.Name)
	}
}

// linkedChipBackend is the linked per-chip backend a chip names, and whether any is linked.
func linkedChipBackend(ch Chip) (own *ChipBackend, names []string) {
	cbs := chipBackends()
	for i := range cbs {
		names = append(names, cbs[i].Name)
		if cbs[i].Name == ch.Backend {
			own = &cbs[i]
		}
	}
	return own, names
}

// checkChipBackend holds a chip's backend to the linked per-chip backends.
func checkChipBackend(v *validator, p string, ch Chip) {
	if own, names := linkedChipBackend(ch); len(names) > 0 {
		v.check(own != nil, p+".backend", "%q is not %s", ch.Backend, orList(names))
	}
}

// checkChipPlatform holds a chip to its backend's platform rule.
func checkChipPlatform(v *validator, p string, ch Chip) {
	if own, _ := linkedChipBackend(ch); own != nil && own.Platform != "" {
		v.check(ch.Platform != "", p+".platform", "%s", own.Platform)
	}
}

// orList joins names as "a or b", "a, b or c".
func orList(names []string) string {
	if len(names) < 2 {
		return strings.Join(names, "")
	}
	return strings.Join(names[:len(names)-1], ", ") + " or " + names[len(names)-1]
}
