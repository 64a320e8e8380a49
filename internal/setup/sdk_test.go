package setup

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func sha(b []byte) string {
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:])
}

// sdkServer serves body at /sdk.gz and counts the requests.
type sdkServer struct {
	*httptest.Server
	requests atomic.Int32
}

func newSDKServer(t *testing.T, handler http.HandlerFunc) *sdkServer {
	s := &sdkServer{}
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.requests.Add(1)
		handler(w, r)
	}))
	t.Cleanup(s.Close)
	return s
}

func serve(body []byte) http.HandlerFunc {
	return func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Length", strconv.Itoa(len(body)))
		_, _ = w.Write(body)
	}
}

// dirEntries lists a folder's names, so a test sees a leftover temporary file.
func dirEntries(t *testing.T, dir string) []string {
	t.Helper()
	es, err := os.ReadDir(dir)
	require.NoError(t, err)
	var out []string
	for _, e := range es {
		out = append(out, e.Name())
	}
	return out
}

func TestFetch(t *testing.T) {
	body := bytes.Repeat([]byte("neuropilot "), 1000)
	good := sha(body)
	other := sha([]byte("something else"))
	for _, tc := range []fetchCase{
		{name: "good hash placed", handler: serve(body), pin: good, requests: 1, placed: body},
		{name: "bad hash deleted", handler: serve(body), pin: other, requests: 1,
			err: "NeuroPilot SDK 8.0.8 from {url} has sha256 " + good + ", and config/versions.env pins " + other + ": the download was deleted"},
		{name: "cached: no request", handler: serve(body), pin: good, cached: body, requests: 0, placed: body, fromHit: true},
		{name: "cached with another hash: fetched again", handler: serve(body), pin: good, cached: []byte("stale"), requests: 1, placed: body,
			warning: "::warning::NeuroPilot SDK 8.0.8: the cached "},
		{name: "server refuses", handler: func(w http.ResponseWriter, _ *http.Request) { http.Error(w, "no", http.StatusForbidden) }, pin: good, requests: 1,
			err: "cannot download NeuroPilot SDK 8.0.8 from {url}: the server answered 403 Forbidden"},
		{name: "stream broken off", handler: func(w http.ResponseWriter, _ *http.Request) {
			w.Header().Set("Content-Length", strconv.Itoa(len(body)))
			_, _ = w.Write(body[:4000])
			w.(http.Flusher).Flush()
			conn, _, err := w.(http.Hijacker).Hijack()
			if err == nil {
				conn.Close()
			}
		}, pin: good, requests: 3, waits: []time.Duration{10 * time.Second, 20 * time.Second},
			err:     "the download of NeuroPilot SDK 8.0.8 from {url} broke off after 3.9 KiB of 10.7 KiB: unexpected EOF",
			warning: "::warning::the download of NeuroPilot SDK 8.0.8 from {url} broke off after 3.9 KiB of 10.7 KiB: unexpected EOF; trying again in 10s (attempt 2 of 3)\n"},
		{name: "server error, then the file", handler: func() http.HandlerFunc {
			var n atomic.Int32
			return func(w http.ResponseWriter, r *http.Request) {
				if n.Add(1) == 1 {
					http.Error(w, "busy", http.StatusServiceUnavailable)
					return
				}
				serve(body)(w, r)
			}
		}(), pin: good, requests: 2, placed: body, waits: []time.Duration{10 * time.Second},
			warning: "::warning::cannot download NeuroPilot SDK 8.0.8 from {url}: the server answered 503 Service Unavailable; trying again in 10s (attempt 2 of 3)\n"},
	} {
		t.Run(tc.name, func(t *testing.T) { checkFetch(t, tc) })
	}
}

// fetchCase is one download TestFetch tries.
type fetchCase struct {
	name     string
	handler  http.HandlerFunc
	pin      string
	cached   []byte // already at Path before Fetch
	requests int32
	err      string // {url} stands for the download's URL
	placed   []byte // at Path afterwards; nil: nothing there
	fromHit  bool
	warning  string
	waits    []time.Duration // the pauses before each new attempt
}

