package publish

import (
	"context"
	"fmt"
	"math/rand/v2"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/experimentalmachines/exe-expo/pkg/hub/hubtest"
)

// raceTransport publishes another window just before the first commit it forwards, so that
// commit's parent is stale for real (the Hub's 412) and publish must re-read and rebuild.
type raceTransport struct {
	once  sync.Once
	other func() error
	err   error
}

func (r *raceTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	if req.Method == http.MethodPost && strings.Contains(req.URL.Path, "/commit/") {
		r.once.Do(func() { r.err = r.other() })
	}
	return http.DefaultTransport.RoundTrip(req)
}

// fault is one way the Hub or the network fails during a publish.
type fault struct {
	name   string
	inject func(srv *hubtest.Server, rng *rand.Rand) *hubtest.Fault
}

var faults = []fault{
	{"5xx on model info", func(s *hubtest.Server, rng *rand.Rand) *hubtest.Fault {
		return s.Inject(hubtest.Fault{Method: "GET", PathContains: "/api/models/", Times: 1 + rng.IntN(3), Status: 500 + rng.IntN(4)})
	}},
	{"429 on a read", func(s *hubtest.Server, rng *rand.Rand) *hubtest.Fault {
		return s.Inject(hubtest.Fault{Method: "GET", PathContains: "/resolve/", Status: 429, RetryAfter: "0"})
	}},
	{"cut download of a report", func(s *hubtest.Server, rng *rand.Rand) *hubtest.Fault {
		return s.Inject(hubtest.Fault{Method: "GET", PathContains: "export-report", CutAfter: 1 + int64(rng.IntN(200))})
	}},
	{"5xx on preupload", func(s *hubtest.Server, rng *rand.Rand) *hubtest.Fault {
		return s.Inject(hubtest.Fault{Method: "POST", PathContains: "/preupload/", Times: 1 + rng.IntN(5), Status: 502 + rng.IntN(3)})
	}},
	{"5xx on the LFS batch", func(s *hubtest.Server, rng *rand.Rand) *hubtest.Fault {
		return s.Inject(hubtest.Fault{Method: "POST", PathContains: "info/lfs/objects/batch", Times: 1 + rng.IntN(5), Status: 500})
	}},
	{"cut LFS upload", func(s *hubtest.Server, rng *rand.Rand) *hubtest.Fault {
		return s.Inject(hubtest.Fault{PathContains: "lfs-storage", Times: 1 + rng.IntN(5), CutAfter: 1 + int64(rng.IntN(1000))})
	}},
	{"5xx on the commit", func(s *hubtest.Server, rng *rand.Rand) *hubtest.Fault {
		return s.Inject(hubtest.Fault{Method: "POST", PathContains: "/commit/", Status: 500 + rng.IntN(4)})
	}},
	{"cut commit", func(s *hubtest.Server, rng *rand.Rand) *hubtest.Fault {
		return s.Inject(hubtest.Fault{Method: "POST", PathContains: "/commit/", CutAfter: 1 + int64(rng.IntN(300))})
	}},
	{"412 race", nil}, // raceTransport
}

// TestFaultsLeaveTheRepoConsistent publishes a second window into a repo holding one,
// under a fault picked by the seed. Whatever happens, the repo stays consistent (config.json
// and README agree with the reports, every listed file is there with its sha256); a failed
// publish changes nothing, and publishing again then succeeds.
func TestFaultsLeaveTheRepoConsistent(t *testing.T) {
	const runs = 108
	for seed := range uint64(runs) {
		rng := rand.New(rand.NewPCG(seed, 12))
		f := faults[int(seed)%len(faults)]
		t.Run(fmt.Sprintf("%03d %s", seed, f.name), func(t *testing.T) {
			ctx := context.Background()
			srv, clean := newHub(t)
			a, b, c := t.TempDir(), t.TempDir(), t.TempDir()
			_, err := publishDir(ctx, clean, a, writeWindow(t, a, win{backend: "xnnpack", window: 2048, seed: seed}))
			require.NoError(t, err)
			rpB := writeWindow(t, b, win{backend: "xnnpack", window: 4096 << rng.IntN(2), seed: seed + 1000})
			rpC := writeWindow(t, c, win{backend: "vulkan", window: 2048, seed: seed + 2000})
			client, want := clean, 2
			var hit *hubtest.Fault
			if f.inject == nil {
				rt := &raceTransport{other: func() error { _, err := publishDir(ctx, clean, c, rpC); return err }}
				client, want = newClient(srv.URL, rt), 3
				defer func() { require.NoError(t, rt.err) }()
			} else {
				hit = f.inject(srv, rng)
			}
			before := readRepo(t, srv, testRepo)
			_, err = publishDir(ctx, client, b, rpB)
			srv.ClearFaults()
			if hit != nil {
				assert.Positive(t, hit.Hits(), "the fault must hit the publish")
			}
			after := readRepo(t, srv, testRepo)
			checkConsistent(t, after)
			if err != nil {
				assert.NotContains(t, err.Error(), "%!", "the error reads as a sentence")
				// Either nothing was committed, or the commit landed and only its answer was
				// lost (a cut response): then publishing again finds nothing to do.
				landed := before.head != after.head
				if landed {
					assert.Equal(t, readFileT(t, rpB), after.files[strings.TrimPrefix(rpB, b+"/")])
				}
				res, err := publishDir(ctx, clean, b, rpB)
				require.NoError(t, err, "publishing again after the fault")
				assert.Equal(t, landed, res.NoOp)
			}
			final := readRepo(t, srv, testRepo)
			assert.Len(t, checkConsistent(t, final), want)
		})
	}
}
