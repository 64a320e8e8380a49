package appview

import (
	"github.com/experimentalmachines/exe-expo/internal/config"
)

// KillTraps are the phone classes (RAM GiB) on which the app would offer a .pte of
// fileBytes, its fit being blind to the window, while the window's resident bytes are more
// than the class leaves to the app: the app offers it and the phone kills it. A low-RAM
// class is held at the app's 50% share.
func KillTraps(classes []config.PhoneClass, fileBytes, resident int64) []int {
	var out []int
	for _, p := range Phones(classes) {
		if appFit(fileBytes, p) != WontRun && resident > p.AppBytes {
			out = append(out, p.RAMGiB)
		}
	}
	return out
}

// AppOffers says whether the app's Discover offers a file of backend b (its app name) at
// path on some phone: XNNPACK, Vulkan and a name that says nothing; not QNN, NeuroPilot
// or ENN.
func AppOffers(b, path string) bool {
	where, _ := Runs(Backend(b), path)
	return where != ""
}
