package config

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
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
	y, err := readFile(yp)
	if err != nil {
		return nil, err
	}
	vp := filepath.Join(dir, VersionsFile)
	v, err := readFile(vp)
	if err != nil {
		return nil, err
	}
	return Parse(yp, y, vp, v)
}

// readFile reads path and names it once in an error: "read DIR/pipeline.yaml: no such
// file or directory" (os's own error repeats the path).
func readFile(path string) ([]byte, error) {
	b, err := os.ReadFile(path)
	var pe *fs.PathError
	if errors.As(err, &pe) {
		err = pe.Err
	}
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	return b, nil
}

// Parse decodes the two files; the names only label errors.
func Parse(yamlName string, yamlData []byte, envName string, envData []byte) (*Config, error) {
	var root yaml.Node
	if err := yaml.Unmarshal(yamlData, &root); err != nil {
		// yaml.v3 says "yaml: line 4: did not find expected key"; the file name says YAML.
		return nil, fmt.Errorf("%s: %s", yamlName, strings.TrimPrefix(err.Error(), "yaml: "))
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

var (
	linePrefix = regexp.MustCompile(`^line (\d+): (.*)$`)
	// unmarshalMsg is yaml.v3's "cannot unmarshal !!str `many` into int"; the value is
	// given for scalars only.
	unmarshalMsg = regexp.MustCompile("^cannot unmarshal !!(\\w+)(?: `(.*)`)? into (.+)$")
	// unknownField is KnownFields' "field repo_sufix not found in type config.Hub".
	unknownField = regexp.MustCompile(`^field (.+) not found in type \S+$`)
)

// withKeys rewrites yaml.v3's type errors, which name only a line and speak of YAML tags
// and Go types, so that each one names the key and says what it wants in words:
// "line 20: watch.limit_per_org: want a whole number, not `many`".
func withKeys(root *yaml.Node, err error) error {
	var te *yaml.TypeError
	if !errors.As(err, &te) {
		return err
	}
	msgs := make([]string, 0, len(te.Errors))
	for _, m := range te.Errors {
		if g := linePrefix.FindStringSubmatch(m); g != nil {
			line, _ := strconv.Atoi(g[1])
			m = fmt.Sprintf("line %d: %s", line, typeWords(g[2]))
			if key := keyAtLine(root, line, ""); key != "" {
				m = fmt.Sprintf("line %d: %s: %s", line, key, typeWords(g[2]))
			}
		}
		msgs = append(msgs, m)
	}
	return errors.New(strings.Join(msgs, "; "))
}

// typeWords turns "cannot unmarshal !!str `many` into int" into "want a whole number, not
// `many`" and "field x not found in type config.Hub" into "unknown key x"; any other
// message is kept.
func typeWords(msg string) string {
	if g := unknownField.FindStringSubmatch(msg); g != nil {
		return fmt.Sprintf("unknown key %s (misspelt, or in the wrong section?)", g[1])
	}
	g := unmarshalMsg.FindStringSubmatch(msg)
	if g == nil {
		return msg
	}
	got := "`" + g[2] + "`"
	switch g[1] {
	case "seq":
		got = "a list"
	case "map":
		got = "a mapping"
	case "null":
		got = "nothing"
	}
	return fmt.Sprintf("want %s, not %s", goTypeWords(g[3]), got)
}

func goTypeWords(t string) string {
	switch {
	case strings.HasPrefix(t, "[]"):
		return "a list"
	case strings.HasPrefix(t, "map["):
		return "a mapping"
	case t == "bool":
		return "true or false"
	case t == "string":
		return "text"
	case t == "time.Duration":
		return "a duration such as 90m"
	case strings.HasPrefix(t, "float"):
		return "a number"
	case strings.HasPrefix(t, "int"), strings.HasPrefix(t, "uint"):
		return "a whole number"
	}
	return "a mapping"
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
