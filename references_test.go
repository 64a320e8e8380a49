package exeexpo

import (
	"bufio"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

var (
	// docPath is a repository path to a document or a research note, cited in prose or code.
	docPath = regexp.MustCompile(`\bdocs/[A-Za-z0-9_./-]+\.md\b`)
	// mdLink is a relative Markdown link to another file.
	mdLink = regexp.MustCompile(`\]\(([A-Za-z0-9_./-]+\.(?:md|go|py|yaml|txt|json))(?:#[^)]*)?\)`)
	// outside marks a line that cites a file of another repository on purpose.
	outside = regexp.MustCompile(`ExperimentalMachines/(?:execupack|openweights|execuserve)|that repository|pytorch/executorch`)
	// notHeld are paths of files that exist only outside the repository.
	notHeld = regexp.MustCompile(`/work/shared|\.\./shared|reference-system\.md|protocols\.md|section \d+\.\d+\b`)
)

// TestEveryReferenceOpens: every docs/... path and relative Markdown link in the tracked
// files names a file the repository holds, and nothing cites a file outside it (the specs a
// session was given), so a reader of the repository can open every reference.
func TestEveryReferenceOpens(t *testing.T) {
	out, err := exec.Command("git", "ls-files").Output()
	if err != nil {
		t.Skipf("not a git checkout: %v", err)
	}
	var files []string
	for _, f := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		if strings.Contains(f, "/testdata/") {
			continue // goldens and fixtures: cards of Hub repos, whose links are the repos'
		}
		switch filepath.Ext(f) {
		case ".go", ".md", ".py", ".yaml", ".yml", ".tmpl", ".sh":
			files = append(files, f)
		}
	}
	require.NotEmpty(t, files)
	for _, f := range files {
		fh, err := os.Open(f)
		require.NoError(t, err)
		sc := bufio.NewScanner(fh)
		sc.Buffer(make([]byte, 1<<20), 1<<20)
		for n := 1; sc.Scan(); n++ {
			line := sc.Text()
			if f == "references_test.go" {
				continue
			}
			if m := notHeld.FindString(line); m != "" && !outside.MatchString(line) {
				t.Errorf("%s:%d cites %q, which the repository does not hold", f, n, m)
			}
			if outside.MatchString(line) {
				continue
			}
			for _, p := range docPath.FindAllString(line, -1) {
				_, err := os.Stat(p)
				assert.NoError(t, err, "%s:%d cites %s", f, n, p)
			}
			if filepath.Ext(f) == ".md" {
				for _, m := range mdLink.FindAllStringSubmatch(line, -1) {
					_, err := os.Stat(filepath.Join(filepath.Dir(f), m[1]))
					assert.NoError(t, err, "%s:%d links %s", f, n, m[1])
				}
			}
		}
		require.NoError(t, sc.Err())
		fh.Close()
	}
}
