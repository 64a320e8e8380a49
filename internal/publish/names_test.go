package publish

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/experimentalmachines/exe-expo/internal/model"
)

// TestLoadRefusesBadOutputRepo: the output repo, from --repo or from the report (a file
// anyone could have edited), is a Hub repo id before anything is sent.
func TestLoadRefusesBadOutputRepo(t *testing.T) {
	long := "experimentalmachines/" + strings.Repeat("SmolLM2-360M-", 7) + "ExecuTorch"
	for _, repo := range []string{"../X", "a/b?c", "a%2fb/c", "a/b/c", "-a/b", "a/b.", "a/b--c", long, "org/SmolLM2-360M-ü"} {
		for _, from := range []string{"flag", "report"} {
			t.Run(from+" "+repo, func(t *testing.T) {
				dir := t.TempDir()
				rp := writeWindow(t, dir, win{backend: "xnnpack", window: 4096, seed: 1})
				flag := repo
				if from == "report" {
					editReport(t, rp, func(r map[string]any) { r["output_repo"] = repo })
					flag = ""
				}
				_, err := Load(dir, rp, flag)
				require.Error(t, err)
				assert.Equal(t, "report "+rp+`: output repo "`+repo+`" is not a Hub repo id (`+model.IDRule+")", err.Error())
			})
		}
	}
}
