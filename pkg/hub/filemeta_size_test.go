package hub_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/experimentalmachines/exe-expo/pkg/hub"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestFileMetaSize: a HEAD answer without a usable size is an error in words, not a
// strconv message.
func TestFileMetaSize(t *testing.T) {
	tests := []struct {
		name, size, want string
	}{
		{"none", "", "the answer gives no file size (neither X-Linked-Size nor Content-Length)"},
		{"not a number", "12 bytes", `the answer gives the file size as "12 bytes", not a byte count`},
		{"negative", "-1", `the answer gives the file size as "-1", not a byte count`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if tc.size != "" {
					w.Header().Set("X-Linked-Size", tc.size)
				}
				w.Header().Set("X-Repo-Commit", "0123456789abcdef0123456789abcdef01234567")
				w.WriteHeader(http.StatusOK)
			}))
			defer srv.Close()
			c := hub.New(hub.Options{Endpoint: srv.URL, NoEnvToken: true})
			_, err := c.FileMeta(context.Background(), "org/m", "main", "config.json")
			require.Error(t, err)
			assert.Contains(t, err.Error(), tc.want)
			assert.NotContains(t, err.Error(), "strconv")
		})
	}
}
