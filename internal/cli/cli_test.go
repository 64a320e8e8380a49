package cli

import (
	"bytes"
	"fmt"
	"runtime/debug"
	"strings"
	"testing"

	"github.com/experimentalmachines/exe-expo/internal/config"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestConventions: what the user asked for (help, a version) is on stdout with exit 0; a
// mistake is on stderr with exit 2 and stdout stays empty.
func TestConventions(t *testing.T) {
	tests := []struct {
		name string
		args []string
		code int
		// out and errs are substrings of stdout and stderr; "" wants the stream empty.
		out, errs []string
	}{
		{"no arguments", nil, ExitFailed, nil, []string{"Usage: exe-expo <command>", "\n  inspect ", "\n  plan "}},
		{"help", []string{"help"}, ExitOK, []string{"Usage: exe-expo <command>", "\n  export ", "\n  version "}, nil},
		{"-h", []string{"-h"}, ExitOK, []string{"Commands:"}, nil},
		{"--help", []string{"--help"}, ExitOK, []string{"Commands:"}, nil},
		{"help for a command", []string{"help", "inspect"}, ExitOK, []string{"Usage: exe-expo inspect FILE.pte", "\nFlags:\n", "-backend string"}, nil},
		{"help for an unknown command", []string{"help", "nosuchcommand"}, ExitFailed, nil,
			[]string{`exe-expo: unknown command "nosuchcommand"`, "Commands:", "\n  inspect ", "\n  plan "}},
		{"help for two commands", []string{"help", "plan", "inspect"}, ExitFailed, nil, []string{"help takes one command name, not 2 words", "Commands:"}},
		{"command --help", []string{"inspect", "--help"}, ExitOK, []string{"Usage: exe-expo inspect FILE.pte", "-mtk-exp string"}, nil},
		{"export's calibration flags", []string{"export", "--help"}, ExitOK, []string{"[--calibration FILE | --calibrate-only --calibration-out FILE]",
			"-calibrate-only\n", "qnn: calibrate once at export.qnn.calib_window", "-calibration string\n", "-calibration-out string\n"}, nil},
		{"command -h", []string{"plan", "-h"}, ExitOK, []string{"Usage: exe-expo plan MODEL", "-revision string"}, nil},
		{"--help after an argument", []string{"inspect", "model.pte", "--help"}, ExitOK, []string{"Usage: exe-expo inspect"}, nil},
		{"help without flags", []string{"version", "--help"}, ExitOK, []string{"Usage: exe-expo version\n\nprint the exe-expo version"}, nil},
		{"unknown flag", []string{"inspect", "--bogus", "model.pte"}, ExitFailed, nil,
			[]string{"exe-expo inspect: there is no flag --bogus; the flags are --backend, --bos, --eos, --json, --max-context-len,"}},
		{"bad number", []string{"inspect", "--max-seq-len", "abc", "model.pte"}, ExitFailed, nil,
			[]string{`exe-expo inspect: --max-seq-len "abc" is not a whole number: expected get_max_seq_len (0: not checked)`}},
		{"bad boolean", []string{"plan", "--json=maybe", "m"}, ExitFailed, nil,
			[]string{`exe-expo plan: --json "maybe" is not true or false: print the plan as JSON`}},
		{"a flag without its value", []string{"plan", "m", "--backend"}, ExitFailed, nil,
			[]string{`exe-expo plan: --backend needs a value: show one backend only: `}},
		{"unknown command", []string{"nosuchcommand"}, ExitFailed, nil, []string{`exe-expo: unknown command "nosuchcommand"`, "\n  plan "}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			code, out, errs := run(t, tc.args...)
			assert.Equal(t, tc.code, code, "exit code; stderr %q", errs)
			streamHas(t, "stdout", out, tc.out)
			streamHas(t, "stderr", errs, tc.errs)
			if tc.code != ExitOK && !strings.Contains(tc.name, "command") && tc.args != nil {
				assert.Equal(t, 1, strings.Count(errs, "\n"), "a flag mistake is one line, not the usage page: %q", errs)
			}
		})
	}
}

func streamHas(t *testing.T, name, got string, want []string) {
	t.Helper()
	if len(want) == 0 {
		assert.Empty(t, got, name)
		return
	}
	for _, w := range want {
		assert.Contains(t, got, w, name)
	}
}

