package setup

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	exeexpo "github.com/experimentalmachines/exe-expo"
	"github.com/experimentalmachines/exe-expo/internal/fileutil"
	"github.com/experimentalmachines/exe-expo/internal/run"
)

// SDK is one vendor SDK a backend needs.
type SDK struct {
	// Name and Version are how the summary and THIRD_PARTY_NOTICES.md name it.
	Name, Version string
	// SHA256 is the pinned digest, empty for QAIRT (ExecuTorch checks its own download).
	SHA256 string
	// Cache is the folder the actions cache keeps between jobs.
	Cache string
}

// SDKs are the vendor SDKs c's tools need: NeuroPilot when its tool venv takes pinned
// wheels (which come only from the SDK), QAIRT when its toolchain records a qairt version.
func SDKs(c Config, home string) []SDK {
	var out []SDK
	if v := qairtVersion(c); v != "" {
		out = append(out, qairtSDK(home, v))
	}
	if len(SDKWheels(c)) > 0 {
		out = append(out, neuroPilotSDK(c, home))
	}
	return out
}

// qairtVersion is the QAIRT release the backend's toolchain records, "" when it uses none.
func qairtVersion(c Config) string {
	if c.Tools.Versions == nil {
		return ""
	}
	return c.Tools.Versions(c.Versions)["qairt"]
}

func qairtSDK(home, version string) SDK {
	return SDK{Name: "QAIRT", Version: version, Cache: filepath.Dir(QAIRTDir(home, version))}
}

func neuroPilotSDK(c Config, home string) SDK {
	v := c.Versions
	return SDK{Name: "NeuroPilot SDK", Version: v.NeuroPilotSDKBuild, SHA256: v.NeuroPilotSDKSHA256, Cache: SDKCache(home)}
}

// SDKCache is the folder the NeuroPilot SDK is downloaded and unpacked into.
func SDKCache(home string) string { return filepath.Join(home, ".cache", "exe-expo", "sdk") }

func neuroPilot(c Config, home string) (Download, string) {
	v := c.Versions
	base := "neuropilot-" + v.NeuroPilotSDKBuild
	return Download{Name: "NeuroPilot SDK " + v.NeuroPilotSDKBuild, URL: v.NeuroPilotSDKURL, SHA256: v.NeuroPilotSDKSHA256,
		Path: filepath.Join(SDKCache(home), base+".tar.gz")}, filepath.Join(SDKCache(home), base)
}

// Plan is what the steps before the main one need: which interpreters setup-python
// installs, and what the actions cache keeps.
type Plan struct {
	PythonVersions []string
	// CachePaths is empty when the backend needs no SDK (or sdk is false).
	CachePaths []string
	CacheKey   string
}

// PlanFor is the plan for the inputs.
func PlanFor(c Config, in Inputs, env Env) Plan {
	p := Plan{PythonVersions: PythonVersions(c)}
	if !in.SDK {
		return p
	}
	key := []string{"exe-expo-sdk", env.Getenv("RUNNER_OS"), env.Getenv("RUNNER_ARCH")}
	for _, s := range SDKs(c, env.Getenv("HOME")) {
		p.CachePaths = append(p.CachePaths, s.Cache)
		id := s.Version
		if s.SHA256 != "" {
			id = s.SHA256[:16]
		}
		key = append(key, strings.ToLower(strings.ReplaceAll(s.Name, " ", "-"))+"-"+id)
	}
	if len(p.CachePaths) > 0 {
		p.CacheKey = strings.Join(key, "-")
	}
	return p
}

// Result is what Prepare did, for the outputs and the step summary.
type Result struct {
	Host run.HostFacts
	// Places are the file systems weighed, Work the one holding WorkDir and HFHome.
	Places          []Place
	Work            Place
	WorkDir, HFHome string
	// Freed is nil when free-disk was false.
	Freed *Freed
	Swap  Swap
	// Bin is the folder of the built exe-expo.
	Bin    string
	Python Python
	// Installed and ToolInstalled are the requirements of the main python and the tool venv.
	Installed, ToolInstalled []string
	SDKs                     []SDKResult
	// QNNRoot is where QAIRT is staged, NeuroDir where the NeuroPilot wheels are.
	QNNRoot, NeuroDir string
	// Untouched says why disk and swap were left as they were.
	Untouched string
}

// SDKResult is one SDK as setup found it: where it came from, whether the actions cache
// already held it, and the folder it is in.
type SDKResult struct {
	SDK
	Source string
	Cached bool
	Dir    string
}

