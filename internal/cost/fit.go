package cost

import (
	"math"
	"sort"
	"strings"

	"github.com/experimentalmachines/exe-expo/internal/config"
)

// refWindow is the window the fitted base time is given at.
const refWindow = 2048

// Fit is one backend's (or one route's) time model.
type Fit struct {
	Backend string `json:"backend"`
	// Flat is a time that holds for any model and window: FlatSeconds.
	Flat        bool    `json:"flat"`
	FlatSeconds float64 `json:"flat_seconds,omitempty"`
	// FixedSeconds is the export time at 2k that does not grow with the parameters (load,
	// trace, lowering's fixed work); SecondsPerGParam what each billion parameters add;
	// Growth the exponent of the window's share (0 when no model was measured at two
	// windows). FixedSeconds is 0 where every measurement is of one model.
	FixedSeconds     float64 `json:"fixed_seconds_at_2k,omitempty"`
	SecondsPerGParam float64 `json:"seconds_per_billion_params_at_2k,omitempty"`
	Growth           float64 `json:"window_growth"`
	// Points is how many measurements the fit rests on; Like the backend whose fit this
	// one borrows (no measurement of its own).
	Points int    `json:"points"`
	Like   string `json:"like,omitempty"`
}

// Seconds is the fitted export time of a model of params parameters at window.
func (f Fit) Seconds(params int64, window int) float64 {
	if f.Flat {
		return f.FlatSeconds
	}
	return (f.FixedSeconds + f.SecondsPerGParam*float64(params)/1e9) * math.Pow(float64(window)/refWindow, f.Growth)
}

// FitAll fits every backend (and backend/route) that has measurements; a backend that
// borrows another's fit (like) gets that fit under its own name.
func FitAll(times []config.ExportTime) map[string]Fit {
	by := map[string][]config.ExportTime{}
	var likes []config.ExportTime
	for _, t := range times {
		if t.Like != "" {
			likes = append(likes, t)
			continue
		}
		by[t.FitKey()] = append(by[t.FitKey()], t)
	}
	out := map[string]Fit{}
	for _, k := range sortedKeys(by) {
		if !strings.Contains(k, "/") {
			out[k] = fit(k, by[k], nil)
		}
	}
	for _, k := range sortedKeys(by) {
		if backend, _, routed := strings.Cut(k, "/"); routed {
			parent, ok := out[backend]
			out[k] = fit(k, by[k], ifOK(&parent, ok))
		}
	}
	for _, t := range likes {
		if _, own := out[t.Backend]; own {
			continue // measured now (an export report): its own figures win
		}
		if f, ok := out[t.Like]; ok {
			f.Backend, f.Like = t.Backend, t.Like
			out[t.Backend] = f
		}
	}
	return out
}

// For is the fit plan prices a file with: the backend's route's where one is measured,
// else the backend's own.
func For(fits map[string]Fit, backend, route string) (Fit, bool) {
	if route != "" {
		if f, ok := fits[backend+"/"+route]; ok {
			return f, true
		}
	}
	f, ok := fits[backend]
	return f, ok
}

