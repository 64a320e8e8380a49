package config

import (
	"bufio"
	"bytes"
	"fmt"
	"regexp"
	"sort"
	"strings"
)

type versionKey struct {
	field   func(*Versions) *string
	pattern *regexp.Regexp
	what    string
}

var (
	semver    = regexp.MustCompile(`^\d+\.\d+(\.\d+)*$`)
	hex40     = regexp.MustCompile(`^[0-9a-f]{40}$`)
	hex64     = regexp.MustCompile(`^[0-9a-f]{64}$`)
	httpsURL  = regexp.MustCompile(`^https://[^\s]+$`)
	sdkBuild  = regexp.MustCompile(`^\d+\.\d+\.\d+-build\d{8}$`)
	versionKV = map[string]versionKey{
		"EXECUTORCH_VERSION":    {func(v *Versions) *string { return &v.ExecuTorch }, semver, "a version such as 1.2.3"},
		"EXECUTORCH_COMMIT":     {func(v *Versions) *string { return &v.ExecuTorchCommit }, hex40, "a full 40-hex commit"},
		"PYTHON_VERSION":        {func(v *Versions) *string { return &v.Python }, semver, "a version such as 3.11"},
		"TORCH_VERSION":         {func(v *Versions) *string { return &v.Torch }, semver, "a version such as 2.14.0"},
		"TORCHAO_VERSION":       {func(v *Versions) *string { return &v.TorchAO }, semver, "a version such as 0.18.0"},
		"QAIRT_VERSION":         {func(v *Versions) *string { return &v.QAIRT }, semver, "a version such as 2.37.0.250724"},
		"NEUROPILOT_SDK_URL":    {func(v *Versions) *string { return &v.NeuroPilotSDKURL }, httpsURL, "an https URL"},
		"NEUROPILOT_SDK_SHA256": {func(v *Versions) *string { return &v.NeuroPilotSDKSHA256 }, hex64, "64 lower-case hex digits"},
		"NEUROPILOT_SDK_BUILD":  {func(v *Versions) *string { return &v.NeuroPilotSDKBuild }, sdkBuild, "a build such as 8.0.8-build20250925"},
		"MTK_CONVERTER_VERSION": {func(v *Versions) *string { return &v.MTKConverter }, semver, "a version"},
		"MTK_NEURON_VERSION":    {func(v *Versions) *string { return &v.MTKNeuron }, semver, "a version"},
		"MTK_PYTHON_VERSION":    {func(v *Versions) *string { return &v.MTKPython }, semver, "a version such as 3.10"},
	}
)

// ParseVersions reads KEY=VALUE lines; blank lines and # comments are skipped. Every key is
// required once and must look like what it pins.
func ParseVersions(name string, data []byte) (Versions, error) {
	var v Versions
	seen := map[string]int{}
	sc := bufio.NewScanner(bytes.NewReader(data))
	for line := 1; sc.Scan(); line++ {
		text := strings.TrimSpace(sc.Text())
		if text == "" || strings.HasPrefix(text, "#") {
			continue
		}
		key, val, ok := strings.Cut(text, "=")
		if !ok {
			return v, fmt.Errorf("%s:%d: %q is not KEY=VALUE", name, line, text)
		}
		key, val = strings.TrimSpace(key), strings.TrimSpace(val)
		k, known := versionKV[key]
		if !known {
			return v, fmt.Errorf("%s:%d: unknown key %s", name, line, key)
		}
		if prev, dup := seen[key]; dup {
			return v, fmt.Errorf("%s:%d: %s is set again (first on line %d)", name, line, key, prev)
		}
		if !k.pattern.MatchString(val) {
			return v, fmt.Errorf("%s:%d: %s=%q is not %s", name, line, key, val, k.what)
		}
		seen[key] = line
		*k.field(&v) = val
	}
	if err := sc.Err(); err != nil {
		return v, fmt.Errorf("read %s: %w", name, err)
	}
	keys := make([]string, 0, len(versionKV))
	for key := range versionKV {
		keys = append(keys, key)
	}
	sort.Strings(keys)
	for _, key := range keys {
		if _, ok := seen[key]; !ok {
			return v, fmt.Errorf("%s: %s is missing", name, key)
		}
	}
	return v, nil
}