// Prepare does everything the inputs ask, in the order that makes each step's space and
// tools available to the next: free disk, then pick the work place, swap, build
// exe-expo, fetch the NeuroPilot SDK (its wheels go into the venv), install Python, and
// last have ExecuTorch stage QAIRT (it needs the installed ExecuTorch).
func Prepare(ctx context.Context, c Config, in Inputs, env Env, log Logger) (*Result, error) {
	res := &Result{}
	if act := env.Getenv("ACT"); act != "" && (in.FreeDisk || in.SwapGiB > 0) {
		// nektos/act in host mode runs the steps on the machine itself: deleting its
		// toolchains or adding swap to it is not what a test run asks for.
		res.Untouched = "under act (ACT=" + act + "): the runner is this machine, so no disk is freed and no swap added"
		log.Infof("%s", res.Untouched)
		in.FreeDisk, in.SwapGiB = false, 0
	}
	if in.FreeDisk {
		log.Group("Free disk")
		f := FreeDisk(ctx, env, log)
		res.Freed = &f
		log.EndGroup()
	}
	if err := res.place(ctx, in, env, log); err != nil {
		return res, err
	}
	host, err := env.Host(res.WorkDir)
	if err != nil {
		return res, err
	}
	res.Host = host
	log.Infof("host: %d CPUs (%s), %s memory, %s swap, %s free in %s", host.NProc, host.CPUModel,
		human(host.MemTotalBytes), human(host.SwapTotalBytes), human(host.DiskFreeBytes), res.WorkDir)
	if err := res.build(ctx, env, log); err != nil {
		return res, err
	}
	if err := res.sdksAndPython(ctx, c, in, env, log); err != nil {
		return res, err
	}
	return res, nil
}

// place picks the work place, creates the work folder and adds swap.
func (r *Result) place(ctx context.Context, in Inputs, env Env, log Logger) error {
	places, err := Candidates(env, in.WorkRoot)
	if err != nil {
		return err
	}
	r.Places = places
	r.Work = WorkPlace(places)
	r.WorkDir, r.HFHome = WorkDirs(r.Work)
	log.Infof("work folder: %s (%s free there)", r.WorkDir, human(r.Work.Free))
	if err := MakeWorkDir(ctx, env, log, r.WorkDir); err != nil {
		return err
	}
	if err := os.MkdirAll(r.HFHome, 0o755); err != nil {
		return fileutil.Error("create the Hugging Face cache", r.HFHome, err)
	}
	swap := SwapPlace(places, r.Work, in.SwapGiB)
	r.Swap = AddSwap(ctx, env, log, filepath.Join(swap.Mount, "exe-expo.swap"), in.SwapGiB)
	return nil
}

// Root is the exe-expo checkout the action runs from: EXE_EXPO_ROOT (the root action sets
// it), else two folders above the action's own.
func Root(env Env) (string, error) {
	root := env.Getenv("EXE_EXPO_ROOT")
	if root == "" {
		ap := env.Getenv("GITHUB_ACTION_PATH")
		if ap == "" {
			return "", fmt.Errorf("neither EXE_EXPO_ROOT nor GITHUB_ACTION_PATH is set: run setup-export as an action, or set EXE_EXPO_ROOT to the exe-expo checkout")
		}
		root = filepath.Join(ap, "..", "..")
	}
	if _, err := os.Stat(filepath.Join(root, "cmd", "exe-expo")); err != nil {
		return "", fmt.Errorf("%s is not an exe-expo checkout: it has no cmd/exe-expo", root)
	}
	return filepath.Clean(root), nil
}

// build builds exe-expo once per job into $RUNNER_TEMP/exe-expo-bin.
func (r *Result) build(ctx context.Context, env Env, log Logger) error {
	root, err := Root(env)
	if err != nil {
		return err
	}
	r.Bin = filepath.Join(runnerTemp(env), "exe-expo-bin")
	exe := filepath.Join(r.Bin, "exe-expo")
	if _, err := os.Stat(exe); err == nil {
		log.Infof("exe-expo: %s is built already in this job", exe)
		return nil
	}
	c := Cmd{Argv: []string{"go", "build", "-o", exe, "./cmd/exe-expo"}, Dir: root}
	log.Infof("$ %s", c)
	if err := env.Run(ctx, c); err != nil {
		return fmt.Errorf("building exe-expo from %s failed: %w", root, err)
	}
	return nil
}

// sdksAndPython fetches the SDKs and installs the Python environment.
func (r *Result) sdksAndPython(ctx context.Context, c Config, in Inputs, env Env, log Logger) error {
	home := env.Getenv("HOME")
	wheels := SDKWheels(c)
	if len(wheels) > 0 && in.PythonEnv && !in.SDK {
		return fmt.Errorf("input sdk is false, and the %s tool venv python-env installs needs %s from the NeuroPilot SDK: set sdk to true, or python-env to false", c.Versions.MTKPython, joinWheels(wheels))
	}
	var files []string
	if in.SDK && len(wheels) > 0 {
		log.Group("NeuroPilot SDK")
		d, dir := neuroPilot(c, home)
		cached, err := Fetch(ctx, env.HTTP, d, log)
		if err == nil {
			files, err = ExtractWheels(d.Path, dir, c.Versions.MTKPython, wheels)
		}
		log.EndGroup()
		if err != nil {
			return err
		}
		r.SDKs = append(r.SDKs, SDKResult{SDK: neuroPilotSDK(c, home), Source: d.URL, Cached: cached, Dir: dir})
		r.NeuroDir = dir
	}
	if in.PythonEnv {
		if err := r.installPython(ctx, c, env, log, files); err != nil {
			return err
		}
	}
	if v := qairtVersion(c); v != "" && in.SDK {
		return r.qairt(ctx, c, in, env, log, home, v)
	}
	return nil
}

