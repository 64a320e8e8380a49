package fileutil

import (
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestError checks that the wrappers Go's os package puts around a cause are dropped, so
// the path is said once, and that errors.Is still sees the cause.
func TestError(t *testing.T) {
	tests := []struct {
		name string
		err  error
		want string
	}{
		{"path error", &fs.PathError{Op: "open", Path: "/m/a.pte", Err: syscall.ENOENT},
			"cannot open /m/a.pte: no such file or directory"},
		{"link error", &os.LinkError{Op: "rename", Old: "/m/a.part", New: "/m/a.pte", Err: syscall.EXDEV},
			"cannot open /m/a.pte: invalid cross-device link"},
		{"syscall error", os.NewSyscallError("fsync", syscall.EIO),
			"cannot open /m/a.pte: input/output error"},
		{"plain error", errors.New("short write"),
			"cannot open /m/a.pte: short write"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := Error("open", "/m/a.pte", tc.err)
			assert.Equal(t, tc.want, err.Error())
			assert.ErrorIs(t, err, tc.err)
		})
	}
}

// TestReasonWordsJSON: a JSON decoding error reads as a sentence, without encoding/json's
// "json: " prefix or Go's type names.
func TestReasonWordsJSON(t *testing.T) {
	var v struct {
		Rows map[string]struct {
			Token int `json:"token"`
		} `json:"rows"`
		Tokens []string `json:"tokens"`
		Ok     bool     `json:"ok"`
		N      uint8    `json:"n"`
	}
	var num json.Number
	tests := []struct {
		name, in string
		into     any
		want     string
	}{
		{"not JSON", `done`, &v, "not valid JSON (invalid character 'd' looking for beginning of value, at byte 1)"},
		{"cut short", `{"rows": `, &v, "not valid JSON (unexpected end of JSON input, at byte 9)"},
		{"wrong kind", `{"rows": {"q": {"token": "7"}}}`, &v, `field "rows.token" is a string, not a number`},
		{"object for a list", `{"tokens": {}}`, &v, `field "tokens" is an object, not a list`},
		{"number for a bool", `{"ok": 1}`, &v, `field "ok" is a number, not true or false`},
		{"out of range", `{"n": 300}`, &v, `field "n" is the number 300, not a number`},
		{"invalid number", `"abc"`, &num, `invalid number literal, trying to unmarshal "\"abc\"" into Number`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := json.Unmarshal([]byte(tc.in), tc.into)
			require.Error(t, err)
			got := Reason(err)
			assert.Equal(t, tc.want, got)
			assert.NotContains(t, got, "json: ")
			assert.NotContains(t, got, "Go value")
		})
	}
}
