package snapshot_test

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"io/fs"
	"sort"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/experimentalmachines/exe-expo/internal/config"
	"github.com/experimentalmachines/exe-expo/internal/model"
	"github.com/experimentalmachines/exe-expo/internal/plan"
	"github.com/experimentalmachines/exe-expo/internal/snapshot"
	"github.com/experimentalmachines/exe-expo/internal/source"
	"github.com/experimentalmachines/exe-expo/pkg/hub"
	"github.com/experimentalmachines/exe-expo/pkg/hub/hubtest"
)

// headerOnly is a model.safetensors that holds its header and no data: one tensor per dtype
// of the split, so its headers count exactly what the Hub reports. A range read of the
// header is all plan ever asks of it.
func headerOnly(t *testing.T, split map[string]int64) []byte {
	t.Helper()
	dtypes := make([]string, 0, len(split))
	for d := range split {
		dtypes = append(dtypes, d)
	}
	sort.Strings(dtypes)
	header := map[string]any{}
	var off int64
	for i, d := range dtypes {
		n := split[d]
		header["t"+string(rune('a'+i))] = map[string]any{"dtype": d, "shape": []int64{n}, "data_offsets": []int64{off, off + 2*n}}
		off += 2 * n
	}
	h, err := json.Marshal(header)
	require.NoError(t, err)
	return append(binary.LittleEndian.AppendUint64(nil, uint64(len(h))), h...)
}

// TestOfflineEqualsOnline: for every model of the snapshot that carries the Hub's total,
// `plan` offline (the embedded snapshot) and `plan` against a Hub serving the same
// metadata and a checkpoint with the Hub's parameter count agree on everything but where
// the metadata came from: verdict, parameters, architecture, and every backend's every
// window.
func TestOfflineEqualsOnline(t *testing.T) {
	ctx := context.Background()
	cfg, err := config.Default()
	require.NoError(t, err)
	totals, err := snapshot.Totals()
	require.NoError(t, err)
	srv := hubtest.New(t)
	h := source.Hub{Client: hub.New(hub.Options{Endpoint: srv.URL, NoEnvToken: true, RetryMax: 1,
		RetryWaitMin: time.Millisecond, RetryWaitMax: time.Millisecond})}
	compared := 0
	for _, id := range snapshot.Models() {
		tot, ok := totals[id]
		if !ok {
			continue // no Hub total to serve (data/README.md names it)
		}
		t.Run(id, func(t *testing.T) {
			f, err := snapshot.Files(id)
			require.NoError(t, err)
			files := map[string][]byte{"model.safetensors": headerOnly(t, tot.Parameters)}
			for _, name := range []string{"config.json", "generation_config.json", model.IndexFile} {
				b, err := f.ReadFile(ctx, name)
				if err == nil {
					files[name] = b
				} else if !isNotExist(err) {
					t.Fatal(err)
				}
			}
			srv.MustAddModel(t, id, files)

			online, off, err := source.Open(ctx, id, "main", h)
			require.NoError(t, err)
			require.False(t, off)
			offline, off, err := source.Open(ctx, id, "main", nil)
			require.NoError(t, err)
			require.True(t, off)
			require.NotNil(t, online.Params)
			assert.Equal(t, "the Hub's safetensors total (model info)", online.Params.Source)

			on, of := plan.Build(cfg, online, ""), plan.Build(cfg, offline, "")
			assert.Equal(t, tot.Total, on.Params.Total)
			assert.Equal(t, comparable(t, on), comparable(t, of))
		})
		compared++
	}
	// Four have no Hub total (data/README.md): the FP8 checkpoint and the three Qwen3.5.
	assert.GreaterOrEqual(t, compared, len(snapshot.Models())-4)
}

// comparable is a plan's JSON without what says where its metadata came from.
func comparable(t *testing.T, p *plan.Plan) string {
	t.Helper()
	c := *p
	c.Origin, c.RevisionNote, c.Offline = "", "", false
	if c.Verdict != nil {
		v := *c.Verdict
		v.SHA = "" // the Hub's commit; the snapshot has none
		c.Verdict = &v
	}
	if c.Params != nil {
		params := *c.Params
		params.Source = ""
		c.Params = &params
	}
	b, err := json.MarshalIndent(c, "", " ")
	require.NoError(t, err)
	return string(b)
}

func isNotExist(err error) bool { return errors.Is(err, fs.ErrNotExist) }
