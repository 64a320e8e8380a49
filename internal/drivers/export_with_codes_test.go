package drivers

import (
	"path/filepath"
	"strings"
	"testing"
)

// TestExportWithCodes checks the pure parts of export_with_codes.py with torch (ExecuTorch
// itself cannot run here): codes land in both int4 layouts torchao produces, bad codes are
// refused with the linear's name, and the LFM2 state reads as zeros at input_pos 0 only.
func TestExportWithCodes(t *testing.T) {
	py := torchPython(t)
	var r struct {
		Done         []string          `json:"done"`
		Left         []string          `json:"left"`
		WQEqual      bool              `json:"wq_equal"`
		W1Equal      bool              `json:"w1_equal"`
		ScaleEqual   bool              `json:"scale_equal"`
		ZerosZeroed  bool              `json:"zeros_zeroed"`
		Refusals     map[string]string `json:"refusals"`
		ResetAtZero  bool              `json:"reset_at_zero"`
		StateUsedLat bool              `json:"state_used_later"`
	}
	pyJSON(t, py, &r, filepath.Join("testdata", "export_with_codes_check.py"))
	if strings.Join(r.Done, ",") != "layers.0.w1,layers.0.wq" || strings.Join(r.Left, ",") != "output" {
		t.Errorf("injected %v, left %v", r.Done, r.Left)
	}
	if !r.WQEqual || !r.W1Equal || !r.ScaleEqual || !r.ZerosZeroed {
		t.Errorf("injection: %+v", r)
	}
	for name, want := range map[string]string{"shape": "do not fit", "range": "outside -8..7", "scale": "not positive", "unknown": "layers.9.wq"} {
		if got := r.Refusals[name]; !strings.Contains(got, want) {
			t.Errorf("refusal %s = %q, want %q", name, got, want)
		}
	}
	if !r.ResetAtZero || !r.StateUsedLat {
		t.Errorf("LFM2 state fix: reset at 0 %v, state used later %v", r.ResetAtZero, r.StateUsedLat)
	}
}
