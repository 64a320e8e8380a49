package release

import (
	"context"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestFromEnv(t *testing.T) {
	tests := []struct {
		name, repo, token, api, fails string
	}{
		{"no repository", "", "t", "", "needs GITHUB_REPOSITORY set to owner/name"},
		{"no token", "o/r", "", "", "set GH_TOKEN"},
		{"bad API URL", "o/r", "t", "::", "is not a URL"},
		{"github.com", "o/r", "t", "https://api.github.com", ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Setenv("GITHUB_REPOSITORY", tc.repo)
			t.Setenv("GH_TOKEN", tc.token)
			t.Setenv("GITHUB_TOKEN", "")
			t.Setenv("GITHUB_API_URL", tc.api)
			p, err := FromEnv()
			if tc.fails != "" {
				require.Error(t, err)
				assert.Contains(t, err.Error(), tc.fails)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, "https://api.github.com/", p.GH.BaseURL.String())
			assert.Equal(t, "https://uploads.github.com/", p.GH.UploadURL.String())
		})
	}
}

// TestFromEnvEnterprise publishes through a GitHub Enterprise Server's URLs (API under
// /api/v3, uploads under /api/uploads), as a run on one sets GITHUB_API_URL.
func TestFromEnvEnterprise(t *testing.T) {
	fake, srv := startFake(t)
	t.Setenv("GITHUB_REPOSITORY", "o/r")
	t.Setenv("GH_TOKEN", "t")
	t.Setenv("GITHUB_API_URL", srv.URL+"/api/v3")
	p, err := FromEnv()
	require.NoError(t, err)
	dir, rp := exported(t, "xnnpack", 4096, map[string]int64{"Qwen3-1.7B-8da4w-4k.pte": 64})
	rel, err := ForReport(dir, rp)
	require.NoError(t, err)
	_, err = p.Publish(context.Background(), rel)
	require.NoError(t, err)
	require.Len(t, fake.releases, 1)
	var uploads int
	for _, l := range fake.log {
		if strings.HasPrefix(l, "POST /api/uploads/repos/o/r/releases/") {
			uploads++
		}
	}
	assert.Equal(t, 3, uploads)
}
