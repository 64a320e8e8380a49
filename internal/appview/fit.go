package appview

import (
	"github.com/experimentalmachines/exe-expo/internal/config"
)

// The app's fit estimate for a .pte, which it sizes without a header: the file times
// residentFactor plus its runtime overhead, against a share of the phone's RAM. It has no
// term for the KV cache, which ExecuTorch allocates whole at load, so a long window of a
// small file reads as a fit the phone cannot hold; that gap is what appview and publish
// warn about.
const (
	residentFactor = 2.4
	// appOverheadBytes is the app's runtime overhead: 450 MiB (FitEstimator).
	appOverheadBytes = 450 << 20
	// appHeadroom and lowRAMHeadroom are the shares of RAM the app lets a model use: 65%,
	// 50% on a phone Android flags as low-RAM (DeviceProfile.usableMemoryBytes).
	appHeadroom    = 0.65
	lowRAMHeadroom = 0.5
	// tightFraction is where the app starts calling a fit tight (FitEstimator).
	tightFraction = 0.8
	// The app's parameter ceiling for its device-size search filter: what is left of the
	// usable memory after the overhead and a modest cache, at 600 MiB a billion
	// parameters (FitEstimator.parameterCeilingBillions).
	modestCacheBytes  = 400 << 20
	bytesPerBillionQ4 = 600 << 20
)

// Fit is the app's verdict on a file for a phone.
type Fit string

// The app's verdicts (FitVerdict), less the storage one appview cannot know.
const (
	Comfortable Fit = "comfortable"
	Tight       Fit = "tight"
	WontRun     Fit = "won't run"
)

// Phone is a phone class: its RAM, whether Android flags it low-RAM, and the share of its
// RAM exe-expo's memory model leaves to the app (export.phone_classes).
type Phone struct {
	RAMGiB   int   `json:"ram_gib"`
	LowRAM   bool  `json:"low_ram,omitempty"`
	AppBytes int64 `json:"app_bytes"`
}

// Phones are pipeline.yaml's phone classes as appview holds them against: none of them
// low-RAM (Android's flag is for Go-edition phones, below every class listed).
func Phones(classes []config.PhoneClass) []Phone {
	out := make([]Phone, len(classes))
	for i, c := range classes {
		out[i] = Phone{RAMGiB: c.RAMGiB, AppBytes: c.Budget()}
	}
	return out
}

// usable is the memory the app lets a model use on p.
func (p Phone) usable() int64 {
	share := appHeadroom
	if p.LowRAM {
		share = lowRAMHeadroom
	}
	return int64(float64(int64(p.RAMGiB)<<30) * share)
}

// appRequired is what the app thinks a .pte of size bytes needs.
func appRequired(size int64) int64 {
	return int64(float64(size)*residentFactor) + appOverheadBytes
}

// appFit is the app's verdict for a .pte of size bytes on p.
func appFit(size int64, p Phone) Fit {
	need, usable := appRequired(size), p.usable()
	switch {
	case need > usable:
		return WontRun
	case float64(need) > float64(usable)*tightFraction:
		return Tight
	default:
		return Comfortable
	}
}

// ceilingBillions is the largest model, in billions of parameters, the app's device-size
// search filter shows on p.
func (p Phone) ceilingBillions() int {
	left := p.usable() - appOverheadBytes - modestCacheBytes
	if left <= 0 {
		return 1
	}
	if n := int(left / bytesPerBillionQ4); n > 1 {
		return n
	}
	return 1
}
