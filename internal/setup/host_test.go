package setup

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestParseInputs(t *testing.T) {
	for _, tc := range []struct {
		name   string
		inputs map[string]string
		want   Inputs
		err    string
	}{
		{"defaults", map[string]string{"backend": "xnnpack"},
			Inputs{Backend: "xnnpack", FreeDisk: true, PythonEnv: true, SDK: true}, ""},
		{"every input", map[string]string{"backend": "mediatek", "swap-gib": "24", "free-disk": "false", "python-env": "false", "sdk": "false", "work-root": "/mnt/big"},
			Inputs{Backend: "mediatek", SwapGiB: 24, WorkRoot: "/mnt/big"}, ""},
		{"no backend", map[string]string{}, Inputs{}, "input backend is required (one of xnnpack, vulkan, qnn, mediatek)"},
		{"yes is not a boolean", map[string]string{"backend": "qnn", "free-disk": "yes"}, Inputs{}, `input free-disk is "yes", not true or false`},
		{"True is not a boolean", map[string]string{"backend": "qnn", "sdk": "True"}, Inputs{}, `input sdk is "True", not true or false`},
		{"swap in words", map[string]string{"backend": "qnn", "swap-gib": "16G"}, Inputs{}, `input swap-gib is "16G", not a whole number of GiB from 0 to 128`},
		{"negative swap", map[string]string{"backend": "qnn", "swap-gib": "-1"}, Inputs{}, `input swap-gib is "-1", not a whole number of GiB from 0 to 128`},
		{"swap typo", map[string]string{"backend": "qnn", "swap-gib": "240"}, Inputs{}, `input swap-gib is "240", not a whole number of GiB from 0 to 128`},
		{"relative work root", map[string]string{"backend": "qnn", "work-root": "work"}, Inputs{}, `input work-root is "work", not an absolute path`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := ParseInputs(func(k string) string { return tc.inputs[k] })
			if tc.err != "" {
				assert.EqualError(t, err, tc.err)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tc.want, got)
		})
	}
}

func TestBackend(t *testing.T) {
	b, err := Backend("qnn")
	require.NoError(t, err)
	assert.Equal(t, "qnn", b.Name)
	_, err = Backend("cuda")
	assert.EqualError(t, err, `input backend is "cuda", not one of xnnpack, vulkan, qnn, mediatek`)
	_, err = Backend("enn")
	require.Error(t, err)
	assert.Contains(t, err.Error(), "input backend is enn, which nothing is exported to: ")
}

// TestFreeDisk deletes the reference's list in one sudo call (only what exists), prunes
// docker images when docker is there, reports the root file system's growth, and goes on
// with a warning when a deletion fails.
func TestFreeDisk(t *testing.T) {
	for _, tc := range []struct {
		name    string
		docker  bool
		fail    map[string]error
		want    []string
		warning string
	}{
		{"with docker", true, nil, []string{
			"sudo rm -rf -- /usr/share/dotnet /opt/ghc /usr/local/julia1.11.1",
			"docker image prune --all --force",
		}, ""},
		{"without docker", false, nil, []string{"sudo rm -rf -- /usr/share/dotnet /opt/ghc /usr/local/julia1.11.1"}, ""},
		{"sudo refused", true, map[string]error{"sudo": errors.New("sudo exited with status 1")}, []string{
			"sudo rm -rf -- /usr/share/dotnet /opt/ghc /usr/local/julia1.11.1",
			"docker image prune --all --force",
		}, "::warning::free disk: deleting the preinstalled toolchains failed (sudo exited with status 1); continuing with the space there is\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			frees := []int64{20 * gib, 45 * gib}
			h := &fakeHost{
				globs: map[string][]string{"/usr/share/dotnet": {"/usr/share/dotnet"}, "/opt/ghc": {"/opt/ghc"}, "/usr/local/julia*": {"/usr/local/julia1.11.1"}},
				look:  map[string]string{},
				fail:  tc.fail,
				stat: func(path string) (FS, error) {
					require.Equal(t, "/", path)
					f := frees[0]
					frees = frees[1:]
					return FS{Dev: 1, Free: f}, nil
				},
			}
			if tc.docker {
				h.look["docker"] = "/usr/bin/docker"
			}
			var buf bytes.Buffer
			got := FreeDisk(context.Background(), h.env(), logger(&buf))
			assert.Equal(t, tc.want, h.argv())
			assert.Equal(t, []string{"/usr/share/dotnet", "/opt/ghc", "/usr/local/julia1.11.1"}, got.Paths)
			assert.Equal(t, 25*gib, got.Bytes)
			assert.Contains(t, buf.String(), "free disk: deleted 3 folders, 25.0 GiB more free on /")
			if tc.warning == "" {
				assert.NotContains(t, buf.String(), "::warning::")
			} else {
				assert.Contains(t, buf.String(), tc.warning)
			}
		})
	}
}

