package run

import (
	"io"
	"strings"
	"time"
)

// lineSink receives the tool's merged stdout and stderr and splits it into lines at "\n",
// "\r\n" and a lone "\r" (a progress bar redrawing itself). Every line goes to the stage
// clock; finished lines go to the log and the tail; progress redraws reach the log at most
// once per progressEvery. exec.Cmd calls Write from one goroutine at a time when Stdout and
// Stderr are the same writer, so lineSink needs no lock.
type lineSink struct {
	out           io.Writer
	transcript    io.Writer // nil, or every line with its arrival time
	prefix        string
	secrets       []string
	tail          *tail
	clock         *stageClock
	now           func() time.Time
	progressEvery time.Duration

	buf          []byte
	afterCR      bool // buf is a complete segment ended by "\r"; "\n" may still follow
	matched      bool // buf has already been given to the stage clock
	lastProgress time.Time
}

func (s *lineSink) Write(p []byte) (int, error) {
	now := s.now()
	for _, b := range p {
		if s.afterCR {
			s.afterCR = false
			if b == '\n' {
				s.emit(now, false)
				continue
			}
			s.emit(now, true)
		}
		switch {
		case b == '\n':
			s.emit(now, false)
		case b == '\r':
			s.afterCR = true
		default:
			s.buf = append(s.buf, b)
			if len(s.buf) >= maxLineBytes {
				s.emit(now, false)
			}
		}
	}
	// A progress bar writes "\r<bar>" and leaves it unterminated until its next redraw,
	// which may be minutes later: match the stages now, or the start is timed late.
	// A partial line that matches nothing yet is matched again when it is complete.
	if len(s.buf) > 0 && !s.matched {
		s.matched = s.clock.line(now, s.mask(string(s.buf)))
	}
	return len(p), nil
}

// close flushes a last unterminated line when the pipe ends; a last progress redraw is
// the bar's final state, so it is not throttled.
func (s *lineSink) close() {
	if len(s.buf) > 0 {
		s.lastProgress = time.Time{}
		s.emit(s.now(), s.afterCR)
	}
	s.afterCR = false
}

// emit ends the buffered segment; progress segments are throttled.
func (s *lineSink) emit(now time.Time, progress bool) {
	line := s.mask(string(s.buf))
	s.buf = s.buf[:0]
	wasMatched := s.matched
	s.matched = false
	if progress && strings.TrimSpace(line) == "" {
		return // a bar clearing itself
	}
	if !wasMatched {
		s.clock.line(now, line)
	}
	if s.transcript != nil {
		io.WriteString(s.transcript, now.UTC().Format(transcriptTime)+" "+line+"\n")
	}
	if progress {
		if s.progressEvery >= 0 && !s.lastProgress.IsZero() && now.Sub(s.lastProgress) < s.progressEvery {
			return
		}
		s.lastProgress = now
	}
	s.tail.add(line)
	io.WriteString(s.out, s.prefix+line+"\n")
}

func (s *lineSink) mask(line string) string { return maskAll(line, s.secrets) }

// maskAll replaces every secret in line with "***".
func maskAll(line string, secrets []string) string {
	for _, sec := range secrets {
		if sec != "" {
			line = strings.ReplaceAll(line, sec, "***")
		}
	}
	return line
}

// transcriptTime stamps transcript lines to the millisecond, in UTC.
const transcriptTime = "2006-01-02T15:04:05.000Z"

// tail keeps the last n lines for error messages.
type tail struct {
	lines []string
	next  int
	full  bool
}

func newTail(n int) *tail { return &tail{lines: make([]string, n)} }

func (t *tail) add(line string) {
	if len(line) > maxTailLineBytes {
		line = line[:maxTailLineBytes] + "…"
	}
	t.lines[t.next] = line
	t.next = (t.next + 1) % len(t.lines)
	if t.next == 0 {
		t.full = true
	}
}

// last returns the kept lines, oldest first.
func (t *tail) last() []string {
	if !t.full {
		return append([]string(nil), t.lines[:t.next]...)
	}
	return append(append([]string(nil), t.lines[t.next:]...), t.lines[:t.next]...)
}

// safeWriter keeps logging from failing a run: a closed stdout must not abort a
// multi-hour export, and go-githubactions panics on a write error.
type safeWriter struct{ w io.Writer }

func (s safeWriter) Write(p []byte) (int, error) {
	s.w.Write(p)
	return len(p), nil
}
