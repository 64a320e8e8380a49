package setup

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/experimentalmachines/exe-expo/internal/run"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestPlanFor(t *testing.T) {
	vars := map[string]string{"HOME": "/home/runner", "RUNNER_OS": "Linux", "RUNNER_ARCH": "X64"}
	for _, tc := range []struct {
		backend string
		sdk     bool
		want    Plan
	}{
		{"xnnpack", true, Plan{PythonVersions: []string{"3.11"}}},
		{"vulkan", true, Plan{PythonVersions: []string{"3.11"}}},
		{"qnn", true, Plan{PythonVersions: []string{"3.11"}, CachePaths: []string{"/home/runner/.cache/executorch/qnn"},
			CacheKey: "exe-expo-sdk-Linux-X64-qairt-2.37.0.250724"}},
		{"qnn", false, Plan{PythonVersions: []string{"3.11"}}},
		{"mediatek", true, Plan{PythonVersions: []string{"3.10", "3.11"}, CachePaths: []string{"/home/runner/.cache/exe-expo/sdk"},
			CacheKey: "exe-expo-sdk-Linux-X64-neuropilot-sdk-42155c3b25e9f9af"}},
	} {
		t.Run(tc.backend, func(t *testing.T) {
			h := &fakeHost{vars: vars}
			assert.Equal(t, tc.want, PlanFor(configFor(t, tc.backend), Inputs{Backend: tc.backend, SDK: tc.sdk}, h.env()))
		})
	}
}

// runner is a fake runner's folders: its temp folder, HOME and a work root.
type runner struct {
	temp, home, data string
}

func newRunner(t *testing.T) runner {
	t.Helper()
	tmp := t.TempDir()
	r := runner{temp: filepath.Join(tmp, "temp"), home: filepath.Join(tmp, "home"), data: filepath.Join(tmp, "data")}
	for _, d := range []string{r.temp, r.home, r.data} {
		require.NoError(t, os.MkdirAll(d, 0o755))
	}
	return r
}

func (r runner) host(t *testing.T) *fakeHost {
	return &fakeHost{
		vars: map[string]string{"RUNNER_TEMP": r.temp, "HOME": r.home, "EXE_EXPO_ROOT": repoRoot(t)},
		look: map[string]string{"python3.11": "/py/bin/python3.11", "python3.10": "/py/bin/python3.10"},
		host: run.HostFacts{NProc: 4, MemTotalBytes: 16 * gib, SwapTotalBytes: 8 * gib, CPUModel: "AMD EPYC 7763"},
	}
}

