// Package watch is the Hugging Face watcher: it lists the watched orgs, checks each new
// repo once, remembers it in a versioned state file and dispatches the export workflows of
// eligible models in stages, one backend after the other, so that a burst of new models
// never floods the runners of every backend at once.
package watch

import (
	"bytes"
	"encoding/json"
	"fmt"
)

// Version is the state schema this watcher reads and writes; a state of any other version
// is refused rather than guessed at, since a misread state means models dispatched twice
// or never.
const Version = 1

// Model statuses.
const (
	Seeded     = "seeded"
	Skipped    = "skipped"
	Pending    = "pending"
	Dispatched = "dispatched"
	Retry      = "retry"
)

// State is seen.json: every model the watcher has seen. Fields are declared in key order
// so that the file reads as the reference system's sorted JSON and diffs stay small.
type State struct {
	Models   map[string]*Entry `json:"models"`
	SeededAt string            `json:"seeded_at"`
	Version  int               `json:"version"`
}

// Entry is one model's record; Backends holds each backend's stage, so that a later run
// knows which stage the model has reached.
type Entry struct {
	Attempts  int                      `json:"attempts,omitempty"`
	Backends  map[string]*BackendState `json:"backends,omitempty"`
	Backfill  string                   `json:"backfill,omitempty"`
	CreatedAt string                   `json:"created_at,omitempty"`
	Family    string                   `json:"family,omitempty"`
	FirstSeen string                   `json:"first_seen,omitempty"`
	Reasons   []string                 `json:"reasons,omitempty"`
	SHA       string                   `json:"sha,omitempty"`
	Status    string                   `json:"status"`
}

// BackendState is one backend of a model: pending, dispatched or skipped (with why).
type BackendState struct {
	At        string `json:"at,omitempty"`
	LastError string `json:"last_error,omitempty"`
	Reason    string `json:"reason,omitempty"`
	Requeued  string `json:"requeued,omitempty"`
	Status    string `json:"status"`
	// Runtime is the runtime the backend was last dispatched for (catalog.Runtime's words),
	// so a rebuild for a new runtime is queued once, not again while its files are on their
	// way.
	Runtime string `json:"runtime,omitempty"`
	// Cost is what the backend's export run would cost, from the plan, when it was checked.
	Cost *Cost `json:"cost,omitempty"`
}

// Cost is an export run's jobs, runner minutes and price (internal/cost through plan).
type Cost struct {
	Jobs    int     `json:"jobs"`
	Minutes int     `json:"minutes"`
	USD     float64 `json:"usd"`
}

// Line words the cost for the summary.
func (c Cost) Line() string {
	return fmt.Sprintf("%d export job(s), %d runner minutes, $%.2f", c.Jobs, c.Minutes, c.USD)
}

// ParseState reads seen.json; name is where it came from, for the error.
func ParseState(name string, data []byte) (*State, error) {
	var probe struct {
		Version *json.RawMessage `json:"version"`
	}
	if err := json.Unmarshal(data, &probe); err != nil {
		return nil, fmt.Errorf("%s is not a watcher state file (JSON): %v", name, err)
	}
	if probe.Version == nil {
		return nil, fmt.Errorf("%s has no state version; expected %d", name, Version)
	}
	if v := string(*probe.Version); v != fmt.Sprint(Version) {
		return nil, fmt.Errorf("%s has state version %s, expected %d", name, v, Version)
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	var s State
	if err := dec.Decode(&s); err != nil {
		return nil, fmt.Errorf("%s does not hold a version %d watcher state: %v", name, Version, err)
	}
	if s.Models == nil {
		s.Models = map[string]*Entry{}
	}
	return &s, nil
}

// Marshal writes the state as the reference system does: indented by two, keys sorted,
// with a trailing newline.
func (s *State) Marshal() []byte {
	b, err := json.MarshalIndent(s, "", "  ")
	if err != nil {
		panic(fmt.Sprintf("watch: the state cannot fail to encode: %v", err)) // only strings, ints and maps
	}
	return append(b, '\n')
}
