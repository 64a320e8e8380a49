package hub_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/experimentalmachines/exe-expo/pkg/hub"
	"github.com/experimentalmachines/exe-expo/pkg/hub/hubtest"
)

func TestWhoAmIAndAuthCheck(t *testing.T) {
	srv := hubtest.New(t)
	srv.AddToken(testToken, hubtest.Token{User: "alice", Write: true})
	srv.AddToken("hf_reader", hubtest.Token{User: "rita"})
	srv.MustAddModel(t, "meta/gated", map[string][]byte{"config.json": []byte("{}")}, hubtest.Gated("manual"), hubtest.Authorize("rita"))
	ctx := context.Background()

	a := must(newClient(srv, testToken).WhoAmI(ctx))(t)
	if a.Name != "alice" || !a.CanWrite() {
		t.Errorf("whoami = %+v, want alice with write", a)
	}
	r := must(newClient(srv, "hf_reader").WhoAmI(ctx))(t)
	if r.CanWrite() {
		t.Errorf("read token reported as writable: %+v", r)
	}
	if _, err := newClient(srv, "hf_unknown").WhoAmI(ctx); !errors.Is(err, hub.ErrUnauthorized) {
		t.Errorf("unknown token: %v", err)
	}
	if _, err := newClient(srv, "").WhoAmI(ctx); !errors.Is(err, hub.ErrUnauthorized) || !strings.Contains(err.Error(), "HF_TOKEN") {
		t.Errorf("no token: %v", err)
	}

	tests := []struct {
		token string
		want  error
	}{
		{"", hub.ErrGated},
		{testToken, hub.ErrGated},
		{"hf_reader", nil},
	}
	for _, tc := range tests {
		err := newClient(srv, tc.token).AuthCheck(ctx, "meta/gated")
		if !errors.Is(err, tc.want) && !(err == nil && tc.want == nil) {
			t.Errorf("AuthCheck with %q: %v, want %v", tc.token, err, tc.want)
		}
		if err != nil && !strings.Contains(err.Error(), srv.URL+"/meta/gated") {
			t.Errorf("gated advice does not point at the repo page on this Hub: %v", err)
		}
	}
	if err := newClient(srv, testToken).AuthCheck(ctx, "meta/none"); !errors.Is(err, hub.ErrRepoNotFound) {
		t.Errorf("AuthCheck of a missing repo: %v", err)
	}
}