// qairt has ExecuTorch stage QAIRT with the python just installed.
func (r *Result) qairt(ctx context.Context, c Config, in Inputs, env Env, log Logger, home, version string) error {
	if !in.PythonEnv {
		log.Warningf("QAIRT %s is not staged: ExecuTorch's import fetches it, and python-env is false", version)
		return nil
	}
	log.Group("QAIRT " + version)
	root, cached, err := StageQAIRT(ctx, env, log, r.Python.Main, home, version)
	log.EndGroup()
	if err != nil {
		return err
	}
	r.QNNRoot = root
	r.SDKs = append(r.SDKs, SDKResult{SDK: qairtSDK(home, version), Source: "ExecuTorch " + c.Versions.ExecuTorch + "'s download from softwarecenter.qualcomm.com", Cached: cached, Dir: root})
	return nil
}

func joinWheels(ws []Wheel) string {
	s := make([]string, len(ws))
	for i, w := range ws {
		s[i] = w.String()
	}
	return strings.Join(s, " and ")
}

// installPython finds the interpreters setup-python put on PATH and runs Installs.
func (r *Result) installPython(ctx context.Context, c Config, env Env, log Logger, wheels []string) error {
	var py Python
	var err error
	if py.Main, err = interpreter(env, c.Versions.Python, "PYTHON_VERSION"); err != nil {
		return err
	}
	if py.Lock, err = writeLock(c, c.Versions.Python, r.WorkDir); err != nil {
		return err
	}
	if py.OverlayLock, err = writeOverlayLock(r.WorkDir); err != nil {
		return err
	}
	py.Overlay = filepath.Join(r.WorkDir, "python-overlay", "transformers")
	if c.Tools.MTKPython {
		if py.ToolBase, err = interpreter(env, c.Versions.MTKPython, "MTK_PYTHON_VERSION"); err != nil {
			return err
		}
		if py.ToolLock, err = writeLock(c, c.Versions.MTKPython, r.WorkDir); err != nil {
			return err
		}
		py.ToolVenv = filepath.Join(r.WorkDir, "mtk-venv")
		py.Wheels = wheels
	}
	log.Group("Python environment")
	defer log.EndGroup()
	for _, cmd := range Installs(c, py) {
		log.Infof("$ %s", cmd)
		if err := env.Run(ctx, cmd); err != nil {
			return fmt.Errorf("installing the pinned Python environment failed: %w", err)
		}
	}
	r.Python = py
	r.Installed, r.ToolInstalled = Requirements(c)
	if r.ToolInstalled != nil {
		for _, w := range SDKWheels(c) {
			r.ToolInstalled = append(r.ToolInstalled, w.Dist+"=="+w.Version+" (NeuroPilot SDK wheel)")
		}
	}
	return nil
}

// writeLock writes the embedded lock of python (X.Y) without its CUDA libraries into
// work/python-locks, after checking it against versions.env.
func writeLock(c Config, python, work string) (string, error) {
	l, err := LockFor(python)
	if err != nil {
		return "", err
	}
	if err := checkPins(l, c); err != nil {
		return "", err
	}
	dir := filepath.Join(work, "python-locks")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", fmt.Errorf("make %s: %w", dir, err)
	}
	path := filepath.Join(dir, strings.TrimSuffix(l.Name, ".lock")+".cpu.txt")
	if err := os.WriteFile(path, l.CPU().Requirements(), 0o644); err != nil {
		return "", fmt.Errorf("write %s: %w", path, err)
	}
	return path, nil
}

// writeOverlayLock writes the embedded overlay lock, as committed (its hashes are what pip
// checks), into work/python-locks.
func writeOverlayLock(work string) (string, error) {
	b, err := exeexpo.PythonFS.ReadFile(OverlayLockFile)
	if err != nil {
		return "", fmt.Errorf("embedded overlay lock: %w", err)
	}
	dir := filepath.Join(work, "python-locks")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", fmt.Errorf("make %s: %w", dir, err)
	}
	path := filepath.Join(dir, "overlay.txt")
	if err := os.WriteFile(path, b, 0o644); err != nil {
		return "", fmt.Errorf("write %s: %w", path, err)
	}
	return path, nil
}

// interpreter finds pythonX.Y on PATH.
func interpreter(env Env, version, key string) (string, error) {
	name := "python" + version
	p, err := env.LookPath(name)
	if err != nil {
		return "", fmt.Errorf("%s (%s in config/versions.env) is not on PATH: setup-python installs it, except under act; set python-env to false when the job needs no Python", name, key)
	}
	return p, nil
}
