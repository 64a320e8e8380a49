package hub

import (
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestCheckLicense(t *testing.T) {
	for _, tc := range []struct {
		name, license, lname, link string
		ok                         bool
	}{
		{"hub id", "apache-2.0", "", "", true},
		{"none", "", "", "", true},
		{"llama", "llama3.2", "", "LICENSE.txt", true},
		{"other with name and file", "other", "lfm1.0", "LICENSE", true},
		{"other with https link", "other", "qwen-research", "https://huggingface.co/Qwen/Qwen2.5-3B/blob/main/LICENSE", true},
		{"unknown id", "apache2", "", "", false},
		{"id with newline", "mit\nbase_model: evil/x", "", "", false},
		{"name with newline", "other", "x\nbase_model: evil/x", "", false},
		{"name with colon and space", "other", "my: license", "", false},
		{"name with quote", "other", `a"b`, "", false},
		{"link http", "other", "x", "http://example.com/LICENSE", false},
		{"link with space", "other", "x", "https://example.com/a b", false},
		{"link with newline", "other", "x", "https://example.com/a\nlicense: mit", false},
		{"link userinfo", "other", "x", "https://user:pw@example.com/LICENSE", false},
		{"link path", "other", "x", "../LICENSE", false},
		{"link dotdot", "other", "x", "..", false},
		{"link javascript", "other", "x", "javascript:alert(1)", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := CheckLicense(tc.license, tc.lname, tc.link)
			if tc.ok {
				assert.NoError(t, err)
			} else {
				assert.Error(t, err)
			}
		})
	}
}

// TestLicensesMatchTheOfficialClient compares Licenses with the official JS client's
// License type, which npm installs for the conformance test.
func TestLicensesMatchTheOfficialClient(t *testing.T) {
	p := filepath.Join("hubtest", "testdata", "js", "node_modules", "@huggingface", "hub", "src", "types", "public.ts")
	b, err := os.ReadFile(p)
	if os.IsNotExist(err) {
		if os.Getenv("EXE_EXPO_CI") == "1" {
			t.Fatalf("EXE_EXPO_CI=1 and %s is missing (npm ci in hubtest/testdata/js installs it)", p)
		}
		t.Skipf("skipping: %s is missing (run npm ci in hubtest/testdata/js)", p)
	}
	require.NoError(t, err)
	block := regexp.MustCompile(`(?s)export type License =(.*?);`).FindSubmatch(b)
	require.NotNil(t, block, "%s declares no License type", p)
	var js []string
	for _, m := range regexp.MustCompile(`"([^"]+)"`).FindAllSubmatch(block[1], -1) {
		js = append(js, string(m[1]))
	}
	var ours []string
	for id := range Licenses {
		ours = append(ours, id)
	}
	sort.Strings(js)
	sort.Strings(ours)
	assert.Empty(t, cmp.Diff(js, ours), "Licenses against %s (-js +ours)", p)
}
