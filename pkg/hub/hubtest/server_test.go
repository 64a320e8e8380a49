package hubtest

import (
	"encoding/base64"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// do sends one request and returns status, headers and body.
func do(t *testing.T, method, url, token, body string, hdr map[string]string) (int, http.Header, string) {
	t.Helper()
	var r io.Reader
	if body != "" {
		r = strings.NewReader(body)
	}
	req, err := http.NewRequest(method, url, r)
	if err != nil {
		t.Fatal(err)
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	c := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, resp.Header, string(b)
}

func TestProtocol(t *testing.T) {
	s := New(t)
	sha := s.MustAddModel(t, "org/m", map[string][]byte{
		"config.json": []byte(`{"a":1}`), "sub/dir/w.safetensors": []byte("weights"), "bin.dat": {0, 1, 2},
	})
	u := s.URL
	tests := []struct {
		name, method, path, token, body string
		hdr                             map[string]string
		status                          int
		header, headerValue             string // a header that must be present with this value ("" any)
		bodyContains                    string
	}{
		{name: "info by short sha", method: "GET", path: "/api/models/org/m/revision/" + sha[:7], status: 200, bodyContains: sha},
		{name: "info HEAD alias", method: "GET", path: "/api/models/org/m/revision/HEAD?expand=sha", status: 200, bodyContains: `"sha":"` + sha},
		{name: "list expands sha", method: "GET", path: "/api/models?author=org&expand=sha&expand=createdAt", status: 200, bodyContains: `"sha":"` + sha},
		{name: "expand with blobs", method: "GET", path: "/api/models/org/m?expand=sha&blobs=true", status: 400},
		{name: "tree top level", method: "GET", path: "/api/models/org/m/tree/main", status: 200, bodyContains: `"path":"sub","size":0,"type":"directory"`},
		{name: "tree recursive", method: "GET", path: "/api/models/org/m/tree/main/sub?recursive=true", status: 200, bodyContains: `"path":"sub/dir/w.safetensors"`},
		{name: "tree missing path", method: "GET", path: "/api/models/org/m/tree/main/nope", status: 404, header: "X-Error-Code", headerValue: "EntryNotFound"},
		{name: "regular resolve", method: "GET", path: "/org/m/resolve/main/config.json", status: 200, header: "X-Repo-Commit", headerValue: sha, bodyContains: `{"a":1}`},
		{name: "lfs resolve redirects", method: "HEAD", path: "/org/m/resolve/main/sub/dir/w.safetensors", status: 302, header: "X-Linked-Size", headerValue: "7"},
		{name: "binary sample goes to lfs", method: "HEAD", path: "/org/m/resolve/main/bin.dat", status: 302},
		{name: "raw lfs is the pointer", method: "GET", path: "/org/m/raw/main/sub/dir/w.safetensors", status: 200, bodyContains: "version https://git-lfs.github.com/spec/v1"},
		{name: "range", method: "GET", path: "/org/m/resolve/main/config.json", hdr: map[string]string{"Range": "bytes=1-3"}, status: 206, header: "Content-Range", headerValue: "bytes 1-3/7"},
		{name: "range past end", method: "GET", path: "/org/m/resolve/main/config.json", hdr: map[string]string{"Range": "bytes=100-"}, status: 416},
		{name: "missing revision", method: "GET", path: "/org/m/resolve/nope/config.json", status: 404, header: "X-Error-Code", headerValue: "RevisionNotFound"},
		{name: "escaped revision", method: "GET", path: "/org/m/resolve/refs%2Fpr%2F1/config.json", status: 404, header: "X-Error-Code", headerValue: "RevisionNotFound"},
		{name: "refs", method: "GET", path: "/api/models/org/m/refs", status: 200, bodyContains: `"targetCommit":"` + sha},
		{name: "commits chain", method: "GET", path: "/api/models/org/m/commits/main", status: 200, bodyContains: `"title":"initial commit"`},
		{name: "whoami", method: "GET", path: "/api/whoami-v2", token: "hf_x", status: 200, bodyContains: `"role":"write"`},
		{name: "whoami bad token", method: "GET", path: "/api/whoami-v2", token: "nope", status: 401, header: "X-Error-Message", headerValue: "Invalid credentials in Authorization header"},
		{name: "preupload modes", method: "POST", path: "/api/models/org/m/preupload/main", token: "hf_x",
			body:   `{"files":[{"path":"a.txt","size":3,"sample":"` + base64.StdEncoding.EncodeToString([]byte("abc")) + `"},{"path":"x.pte","size":3,"sample":""},{"path":"e","size":0,"sample":""},{"path":"config.json","size":7,"sample":""}]}`,
			status: 200, bodyContains: `"path":"x.pte","shouldIgnore":false,"uploadMode":"lfs"`},
		{name: "preupload anonymous", method: "POST", path: "/api/models/org/m/preupload/main", body: `{"files":[]}`, status: 401},
		{name: "commit stale parent", method: "POST", path: "/api/models/org/m/commit/main", token: "hf_x",
			body: `{"key":"header","value":{"summary":"s","parentCommit":"0000000"}}`, status: 412, bodyContains: "The branch was updated"},
		{name: "commit without summary", method: "POST", path: "/api/models/org/m/commit/main", token: "hf_x",
			body: `{"key":"header","value":{"summary":""}}`, status: 400},
		{name: "commit unknown lfs object", method: "POST", path: "/api/models/org/m/commit/main", token: "hf_x",
			body: `{"key":"header","value":{"summary":"s"}}` + "\n" + `{"key":"lfsFile","value":{"path":"x","algo":"sha256","oid":"` + strings.Repeat("a", 64) + `","size":1}}`, status: 400},
		{name: "create exists", method: "POST", path: "/api/repos/create", token: "hf_x", body: `{"name":"m","organization":"org","type":"model"}`, status: 409, bodyContains: "You already created this model repo"},
		{name: "unknown route", method: "GET", path: "/nothing", status: 404},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			st, h, body := do(t, tc.method, u+tc.path, tc.token, tc.body, tc.hdr)
			if st != tc.status {
				t.Fatalf("status %d, want %d: %s", st, tc.status, body)
			}
			if tc.header != "" && (h.Get(tc.header) == "" || tc.headerValue != "" && h.Get(tc.header) != tc.headerValue) {
				t.Errorf("%s = %q, want %q", tc.header, h.Get(tc.header), tc.headerValue)
			}
			if !strings.Contains(body, tc.bodyContains) {
				t.Errorf("body %s lacks %s", body, tc.bodyContains)
			}
		})
	}
	// A commit with a matching 7-character parent lands and moves main.
	st, _, body := do(t, "POST", u+"/api/models/org/m/commit/main", "hf_x",
		`{"key":"header","value":{"summary":"add b","parentCommit":"`+sha[:7]+`"}}`+"\n"+`{"key":"file","value":{"path":"b.txt","content":"aGk=","encoding":"base64"}}`, nil)
	var out struct{ CommitOid string }
	_ = json.Unmarshal([]byte(body), &out)
	if st != 200 || s.Head("org/m") != out.CommitOid {
		t.Fatalf("commit: %d %s", st, body)
	}
	shas, _ := s.History("org/m")
	if len(shas) != 3 || shas[1] != sha {
		t.Errorf("history %v, want the new commit on %s", shas, sha)
	}
	if b, _ := s.FileBytes("org/m", "main", "b.txt"); string(b) != "hi" {
		t.Errorf("b.txt = %q", b)
	}
}

