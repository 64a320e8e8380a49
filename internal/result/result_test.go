package result_test

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/experimentalmachines/exe-expo/internal/result"
)

// TestWriteRead: a result reads back as written, with lists that are never null, and every
// exit code has its word; a failure without a reason still says something.
func TestWriteRead(t *testing.T) {
	for code, outcome := range map[int]string{0: "ok", 2: "failed", 3: "not_eligible", 4: "skipped", 130: "interrupted", 1: "failed"} {
		r := result.New("export")
		r.Finish(code)
		path := filepath.Join(t.TempDir(), "r.json")
		require.NoError(t, result.Write(path, r))
		got, err := result.Read(path)
		require.NoError(t, err)
		assert.Equal(t, outcome, got.Outcome)
		assert.Equal(t, code, got.ExitCode)
		assert.Equal(t, code != 0, got.Reason != "", "code %d: reason %q", code, got.Reason)
		data, err := os.ReadFile(path)
		require.NoError(t, err)
		assert.Contains(t, string(data), `"files": []`)
		assert.Contains(t, string(data), `"skipped": []`)
		assert.Contains(t, string(data), `"schema_version": 1`)
	}
}

// TestReadRefusesAnotherVersion: another schema, no schema, and no JSON are each refused
// with the file's name.
func TestReadRefusesAnotherVersion(t *testing.T) {
	for _, tc := range []struct {
		name, body, says string
		version          bool
	}{
		{"newer", `{"schema_version": 2, "command": "plan"}`, "is an exe-expo result of schema 2, and this exe-expo reads schema 1 only", true},
		{"none", `{"command": "plan"}`, "has no schema_version", true},
		{"not JSON", `exit 2`, "is not an exe-expo result (JSON)", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "r.json")
			require.NoError(t, os.WriteFile(path, []byte(tc.body), 0o644))
			_, err := result.Read(path)
			require.Error(t, err)
			assert.Contains(t, err.Error(), path+" "+tc.says)
			var ve *result.VersionError
			assert.Equal(t, tc.version, errors.As(err, &ve))
		})
	}
}

// TestReadChecks: only smoke's and gate's results list refused windows; another command's
// is refused by name.
func TestReadChecks(t *testing.T) {
	for _, tc := range []struct {
		command string
		ok      bool
	}{{"gate", true}, {"smoke", true}, {"plan", false}, {"export", false}} {
		path := filepath.Join(t.TempDir(), tc.command+".json")
		r := result.New(tc.command)
		r.Outputs.Failed = []result.Failed{{Window: 2048, File: "xnnpack/m-2k.pte", Reason: "decision gate failed"}}
		require.NoError(t, result.Write(path, r))
		got, err := result.ReadChecks(path)
		if !tc.ok {
			require.Error(t, err, tc.command)
			assert.Contains(t, err.Error(), "is the result of exe-expo "+tc.command+", not of smoke or gate")
			continue
		}
		require.NoError(t, err, tc.command)
		assert.Equal(t, r.Outputs.Failed, got.Outputs.Failed)
	}
}
