package workflow

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"regexp"
	"sort"
	"strings"

	"gopkg.in/yaml.v3"
)

// Pin is one third-party action at the commit of a release tag.
type Pin struct {
	Tag    string `yaml:"tag"`
	Commit string `yaml:"commit"`
}

// Pins maps an action ("actions/checkout") to its pin. One table holds every pin so that a
// bump is one line and no workflow can name a version of its own.
type Pins map[string]Pin

var (
	fullCommit = regexp.MustCompile(`^[0-9a-f]{40}$`)
	actionName = regexp.MustCompile(`^[A-Za-z0-9_.-]+/[A-Za-z0-9_.-]+(/[A-Za-z0-9_./-]+)?$`)
)

// ParsePins reads the pin table strictly: an unknown key, a short commit or a missing tag is
// an error naming the file and the action, since a pin that is not a full commit is no pin.
func ParsePins(name string, data []byte) (Pins, error) {
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	var p Pins
	if err := dec.Decode(&p); err != nil && !errors.Is(err, io.EOF) {
		return nil, fmt.Errorf("%s: %s", name, yamlMessage(err))
	}
	if len(p) == 0 {
		return nil, fmt.Errorf("%s: the pin table is empty", name)
	}
	for _, action := range p.actions() {
		pin := p[action]
		switch {
		case !actionName.MatchString(action):
			return nil, fmt.Errorf("%s: %q is not an action name such as actions/checkout", name, action)
		case !fullCommit.MatchString(pin.Commit):
			return nil, fmt.Errorf("%s: %s: commit %q is not a full 40-hex commit", name, action, pin.Commit)
		case pin.Tag == "":
			return nil, fmt.Errorf("%s: %s: the tag the commit belongs to is missing", name, action)
		}
	}
	return p, nil
}

// Uses renders a `uses:` value for action: the commit, with its tag in a comment.
func (p Pins) Uses(action string) (string, error) {
	pin, ok := p[action]
	if !ok {
		return "", fmt.Errorf("action %s has no pin in %s (pinned: %v)", action, PinsFile, p.actions())
	}
	return action + "@" + pin.Commit + " # " + pin.Tag, nil
}

func (p Pins) actions() []string {
	out := make([]string, 0, len(p))
	for a := range p {
		out = append(out, a)
	}
	sort.Strings(out)
	return out
}

var (
	typeErrLine  = regexp.MustCompile(`^line (\d+): `)
	unknownField = regexp.MustCompile(`field (\S+) not found in type`)
)

// yamlMessage words yaml.v3's errors for the reader of the pin table: no "yaml: " prefix
// (the file name says it is YAML) and no Go type names.
func yamlMessage(err error) string {
	var te *yaml.TypeError
	if !errors.As(err, &te) {
		return strings.TrimPrefix(err.Error(), "yaml: ")
	}
	msgs := make([]string, 0, len(te.Errors))
	for _, e := range te.Errors {
		where := ""
		if m := typeErrLine.FindStringSubmatch(e); m != nil {
			where = "line " + m[1] + ": "
		}
		if m := unknownField.FindStringSubmatch(e); m != nil {
			msgs = append(msgs, where+"unknown key "+m[1]+" (a pin has a tag and a commit)")
			continue
		}
		msgs = append(msgs, where+"each action maps to {tag: TAG, commit: COMMIT}")
	}
	return strings.Join(msgs, "; ")
}