// TestVersionCommand runs `exe-expo version` in the test binary, which carries no VCS stamp.
func TestVersionCommand(t *testing.T) {
	cfg, err := config.Default()
	require.NoError(t, err)
	code, out, errs := run(t, "version")
	require.Equal(t, ExitOK, code, "stderr %q", errs)
	assert.Empty(t, errs)
	lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	require.GreaterOrEqual(t, len(lines), 3, "output %q", out)
	assert.True(t, strings.HasPrefix(lines[0], "exe-expo "), "first line %q names the program and its version", lines[0])
	assert.True(t, strings.HasPrefix(lines[1], "commit "), "second line %q is the commit", lines[1])
	assert.Equal(t, fmt.Sprintf("ExecuTorch %s (commit %s), QAIRT %s, NeuroPilot SDK %s", cfg.Versions.ExecuTorch,
		cfg.Versions.ExecuTorchCommit, cfg.Versions.QAIRT, cfg.Versions.NeuroPilotSDKBuild), lines[len(lines)-1])

	code, out, errs = run(t, "version", "extra")
	assert.Equal(t, ExitFailed, code)
	assert.Empty(t, out)
	assert.Equal(t, "version: takes no arguments, got extra\n", errs)
}

// TestWriteVersion feeds writeVersion the build information the go command records.
func TestWriteVersion(t *testing.T) {
	pins := config.Versions{ExecuTorch: "1.4.0", ExecuTorchCommit: "3dd7ccd1d863fad22639dd2d918ae34a41ce45f0",
		QAIRT: "2.37.0.250724", NeuroPilotSDKBuild: "8.0.8-build20250925"}
	const pinLine = "ExecuTorch 1.4.0 (commit 3dd7ccd1d863fad22639dd2d918ae34a41ce45f0), QAIRT 2.37.0.250724, NeuroPilot SDK 8.0.8-build20250925\n"
	vcs := func(modified string) []debug.BuildSetting {
		return []debug.BuildSetting{{Key: "vcs", Value: "git"}, {Key: "vcs.revision", Value: "110d3473c7bb0aa0d6ad0a0d0f5e9b6c8e1f2a3b"},
			{Key: "vcs.time", Value: "2026-03-01T10:00:00Z"}, {Key: "vcs.modified", Value: modified}}
	}
	tests := []struct {
		name     string
		info     *debug.BuildInfo
		override string
		want     string
	}{
		{"go build in a clean checkout", &debug.BuildInfo{GoVersion: "go1.26.8", Main: debug.Module{Version: "(devel)"}, Settings: vcs("false")}, "",
			"exe-expo (devel)\ncommit 110d3473c7bb0aa0d6ad0a0d0f5e9b6c8e1f2a3b of 2026-03-01T10:00:00Z\nbuilt with go1.26.8\n" + pinLine},
		{"go build with edits", &debug.BuildInfo{GoVersion: "go1.26.8", Main: debug.Module{Version: "(devel)"}, Settings: vcs("true")}, "",
			"exe-expo (devel)\ncommit 110d3473c7bb0aa0d6ad0a0d0f5e9b6c8e1f2a3b of 2026-03-01T10:00:00Z, with uncommitted changes\nbuilt with go1.26.8\n" + pinLine},
		{"release build with ldflags", &debug.BuildInfo{GoVersion: "go1.26.8", Main: debug.Module{Version: "(devel)"}, Settings: vcs("false")}, "v1.2.0",
			"exe-expo v1.2.0\ncommit 110d3473c7bb0aa0d6ad0a0d0f5e9b6c8e1f2a3b of 2026-03-01T10:00:00Z\nbuilt with go1.26.8\n" + pinLine},
		{"go install of a tag", &debug.BuildInfo{GoVersion: "go1.26.8", Main: debug.Module{Version: "v0.3.1"}}, "",
			"exe-expo v0.3.1\ncommit unknown (built without version control information)\nbuilt with go1.26.8\n" + pinLine},
		{"no build information", nil, "",
			"exe-expo (devel)\ncommit unknown (built without version control information)\n" + pinLine},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var b bytes.Buffer
			require.NoError(t, writeVersion(&b, tc.info, tc.override, pins))
			assert.Equal(t, tc.want, b.String())
		})
	}
}