func TestFreeDiskNothingToDelete(t *testing.T) {
	h := &fakeHost{}
	var buf bytes.Buffer
	got := FreeDisk(context.Background(), h.env(), logger(&buf))
	assert.Empty(t, h.cmds, "no sudo call without a folder to delete")
	assert.Equal(t, Freed{}, got)
}

// TestWorkPlace: the work folder goes to the file system with more free space; /mnt is a
// candidate only when it exists and is another file system; work-root replaces both.
func TestWorkPlace(t *testing.T) {
	temp := "/home/runner/work/_temp"
	for _, tc := range []struct {
		name      string
		fss       map[string]FS
		workRoot  string
		wantWork  string
		wantPlace int
	}{
		{"/mnt larger", map[string]FS{temp: {1, 20 * gib}, "/mnt": {2, 70 * gib}}, "", "/mnt/exe-expo-work", 2},
		{"root larger", map[string]FS{temp: {1, 90 * gib}, "/mnt": {2, 70 * gib}}, "", temp + "/exe-expo-work", 2},
		{"a tie stays on root", map[string]FS{temp: {1, 70 * gib}, "/mnt": {2, 70 * gib}}, "", temp + "/exe-expo-work", 2},
		{"no /mnt", map[string]FS{temp: {1, 20 * gib}}, "", temp + "/exe-expo-work", 1},
		{"/mnt on the root file system", map[string]FS{temp: {1, 20 * gib}, "/mnt": {1, 20 * gib}}, "", temp + "/exe-expo-work", 1},
		{"work-root", map[string]FS{temp: {1, 90 * gib}, "/mnt": {2, 70 * gib}, "/data": {3, 5 * gib}}, "/data", "/data/exe-expo-work", 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := &fakeHost{vars: map[string]string{"RUNNER_TEMP": temp}, stat: func(p string) (FS, error) {
				f, ok := tc.fss[p]
				if !ok {
					return FS{}, noEntry(p)
				}
				return f, nil
			}}
			places, err := Candidates(h.env(), tc.workRoot)
			require.NoError(t, err)
			assert.Len(t, places, tc.wantPlace)
			work, hf := WorkDirs(WorkPlace(places))
			assert.Equal(t, tc.wantWork, work)
			assert.Equal(t, tc.wantWork+"/hf-home", hf)
		})
	}
}

func TestCandidatesMissingWorkRoot(t *testing.T) {
	h := &fakeHost{stat: func(p string) (FS, error) {
		return FS{}, errors.New("cannot weigh the file system of " + p + ": no such file or directory")
	}}
	_, err := Candidates(h.env(), "/data")
	assert.EqualError(t, err, "input work-root: cannot weigh the file system of /data: no such file or directory")
}

// TestSwapPlace keeps the swap file off the work file system when the other one has the
// swap plus 2 GiB free, as the reference's prepare-host.sh did.
func TestSwapPlace(t *testing.T) {
	root := Place{Work: "/tmp", Mount: "/", FS: FS{Dev: 1, Free: 30 * gib}}
	mnt := Place{Work: "/mnt", Mount: "/mnt", FS: FS{Dev: 2, Free: 70 * gib}}
	places := []Place{root, mnt}
	assert.Equal(t, root, SwapPlace(places, mnt, 28), "28 + 2 GiB fit in 30 GiB")
	assert.Equal(t, mnt, SwapPlace(places, mnt, 29), "29 + 2 GiB do not fit in 30 GiB: on the work file system")
	assert.Equal(t, mnt, SwapPlace(places, root, 16))
	assert.Equal(t, root, SwapPlace([]Place{root}, root, 16))
}

