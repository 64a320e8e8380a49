package run

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// fakeClock is a clock that moves only when the test says so. Its timers run in the
// goroutine that advances past them, and its one ticker sends only on Tick.
type fakeClock struct {
	mu     sync.Mutex
	now    time.Time
	timers []*fakeTimer
	ticks  chan time.Time
}

type fakeTimer struct {
	at   time.Time
	f    func()
	done bool // fired or stopped
}

var _ clock = (*fakeClock)(nil)

func newFakeClock(t0 time.Time) *fakeClock {
	return &fakeClock{now: t0, ticks: make(chan time.Time)}
}

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *fakeClock) AfterFunc(d time.Duration, f func()) func() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	tm := &fakeTimer{at: c.now.Add(d), f: f}
	c.timers = append(c.timers, tm)
	return func() bool {
		c.mu.Lock()
		defer c.mu.Unlock()
		pending := !tm.done
		tm.done = true
		return pending
	}
}

func (c *fakeClock) Ticker(time.Duration) (<-chan time.Time, func()) {
	return c.ticks, func() {}
}

// Advance moves the time on by d and runs every timer that is now due.
func (c *fakeClock) Advance(d time.Duration) {
	c.mu.Lock()
	c.now = c.now.Add(d)
	var due []func()
	for _, tm := range c.timers {
		if !tm.done && !tm.at.After(c.now) {
			tm.done = true
			due = append(due, tm.f)
		}
	}
	c.mu.Unlock()
	for _, f := range due {
		f()
	}
}

// Tick sends one tick and returns once the ticker's reader has taken it.
func (c *fakeClock) Tick() { c.ticks <- c.Now() }

// hookWriter is a Tool Output that keeps the log and calls a hook for each complete line
// as it arrives, while the tool still runs: the test's way to act on the tool's events.
type hookWriter struct {
	mu      sync.Mutex
	log     bytes.Buffer
	partial []byte
	hook    func(line string)
}

func (w *hookWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.log.Write(p)
	w.partial = append(w.partial, p...)
	for {
		i := bytes.IndexByte(w.partial, '\n')
		if i < 0 {
			return len(p), nil
		}
		line := string(w.partial[:i])
		w.partial = w.partial[i+1:]
		if w.hook != nil {
			w.hook(line)
		}
	}
}

func (w *hookWriter) String() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.log.String()
}

// gates hands out files that fakeprog's "w:PATH" step waits for.
type gates struct {
	t   *testing.T
	dir string
}

func newGates(t *testing.T) gates { return gates{t: t, dir: t.TempDir()} }

// wait is the fakeprog step that holds the tool until open(name).
func (g gates) wait(name string) string { return "w:" + filepath.Join(g.dir, name) }

func (g gates) open(name string) {
	require.NoError(g.t, os.WriteFile(filepath.Join(g.dir, name), nil, 0o644))
}

// TestFakeClock checks the test clock itself: timers fire when the time passes them and
// not after stop.
func TestFakeClock(t *testing.T) {
	t0 := time.Date(2026, 9, 12, 10, 0, 0, 0, time.UTC)
	c := newFakeClock(t0)
	var fired []string
	c.AfterFunc(time.Second, func() { fired = append(fired, "1s") })
	stop := c.AfterFunc(2*time.Second, func() { fired = append(fired, "2s") })
	c.AfterFunc(3*time.Second, func() { fired = append(fired, "3s") })
	c.Advance(999 * time.Millisecond)
	require.Empty(t, fired)
	c.Advance(time.Millisecond)
	require.Equal(t, []string{"1s"}, fired)
	require.True(t, stop())
	c.Advance(5 * time.Second)
	require.Equal(t, []string{"1s", "3s"}, fired)
	require.False(t, stop(), "a stopped timer reports it was already stopped")
	require.Equal(t, t0.Add(6*time.Second), c.Now())

	var lines []string
	w := &hookWriter{hook: func(l string) { lines = append(lines, l) }}
	for _, p := range []string{"a\nb", "c\n", "\n"} {
		_, err := w.Write([]byte(p))
		require.NoError(t, err)
	}
	require.Equal(t, []string{"a", "bc", ""}, lines)
	require.True(t, strings.HasSuffix(w.String(), "bc\n\n"))
}
