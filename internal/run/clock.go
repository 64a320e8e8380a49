package run

import "time"

// clock is where Tool and its Sampler read the time and set their timers. Runs use the
// system clock; tests put in one they move by hand, so that stage times, timeouts and
// sampling ticks follow the test's events rather than how busy the machine is.
type clock interface {
	Now() time.Time
	// AfterFunc calls f in its own goroutine once d has passed, unless stop comes first.
	AfterFunc(d time.Duration, f func()) (stop func() bool)
	// Ticker sends the time on c every d until stop.
	Ticker(d time.Duration) (c <-chan time.Time, stop func())
}

type systemClock struct{}

func (systemClock) Now() time.Time { return time.Now() }

func (systemClock) AfterFunc(d time.Duration, f func()) func() bool {
	return time.AfterFunc(d, f).Stop
}

func (systemClock) Ticker(d time.Duration) (<-chan time.Time, func()) {
	t := time.NewTicker(d)
	return t.C, t.Stop
}