// TestAddSwap: the four sudo steps in order; a runner that refuses any of them is a
// warning, the half-made file is removed, and setup goes on.
func TestAddSwap(t *testing.T) {
	steps := []string{
		"sudo fallocate -l 16G /mnt/exe-expo.swap",
		"sudo chmod 600 /mnt/exe-expo.swap",
		"sudo mkswap /mnt/exe-expo.swap",
		"sudo swapon /mnt/exe-expo.swap",
	}
	t.Run("added", func(t *testing.T) {
		h := &fakeHost{}
		var buf bytes.Buffer
		got := AddSwap(context.Background(), h.env(), logger(&buf), "/mnt/exe-expo.swap", 16)
		assert.Equal(t, Swap{GiB: 16, Path: "/mnt/exe-expo.swap", Added: true}, got)
		assert.Equal(t, steps, h.argv())
		assert.NotContains(t, buf.String(), "::warning::")
	})
	t.Run("refused", func(t *testing.T) {
		h := &fakeHost{fail: map[string]error{"sudo swapon": errors.New("sudo exited with status 255")}}
		var buf bytes.Buffer
		got := AddSwap(context.Background(), h.env(), logger(&buf), "/mnt/exe-expo.swap", 16)
		assert.False(t, got.Added)
		assert.Equal(t, "swapon failed: sudo exited with status 255", got.Refused)
		assert.Equal(t, append(steps, "sudo rm -f /mnt/exe-expo.swap"), h.argv())
		assert.Contains(t, buf.String(), "::warning::could not add 16 GiB of swap at /mnt/exe-expo.swap (swapon failed: sudo exited with status 255); the export's memory gate counts what the runner has\n")
	})
	t.Run("on already", func(t *testing.T) {
		h := &fakeHost{swaps: []string{"/dev/sda2", "/mnt/exe-expo.swap"}}
		var buf bytes.Buffer
		got := AddSwap(context.Background(), h.env(), logger(&buf), "/mnt/exe-expo.swap", 16)
		assert.Empty(t, h.cmds, "an active swap file is left alone")
		assert.True(t, got.Added)
		assert.Equal(t, "swap: /mnt/exe-expo.swap is on already\n", buf.String())
	})
	t.Run("none asked", func(t *testing.T) {
		h := &fakeHost{}
		got := AddSwap(context.Background(), h.env(), logger(&bytes.Buffer{}), "/exe-expo.swap", 0)
		assert.Empty(t, h.cmds)
		assert.False(t, got.Added)
	})
}

func TestCmdString(t *testing.T) {
	c := Cmd{Argv: []string{"python3.11", "-c", "import executorch.backends.qualcomm", "it's", ""}}
	assert.Equal(t, `python3.11 -c 'import executorch.backends.qualcomm' 'it'\''s' ''`, c.String())
	assert.Equal(t, "python -m pip install executorch==1.4.0 https://x.org/a+b.whl",
		Cmd{Argv: strings.Fields("python -m pip install executorch==1.4.0 https://x.org/a+b.whl")}.String())
}

func TestParseSwaps(t *testing.T) {
	text := "Filename\t\t\t\tType\t\tSize\t\tUsed\t\tPriority\n" +
		"/dev/sdb2                               partition\t4194300\t\t0\t\t-2\n" +
		"/mnt/exe-expo.swap                      file\t\t16777212\t0\t\t-3\n"
	assert.Equal(t, []string{"/dev/sdb2", "/mnt/exe-expo.swap"}, parseSwaps(text))
	assert.Empty(t, parseSwaps("Filename\tType\tSize\tUsed\tPriority\n"))
}

func TestMakeWorkDir(t *testing.T) {
	root := t.TempDir()
	h := &fakeHost{}
	dir := filepath.Join(root, "exe-expo-work")
	require.NoError(t, MakeWorkDir(context.Background(), h.env(), logger(&bytes.Buffer{}), dir))
	assert.DirExists(t, dir)
	assert.Empty(t, h.cmds, "a folder this user can create needs no sudo")

	blocked := filepath.Join(root, "file")
	require.NoError(t, os.WriteFile(blocked, nil, 0o644))
	err := MakeWorkDir(context.Background(), h.env(), logger(&bytes.Buffer{}), filepath.Join(blocked, "exe-expo-work"))
	assert.EqualError(t, err, "cannot create the work folder "+filepath.Join(blocked, "exe-expo-work")+": not a directory")
}
