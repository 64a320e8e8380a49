package run

import (
	"errors"
	"fmt"
	"math"
	"regexp"
	"strconv"
	"strings"
	"time"
)

// OtherStage names the time no rule claimed, so that the shares of a report add up to one.
const OtherStage = "other"

// StageRule turns log lines into stage timings. Stages are sequential: at most one is open
// at a time, a Start match closes whatever is open and opens Stage, and a stage opened
// several times (once per chunk, say) adds up, while a Start for the stage already open
// changes nothing. A stage still open when the tool exits
// closes at exit. A tool's lines are timed when they arrive, so Python tools must run with
// PYTHONUNBUFFERED=1.
type StageRule struct {
	// Stage is the name reported, e.g. "calibration".
	Stage string
	// Start opens Stage on a matching line.
	Start *regexp.Regexp
	// End closes Stage on a matching line, if Stage is the open one.
	End *regexp.Regexp
	// Duration adds the seconds captured by its "seconds" group to Stage, for tools that
	// print how long a step took. Such time is taken as printed and is not
	// subtracted from other stages.
	Duration *regexp.Regexp
	// AtStart opens Stage when the process starts (model loading before the first marker).
	AtStart bool
}

func (r StageRule) validate() error {
	if r.Stage == "" {
		return errors.New("no stage name")
	}
	if r.Stage == OtherStage {
		return errors.New(`stage name "other" is reserved for unclaimed time`)
	}
	if r.Start == nil && r.End == nil && r.Duration == nil && !r.AtStart {
		return errors.New("stage " + r.Stage + " has no Start, End, Duration or AtStart")
	}
	if r.Duration != nil && r.Duration.SubexpIndex("seconds") < 0 {
		return errors.New("stage " + r.Stage + `: Duration has no (?P<seconds>...) group`)
	}
	return nil
}

// StageTime is one stage's share of a run.
type StageTime struct {
	Stage   string  `json:"stage"`
	Seconds float64 `json:"seconds"`
	// Share is Seconds over the run's total, rounded to 0.001.
	Share float64 `json:"share"`
	// Count is how many times the stage was opened (or reported, for Duration rules).
	Count int `json:"count"`
}

// Timings says where a run's time went.
type Timings struct {
	TotalSeconds float64     `json:"total_seconds"`
	Stages       []StageTime `json:"stages"`
}

// Stage returns the named stage's entry, if the run had one.
func (t Timings) Stage(name string) (StageTime, bool) {
	for _, s := range t.Stages {
		if s.Stage == name {
			return s, true
		}
	}
	return StageTime{}, false
}

// String renders the timings for a log or step summary line:
// "2434.0 s: load 0.9%, calibration 38.5%, htp_compile 48.2%, other 2.8%".
func (t Timings) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%.1f s", t.TotalSeconds)
	for i, s := range t.Stages {
		sep := ", "
		if i == 0 {
			sep = ": "
		}
		fmt.Fprintf(&b, "%s%s %.1f%%", sep, s.Stage, s.Share*100)
	}
	return b.String()
}

// stageClock applies rules to lines as they arrive.
type stageClock struct {
	rules    []StageRule
	start    time.Time
	open     string
	openedAt time.Time
	acc      map[string]time.Duration
	count    map[string]int
	order    []string
}

func newStageClock(rules []StageRule, start time.Time) *stageClock {
	c := &stageClock{rules: rules, start: start, acc: map[string]time.Duration{}, count: map[string]int{}}
	for _, r := range rules {
		if r.AtStart {
			c.openStage(r.Stage, start)
			break
		}
	}
	return c
}

func (c *stageClock) note(name string) {
	if _, ok := c.count[name]; !ok {
		c.order = append(c.order, name)
	}
}

// openStage opens name, closing the open stage; a stage already open stays open, so a
// progress bar that repeats its marker line counts once.
func (c *stageClock) openStage(name string, now time.Time) {
	if c.open == name {
		return
	}
	c.closeOpen(now)
	c.note(name)
	c.count[name]++
	c.open, c.openedAt = name, now
}

func (c *stageClock) closeOpen(now time.Time) {
	if c.open == "" {
		return
	}
	c.acc[c.open] += now.Sub(c.openedAt)
	c.open = ""
}

// line applies every rule that matches, in rule order. A line that ends a stage never
// reopens it ("B done" ends "B" even though it starts with B).
// It reports whether any rule matched.
func (c *stageClock) line(now time.Time, s string) bool {
	closed, matched := "", false
	for _, r := range c.rules {
		if r.End != nil && c.open == r.Stage && r.End.MatchString(s) {
			c.closeOpen(now)
			closed, matched = r.Stage, true
		}
		if r.Start != nil && r.Stage != closed && r.Start.MatchString(s) {
			c.openStage(r.Stage, now)
			matched = true
		}
		if r.Duration != nil && c.addDuration(r, s) {
			matched = true
		}
	}
	return matched
}

func (c *stageClock) addDuration(r StageRule, s string) bool {
	m := r.Duration.FindStringSubmatch(s)
	if m == nil {
		return false
	}
	secs, err := strconv.ParseFloat(m[r.Duration.SubexpIndex("seconds")], 64)
	if err != nil || secs < 0 || math.IsInf(secs, 0) || math.IsNaN(secs) {
		return false
	}
	c.note(r.Stage)
	c.count[r.Stage]++
	c.acc[r.Stage] += time.Duration(secs * float64(time.Second))
	return true
}

// finish closes the open stage at end and reports every stage in first-seen order, plus
// the unclaimed remainder as OtherStage when rules were given.
func (c *stageClock) finish(end time.Time) Timings {
	c.closeOpen(end)
	total := end.Sub(c.start)
	t := Timings{TotalSeconds: round(total.Seconds(), 1), Stages: []StageTime{}}
	var claimed time.Duration
	for _, name := range c.order {
		d := c.acc[name]
		claimed += d
		t.Stages = append(t.Stages, stageTime(name, d, total, c.count[name]))
	}
	if len(c.rules) > 0 {
		t.Stages = append(t.Stages, stageTime(OtherStage, max(total-claimed, 0), total, 0))
	}
	return t
}

func stageTime(name string, d, total time.Duration, count int) StageTime {
	share := 0.0
	if total > 0 {
		share = round(float64(d)/float64(total), 3)
	}
	return StageTime{Stage: name, Seconds: round(d.Seconds(), 1), Share: share, Count: count}
}

func round(v float64, decimals int) float64 {
	p := math.Pow10(decimals)
	return math.Round(v*p) / p
}