func TestStorageBehavesLikeS3(t *testing.T) {
	s := New(t)
	s.MustAddModel(t, "org/m", nil)
	oid := "2cf24dba5fb0a30e26e83b2ac5b9e29e1b161e5c1fa7425e73043362938b9824" // sha256("hello")
	st, _, body := do(t, "POST", s.URL+"/org/m.git/info/lfs/objects/batch", "hf_x",
		`{"operation":"upload","transfers":["basic","multipart"],"hash_algo":"sha256","objects":[{"oid":"`+oid+`","size":5}]}`, nil)
	var ans struct {
		Transfer string
		Objects  []struct {
			Actions struct{ Upload struct{ Href string } }
		}
	}
	if err := json.Unmarshal([]byte(body), &ans); st != 200 || err != nil || len(ans.Objects) != 1 || ans.Transfer != "basic" {
		t.Fatalf("batch: %d %s", st, body)
	}
	href := ans.Objects[0].Actions.Upload.Href
	tests := []struct {
		name   string
		url    string
		token  string
		body   string
		status int
	}{
		{"token next to signature", href, "hf_x", "hello", 400},
		{"bad signature", strings.Split(href, "?")[0] + "?X-Amz-Signature=bad", "", "hello", 403},
		{"wrong content", href, "", "HELLO", 400},
		{"right content", href, "", "hello", 200},
	}
	for _, tc := range tests {
		st, _, body := do(t, "PUT", tc.url, tc.token, tc.body, nil)
		if st != tc.status {
			t.Errorf("%s: status %d, want %d: %s", tc.name, st, tc.status, body)
		}
	}
	// Stored now: the batch has no actions for it.
	_, _, body = do(t, "POST", s.URL+"/org/m.git/info/lfs/objects/batch", "hf_x",
		`{"operation":"upload","transfers":["basic"],"objects":[{"oid":"`+oid+`","size":5}]}`, nil)
	if strings.Contains(body, "actions") {
		t.Errorf("batch for a stored object: %s", body)
	}
}

