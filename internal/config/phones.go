package config

// PhoneFit is one row of the phone table: a phone class and the largest window whose
// resident bytes fit what the class leaves to the app, 0 when none does. plan prints it,
// the export report records it per window, and config.json and the card carry it.
// AppBytes is the class's budget (PhoneClass.Budget): the per-process limit where one
// caps it, and ProcessLimited says so.
type PhoneFit struct {
	RAMGiB         int   `json:"ram_gib"`
	AppBytes       int64 `json:"app_bytes"`
	ProcessLimited bool  `json:"process_limited,omitempty"`
	Window         int   `json:"largest_window"`
}

// PhoneTable gives, for each class, the largest of the windows (window → resident bytes on
// the phone) that fits what the class leaves to the app.
func PhoneTable(classes []PhoneClass, resident map[int]int64) []PhoneFit {
	out := make([]PhoneFit, 0, len(classes))
	for _, c := range classes {
		f := PhoneFit{RAMGiB: c.RAMGiB, AppBytes: c.Budget(), ProcessLimited: c.Budget() < c.AppBytes}
		for w, r := range resident {
			if r <= f.AppBytes && w > f.Window {
				f.Window = w
			}
		}
		out = append(out, f)
	}
	return out
}

// Fits lists the RAM classes (in GiB) whose budget (PhoneClass.Budget) holds resident bytes.
func Fits(classes []PhoneClass, resident int64) []int {
	out := []int{}
	for _, c := range classes {
		if resident <= c.Budget() {
			out = append(out, c.RAMGiB)
		}
	}
	return out
}
