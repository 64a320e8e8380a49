package drivers

import (
	"encoding/json"
	"os/exec"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestOptimumMetadata runs optimum_export.py's set_metadata on the getters optimum-executorch
// writes (E2's files, docs/research/new-families.md C): the window becomes
// get_max_context_len, the chunk is cut to a sliding window (optimum bounds the token
// dimension by it), and the plan's BOS and EOS set are written over optimum's.
func TestOptimumMetadata(t *testing.T) {
	py, dir := anyPython(t), driverDir(t)
	script := `import json, sys
sys.path.insert(0, sys.argv[1])
import optimum_export
class Module: pass
for meta, plan in json.loads(sys.argv[2]):
    m = Module(); m.metadata = meta
    print(json.dumps(optimum_export.set_metadata(m, plan), sort_keys=True))
`
	plan := map[string]any{"window": 2048, "max_seq_len": 2048, "metadata": map[string]any{"get_eos_ids": []int{1, 106}, "get_bos_id": 2}}
	gemma := map[string]any{"get_max_seq_len": 2048, "sliding_window": 512, "get_eos_id": []int{1, 106}, "get_bos_id": 2}
	smol := map[string]any{"get_max_seq_len": 4096, "get_eos_id": 128012}
	small := map[string]any{"window": 256, "max_seq_len": 2048, "metadata": map[string]any{}}
	in, err := json.Marshal([][2]any{{gemma, plan}, {smol, small}})
	require.NoError(t, err)
	out, err := exec.Command(py, "-c", script, dir, string(in)).CombinedOutput()
	require.NoError(t, err, "%s", out)
	var got []map[string]any
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		var m map[string]any
		require.NoError(t, json.Unmarshal([]byte(line), &m), line)
		got = append(got, m)
	}
	require.Len(t, got, 2)
	assert.Equal(t, map[string]any{"get_max_seq_len": 512.0, "get_max_context_len": 2048.0, "sliding_window": 512.0,
		"get_eos_id": []any{1.0, 106.0}, "get_eos_ids": []any{1.0, 106.0}, "get_bos_id": 2.0}, got[0])
	assert.Equal(t, map[string]any{"get_max_seq_len": 256.0, "get_max_context_len": 256.0, "get_eos_id": 128012.0}, got[1],
		"the chunk never passes the window; no plan metadata leaves optimum's")
}
