package hubtest

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestRefusesBadNames sends, as a client with a bug would, the repo ids, revisions and
// paths the Hub refuses: each is a 400 with the Hub's JSON error and X-Error-Message, never
// an answer about another repo or file.
func TestRefusesBadNames(t *testing.T) {
	s := New(t)
	s.MustAddModel(t, "org/m", map[string][]byte{"config.json": []byte(`{}`)})
	header := `{"key":"header","value":{"summary":"s"}}` + "\n"
	tests := []struct {
		name, method, path, body, want string
	}{
		{"info of ../X", "GET", "/api/models/../X", "", `Invalid repo id \"../X\"`},
		{"preupload to ../X", "POST", "/api/models/../X/preupload/main", `{"files":[]}`, `Invalid repo id \"../X\"`},
		{"commit to ../X", "POST", "/api/models/../X/commit/main", header, `Invalid repo id \"../X\"`},
		{"info of a/b?c, escaped", "GET", "/api/models/a/b%3Fc", "", `Invalid repo id \"a/b?c\"`},
		{"info of a%2fb/c, escaped", "GET", "/api/models/a%252fb/c", "", `Invalid repo id \"a%2fb/c\"`},
		{"info of a%2fb/c, unescaped", "GET", "/api/models/a%2fb/c", "", `Invalid repo id \"a/b/c\"`},
		{"info of -a/b", "GET", "/api/models/-a/b", "", `Invalid repo id \"-a/b\"`},
		{"info of a/b.", "GET", "/api/models/a/b.", "", `Invalid repo id \"a/b.\"`},
		{"info of a/b--c", "GET", "/api/models/a/b--c", "", `Invalid repo id \"a/b--c\"`},
		{"info of a non-ASCII id", "GET", "/api/models/org/%C3%BC", "", `Invalid repo id \"org/ü\"`},
		{"auth check of a/b.git", "GET", "/api/models/a/b.git/auth-check", "", `Invalid repo id \"a/b.git\"`},
		{"info at a..b", "GET", "/api/models/org/m/revision/a..b", "", `Invalid rev id \"a..b\"`},
		{"tree at a:b", "GET", "/api/models/org/m/tree/a:b", "", `Invalid rev id \"a:b\"`},
		{"tree of ../x", "GET", "/api/models/org/m/tree/main/../x", "", `Invalid path \"../x\"`},
		{"preupload to branch a b", "POST", "/api/models/org/m/preupload/a%20b", `{"files":[]}`, `Invalid rev id \"a b\"`},
		{"preupload of ../x", "POST", "/api/models/org/m/preupload/main", `{"files":[{"path":"../x","size":1,"sample":""}]}`, `Invalid path \"../x\"`},
		{"commit to branch x.lock", "POST", "/api/models/org/m/commit/x.lock", header, `Invalid rev id \"x.lock\"`},
		{"commit adding .git/config", "POST", "/api/models/org/m/commit/main",
			header + `{"key":"file","value":{"path":".git/config","content":"","encoding":"base64"}}`, `Invalid path \".git/config\"`},
		{"commit deleting a/../", "POST", "/api/models/org/m/commit/main",
			header + `{"key":"deletedFolder","value":{"path":"a/../"}}`, `Invalid path \"a/../\"`},
		{"resolve of ../X", "GET", "/../X/resolve/main/config.json", "", `Invalid repo id \"../X\"`},
		{"resolve at a~1", "GET", "/org/m/resolve/a~1/config.json", "", `Invalid rev id \"a~1\"`},
		{"resolve of a/../config.json", "GET", "/org/m/resolve/main/a/../config.json", "", `Invalid path \"a/../config.json\"`},
		{"resolve of a//config.json", "HEAD", "/org/m/resolve/main/a//config.json", "", ""},
		{"LFS batch of ../X", "POST", "/../X.git/info/lfs/objects/batch", `{"operation":"upload","objects":[]}`, `Invalid repo id \"../X\"`},
		{"LFS batch for ref a..b", "POST", "/org/m.git/info/lfs/objects/batch",
			`{"operation":"upload","ref":{"name":"a..b"},"objects":[]}`, `Invalid rev id \"a..b\"`},
		{"create a/b--c", "POST", "/api/repos/create", `{"name":"b--c","organization":"a","type":"model"}`, `Invalid repo id \"a/b--c\"`},
		{"create a/b.", "POST", "/api/repos/create", `{"name":"b.","organization":"a","type":"model"}`, `Invalid repo id \"a/b.\"`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			st, h, body := do(t, tc.method, s.URL+tc.path, "hf_x", tc.body, nil)
			require.Equal(t, 400, st, body)
			assert.NotEmpty(t, h.Get("X-Error-Message"))
			if tc.method == "HEAD" {
				return
			}
			var e struct{ Error string }
			require.NoError(t, json.Unmarshal([]byte(body), &e), body)
			assert.Equal(t, h.Get("X-Error-Message"), e.Error)
			assert.Contains(t, body, tc.want)
		})
	}
	assert.Equal(t, []string{"config.json"}, filesOtherThanAttributes(s.Files("org/m", "main")), "a refused commit changed the repo")
}

// TestAcceptsGoodNamesThatNeedEscaping: names the Hub takes, escaped by the client, reach
// the repo and revision they name.
func TestAcceptsGoodNamesThatNeedEscaping(t *testing.T) {
	s := New(t)
	s.MustAddModel(t, "org/m_1.x", map[string][]byte{"a b/c?d#e.json": []byte(`{}`)})
	for _, p := range []string{
		"/api/models/org/m_1.x/revision/main",
		"/org/m_1.x/resolve/main/a%20b/c%3Fd%23e.json",
		"/api/models/org/m_1.x/tree/main/a%20b",
	} {
		st, _, body := do(t, "GET", s.URL+p, "", "", nil)
		assert.Equal(t, 200, st, "%s: %s", p, body)
	}
}

func TestSeedRefusesBadNames(t *testing.T) {
	s := New(t)
	_, err := s.AddModel("../X", nil)
	assert.ErrorContains(t, err, `repo id "../X" is not a Hub repo id`)
	_, err = s.AddModel("org/m", map[string][]byte{"../x": nil})
	assert.ErrorContains(t, err, `Invalid path "../x"`)
}

func filesOtherThanAttributes(files []string) []string {
	var out []string
	for _, f := range files {
		if !strings.HasPrefix(f, ".git") {
			out = append(out, f)
		}
	}
	return out
}
