// Package pinned says which ExecuTorch release exe-expo exports for, and what that release
// has and lacks, so that no Go source names a runtime version. The version comes from
// config/versions.env and the facts from config/runtime-facts.yaml, both embedded: a move to
// the next runtime is a change of those two files (and the lock), and TestFactsCheckedOnThePin
// lists every fact the move must check again.
package pinned

import (
	"bytes"
	"fmt"
	"path"
	"regexp"
	"sort"
	"strings"
	"sync"

	exeexpo "github.com/experimentalmachines/exe-expo"
	"github.com/experimentalmachines/exe-expo/internal/config"
	"gopkg.in/yaml.v3"
)

// FactsFile is the facts table's name under config/.
const FactsFile = "runtime-facts.yaml"

// Fact is one statement about an ExecuTorch release that a decision of exe-expo rests on.
type Fact struct {
	ID        string `yaml:"id"`
	CheckedOn string `yaml:"checked_on"`
	Text      string `yaml:"text"`
	Evidence  string `yaml:"evidence"`
}

// Sentence is the fact as exe-expo prints it: its text with the release it was checked on.
func (f Fact) Sentence() string { return strings.ReplaceAll(f.Text, "{version}", f.CheckedOn) }

var (
	once     sync.Once
	versions config.Versions
	facts    map[string]Fact
	loadErr  error
	factID   = regexp.MustCompile(`^[a-z0-9_]+(\.[a-z0-9_-]+)+$`)
	semverRE = regexp.MustCompile(`^\d+\.\d+\.\d+$`)
)

func load() {
	once.Do(func() {
		v, err := exeexpo.ConfigFS.ReadFile(path.Join("config", config.VersionsFile))
		if err != nil {
			loadErr = fmt.Errorf("embedded config: %w", err)
			return
		}
		if versions, err = config.ParseVersions("config/"+config.VersionsFile, v); err != nil {
			loadErr = err
			return
		}
		b, err := exeexpo.ConfigFS.ReadFile(path.Join("config", FactsFile))
		if err != nil {
			loadErr = fmt.Errorf("embedded config: %w", err)
			return
		}
		facts, loadErr = ParseFacts("config/"+FactsFile, b)
	})
	if loadErr != nil {
		// The embedded files are committed and held by this package's tests: a binary that
		// cannot read them was built from a broken tree.
		panic("pinned: " + loadErr.Error())
	}
}

// ParseFacts decodes a facts table strictly: every field is required, ids are unique and
// dotted, checked_on is a release version, and a text naming a release says {version}.
func ParseFacts(name string, data []byte) (map[string]Fact, error) {
	var doc struct {
		Facts []Fact `yaml:"facts"`
	}
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	if err := dec.Decode(&doc); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	out := make(map[string]Fact, len(doc.Facts))
	for i, f := range doc.Facts {
		where := fmt.Sprintf("%s: facts[%d]", name, i)
		switch {
		case !factID.MatchString(f.ID):
			return nil, fmt.Errorf("%s: id %q is not a dotted name such as vulkan.no-lfm2-short-conv", where, f.ID)
		case !semverRE.MatchString(f.CheckedOn):
			return nil, fmt.Errorf("%s (%s): checked_on %q is not a release such as 1.2.3", where, f.ID, f.CheckedOn)
		case strings.TrimSpace(f.Text) == "":
			return nil, fmt.Errorf("%s (%s): text is empty", where, f.ID)
		case strings.TrimSpace(f.Evidence) == "":
			return nil, fmt.Errorf("%s (%s): evidence is empty: say where the fact was read or seen", where, f.ID)
		case strings.Contains(f.Text, f.CheckedOn):
			return nil, fmt.Errorf("%s (%s): text names %s; write {version} so that it follows checked_on", where, f.ID, f.CheckedOn)
		}
		if _, dup := out[f.ID]; dup {
			return nil, fmt.Errorf("%s: id %s is given twice", where, f.ID)
		}
		out[f.ID] = f
	}
	return out, nil
}

// Version is the ExecuTorch release exe-expo exports for (EXECUTORCH_VERSION).
func Version() string {
	load()
	return versions.ExecuTorch
}

// Versions is every pin of config/versions.env as embedded.
func Versions() config.Versions {
	load()
	return versions
}

// ExecuTorch is "ExecuTorch <version>", as flag help and messages name the pinned runtime.
func ExecuTorch() string { return "ExecuTorch " + Version() }

// Say is the sentence of fact id. An unknown id is a programming error caught by the tests
// of every package that words a message with it (they run at package initialisation).
func Say(id string) string {
	load()
	f, ok := facts[id]
	if !ok {
		panic(fmt.Sprintf("pinned: no fact %q in config/%s", id, FactsFile))
	}
	return f.Sentence()
}

// CheckedOn is the release fact id was last checked against: for a fact about another
// program's runtime (execuserve.runtime), the release that program links.
func CheckedOn(id string) string {
	load()
	f, ok := facts[id]
	if !ok {
		panic(fmt.Sprintf("pinned: no fact %q in config/%s", id, FactsFile))
	}
	return f.CheckedOn
}

// Facts lists every fact, by id.
func Facts() []Fact {
	load()
	out := make([]Fact, 0, len(facts))
	for _, f := range facts {
		out = append(out, f)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out
}
