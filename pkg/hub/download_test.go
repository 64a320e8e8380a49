package hub_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/experimentalmachines/exe-expo/pkg/hub"
	"github.com/experimentalmachines/exe-expo/pkg/hub/hubtest"
)

func TestDownload(t *testing.T) {
	srv := hubtest.New(t)
	big := pattern(5<<20, 3)
	small := []byte(`{"vocab_size": 151936}`)
	sha := srv.MustAddModel(t, "org/m", map[string][]byte{"model.safetensors": big, "config.json": small})
	c := newClient(srv, testToken)
	ctx := context.Background()
	tests := []struct {
		name    string
		path    string
		want    []byte
		fault   *hubtest.Fault
		partial int // bytes already on disk from an earlier run
	}{
		{"lfs file", "model.safetensors", big, nil, 0},
		{"regular file", "config.json", small, nil, 0},
		{"cut twice, resumed", "model.safetensors", big, &hubtest.Fault{PathContains: "/lfs-cdn/", CutAfter: 1 << 20, Times: 2}, 0},
		{"resume an earlier run", "model.safetensors", big, nil, 3 << 20},
		{"5xx retried", "config.json", small, &hubtest.Fault{PathContains: "/resolve/", Status: 502, Times: 2}, 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dst := filepath.Join(t.TempDir(), "out")
			if tc.partial > 0 {
				if err := os.WriteFile(dst+".incomplete", tc.want[:tc.partial], 0o644); err != nil {
					t.Fatal(err)
				}
			}
			srv.ClearFaults()
			var f *hubtest.Fault
			if tc.fault != nil {
				f = srv.Inject(*tc.fault)
			}
			before := len(srv.Requests())
			d := must(c.Download(ctx, "org/m", "main", tc.path, dst))(t)
			got := must(os.ReadFile(dst))(t)
			if string(got) != string(tc.want) || d.SHA256 != sha256Hex(tc.want) || d.Size != int64(len(tc.want)) || d.Commit != sha {
				t.Errorf("downloaded %d bytes sha %s commit %s; want %d bytes sha %s commit %s", len(got), d.SHA256, d.Commit, len(tc.want), sha256Hex(tc.want), sha)
			}
			if f != nil && f.Hits() != max(f.Times, 1) {
				t.Errorf("fault hit %d times", f.Hits())
			}
			if tc.partial > 0 {
				// The resumed request asked only for the rest.
				for _, r := range srv.Requests()[before:] {
					if r.Status == 200 && r.Method == "GET" && filepath.Base(r.Path) != "" && r.Path[:9] == "/lfs-cdn/" {
						t.Errorf("resumed download fetched the whole file: %+v", r)
					}
				}
			}
			if _, err := os.Stat(dst + ".incomplete"); !errors.Is(err, os.ErrNotExist) {
				t.Errorf("partial file left behind: %v", err)
			}
		})
	}
}

func TestDownloadGivesUpOnEndlessCuts(t *testing.T) {
	srv := hubtest.New(t)
	srv.MustAddModel(t, "org/m", map[string][]byte{"w.bin": pattern(1<<20, 1)})
	srv.Inject(hubtest.Fault{PathContains: "/lfs-cdn/", CutAfter: 10, Times: -1})
	dst := filepath.Join(t.TempDir(), "w.bin")
	_, err := newClient(srv, "").Download(context.Background(), "org/m", "main", "w.bin", dst)
	if err == nil {
		t.Fatal("download through a connection that always drops succeeded")
	}
	// What arrived is kept for the next run.
	st, serr := os.Stat(dst + ".incomplete")
	if serr != nil || st.Size() == 0 {
		t.Errorf("partial file: %v", serr)
	}
	var he *hub.Error
	if errors.As(err, &he) {
		t.Errorf("a dropped connection is not a Hub error: %v", err)
	}
}
