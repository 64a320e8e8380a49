package setup

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/experimentalmachines/exe-expo/internal/backend"
	"github.com/experimentalmachines/exe-expo/internal/family"
)

// TestLocks: both committed lock files pin ExecuTorch, torch and torchao at versions.env's
// pins, and each backend's distributions are in the lock of the python its tool runs in.
func TestLocks(t *testing.T) {
	for _, b := range backend.Exportable() {
		c := configFor(t, b.Name)
		py := c.Versions.Python
		if c.Tools.MTKPython {
			py = c.Versions.MTKPython
		}
		l, err := LockFor(py)
		require.NoError(t, err)
		assert.NoError(t, checkPins(l, c))
		for _, d := range append(extras(c), "transformers", "tokenizers", "safetensors") {
			_, ok := l.Version(d)
			assert.True(t, ok, "%s pins no %s, which %s's tool needs", l.Name, d, b.Name)
		}
	}
	_, err := LockFor("3.12")
	assert.ErrorContains(t, err, "no lock file for python 3.12")
}

// TestMTKLockTransformers4: examples/mediatek's tokenizer loading needs transformers 4
// (it imports SpecialTokensMixin, which 5 removed), with huggingface_hub 0.x.
func TestMTKLockTransformers4(t *testing.T) {
	l, err := LoadLock(ToolLockFile)
	require.NoError(t, err)
	v, _ := l.Version("transformers")
	assert.Regexp(t, `^4\.`, v)
	v, _ = l.Version("huggingface-hub")
	assert.Regexp(t, `^0\.`, v)
}

// TestLockCPU: the CPU variant leaves out exactly the CUDA libraries of PyPI's torch wheel.
func TestLockCPU(t *testing.T) {
	l, err := LoadLock(LockFile)
	require.NoError(t, err)
	cpu := l.CPU()
	var dropped []string
	for _, p := range l.Pins {
		if _, ok := cpu.Version(p.Dist); !ok {
			dropped = append(dropped, p.Dist)
		}
	}
	assert.Contains(t, dropped, "triton")
	assert.Contains(t, dropped, "nvidia-cublas")
	for _, d := range dropped {
		assert.Regexp(t, `^(nvidia-|cuda-|triton$)`, d)
	}
	v, ok := cpu.Version("torch")
	assert.True(t, ok)
	pins := configFor(t, "xnnpack").Versions
	assert.Equal(t, pins.Torch, v)
	assert.Contains(t, string(cpu.Requirements()), "\nexecutorch=="+pins.ExecuTorch+"\n")
}

func TestParseLock(t *testing.T) {
	for _, tc := range []struct{ name, text, err string }{
		{"ok", "# header\na==1.0\n    # via b\nB_c.d==2.0rc1  # comment\n", ""},
		{"unpinned", "a==1.0\ntransformers\n", `lock.txt:2: "transformers" is not an exact pin`},
		{"range", "a>=1.0\n", `"a>=1.0" is not an exact pin`},
		{"marker", "a==1.0; python_version<'3.12'\n", "is not an exact pin"},
		{"url", "a @ https://x/a.whl\n", "is not an exact pin"},
		{"empty", "# nothing\n", "lock.txt pins nothing"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			l, err := ParseLock("lock.txt", []byte(tc.text))
			if tc.err != "" {
				assert.ErrorContains(t, err, tc.err)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, []Pin{{"a", "1.0"}, {"B_c.d", "2.0rc1"}}, l.Pins)
		})
	}
}

// TestWriteLockRefusesDrift: a lock that disagrees with versions.env is refused by name.
func TestWriteLockRefusesDrift(t *testing.T) {
	c := configFor(t, "xnnpack")
	locked := c.Versions.Torch
	c.Versions.Torch = "2.99.0"
	_, err := writeLock(c, "3.11", t.TempDir())
	assert.ErrorContains(t, err, `export.lock pins torch "`+locked+`", and config/versions.env says 2.99.0: run python/lock.sh`)
}

// TestLockPinsOptimum: the export lock pins the optimum-executorch release the Gemma 3 and
// SmolLM3 files' descriptions name (family.OptimumVersion), with the optimum it asks for.
func TestLockPinsOptimum(t *testing.T) {
	l, err := LoadLock(LockFile)
	require.NoError(t, err)
	v, ok := l.Version("optimum-executorch")
	require.True(t, ok, "%s pins no optimum-executorch", LockFile)
	assert.Equal(t, family.OptimumVersion, v)
	v, _ = l.Version("optimum")
	assert.Regexp(t, `^2\.0\.`, v, "optimum-executorch 1.1.0 asks optimum~=2.0.0")
	v, _ = l.Version("transformers")
	assert.Equal(t, "5.0.0rc1", v, "optimum-executorch 1.1.0 pins transformers==5.0.0rc1")
}
