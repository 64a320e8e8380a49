package model

import (
	"fmt"
	"regexp"

	"gopkg.in/yaml.v3"
)

// frontMatter is a model card's YAML block: a leading `---` line, the YAML, a closing `---`
// line, as huggingface_hub's REGEX_YAML_BLOCK reads it.
var frontMatter = regexp.MustCompile(`^\s*---\r?\n([\s\S]*?)\r?\n---(?:\r?\n|$)`)

// ParseCard returns the metadata of a model card (README.md): its YAML front matter, which
// the Hub serves as cardData (license, license_name, license_link, ...). A card without
// front matter, or with an empty one, has none (nil); front matter that is not a YAML
// mapping is an error, as the Hub refuses such a card on commit.
func ParseCard(b []byte) (map[string]any, error) {
	m := frontMatter.FindSubmatch(b)
	if m == nil {
		return nil, nil
	}
	var card map[string]any
	if err := yaml.Unmarshal(m[1], &card); err != nil {
		return nil, fmt.Errorf("the YAML front matter is not a mapping: %w", err)
	}
	return card, nil
}