func checkFetch(t *testing.T, tc fetchCase) {
	t.Helper()
	srv := newSDKServer(t, tc.handler)
	dir := filepath.Join(t.TempDir(), "sdk")
	d := Download{Name: "NeuroPilot SDK 8.0.8", URL: srv.URL + "/sdk.gz", SHA256: tc.pin, Path: filepath.Join(dir, "neuropilot.tar.gz")}
	if tc.cached != nil {
		require.NoError(t, os.MkdirAll(dir, 0o755))
		require.NoError(t, os.WriteFile(d.Path, tc.cached, 0o644))
	}
	var buf bytes.Buffer
	var waits []time.Duration
	wait := func(_ context.Context, d time.Duration) error {
		waits = append(waits, d)
		return nil
	}
	hit, err := fetch(context.Background(), srv.Client(), d, logger(&buf), wait)
	assert.Equal(t, tc.requests, srv.requests.Load(), "requests")
	assert.Equal(t, tc.waits, waits)
	if tc.err != "" {
		assert.EqualError(t, err, strings.ReplaceAll(tc.err, "{url}", d.URL))
	} else {
		require.NoError(t, err)
	}
	assert.Equal(t, tc.fromHit, hit)
	if tc.placed == nil {
		assert.NoFileExists(t, d.Path)
		assert.Empty(t, dirEntries(t, dir), "a partial or unchecked download was left behind")
	} else {
		got, err := os.ReadFile(d.Path)
		require.NoError(t, err)
		assert.Equal(t, tc.placed, got)
		assert.Equal(t, []string{"neuropilot.tar.gz"}, dirEntries(t, dir))
	}
	if tc.warning != "" {
		assert.Contains(t, buf.String(), strings.ReplaceAll(tc.warning, "{url}", d.URL))
	}
}

// TestFetchProgress: a line for each tenth of a download with a length, whatever sizes
// the reads come in.
func TestFetchProgress(t *testing.T) {
	body := bytes.Repeat([]byte{7}, 3<<20)
	srv := newSDKServer(t, serve(body))
	d := Download{Name: "SDK", URL: srv.URL + "/sdk.gz", SHA256: sha(body), Path: filepath.Join(t.TempDir(), "sdk.tar.gz")}
	var buf bytes.Buffer
	_, err := Fetch(context.Background(), srv.Client(), d, logger(&buf))
	require.NoError(t, err)
	assert.Equal(t, 9, strings.Count(buf.String(), " of 3.0 MiB ("), buf.String())
	assert.Contains(t, buf.String(), "SDK: downloading "+d.URL+" (3.0 MiB)\n")
	assert.Contains(t, buf.String(), "SDK: 3.0 MiB downloaded\n")
}

func TestProgressWithoutLength(t *testing.T) {
	var buf bytes.Buffer
	p := &progress{name: "SDK", total: -1, log: logger(&buf)}
	chunk := make([]byte, 200<<20)
	for range 5 {
		_, _ = p.Write(chunk)
	}
	assert.Equal(t, "SDK: 400.0 MiB\nSDK: 600.0 MiB\nSDK: 800.0 MiB\n", buf.String(), "a line at 256, 512 and 768 MiB")
}

// tarGz packs files (name → bytes) into a gzip'd tar archive in dir.
func tarGz(t *testing.T, dir string, files map[string][]byte, order []string) string {
	t.Helper()
	var raw bytes.Buffer
	zw := gzip.NewWriter(&raw)
	tw := tar.NewWriter(zw)
	require.NoError(t, tw.WriteHeader(&tar.Header{Name: "sdk/", Typeflag: tar.TypeDir, Mode: 0o755}))
	for _, name := range order {
		require.NoError(t, tw.WriteHeader(&tar.Header{Name: name, Typeflag: tar.TypeReg, Mode: 0o644, Size: int64(len(files[name]))}))
		_, err := tw.Write(files[name])
		require.NoError(t, err)
	}
	require.NoError(t, tw.Close())
	require.NoError(t, zw.Close())
	p := filepath.Join(dir, "sdk.tar.gz")
	require.NoError(t, os.WriteFile(p, raw.Bytes(), 0o644))
	return p
}

