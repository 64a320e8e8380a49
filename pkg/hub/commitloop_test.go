package hub_test

import (
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/experimentalmachines/exe-expo/pkg/hub"
	"github.com/experimentalmachines/exe-expo/pkg/hub/hubtest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestCommitOnHead(t *testing.T) {
	noWait := func(int) time.Duration { return 0 }
	tests := []struct {
		name      string
		races     int // how many times another writer commits between read and commit
		conflicts int // how many commit POSTs the Hub answers 409 (-1: all)
		attempts  int
		wantErr   error
		builds    int
	}{
		{name: "no race", attempts: 3, builds: 1},
		{name: "one race", races: 1, attempts: 3, builds: 2},
		// Every lost race is another writer landing: progress, so it does not count against
		// the attempts (a matrix of windows publishing into one repo all land).
		{name: "five races with three attempts", races: 5, attempts: 3, builds: 6},
		{name: "one conflict", conflicts: 1, attempts: 3, builds: 2},
		{name: "a race, then a conflict", races: 1, conflicts: 1, attempts: 3, builds: 3},
		{name: "always conflicting", conflicts: -1, attempts: 3, wantErr: hub.ErrConflict, builds: 3},
		{name: "no attempts still tries once", conflicts: -1, attempts: 0, wantErr: hub.ErrConflict, builds: 1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			srv := hubtest.New(t)
			srv.MustAddModel(t, "org/pub", map[string][]byte{"README.md": []byte("# v0\n")})
			c := newClient(srv, testToken)
			var conflict *hubtest.Fault
			var heads []string
			build := func(ctx context.Context, head string) (hub.CommitRequest, error) {
				heads = append(heads, head)
				switch {
				case len(heads) <= tc.races:
					srv.MustAddModel(t, "org/pub", map[string][]byte{"other.txt": {byte(len(heads))}})
				case tc.conflicts != 0 && conflict == nil:
					// Races come first; the conflicts answer the commits after them.
					conflict = srv.Inject(hubtest.Fault{Method: http.MethodPost, PathContains: "/commit/",
						Status: http.StatusConflict, Times: tc.conflicts})
				}
				return hub.CommitRequest{Summary: "publish", Add: []hub.CommitFile{{PathInRepo: "report.json", Content: []byte(head)}}}, nil
			}
			res, err := c.CommitOnHead(context.Background(), "org/pub", "", tc.attempts, noWait, build)
			assert.Len(t, heads, tc.builds, "builds")
			if tc.wantErr != nil {
				require.ErrorIs(t, err, tc.wantErr)
				assert.Contains(t, err.Error(), "gave up after")
				return
			}
			require.NoError(t, err)
			if tc.conflicts > 0 {
				assert.Equal(t, tc.conflicts, conflict.Hits(), "conflicts answered")
			}
			shas, _ := srv.History("org/pub")
			assert.Equal(t, shas[0], res.OID, "the commit is the head")
			assert.Equal(t, heads[len(heads)-1], shas[1], "the commit landed on the last head read")
			if len(heads) > 1 && tc.races > 0 {
				assert.NotEqual(t, heads[0], heads[1], "a retry reused the stale head")
			}
			got, _ := srv.FileBytes("org/pub", "main", "report.json")
			assert.Equal(t, heads[len(heads)-1], string(got), "report.json holds the head it was built on")
		})
	}
}

// TestCommitOnHeadStopsOnCancel cancels the publisher while it waits to retry a conflict:
// it must return at once, without reading the head or building again, although the wait
// it was given is an hour. The minute below only turns a hang into a failure.
func TestCommitOnHeadStopsOnCancel(t *testing.T) {
	srv := hubtest.New(t)
	srv.MustAddModel(t, "org/pub", map[string][]byte{"README.md": []byte("# v0\n")})
	srv.Inject(hubtest.Fault{Method: http.MethodPost, PathContains: "/commit/", Status: http.StatusConflict, Times: -1})
	c := newClient(srv, testToken)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	builds := 0
	build := func(ctx context.Context, head string) (hub.CommitRequest, error) {
		builds++
		return hub.CommitRequest{Summary: "publish", Add: []hub.CommitFile{{PathInRepo: "report.json", Content: []byte(head)}}}, nil
	}
	var waits []int
	wait := func(attempt int) time.Duration {
		waits = append(waits, attempt)
		cancel()
		return time.Hour
	}
	done := make(chan error, 1)
	go func() {
		_, err := c.CommitOnHead(ctx, "org/pub", "main", 5, wait, build)
		done <- err
	}()
	var err error
	select {
	case err = <-done:
	case <-time.After(time.Minute):
		t.Fatal("CommitOnHead kept waiting after its context was cancelled")
	}
	require.ErrorIs(t, err, context.Canceled)
	assert.Equal(t, "hub: commit to org/pub stopped before attempt 2 of 5: context canceled", err.Error())
	assert.Equal(t, 1, builds, "builds")
	assert.Equal(t, []int{0}, waits, "waits asked for")
}

// TestCommitOnHeadLostAnswers: a commit whose answer never came (a 5xx, or a connection
// dropped after the commit landed) is rebuilt on a fresh head; one that had landed is found
// in place and reported as Recovered, never committed twice.
func TestCommitOnHeadLostAnswers(t *testing.T) {
	noWait := func(int) time.Duration { return 0 }
	for _, tc := range []struct {
		name      string
		fault     hubtest.Fault
		recovered bool
		commits   int // commits on the repo after the seed
	}{
		{"5xx on the commit, nothing landed", hubtest.Fault{Method: http.MethodPost, PathContains: "/commit/", Status: 502}, false, 1},
		{"answer lost after the commit landed", hubtest.Fault{Method: http.MethodPost, PathContains: "/commit/", LoseAnswer: true}, true, 1},
		// The commit body is streamed (no Content-Length), so hubtest cuts the answer.
		{"answer cut after 10 bytes", hubtest.Fault{Method: http.MethodPost, PathContains: "/commit/", CutAfter: 10}, true, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := hubtest.New(t)
			srv.MustAddModel(t, "org/pub", map[string][]byte{"README.md": []byte("# v0\n")})
			before, _ := srv.History("org/pub")
			c := newClient(srv, testToken)
			f := srv.Inject(tc.fault)
			builds := 0
			res, err := c.CommitOnHead(context.Background(), "org/pub", "", 3, noWait, func(ctx context.Context, head string) (hub.CommitRequest, error) {
				builds++
				return hub.CommitRequest{Summary: "publish", Add: []hub.CommitFile{{PathInRepo: "report.json", Content: []byte("window")}}}, nil
			})
			require.NoError(t, err)
			assert.Equal(t, 1, f.Hits(), "the fault hit the first commit")
			assert.Equal(t, 2, builds, "one rebuild on a fresh head")
			assert.Equal(t, tc.recovered, res.Recovered)
			after, _ := srv.History("org/pub")
			assert.Len(t, after, len(before)+tc.commits, "the window was committed once")
			got, _ := srv.FileBytes("org/pub", "main", "report.json")
			assert.Equal(t, "window", string(got))
		})
	}
}
