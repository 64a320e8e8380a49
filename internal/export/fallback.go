package export

import (
	"github.com/experimentalmachines/exe-expo/internal/report"
	"github.com/experimentalmachines/exe-expo/internal/result"
)

// checkFallback reads the smoke or gate result Fallback names and finds this window's
// refused file there: the window must be given, the recipe's quantization (fp32 is what a
// fallback builds, so QMode may only say fp32) and the codes are not taken, and a result
// that refused nothing at this window (and chip) has nothing to fall back from.
func (o *Options) checkFallback() error {
	if o.Fallback == "" {
		return nil
	}
	switch {
	case !o.spec().LLM:
		return refuse(FieldFallback, "%s rebuilds a window in fp32, which only the export_llm recipes build; %s's precision is fixed in pipeline.yaml", FieldFallback, o.Backend)
	case o.QMode != "" && o.QMode != "fp32":
		return refuse(FieldQMode, "%s %s and %s disagree: a fallback builds fp32", FieldQMode, o.QMode, FieldFallback)
	case o.Codes != "":
		return refuse(FieldCodes, "%s holds int4 GPTQ codes, and the fp32 %s quantizes nothing", FieldCodes, FieldFallback)
	case o.Window == 0:
		return refuse(FieldWindow, "%s is required with %s: the window whose quantized file was refused", FieldWindow, FieldFallback)
	}
	res, err := result.ReadChecks(o.Fallback)
	if err != nil {
		return refuse(FieldFallback, "%s: %s", FieldFallback, err.Error())
	}
	for _, f := range res.Outputs.Failed {
		if f.Window == o.Window && f.SoC == o.SoC {
			o.QMode = "fp32"
			o.fallback = &report.Fallback{Replaces: f.File, QMode: f.QMode, Reason: f.Reason}
			return nil
		}
	}
	return refuse(FieldFallback, "%s %s refused no file at %d tokens, so there is nothing to fall back from (it refused %d window(s))", FieldFallback, o.Fallback, o.Window, len(res.Outputs.Failed))
}
