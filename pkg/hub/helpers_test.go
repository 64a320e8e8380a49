package hub_test

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/experimentalmachines/exe-expo/pkg/hub"
	"github.com/experimentalmachines/exe-expo/pkg/hub/hubtest"
)

const testToken = "hf_testsecrettoken0123456789"

// newClient is a client for srv with fast retries.
func newClient(srv *hubtest.Server, token string) *hub.Client {
	return hub.New(hub.Options{Endpoint: srv.URL, Token: token, NoEnvToken: token == "",
		RetryWaitMin: time.Millisecond, RetryWaitMax: 20 * time.Millisecond, MaxRateLimitWait: 2 * time.Second})
}

// safetensors builds a safetensors file with the given tensors (name → dtype and shape) and
// zero data; pad grows the header to force the second range read.
func safetensors(t *testing.T, tensors map[string]tensor, pad int) []byte {
	t.Helper()
	hdr := map[string]any{"__metadata__": map[string]string{"format": "pt", "pad": strings.Repeat("x", pad)}}
	var off int64
	for name, tt := range tensors {
		n := int64(dtypeSize[tt.dtype])
		for _, d := range tt.shape {
			n *= d
		}
		hdr[name] = map[string]any{"dtype": tt.dtype, "shape": tt.shape, "data_offsets": []int64{off, off + n}}
		off += n
	}
	h, err := json.Marshal(hdr)
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	_ = binary.Write(&b, binary.LittleEndian, uint64(len(h)))
	b.Write(h)
	b.Write(make([]byte, off))
	return b.Bytes()
}

type tensor struct {
	dtype string
	shape []int64
}

var dtypeSize = map[string]int{"BF16": 2, "F16": 2, "F32": 4, "I8": 1, "U8": 1}

func sha256Hex(b []byte) string {
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:])
}

// pattern is deterministic, incompressible-looking content of n bytes.
func pattern(n int, seed byte) []byte {
	b := make([]byte, n)
	x := uint32(seed) + 1
	for i := range b {
		x = x*1664525 + 1013904223
		b[i] = byte(x >> 24)
	}
	return b
}

// count is how many requests srv saw with method and a path containing sub.
func count(srv *hubtest.Server, method, sub string) int {
	n := 0
	for _, r := range srv.Requests() {
		if (method == "" || r.Method == method) && strings.Contains(r.Path, sub) {
			n++
		}
	}
	return n
}

// must fails the test on err: must(f())(t).
func must[T any](v T, err error) func(*testing.T) T {
	return func(t *testing.T) T {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
}

func noToken(t *testing.T, err error) {
	t.Helper()
	if err != nil && strings.Contains(fmt.Sprint(err), testToken) {
		t.Fatalf("error leaks the token: %v", err)
	}
}
