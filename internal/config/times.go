package config

import "fmt"

// validateExportTimes checks export_times: each entry names its backend and source, and is
// either a measurement (seconds, with params and window unless flat) or borrows another
// measured backend's fit (like).
func (c *Config) validateExportTimes(v *validator) {
	for i, t := range c.ExportTimes {
		p := fmt.Sprintf("export_times.%d", i)
		v.check(t.Backend != "", p+".backend", "name the backend the time was measured for")
		v.check(t.Source != "", p+".source", "say where the figure comes from")
		v.check(t.HostScale >= 0, p+".host_scale", "%g cannot be negative", t.HostScale)
		if t.Like != "" {
			v.check(t.Seconds == 0 && !t.Flat && t.Params == 0, p+".like", "an entry that takes %s's fit gives no figure of its own", t.Like)
			v.check(hasTimes(c.ExportTimes, t.Like), p+".like", "no export_times entry measures %q", t.Like)
			continue
		}
		v.check(t.Seconds > 0, p+".seconds", "must be positive")
		v.check(t.Flat || (t.Params > 0 && t.Window > 0), p, "give params and window, or mark the figure flat")
	}
}

// hasTimes says whether times hold a measured (not borrowed) entry for backend.
func hasTimes(times []ExportTime, backend string) bool {
	for _, t := range times {
		if t.Backend == backend && t.Like == "" {
			return true
		}
	}
	return false
}
