package config

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"
)

// File names inside a config directory.
const (
	PipelineFile = "pipeline.yaml"
	VersionsFile = "versions.env"
)

// LoadDir reads pipeline.yaml and versions.env from dir.
func LoadDir(dir string) (*Config, error) {
	yp := filepath.Join(dir, PipelineFile)
	y, err := os.ReadFile(yp)
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", yp, err)
	}
	vp := filepath.Join(dir, VersionsFile)
	v, err := os.ReadFile(vp)
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", vp, err)
	}
	return Parse(yp, y, vp, v)
}

// Parse decodes the two files; the names only label errors.
func Parse(yamlName string, yamlData []byte, envName string, envData []byte) (*Config, error) {
	var root yaml.Node
	if err := yaml.Unmarshal(yamlData, &root); err != nil {
		return nil, fmt.Errorf("%s: %w", yamlName, err)
	}
	dec := yaml.NewDecoder(bytes.NewReader(yamlData))
	dec.KnownFields(true)
	var c Config
	if err := dec.Decode(&c); err != nil {
		if errors.Is(err, io.EOF) {
			return nil, fmt.Errorf("%s: the file is empty", yamlName)
		}
		return nil, fmt.Errorf("%s: %w", yamlName, withKeys(&root, err))
	}
	if err := c.validate(&root); err != nil {
		return nil, fmt.Errorf("%s: %w", yamlName, err)
	}
	v, err := ParseVersions(envName, envData)
	if err != nil {
		return nil, err
	}
	c.Versions = v
	return &c, nil
}

var linePrefix = regexp.MustCompile(`^line (\d+): (.*)$`)

// withKeys rewrites yaml.v3's type errors, which name only a line, so that each one names
// the key too: "line 20: watch.limit_per_org: cannot unmarshal !!str `many` into int".
func withKeys(root *yaml.Node, err error) error {
	var te *yaml.TypeError
	if !errors.As(err, &te) {
		return err
	}
	msgs := make([]string, 0, len(te.Errors))
	for _, m := range te.Errors {
		if g := linePrefix.FindStringSubmatch(m); g != nil {
			line, _ := strconv.Atoi(g[1])
			if key := keyAtLine(root, line, ""); key != "" {
				m = fmt.Sprintf("line %d: %s: %s", line, key, g[2])
			}
		}
		msgs = append(msgs, m)
	}
	return errors.New(strings.Join(msgs, "; "))
}

// keyAtLine returns the dotted path of the mapping key or sequence item on line.
func keyAtLine(n *yaml.Node, line int, prefix string) string {
	join := func(k string) string {
		if prefix == "" {
			return k
		}
		return prefix + "." + k
	}
	switch n.Kind {
	case yaml.DocumentNode:
		for _, c := range n.Content {
			if k := keyAtLine(c, line, prefix); k != "" {
				return k
			}
		}
	case yaml.MappingNode:
		for i := 0; i+1 < len(n.Content); i += 2 {
			k, val := n.Content[i], n.Content[i+1]
			if k.Line == line {
				return join(k.Value)
			}
			if found := keyAtLine(val, line, join(k.Value)); found != "" {
				return found
			}
		}
	case yaml.SequenceNode:
		for i, c := range n.Content {
			if found := keyAtLine(c, line, join(strconv.Itoa(i))); found != "" {
				return found
			}
			if c.Line == line && c.Kind == yaml.ScalarNode {
				return join(strconv.Itoa(i))
			}
		}
	}
	return ""
}