// TestPrepareMediaTek runs the whole setup for MediaTek against a local SDK server: the
// SDK is downloaded, checked and unpacked before the tool venv installs its wheels.
func TestPrepareMediaTek(t *testing.T) {
	r := newRunner(t)
	archive, err := os.ReadFile(tarGz(t, t.TempDir(), sdkFiles, sdkOrder))
	require.NoError(t, err)
	srv := newSDKServer(t, serve(archive))
	c := configFor(t, "mediatek")
	c.Versions.NeuroPilotSDKURL = srv.URL + "/b1c485de.gz"
	c.Versions.NeuroPilotSDKSHA256 = sha(archive)
	h := r.host(t)
	env := h.env()
	env.HTTP = srv.Client()
	var buf bytes.Buffer
	in := Inputs{Backend: "mediatek", SwapGiB: 8, PythonEnv: true, SDK: true, WorkRoot: r.data}
	res, err := Prepare(context.Background(), c, in, env, logger(&buf))
	require.NoError(t, err, buf.String())

	work := filepath.Join(r.data, "exe-expo-work")
	wheels := filepath.Join(r.home, ".cache", "exe-expo", "sdk", "neuropilot-8.0.8-build20250925")
	venv := filepath.Join(work, "mtk-venv")
	pip := " -m pip install --progress-bar off --no-deps "
	cpu := "--index-url https://download.pytorch.org/whl/cpu torch==" + c.Versions.Torch
	locks := filepath.Join(work, "python-locks")
	overlay := filepath.Join(work, "python-overlay", "transformers")
	assert.Equal(t, []string{
		"sudo fallocate -l 8G " + r.data + "/exe-expo.swap",
		"sudo chmod 600 " + r.data + "/exe-expo.swap",
		"sudo mkswap " + r.data + "/exe-expo.swap",
		"sudo swapon " + r.data + "/exe-expo.swap",
		"go build -o " + r.temp + "/exe-expo-bin/exe-expo ./cmd/exe-expo",
		"/py/bin/python3.11" + pip + cpu,
		"/py/bin/python3.11" + pip + "-r " + locks + "/export.cpu.txt",
		"/py/bin/python3.11" + pip + "--require-hashes --target " + overlay + " -r " + locks + "/overlay.txt",
		"/py/bin/python3.11 -c " + markComplete + " " + overlay + "/.complete python/overlay.lock",
		"/py/bin/python3.10 -m venv " + venv,
		venv + "/bin/python" + pip + cpu,
		venv + "/bin/python" + pip + "-r " + locks + "/mtk-py310.cpu.txt",
		venv + "/bin/python" + pip + wheels + "/" + neuronWheel + " " + wheels + "/" + convWheel,
	}, h.argv())
	assert.Equal(t, repoRoot(t), h.cmds[4].Dir, "exe-expo is built in the checkout")
	assert.DirExists(t, filepath.Join(work, "hf-home"))
	assert.Equal(t, int32(1), srv.requests.Load())
	assert.Equal(t, wheels, res.NeuroDir)
	assert.Equal(t, venv+"/bin/python", res.Python.ToolPython())
	require.Len(t, res.SDKs, 1)
	assert.Equal(t, SDKResult{SDK: SDK{Name: "NeuroPilot SDK", Version: "8.0.8-build20250925", SHA256: sha(archive), Cache: filepath.Dir(wheels)},
		Source: c.Versions.NeuroPilotSDKURL, Dir: wheels}, res.SDKs[0])

	sum := Summary(in, res)
	for _, want := range []string{
		"### setup-export: mediatek\n",
		"| host | 4 CPUs (AMD EPYC 7763), 16.0 GiB memory, 8.0 GiB swap |\n",
		"| file system " + r.data + " | 10.0 GiB free: work folder `" + work + "` |\n",
		"| swap file | 8 GiB at `" + r.data + "/exe-expo.swap` |\n",
		"| Python | `/py/bin/python3.11`: executorch==" + c.Versions.ExecuTorch + ", torch==" + c.Versions.Torch + " (CPU build), torchao==0.18.0, every other distribution as python/export.lock pins it, the transformers overlay as python/overlay.lock pins it |\n",
		"| tool venv | `" + venv + "/bin/python`: executorch==" + c.Versions.ExecuTorch + ", torch==" + c.Versions.Torch + " (CPU build), torchao==0.18.0, every other distribution as python/mtk-py310.lock pins it, mtk-neuron==8.2.23 (NeuroPilot SDK wheel), mtk_converter==8.13.0 (NeuroPilot SDK wheel) |\n",
		"| NeuroPilot SDK 8.0.8-build20250925 | downloaded, sha256 `" + sha(archive) + "` (" + c.Versions.NeuroPilotSDKURL + "), in `" + wheels + "` |\n",
	} {
		assert.Contains(t, sum, want)
	}

	// A second job restored from the cache: no request, and the summary says so.
	h2 := r.host(t)
	env2 := h2.env()
	env2.HTTP = srv.Client()
	res2, err := Prepare(context.Background(), c, Inputs{Backend: "mediatek", PythonEnv: true, SDK: true, WorkRoot: r.data}, env2, logger(&buf))
	require.NoError(t, err)
	assert.Equal(t, int32(1), srv.requests.Load(), "the cached SDK is not downloaded again")
	assert.True(t, res2.SDKs[0].Cached)
}

// TestPrepareQNN: QAIRT is staged by ExecuTorch's import after the environment that has
// ExecuTorch is installed.
func TestPrepareQNN(t *testing.T) {
	r := newRunner(t)
	h := r.host(t)
	lib := filepath.Join(QAIRTDir(r.home, "2.37.0.250724"), "lib", "x86_64-linux-clang", "libQnnHtp.so")
	h.effect = func(c Cmd) {
		if strings.Contains(strings.Join(c.Argv, " "), "import executorch.backends.qualcomm") {
			require.NoError(t, os.MkdirAll(filepath.Dir(lib), 0o755))
			require.NoError(t, os.WriteFile(lib, nil, 0o644))
		}
	}
	var buf bytes.Buffer
	in := Inputs{Backend: "qnn", PythonEnv: true, SDK: true, WorkRoot: r.data}
	res, err := Prepare(context.Background(), configFor(t, "qnn"), in, h.env(), logger(&buf))
	require.NoError(t, err, buf.String())
	got := h.argv()
	require.Len(t, got, 6)
	assert.Equal(t, "/py/bin/python3.11 -m pip install --progress-bar off --no-deps -r "+filepath.Join(r.data, "exe-expo-work", "python-locks", "export.cpu.txt"), got[2])
	assert.Contains(t, got[3], "--target "+res.Python.Overlay+" ", "the transformers overlay, into its own folder")
	lock, err := os.ReadFile(res.Python.OverlayLock)
	require.NoError(t, err)
	assert.Contains(t, string(lock), "transformers==5.2.0 \\\n    --hash=sha256:", "the committed lock, hashes and all")
	assert.Equal(t, "/py/bin/python3.11 -c import executorch.backends.qualcomm", got[5])
	assert.Equal(t, QAIRTDir(r.home, "2.37.0.250724"), res.QNNRoot)
	assert.Contains(t, Summary(in, res), "| QAIRT 2.37.0.250724 | downloaded, checked by ExecuTorch (ExecuTorch "+configFor(t, "qnn").Versions.ExecuTorch+"'s download from softwarecenter.qualcomm.com), in `"+res.QNNRoot+"` |\n")
}

