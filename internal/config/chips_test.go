package config

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// linkChipBackends stands in for the registry for one test (the real one is held to the
// same rules in internal/backend's tests).
func linkChipBackends(t *testing.T, cbs ...ChipBackend) {
	t.Helper()
	saved := ChipBackends
	ChipBackends = func() []ChipBackend { return cbs }
	t.Cleanup(func() { ChipBackends = saved })
}

// TestChipsFollowTheRegistry: a chip's backend must be one the registry gives, a chip list
// must hold the chips of the backend listed there, and a backend's platform rule applies
// to its chips; with no backend linked, only what config itself knows is checked.
func TestChipsFollowTheRegistry(t *testing.T) {
	y, v := readRepoConfig(t)
	tests := []struct {
		name     string
		linked   []ChipBackend
		old, new string
		want     string // "" when the config is accepted
	}{
		{"unknown backend", []ChipBackend{{Name: "qnn"}, {Name: "mediatek"}},
			"SM8650: {backend: qnn", "SM8650: {backend: coreml", `chips.SM8650.backend: "coreml" is not qnn or mediatek`},
		{"three backends", []ChipBackend{{Name: "qnn"}, {Name: "mediatek"}, {Name: "npu5"}},
			"SM8650: {backend: qnn", "SM8650: {backend: coreml", `chips.SM8650.backend: "coreml" is not qnn, mediatek or npu5`},
		{"nothing linked", nil, "SM8650: {backend: qnn", "SM8650: {backend: coreml", ""},
		{"platform rule", []ChipBackend{{Name: "qnn"}, {Name: "mediatek", Platform: "a MediaTek chip needs its --platform (DX3, DX4)"}},
			"Dimensity 9400, platform: DX4}", "Dimensity 9400}", "chips.MT6991.platform: a MediaTek chip needs its --platform (DX3, DX4)"},
		{"list of another backend's chips", []ChipBackend{{Name: "qnn", Key: "export.qnn.socs"}, {Name: "mediatek", Key: "export.mediatek.socs"}},
			"    socs: [MT6991]", "    socs: [SM8650]", `export.mediatek.socs.0: chip "SM8650" is a qnn chip, not mediatek`},
		{"the same list, nothing linked", nil, "    socs: [MT6991]", "    socs: [SM8650]", ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			linkChipBackends(t, tc.linked...)
			edited := strings.Replace(string(y), tc.old, tc.new, 1)
			require.NotEqual(t, string(y), edited, "test edit %q did not apply", tc.old)
			_, err := Parse("config/pipeline.yaml", []byte(edited), "config/versions.env", v)
			if tc.want == "" {
				assert.NoError(t, err)
				return
			}
			require.Error(t, err)
			assert.Contains(t, err.Error(), tc.want)
		})
	}
}
