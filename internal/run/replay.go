package run

import (
	"fmt"
	"io"
	"time"
)

// Write is one piece of a tool's output as it arrived: After is how long after the piece
// before it (or the tool's start) it came, Data its bytes with their "\n" and "\r".
type Write struct {
	After time.Duration
	Data  string
}

// Replay times recorded output as Tool times it live: every write goes through the same
// line splitting (progress redraws included) and stage rules, on a clock that moves only by
// the writes' After, and the run ends at the last write. The stage rules live with their
// backends (internal/backend/<name>), whose tests replay their tools' real lines through them
// without starting a process. An invalid rule is an error, as it is for Tool.
func Replay(rules []StageRule, writes []Write) (Timings, error) {
	for i, r := range rules {
		if err := r.validate(); err != nil {
			return Timings{}, fmt.Errorf("replay: stage rule %d: %w", i, err)
		}
	}
	now := time.Unix(0, 0).UTC()
	s := &lineSink{out: io.Discard, tail: newTail(DefaultTailLines), clock: newStageClock(rules, now),
		now: func() time.Time { return now }, progressEvery: DefaultProgressEvery}
	for _, w := range writes {
		now = now.Add(w.After)
		if _, err := s.Write([]byte(w.Data)); err != nil {
			return Timings{}, fmt.Errorf("replay: %w", err)
		}
	}
	s.close()
	return s.clock.finish(now), nil
}
