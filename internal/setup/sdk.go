package setup

import (
	"archive/tar"
	"compress/gzip"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"time"

	"github.com/experimentalmachines/exe-expo/internal/fileutil"
)

// Download is one file fetched from its publisher and checked against its pin.
type Download struct {
	// Name is how the log names it ("NeuroPilot SDK 8.0.8-build20250925").
	Name   string
	URL    string
	SHA256 string
	// Path is where it lives in the SDK cache.
	Path string
}

// progressStep is how often a download without a length reports; with a length it reports
// every tenth.
const progressStep = 256 << 20

// Fetch puts the download at d.Path. A file already there with the pinned sha256 is kept
// without a request (the actions cache restores it); one with another sha256 is fetched
// again. The body streams into a temporary file in the same folder while it is hashed,
// and only a file with the pinned sha256 is renamed into place, so d.Path is never a
// partial or unchecked file. A broken connection or a 5xx answer is tried again, twice,
// as the reference's curl --retry 3 did; a wrong sha256 is not. It says whether the file
// came from the cache.
func Fetch(ctx context.Context, client *http.Client, d Download, log Logger) (cached bool, err error) {
	return fetch(ctx, client, d, log, sleep)
}

// attempts is how often a download is tried.
const attempts = 3

// retryDelay is the pause before the second attempt; the third waits twice as long.
const retryDelay = 10 * time.Second

func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

func fetch(ctx context.Context, client *http.Client, d Download, log Logger, wait func(context.Context, time.Duration) error) (bool, error) {
	if have, err := fileutil.Hash(d.Path); err == nil {
		if have.SHA256 == d.SHA256 {
			log.Infof("%s: %s is in the cache with sha256 %s", d.Name, d.Path, d.SHA256)
			return true, nil
		}
		log.Warningf("%s: the cached %s has sha256 %s, not the pinned %s; downloading it again", d.Name, d.Path, have.SHA256, d.SHA256)
	}
	dir := filepath.Dir(d.Path)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return false, fileutil.Error("create", dir, err)
	}
	for attempt := 1; ; attempt++ {
		err := fetchOnce(ctx, client, d, log)
		var t transient
		if err == nil || !errors.As(err, &t) || attempt == attempts {
			return false, err
		}
		delay := retryDelay * time.Duration(attempt)
		log.Warningf("%v; trying again in %s (attempt %d of %d)", err, delay, attempt+1, attempts)
		if werr := wait(ctx, delay); werr != nil {
			return false, err
		}
	}
}

// transient marks a failure another attempt may not have: a broken connection, a 5xx.
type transient struct{ error }

func (t transient) Unwrap() error { return t.error }

// fetchOnce downloads into a temporary file and renames it onto d.Path if its sha256 is
// the pinned one; on any failure the temporary file is removed.
func fetchOnce(ctx context.Context, client *http.Client, d Download, log Logger) error {
	dir := filepath.Dir(d.Path)
	tmp, err := os.CreateTemp(dir, "."+filepath.Base(d.Path)+".*.part")
	if err != nil {
		return fileutil.Error("create a file in", dir, err)
	}
	got, err := download(ctx, client, d, tmp, log)
	if cerr := tmp.Close(); err == nil && cerr != nil {
		err = fileutil.Error("write", tmp.Name(), cerr)
	}
	if err == nil && got != d.SHA256 {
		err = fmt.Errorf("%s from %s has sha256 %s, and config/versions.env pins %s: the download was deleted", d.Name, d.URL, got, d.SHA256)
	}
	if err == nil {
		if err = os.Rename(tmp.Name(), d.Path); err != nil {
			err = fileutil.Error("put in place", d.Path, err)
		}
	}
	if err != nil {
		os.Remove(tmp.Name())
	}
	return err
}

// download streams the body into w and returns its sha256.
func download(ctx context.Context, client *http.Client, d Download, w io.Writer, log Logger) (string, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, d.URL, nil)
	if err != nil {
		return "", fmt.Errorf("%s: %q is not a URL to download", d.Name, d.URL)
	}
	resp, err := client.Do(req)
	if err != nil {
		err = fmt.Errorf("cannot download %s from %s: %s", d.Name, d.URL, urlReason(err))
		if ctx.Err() != nil {
			return "", err
		}
		return "", transient{err}
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		err := fmt.Errorf("cannot download %s from %s: the server answered %s", d.Name, d.URL, resp.Status)
		if resp.StatusCode >= 500 {
			return "", transient{err}
		}
		return "", err
	}
	log.Infof("%s: downloading %s (%s)", d.Name, d.URL, sizeOf(resp.ContentLength))
	h := sha256.New()
	p := &progress{name: d.Name, total: resp.ContentLength, log: log}
	n, err := io.CopyBuffer(io.MultiWriter(w, h, p), resp.Body, make([]byte, 1<<20))
	if err != nil {
		err = fmt.Errorf("the download of %s from %s broke off after %s of %s: %s", d.Name, d.URL, human(n), sizeOf(resp.ContentLength), urlReason(err))
		if ctx.Err() != nil {
			return "", err
		}
		return "", transient{err}
	}
	log.Infof("%s: %s downloaded", d.Name, human(n))
	return hex.EncodeToString(h.Sum(nil)), nil
}

// urlReason drops the `Get "URL": ` Go puts before a transport error; the message already
// names the URL.
func urlReason(err error) string {
	var ue *url.Error
	if errors.As(err, &ue) {
		return ue.Err.Error()
	}
	return err.Error()
}