const (
	convWheel   = "mtk_converter-8.13.0+public-cp310-cp310-manylinux_2_17_x86_64.manylinux2014_x86_64.whl"
	neuronWheel = "mtk_neuron-8.2.23-py3-none-linux_x86_64.whl"
)

var sdkFiles = map[string][]byte{
	"sdk/neuropilot-sdk-basic/offline_tool/" + convWheel:                                          []byte("converter 310"),
	"sdk/neuropilot-sdk-basic/offline_tool/mtk_converter-8.13.0+public-cp311-cp311-manylinux.whl": []byte("converter 311"),
	"sdk/neuropilot-sdk-basic/offline_tool/" + neuronWheel:                                        []byte("neuron"),
	"sdk/neuropilot-sdk-basic/offline_tool/mtk_neuron-8.2.2-py3-none-linux_x86_64.whl":            []byte("old neuron"),
	"sdk/neuropilot-sdk-basic/neuron_runtime/host/lib/libneuron_runtime.so":                       []byte("runtime"),
	"sdk/neuropilot-sdk-basic/offline_tool/README.txt":                                            []byte("read me"),
}

var sdkOrder = []string{
	"sdk/neuropilot-sdk-basic/neuron_runtime/host/lib/libneuron_runtime.so",
	"sdk/neuropilot-sdk-basic/offline_tool/mtk_converter-8.13.0+public-cp311-cp311-manylinux.whl",
	"sdk/neuropilot-sdk-basic/offline_tool/" + convWheel,
	"sdk/neuropilot-sdk-basic/offline_tool/mtk_neuron-8.2.2-py3-none-linux_x86_64.whl",
	"sdk/neuropilot-sdk-basic/offline_tool/" + neuronWheel,
	"sdk/neuropilot-sdk-basic/offline_tool/README.txt",
}

// TestExtractWheels takes only the pinned wheels for the tool venv's python out of the
// archive; a second call finds them in place without opening the archive.
func TestExtractWheels(t *testing.T) {
	tmp := t.TempDir()
	archive := tarGz(t, tmp, sdkFiles, sdkOrder)
	dir := filepath.Join(tmp, "wheels")
	want := []Wheel{{"mtk-neuron", "8.2.23"}, {"mtk_converter", "8.13.0"}}
	got, err := ExtractWheels(archive, dir, "3.10", want)
	require.NoError(t, err)
	assert.Equal(t, []string{filepath.Join(dir, neuronWheel), filepath.Join(dir, convWheel)}, got)
	assert.ElementsMatch(t, []string{neuronWheel, convWheel}, dirEntries(t, dir))
	data, err := os.ReadFile(got[1])
	require.NoError(t, err)
	assert.Equal(t, "converter 310", string(data))

	require.NoError(t, os.Remove(archive))
	again, err := ExtractWheels(archive, dir, "3.10", want)
	require.NoError(t, err, "the wheels in place need no archive")
	assert.Equal(t, got, again)
}

func TestExtractWheelsErrors(t *testing.T) {
	tmp := t.TempDir()
	archive := tarGz(t, tmp, sdkFiles, sdkOrder)
	_, err := ExtractWheels(archive, filepath.Join(tmp, "w1"), "3.12", []Wheel{{"mtk_converter", "8.13.0"}})
	assert.EqualError(t, err, archive+" holds no mtk_converter 8.13.0 wheel for Python 3.12")

	plain := filepath.Join(tmp, "plain.gz")
	require.NoError(t, os.WriteFile(plain, []byte("not gzip"), 0o644))
	_, err = ExtractWheels(plain, filepath.Join(tmp, "w2"), "3.10", []Wheel{{"mtk_converter", "8.13.0"}})
	require.Error(t, err)
	assert.Contains(t, err.Error(), plain+" is not a gzip'd tar archive: ")

	_, err = ExtractWheels(filepath.Join(tmp, "missing.tar.gz"), filepath.Join(tmp, "w3"), "3.10", []Wheel{{"mtk_converter", "8.13.0"}})
	assert.EqualError(t, err, "cannot open "+filepath.Join(tmp, "missing.tar.gz")+": no such file or directory")
}

