package hub_test

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"

	"github.com/experimentalmachines/exe-expo/pkg/hub/hubtest"
)

// benchServer is a hubtest server in its own process (this test binary re-executed as
// TestHelperServer), so that neither client competes with it for a Go runtime or counts
// its memory. It listens on loopback, prints its URL, then answers "info REPO PATH" lines
// on stdin with where and how the file is stored; it exits when stdin closes.
type benchServer struct {
	URL    string
	cmd    *exec.Cmd
	in     io.WriteCloser
	out    *bufio.Reader
	stderr bytes.Buffer
}

// startServer starts a server process keeping its files under dir; seed, when not empty,
// is "org/name=folder", committed before the URL is printed.
func startServer(b *testing.B, dir, seed string) *benchServer {
	s := &benchServer{cmd: exec.Command(os.Args[0], "-test.run=^TestHelperServer$")}
	s.cmd.Env = append(os.Environ(), "EXE_EXPO_HUB_HELPER=1", "HELPER_DIR="+dir, "HELPER_SEED="+seed)
	s.cmd.Stderr = &s.stderr
	var err error
	if s.in, err = s.cmd.StdinPipe(); err != nil {
		b.Fatal(err)
	}
	out, err := s.cmd.StdoutPipe()
	if err != nil {
		b.Fatal(err)
	}
	s.out = bufio.NewReader(out)
	if err := s.cmd.Start(); err != nil {
		b.Fatal(err)
	}
	line, err := s.out.ReadString('\n')
	url, ok := strings.CutPrefix(strings.TrimSpace(line), "url=")
	if err != nil || !ok {
		_ = s.in.Close()
		_ = s.cmd.Wait()
		b.Fatalf("hub server process printed %q, not its URL (%v):\n%s", line, err, s.stderr.String())
	}
	s.URL = url
	return s
}

// fileInfo asks the server process where repo's file at main is stored, as
// hubtest.Server.FileInfo.
func (s *benchServer) fileInfo(repo, path string) (disk string, size int64, lfs bool, err error) {
	if _, err := fmt.Fprintf(s.in, "info %s %s\n", repo, path); err != nil {
		return "", 0, false, err
	}
	line, err := s.out.ReadString('\n')
	if err != nil {
		return "", 0, false, fmt.Errorf("hub server process: %v\n%s", err, s.stderr.String())
	}
	f := strings.Fields(line)
	if len(f) != 4 || f[0] != "info" {
		return "", 0, false, fmt.Errorf("hub server process: %s", strings.TrimSpace(line))
	}
	size, _ = strconv.ParseInt(f[2], 10, 64)
	return f[1], size, f[3] == "true", nil
}

// stop closes the server's stdin and waits for it to exit.
func (s *benchServer) stop(b *testing.B) {
	_ = s.in.Close()
	if err := s.cmd.Wait(); err != nil {
		b.Fatalf("hub server process: %v\n%s", err, s.stderr.String())
	}
}

// TestHelperServer is a child process of BenchmarkHubClients: the hub server (see
// benchServer).
func TestHelperServer(t *testing.T) {
	if os.Getenv("EXE_EXPO_HUB_HELPER") != "1" {
		t.Skip("child process of BenchmarkHubClients")
	}
	srv, err := hubtest.NewServer(os.Getenv("HELPER_DIR"))
	if err != nil {
		t.Fatal(err)
	}
	srv.ChunkSize = 16 << 20
	if seed := os.Getenv("HELPER_SEED"); seed != "" {
		id, dir, _ := strings.Cut(seed, "=")
		if _, err := srv.AddModelDir(id, dir); err != nil {
			t.Fatal(err)
		}
	}
	fmt.Printf("url=%s\n", srv.URL)
	in := bufio.NewScanner(os.Stdin)
	for in.Scan() {
		f := strings.Fields(in.Text())
		if len(f) != 3 || f[0] != "info" {
			fmt.Printf("err unknown command %q\n", in.Text())
			continue
		}
		disk, size, lfs, err := srv.FileInfo(f[1], "main", f[2])
		if err != nil {
			fmt.Printf("err %v\n", err)
			continue
		}
		fmt.Printf("info %s %d %v\n", disk, size, lfs)
	}
	if err := srv.Close(); err != nil {
		t.Fatal(err)
	}
}
