package publish

import (
	"context"
	"fmt"
	"math/rand/v2"
	"net/http"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/experimentalmachines/exe-expo/pkg/hub/hubtest"
)

// contentionWindows are n distinct windows of one model: every backend folder and chip,
// each at its own windows, as a matrix of export jobs publishes them.
func contentionWindows(n int) []win {
	folders := []win{{backend: "xnnpack"}, {backend: "vulkan"}, {backend: "qnn", chip: "SM8750"},
		{backend: "qnn", chip: "SM8650"}, {backend: "mediatek", chip: "MT6991"}}
	var out []win
	for i := 0; len(out) < n; i++ {
		w := folders[i%len(folders)]
		w.window, w.seed = 1024*(1+i/len(folders)), uint64(i+1)
		out = append(out, w)
	}
	return out
}

// counting counts a publisher's report downloads and commit POSTs.
type counting struct {
	reports, commits atomic.Int32
}

func (c *counting) RoundTrip(req *http.Request) (*http.Response, error) {
	switch {
	case req.Method == http.MethodGet && strings.Contains(req.URL.Path, "/resolve/") && strings.Contains(req.URL.Path, "export-report"):
		c.reports.Add(1)
	case req.Method == http.MethodPost && strings.Contains(req.URL.Path, "/commit/"):
		c.commits.Add(1)
	}
	return http.DefaultTransport.RoundTrip(req)
}

// contentionFaults are what the Hub and the network do to a busy publish, each a bounded
// number of times, shuffled among the publishers by whoever's request comes first.
var contentionFaults = []hubtest.Fault{
	{Method: "GET", PathContains: "/api/models/", Status: 503, Times: 6},
	{Method: "GET", PathContains: "/revision/", Status: 500, Times: 4},
	{Method: "GET", PathContains: "/resolve/", Status: 429, RetryAfter: "0", Times: 6},
	{Method: "GET", PathContains: "export-report", CutAfter: 40, Times: 4},
	{Method: "POST", PathContains: "/preupload/", Status: 502, Times: 4},
	{Method: "POST", PathContains: "info/lfs/objects/batch", Status: 500, Times: 4},
	{PathContains: "lfs-storage", CutAfter: 700, Times: 4},
	{Method: "POST", PathContains: "/commit/", Status: 500, Times: 2},
	{Method: "POST", PathContains: "/commit/", LoseAnswer: true, Times: 3},
}

type contentionRun struct {
	n, gaveUp, recovered int
	commits, reports     int
	faultHits            int
	elapsed              time.Duration
}

// publishAtOnce publishes n windows into one repo from n goroutines, each with its own
// client (a job of the matrix), and returns what happened.
func publishAtOnce(t *testing.T, n int, faults bool) contentionRun {
	t.Helper()
	srv := hubtest.New(t)
	srv.RegularMax = 1024
	ctx := context.Background()
	var loaded []*Window
	for _, w := range contentionWindows(n) {
		d := t.TempDir()
		lw, err := Load(d, writeWindow(t, d, w), "")
		require.NoError(t, err)
		loaded = append(loaded, lw)
	}
	var hits []*hubtest.Fault
	if faults {
		for _, f := range contentionFaults {
			hits = append(hits, srv.Inject(f))
		}
	}
	counts := make([]*counting, n)
	errs := make([]error, n)
	results := make([]*Result, n)
	start := time.Now()
	var wg sync.WaitGroup
	for i, w := range loaded {
		counts[i] = &counting{}
		c := newClient(srv.URL, counts[i])
		rng := rand.New(rand.NewPCG(uint64(i), 7))
		var mu sync.Mutex
		wait := func(int) time.Duration { // jittered, scaled to the test: milliseconds
			mu.Lock()
			defer mu.Unlock()
			return time.Duration(rng.IntN(2000)) * time.Microsecond
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			results[i], errs[i] = Publish(ctx, w, Options{Client: c, Wait: wait})
		}()
	}
	wg.Wait()
	run := contentionRun{n: n, elapsed: time.Since(start)}
	for i := range loaded {
		if errs[i] != nil {
			run.gaveUp++
			t.Errorf("window %d (%s %s) gave up: %v", i, loaded[i].Folder, loaded[i].Label, errs[i])
			continue
		}
		if results[i].Recovered {
			run.recovered++
		}
		run.commits += int(counts[i].commits.Load())
		run.reports += int(counts[i].reports.Load())
		assert.LessOrEqual(t, int(counts[i].reports.Load()), n-1+len(contentionFaults),
			"window %d read a report more often than the others changed", i)
	}
	for _, h := range hits {
		run.faultHits += h.Hits()
	}
	st := readRepo(t, srv, testRepo)
	assert.Len(t, checkConsistent(t, st), n, "every window's report is in the repo, consistent")
	shas, _ := srv.History(testRepo)
	assert.Len(t, shas, n+1, "one commit per window on the repo's first")
	return run
}

func (r contentionRun) String() string {
	return fmt.Sprintf("%d windows: %d gave up, %d commit POSTs (%.1f a window), %d report downloads, %d injected faults hit, %d answers lost and recovered, %s",
		r.n, r.gaveUp, r.commits, float64(r.commits)/float64(r.n), r.reports, r.faultHits, r.recovered, r.elapsed.Round(time.Millisecond))
}

// TestContention publishes every window one model can have (30, as the export matrix makes
// them) into one repo at once, while the Hub answers 5xx and 429, cuts uploads and
// downloads, and loses the answers of commits that landed: all land, none gives up, the
// repo stays consistent, and a rebuild re-reads only the reports that changed.
func TestContention(t *testing.T) {
	run := publishAtOnce(t, 30, true)
	t.Log(run)
	assert.Positive(t, run.faultHits)
}

// TestContentionStress publishes 33 windows at once into one repo, without faults (set
// EXE_EXPO_STRESS=N for another count): 39 .pte files, as many as one repo can hold, since
// publish refuses a window the app's first-40 rule would hide (appview), so a hundred
// windows into one repo is a refusal, not contention.
func TestContentionStress(t *testing.T) {
	n := 33
	if s := os.Getenv("EXE_EXPO_STRESS"); s != "" {
		var err error
		n, err = strconv.Atoi(s)
		require.NoError(t, err)
	}
	run := publishAtOnce(t, n, false)
	t.Log(run)
}