// TestModelInfoConfig: expand=config (or expand[]=config) answers huggingface.co's summary
// of config.json (architectures, model_type, auto_map, quantization_config) with
// tokenizer_config.json's special tokens and chat template under tokenizer_config, never
// the whole file, in model info and in listings; WholeConfigInInfo serves the file whole,
// numbers as written. An expand property the Hub does not know is a 400.
func TestModelInfoConfig(t *testing.T) {
	s := New(t)
	cfg := `{"architectures": ["Qwen3ForCausalLM"], "model_type": "qwen3", "hidden_size": 1024, "rope_theta": 1000000.0, "transformers_version": "4.51.0"}`
	tok := `{"bos_token": null, "eos_token": "<|im_end|>", "chat_template": "{{ x }}", "model_max_length": 131072}`
	s.MustAddModel(t, "org/summary", map[string][]byte{"config.json": []byte(cfg), "tokenizer_config.json": []byte(tok)})
	s.MustAddModel(t, "org/whole", map[string][]byte{"config.json": []byte(cfg)}, WholeConfigInInfo())
	s.MustAddModel(t, "org/none", map[string][]byte{"README.md": []byte("# no config")})
	summary := `{"architectures": ["Qwen3ForCausalLM"], "model_type": "qwen3",
		"tokenizer_config": {"bos_token": null, "eos_token": "<|im_end|>", "chat_template": "{{ x }}"}}`
	tests := []struct {
		name, path string
		status     int
		config     string // the JSON of "config" ("" none); for a listing, of its one item
		raw        string // text the body must hold as written
	}{
		{"summary", "/api/models/org/summary/revision/main?expand=config", 200, summary, ""},
		{"summary by expand[]", "/api/models/org/summary?expand%5B%5D=config&expand%5B%5D=sha", 200, summary, ""},
		{"summary without expand", "/api/models/org/summary", 200, summary, ""},
		{"whole", "/api/models/org/whole/revision/main?expand=config", 200, cfg, `"rope_theta":1000000.0`},
		{"no config.json", "/api/models/org/none?expand=config", 200, "", ""},
		{"listing", "/api/models?search=summary&expand=config", 200, summary, ""},
		{"unknown property", "/api/models/org/summary?expand=config&expand=foo", 400, "", ""},
		{"unknown property by expand[]", "/api/models/org/summary?expand%5B%5D=foo", 400, "", ""},
		{"unknown property in a listing", "/api/models?expand=foo", 400, "", ""},
		{"a property listings refuse", "/api/models?expand=usedStorage", 400, "", ""},
		{"a property model info takes", "/api/models/org/summary?expand=usedStorage", 200, "", ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			st, _, body := do(t, "GET", s.URL+tc.path, "", "", nil)
			require.Equal(t, tc.status, st, body)
			if st != 200 {
				return
			}
			assert.Contains(t, body, tc.raw)
			var info struct{ Config json.RawMessage }
			if strings.HasPrefix(body, "[") {
				var items []struct{ Config json.RawMessage }
				require.NoError(t, json.Unmarshal([]byte(body), &items))
				require.Len(t, items, 1)
				info = items[0]
			} else {
				require.NoError(t, json.Unmarshal([]byte(body), &info))
			}
			if tc.config == "" {
				assert.Empty(t, info.Config)
				return
			}
			assert.JSONEq(t, tc.config, string(info.Config))
		})
	}
}
