package qnn_test

import (
	"testing"

	"github.com/experimentalmachines/exe-expo/internal/backend/qnn"
	"github.com/experimentalmachines/exe-expo/internal/sizing/sizingtest"
)

// TestBoundsKeepSizesInRange: at internal/model's bounds nothing QNN sizes wraps or saturates
// (internal/sizing's test of the same name holds the shared sizes).
func TestBoundsKeepSizesInRange(t *testing.T) {
	for _, m := range sizingtest.AtBounds(t) {
		for _, w := range sizingtest.BoundWindows {
			sizingtest.InRange(t, qnn.PTEBytes(m, w), "pte at %d tokens, %d parameters", w, m.Params)
			sizingtest.InRange(t, qnn.HostNeed(m, w), "host need at %d tokens, %d parameters", w, m.Params)
			sizingtest.InRange(t, qnn.DiskNeed(m, qnn.PTEBytes(m, w)), "disk at %d tokens, %d parameters", w, m.Params)
		}
	}
}
