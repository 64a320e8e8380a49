package setup

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
)

// TestInstalls holds the pip command lines per backend: torch from the CPU index first,
// then the lock file, both without dependencies, then the transformers overlay by hash into
// its folder and its mark; MediaTek's tool venv gets them again from its own lock, then the
// SDK's two wheels.
func TestInstalls(t *testing.T) {
	cpu := "--index-url https://download.pytorch.org/whl/cpu torch==" + configFor(t, "xnnpack").Versions.Torch
	pip := "-m pip install --progress-bar off --no-deps"
	for _, tc := range []struct {
		backend string
		py      Python
		want    []string
	}{
		{"xnnpack", Python{Main: "/py/3.11/bin/python3.11", Lock: "/w/export.cpu.txt", Overlay: "/w/ov/transformers", OverlayLock: "/w/overlay.txt"}, []string{
			"/py/3.11/bin/python3.11 " + pip + " " + cpu,
			"/py/3.11/bin/python3.11 " + pip + " -r /w/export.cpu.txt",
			"/py/3.11/bin/python3.11 " + pip + " --require-hashes --target /w/ov/transformers -r /w/overlay.txt",
			"/py/3.11/bin/python3.11 -c " + markComplete + " /w/ov/transformers/.complete python/overlay.lock",
		}},
		{"qnn", Python{Main: "python3.11", Lock: "/w/export.cpu.txt"}, []string{
			"python3.11 " + pip + " " + cpu,
			"python3.11 " + pip + " -r /w/export.cpu.txt",
		}},
		{"mediatek", Python{Main: "python3.11", Lock: "/w/export.cpu.txt", ToolBase: "/py/3.10/bin/python3.10", ToolVenv: "/work/mtk-venv",
			ToolLock: "/w/mtk-py310.cpu.txt",
			Wheels:   []string{"/sdk/mtk_converter-8.13.0+public-cp310-cp310-manylinux_2_17_x86_64.whl", "/sdk/mtk_neuron-8.2.23-py3-none-linux_x86_64.whl"}}, []string{
			"python3.11 " + pip + " " + cpu,
			"python3.11 " + pip + " -r /w/export.cpu.txt",
			"/py/3.10/bin/python3.10 -m venv /work/mtk-venv",
			"/work/mtk-venv/bin/python " + pip + " " + cpu,
			"/work/mtk-venv/bin/python " + pip + " -r /w/mtk-py310.cpu.txt",
			"/work/mtk-venv/bin/python " + pip + " /sdk/mtk_converter-8.13.0+public-cp310-cp310-manylinux_2_17_x86_64.whl /sdk/mtk_neuron-8.2.23-py3-none-linux_x86_64.whl",
		}},
	} {
		t.Run(tc.backend, func(t *testing.T) {
			var got []string
			for _, c := range Installs(configFor(t, tc.backend), tc.py) {
				got = append(got, strings.Join(c.Argv, " "))
			}
			assert.Equal(t, tc.want, got)
		})
	}
}

func TestPythonVersions(t *testing.T) {
	assert.Equal(t, []string{"3.11"}, PythonVersions(configFor(t, "xnnpack")))
	assert.Equal(t, []string{"3.11"}, PythonVersions(configFor(t, "qnn")))
	assert.Equal(t, []string{"3.10", "3.11"}, PythonVersions(configFor(t, "mediatek")), "the default python last")
}

func TestSDKWheels(t *testing.T) {
	assert.Equal(t, []Wheel{{"mtk-neuron", "8.2.23"}, {"mtk_converter", "8.13.0"}}, SDKWheels(configFor(t, "mediatek")))
	assert.Empty(t, SDKWheels(configFor(t, "qnn")))
}

// TestWheelMatches: a wheel is the pinned version exactly (8.2.2 is not 8.2.23), for the
// tool venv's python or any python 3.
func TestWheelMatches(t *testing.T) {
	conv := Wheel{"mtk_converter", "8.13.0"}
	neuron := Wheel{"mtk-neuron", "8.2.23"}
	for _, tc := range []struct {
		w    Wheel
		file string
		want bool
	}{
		{conv, "mtk_converter-8.13.0+public-cp310-cp310-manylinux_2_17_x86_64.manylinux2014_x86_64.whl", true},
		{conv, "mtk_converter-8.13.0+public-cp311-cp311-manylinux_2_17_x86_64.manylinux2014_x86_64.whl", false},
		{conv, "mtk_converter-8.13.01-cp310-cp310-linux_x86_64.whl", false},
		{conv, "mtk_converter-8.13.0+public-cp310-cp310-manylinux_2_17_x86_64.whl.sha256", false},
		{neuron, "mtk_neuron-8.2.23-py3-none-linux_x86_64.whl", true},
		{neuron, "mtk_neuron-8.2.2-py3-none-linux_x86_64.whl", false},
		{Wheel{"mtk-neuron", "8.2.2"}, "mtk_neuron-8.2.23-py3-none-linux_x86_64.whl", false},
		{neuron, "mtk-neuron-8.2.23-py3-none-linux_x86_64.whl", false},
	} {
		assert.Equal(t, tc.want, tc.w.matches(tc.file, "3.10"), "%s %s", tc.w, tc.file)
	}
}
