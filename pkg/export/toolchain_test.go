package export

import (
	"context"
	"os"
	"os/exec"
	"testing"
)

// TestVersionProbe runs the probe in a real python: installed distributions come back with
// their versions, missing ones are left out.
func TestVersionProbe(t *testing.T) {
	py, err := exec.LookPath("python3")
	if err != nil {
		if os.Getenv("EXE_EXPO_CI") == "1" {
			t.Fatal("python3 is missing")
		}
		t.Skip("no python3")
	}
	got, err := toolchain(context.Background(), py, "pip", "no-such-distribution-exe-expo")
	if err != nil {
		t.Fatal(err)
	}
	if got["pip"] == "" {
		t.Errorf("pip's version missing: %v", got)
	}
	if _, ok := got["no-such-distribution-exe-expo"]; ok {
		t.Errorf("a missing distribution has a version: %v", got)
	}
}
