package hub_test

import (
	"context"
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/experimentalmachines/exe-expo/pkg/hub"
	"github.com/experimentalmachines/exe-expo/pkg/hub/hubtest"
)

func TestCommitOnHead(t *testing.T) {
	noWait := func(int) time.Duration { return 0 }
	tests := []struct {
		name     string
		races    int // how many times another writer commits between read and commit
		attempts int
		wantErr  error
		builds   int
	}{
		{"no race", 0, 3, nil, 1},
		{"one race", 1, 3, nil, 2},
		{"always racing", 5, 3, hub.ErrStaleParent, 3},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			srv := hubtest.New(t)
			srv.MustAddModel(t, "org/pub", map[string][]byte{"README.md": []byte("# v0\n")})
			c := newClient(srv, testToken)
			var heads []string
			build := func(ctx context.Context, head string) (hub.CommitRequest, error) {
				heads = append(heads, head)
				if len(heads) <= tc.races {
					srv.MustAddModel(t, "org/pub", map[string][]byte{"other.txt": []byte{byte(len(heads))}})
				}
				return hub.CommitRequest{Summary: "publish", Add: []hub.CommitFile{{PathInRepo: "report.json", Content: []byte(head)}}}, nil
			}
			res, err := c.CommitOnHead(context.Background(), "org/pub", "", tc.attempts, noWait, build)
			if len(heads) != tc.builds {
				t.Errorf("built %d times, want %d", len(heads), tc.builds)
			}
			if tc.wantErr != nil {
				if !errors.Is(err, tc.wantErr) {
					t.Fatalf("err = %v, want %v", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			shas, _ := srv.History("org/pub")
			if res.OID != shas[0] || shas[1] != heads[len(heads)-1] {
				t.Errorf("commit %s landed on %s, want on the last head read %s", res.OID, shas[1], heads[len(heads)-1])
			}
			if len(heads) > 1 && slices.Equal(heads[:1], heads[1:2]) {
				t.Error("a retry reused the stale head")
			}
			got, _ := srv.FileBytes("org/pub", "main", "report.json")
			if string(got) != heads[len(heads)-1] {
				t.Errorf("report.json = %q, want the head it was built on", got)
			}
		})
	}
}