func sizeOf(n int64) string {
	if n < 0 {
		return "size unknown"
	}
	return human(n)
}

// progress writes a line at each tenth of a download (every progressStep bytes when the
// server gives no length): a multi-gigabyte download is otherwise minutes of silence.
type progress struct {
	name        string
	total, done int64
	// marks counts the lines written.
	marks int64
	log   Logger
}

// next is the byte count of the next line.
func (p *progress) next() int64 {
	if p.total > 0 {
		return p.total * (p.marks + 1) / 10
	}
	return progressStep * (p.marks + 1)
}

func (p *progress) Write(b []byte) (int, error) {
	p.done += int64(len(b))
	for p.done >= p.next() && (p.total <= 0 || p.marks < 9) {
		p.marks++
		if p.total > 0 {
			p.log.Infof("%s: %s of %s (%d%%)", p.name, human(p.done), human(p.total), p.done*100/p.total)
		} else {
			p.log.Infof("%s: %s", p.name, human(p.done))
		}
	}
	return len(b), nil
}

// ExtractWheels takes the wanted wheels out of a gzip'd tar archive (the NeuroPilot SDK)
// into dir, for the tool venv's python, leaving the rest of the SDK packed. A wheel
// already in dir is kept: it came from the same checked archive.
func ExtractWheels(archive, dir, python string, want []Wheel) ([]string, error) {
	out := make([]string, len(want))
	have, _ := filepath.Glob(filepath.Join(dir, "*.whl"))
	missing := 0
	for i, w := range want {
		for _, f := range have {
			if w.matches(filepath.Base(f), python) {
				out[i] = f
			}
		}
		if out[i] == "" {
			missing++
		}
	}
	if missing == 0 {
		return out, nil
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fileutil.Error("create", dir, err)
	}
	if err := extract(archive, dir, python, want, out); err != nil {
		return nil, err
	}
	for i, w := range want {
		if out[i] == "" {
			return nil, fmt.Errorf("%s holds no %s wheel for Python %s", archive, w, python)
		}
	}
	return out, nil
}

func extract(archive, dir, python string, want []Wheel, out []string) error {
	f, err := os.Open(archive)
	if err != nil {
		return fileutil.Error("open", archive, err)
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		return fmt.Errorf("%s is not a gzip'd tar archive: %v", archive, err)
	}
	tr := tar.NewReader(zr)
	for {
		h, err := tr.Next()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return fmt.Errorf("cannot read the tar archive %s: %v", archive, err)
		}
		if h.Typeflag != tar.TypeReg {
			continue
		}
		base := filepath.Base(h.Name)
		for i, w := range want {
			if out[i] == "" && w.matches(base, python) {
				dst := filepath.Join(dir, base)
				if err := writeFrom(tr, dst); err != nil {
					return err
				}
				out[i] = dst
			}
		}
	}
}

// writeFrom writes r to dst through dst.part, so dst is whole or absent.
func writeFrom(r io.Reader, dst string) error {
	tmp := dst + ".part"
	f, err := os.Create(tmp)
	if err != nil {
		return fileutil.Error("create", tmp, err)
	}
	_, err = io.Copy(f, r)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp, dst)
	}
	if err != nil {
		os.Remove(tmp)
		return fileutil.Error("extract", dst, err)
	}
	return nil
}

// QAIRTDir is where ExecuTorch's own import stages QAIRT under home: its
// download_qnn_sdk.py puts it in ~/.cache/executorch/qnn/sdk-<version> on Linux x86-64.
// Setup leaves QNN_STAGING_DIR and XDG_CACHE_HOME alone because the export passes only
// HOME through to its tool, which must find the same folder.
func QAIRTDir(home, version string) string {
	return filepath.Join(home, ".cache", "executorch", "qnn", "sdk-"+version)
}

// qairtLib is the library whose presence says QAIRT is staged (ExecuTorch dlopens it).
const qairtLib = "lib/x86_64-linux-clang/libQnnHtp.so"

// StageQAIRT has ExecuTorch fetch QAIRT the way the export's own import would: QAIRT has
// no sha256 published where this project could pin it, so the download and its checks are
// ExecuTorch's (softwarecenter.qualcomm.com, into QAIRTDir). A folder already holding the
// library (restored by the actions cache) is used as it is.
func StageQAIRT(ctx context.Context, env Env, log Logger, python, home, version string) (root string, cached bool, err error) {
	root = QAIRTDir(home, version)
	lib := filepath.Join(root, filepath.FromSlash(qairtLib))
	if _, err := os.Stat(lib); err == nil {
		log.Infof("QAIRT %s: %s is in the cache", version, root)
		return root, true, nil
	}
	c := Cmd{Argv: []string{python, "-c", "import executorch.backends.qualcomm"},
		Env: []string{"QNN_SDK_ROOT=", "QNN_STAGING_DIR=", "XDG_CACHE_HOME=" + filepath.Join(home, ".cache")}}
	log.Infof("$ %s", c)
	if err := env.Run(ctx, c); err != nil {
		return "", false, fmt.Errorf("ExecuTorch's import of its Qualcomm backend, which fetches QAIRT %s, failed: %w", version, err)
	}
	if _, err := os.Stat(lib); err != nil {
		return "", false, fmt.Errorf("ExecuTorch's import of its Qualcomm backend left no %s: it staged no QAIRT %s where the export will look", lib, version)
	}
	return root, false, nil
}
