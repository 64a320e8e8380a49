// Package runtimecompat says which ExecuTorch runtimes load a .pte file without a warning.
//
// The rule is the app's (the openweights Android app, which reads the catalog and warns when
// a file's runtime is newer than its own, patch included, of another major, or more than
// one minor older), and it sits inside ExecuTorch's own runtime compatibility policy
// (runtime/COMPATIBILITY.md: a file runs on the release it was made with and at least the
// next non-patch release; a newer file on an older runtime is not guaranteed). So a file
// made with 2.3.1 loads quietly on 2.3.1 up to, not including, 2.5.0: "2.3.1 to 2.4.x".
// docs/research/runtime-compat.md keeps the evidence.
package runtimecompat

import (
	"fmt"
	"strconv"
	"strings"
)

// Version is an ExecuTorch release, major.minor.patch.
type Version struct{ Major, Minor, Patch int }

// Parse reads "2.3.1" (a missing patch is 0: "2.4" is 2.4.0). A pre-release or local
// suffix ("2.3.1+cpu", "2.4.0rc1") is refused: the rule is for releases.
func Parse(s string) (Version, error) {
	parts := strings.Split(s, ".")
	if len(parts) < 2 || len(parts) > 3 {
		return Version{}, fmt.Errorf("ExecuTorch version %q is not MAJOR.MINOR.PATCH", s)
	}
	var n [3]int
	for i, p := range parts {
		v, err := strconv.Atoi(p)
		if err != nil || v < 0 || p != strconv.Itoa(v) {
			return Version{}, fmt.Errorf("ExecuTorch version %q is not MAJOR.MINOR.PATCH", s)
		}
		n[i] = v
	}
	return Version{n[0], n[1], n[2]}, nil
}

func (v Version) String() string { return fmt.Sprintf("%d.%d.%d", v.Major, v.Minor, v.Patch) }

// less orders releases.
func (v Version) less(w Version) bool {
	if v.Major != w.Major {
		return v.Major < w.Major
	}
	if v.Minor != w.Minor {
		return v.Minor < w.Minor
	}
	return v.Patch < w.Patch
}

// Range is the runtimes that load a file without a warning: From (the release the file was
// made with) up to, not including, Before. The catalog carries it as JSON.
type Range struct {
	From   string `json:"from"`
	Before string `json:"before"`
}

// LoadsOn is the range for a file made with ExecuTorch built.
func LoadsOn(built string) (Range, error) {
	v, err := Parse(built)
	if err != nil {
		return Range{}, err
	}
	return Range{From: v.String(), Before: Version{v.Major, v.Minor + 2, 0}.String()}, nil
}

// String is the range as the card says it: "2.3.1 to 2.4.x".
func (r Range) String() string {
	b, err := Parse(r.Before)
	if err != nil {
		return r.From + " up to " + r.Before
	}
	return fmt.Sprintf("%s to %d.%d.x", r.From, b.Major, b.Minor-1)
}

// Warning is why a runtime app warns before loading a file made with built, or "" when it
// loads it quietly.
func Warning(built, app string) (string, error) {
	f, err := Parse(built)
	if err != nil {
		return "", err
	}
	a, err := Parse(app)
	if err != nil {
		return "", err
	}
	switch {
	case a.Major != f.Major:
		return fmt.Sprintf("the file was made with ExecuTorch %s, another major release than the runtime's %s", f, a), nil
	case a.less(f):
		return fmt.Sprintf("the file was made with ExecuTorch %s, newer than the runtime's %s", f, a), nil
	case a.Minor-f.Minor > 1:
		return fmt.Sprintf("the file was made with ExecuTorch %s, more than one minor release older than the runtime's %s", f, a), nil
	}
	return "", nil
}