// TestStageQAIRT: ExecuTorch's own import is what fetches QAIRT, run so that it stages it
// under HOME where the export's tool (which gets HOME and not QNN_STAGING_DIR) looks; a
// staged folder is used without running anything.
func TestStageQAIRT(t *testing.T) {
	home := t.TempDir()
	root := filepath.Join(home, ".cache", "executorch", "qnn", "sdk-2.37.0.250724")
	lib := filepath.Join(root, "lib", "x86_64-linux-clang", "libQnnHtp.so")
	stage := func(Cmd) {
		require.NoError(t, os.MkdirAll(filepath.Dir(lib), 0o755))
		require.NoError(t, os.WriteFile(lib, []byte("htp"), 0o644))
	}

	h := &fakeHost{effect: stage}
	var buf bytes.Buffer
	got, cached, err := StageQAIRT(context.Background(), h.env(), logger(&buf), "/py/python3.11", home, "2.37.0.250724")
	require.NoError(t, err)
	assert.Equal(t, root, got)
	assert.False(t, cached)
	require.Len(t, h.cmds, 1)
	assert.Equal(t, []string{"/py/python3.11", "-c", "import executorch.backends.qualcomm"}, h.cmds[0].Argv)
	assert.Equal(t, []string{"QNN_SDK_ROOT=", "QNN_STAGING_DIR=", "XDG_CACHE_HOME=" + filepath.Join(home, ".cache")}, h.cmds[0].Env)

	h2 := &fakeHost{}
	got, cached, err = StageQAIRT(context.Background(), h2.env(), logger(&buf), "/py/python3.11", home, "2.37.0.250724")
	require.NoError(t, err)
	assert.Equal(t, root, got)
	assert.True(t, cached)
	assert.Empty(t, h2.cmds)

	h3 := &fakeHost{}
	empty := t.TempDir()
	_, _, err = StageQAIRT(context.Background(), h3.env(), logger(&buf), "/py/python3.11", empty, "2.37.0.250724")
	assert.EqualError(t, err, "ExecuTorch's import of its Qualcomm backend left no "+
		filepath.Join(QAIRTDir(empty, "2.37.0.250724"), "lib", "x86_64-linux-clang", "libQnnHtp.so")+": it staged no QAIRT 2.37.0.250724 where the export will look")
}

// TestFetchCancelled: a cancelled job stops retrying at once.
func TestFetchCancelled(t *testing.T) {
	srv := newSDKServer(t, func(w http.ResponseWriter, _ *http.Request) { http.Error(w, "busy", http.StatusBadGateway) })
	ctx, cancel := context.WithCancel(context.Background())
	d := Download{Name: "SDK", URL: srv.URL + "/sdk.gz", SHA256: sha(nil), Path: filepath.Join(t.TempDir(), "sdk.tar.gz")}
	_, err := fetch(ctx, srv.Client(), d, logger(&bytes.Buffer{}), func(ctx context.Context, _ time.Duration) error {
		cancel()
		return ctx.Err()
	})
	assert.EqualError(t, err, "cannot download SDK from "+d.URL+": the server answered 502 Bad Gateway")
	assert.Equal(t, int32(1), srv.requests.Load())
	assert.Empty(t, dirEntries(t, filepath.Dir(d.Path)))
}

// TestFetchUnreachable: a publisher that cannot be reached is tried three times and named
// in words, without Go's `Get "URL":` prefix.
func TestFetchUnreachable(t *testing.T) {
	srv := httptest.NewServer(http.NotFoundHandler())
	url := srv.URL + "/sdk.gz"
	srv.Close()
	d := Download{Name: "SDK", URL: url, SHA256: sha(nil), Path: filepath.Join(t.TempDir(), "sdk.tar.gz")}
	tries := 0
	_, err := fetch(context.Background(), http.DefaultClient, d, logger(&bytes.Buffer{}), func(context.Context, time.Duration) error {
		tries++
		return nil
	})
	require.Error(t, err)
	assert.Equal(t, 2, tries, "three attempts")
	assert.True(t, strings.HasPrefix(err.Error(), "cannot download SDK from "+url+": dial tcp "), err.Error())
	assert.NotContains(t, err.Error(), `Get "`)
}