// fit is one group's model. Flat figures give their geometric mean. Otherwise the growth
// is the mean log-slope over the pairs of one model at two windows, every time is brought
// to 2k with it, and the base is a least-squares line in the parameters where two sizes
// were measured and it rises from a non-negative fixed part: exports of 135M to 0.8B
// parameters took 716 s to 1,233 s on one host, far from proportional. With one size (or a
// line that would fall), a route measured beside its backend takes the backend's shape
// scaled to its own points, and a backend alone is proportional to the parameters.
func fit(key string, ts []config.ExportTime, parent *Fit) Fit {
	var flat, sized []config.ExportTime
	for _, t := range ts {
		if t.Flat {
			flat = append(flat, t)
		} else {
			sized = append(sized, t)
		}
	}
	if len(sized) == 0 {
		logs := 0.0
		for _, t := range flat {
			logs += math.Log(t.RunnerSeconds())
		}
		return Fit{Backend: key, Flat: true, FlatSeconds: math.Exp(logs / float64(len(flat))), Points: len(flat)}
	}
	f := Fit{Backend: key, Growth: growthOf(sized), Points: len(sized)}
	if parent != nil && !parent.Flat && len(distinctParams(sized)) < 2 {
		f.Growth = parent.Growth
	}
	xs, ys := make([]float64, len(sized)), make([]float64, len(sized))
	for i, t := range sized {
		xs[i] = float64(t.Params) / 1e9
		ys[i] = t.RunnerSeconds() / math.Pow(float64(t.Window)/refWindow, f.Growth)
	}
	if a, b, ok := line(xs, ys); ok {
		f.FixedSeconds, f.SecondsPerGParam = a, b
		return f
	}
	if parent != nil && !parent.Flat {
		return scaled(f, *parent, xs, ys)
	}
	logs := 0.0
	for i := range xs {
		logs += math.Log(ys[i] / xs[i])
	}
	f.SecondsPerGParam = math.Exp(logs / float64(len(xs)))
	return f
}

// scaled is the parent's line scaled by the geometric mean of measured over predicted.
func scaled(f, parent Fit, xs, ys []float64) Fit {
	logs := 0.0
	for i := range xs {
		logs += math.Log(ys[i] / (parent.FixedSeconds + parent.SecondsPerGParam*xs[i]))
	}
	r := math.Exp(logs / float64(len(xs)))
	f.FixedSeconds, f.SecondsPerGParam = parent.FixedSeconds*r, parent.SecondsPerGParam*r
	return f
}

// line is the least-squares y = a + b·x; false unless x takes two values and a ≥ 0, b > 0.
func line(xs, ys []float64) (a, b float64, ok bool) {
	n := float64(len(xs))
	mx, my := 0.0, 0.0
	for i := range xs {
		mx, my = mx+xs[i]/n, my+ys[i]/n
	}
	sxx, sxy := 0.0, 0.0
	for i := range xs {
		sxx += (xs[i] - mx) * (xs[i] - mx)
		sxy += (xs[i] - mx) * (ys[i] - my)
	}
	if sxx < 1e-12 {
		return 0, 0, false
	}
	b = sxy / sxx
	a = my - b*mx
	return a, b, a >= 0 && b > 0
}

func distinctParams(ts []config.ExportTime) map[int64]bool {
	out := map[int64]bool{}
	for _, t := range ts {
		out[t.Params] = true
	}
	return out
}

func ifOK(f *Fit, ok bool) *Fit {
	if ok {
		return f
	}
	return nil
}

func sortedKeys(m map[string][]config.ExportTime) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// growthOf is the mean of log(s2/s1)/log(w2/w1) over the pairs of one model at two
// windows, each window's time the geometric mean of its measurements; 0 without a pair.
func growthOf(ts []config.ExportTime) float64 {
	type key struct {
		model  string
		params int64
	}
	perModel := map[key]map[int][]float64{}
	for _, t := range ts {
		k := key{t.Model, t.Params}
		if perModel[k] == nil {
			perModel[k] = map[int][]float64{}
		}
		perModel[k][t.Window] = append(perModel[k][t.Window], math.Log(t.RunnerSeconds()))
	}
	sum, n := 0.0, 0
	for _, ws := range perModel {
		windows := make([]int, 0, len(ws))
		for w := range ws {
			windows = append(windows, w)
		}
		sort.Ints(windows)
		for i := 1; i < len(windows); i++ {
			a, b := mean(ws[windows[i-1]]), mean(ws[windows[i]])
			sum += (b - a) / math.Log(float64(windows[i])/float64(windows[i-1]))
			n++
		}
	}
	if n == 0 {
		return 0
	}
	return sum / float64(n)
}

func mean(xs []float64) float64 {
	s := 0.0
	for _, x := range xs {
		s += x
	}
	return s / float64(len(xs))
}