func TestPrepareRefusals(t *testing.T) {
	for _, tc := range []struct {
		name    string
		backend string
		in      Inputs
		look    map[string]string
		err     string
	}{
		{"MediaTek venv without its SDK", "mediatek", Inputs{PythonEnv: true},
			nil, "input sdk is false, and the 3.10 tool venv python-env installs needs mtk-neuron 8.2.23 and mtk_converter 8.13.0 from the NeuroPilot SDK: set sdk to true, or python-env to false"},
		{"no python (act)", "xnnpack", Inputs{PythonEnv: true}, map[string]string{},
			"python3.11 (PYTHON_VERSION in config/versions.env) is not on PATH: setup-python installs it, except under act; set python-env to false when the job needs no Python"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := newRunner(t)
			h := r.host(t)
			if tc.look != nil {
				h.look = tc.look
			}
			tc.in.Backend, tc.in.WorkRoot = tc.backend, r.data
			_, err := Prepare(context.Background(), configFor(t, tc.backend), tc.in, h.env(), logger(&bytes.Buffer{}))
			assert.EqualError(t, err, tc.err)
		})
	}
}

// TestPrepareQAIRTWithoutPython: without the environment there is no ExecuTorch to fetch
// QAIRT; that is a warning, since a job may bring its own python.
func TestPrepareQAIRTWithoutPython(t *testing.T) {
	r := newRunner(t)
	h := r.host(t)
	var buf bytes.Buffer
	res, err := Prepare(context.Background(), configFor(t, "qnn"), Inputs{Backend: "qnn", SDK: true, WorkRoot: r.data}, h.env(), logger(&buf))
	require.NoError(t, err)
	assert.Equal(t, []string{"go build -o " + r.temp + "/exe-expo-bin/exe-expo ./cmd/exe-expo"}, h.argv())
	assert.Contains(t, buf.String(), "::warning::QAIRT 2.37.0.250724 is not staged: ExecuTorch's import fetches it, and python-env is false\n")
	assert.Empty(t, res.QNNRoot)
}

// TestBuildOncePerJob: a second setup in the same job finds exe-expo built.
func TestBuildOncePerJob(t *testing.T) {
	r := newRunner(t)
	require.NoError(t, os.MkdirAll(filepath.Join(r.temp, "exe-expo-bin"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(r.temp, "exe-expo-bin", "exe-expo"), nil, 0o755))
	h := r.host(t)
	_, err := Prepare(context.Background(), configFor(t, "xnnpack"), Inputs{Backend: "xnnpack", WorkRoot: r.data}, h.env(), logger(&bytes.Buffer{}))
	require.NoError(t, err)
	assert.Empty(t, h.cmds)
}

func TestRoot(t *testing.T) {
	repo := repoRoot(t)
	h := &fakeHost{vars: map[string]string{"GITHUB_ACTION_PATH": filepath.Join(repo, "actions", "setup-export")}}
	got, err := Root(h.env())
	require.NoError(t, err)
	assert.Equal(t, repo, got)

	h.vars = map[string]string{"EXE_EXPO_ROOT": t.TempDir()}
	_, err = Root(h.env())
	assert.EqualError(t, err, h.vars["EXE_EXPO_ROOT"]+" is not an exe-expo checkout: it has no cmd/exe-expo")

	h.vars = nil
	_, err = Root(h.env())
	assert.EqualError(t, err, "neither EXE_EXPO_ROOT nor GITHUB_ACTION_PATH is set: run setup-export as an action, or set EXE_EXPO_ROOT to the exe-expo checkout")
}

// TestPrepareUnderAct: nektos/act in host mode runs on the machine itself, which setup
// then leaves alone: no deletions, no swap.
func TestPrepareUnderAct(t *testing.T) {
	r := newRunner(t)
	h := r.host(t)
	h.vars["ACT"] = "true"
	h.globs = map[string][]string{"/usr/share/dotnet": {"/usr/share/dotnet"}}
	var buf bytes.Buffer
	in := Inputs{Backend: "xnnpack", SwapGiB: 16, FreeDisk: true, WorkRoot: r.data}
	res, err := Prepare(context.Background(), configFor(t, "xnnpack"), in, h.env(), logger(&buf))
	require.NoError(t, err)
	assert.Equal(t, []string{"go build -o " + r.temp + "/exe-expo-bin/exe-expo ./cmd/exe-expo"}, h.argv())
	assert.Nil(t, res.Freed)
	assert.False(t, res.Swap.Added)
	assert.Contains(t, buf.String(), "under act (ACT=true): the runner is this machine, so no disk is freed and no swap added\n")
	assert.Contains(t, Summary(in, res), "| disk and swap | under act (ACT=true): the runner is this machine, so no disk is freed and no swap added |\n")
}
