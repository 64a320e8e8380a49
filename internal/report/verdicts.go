package report

import "strings"

// Checked is which check the files passed, as the report and the model card say it:
// "smoke" when the runner answered (XNNPACK on x86), "structural" when only the program was
// read (the runner has no GPU or NPU), "" when neither passed.
func (r *Report) Checked() string {
	if r.Smoke != nil && r.Smoke.Passed {
		return "smoke"
	}
	if len(r.StructuralCheck) == 0 {
		return ""
	}
	for _, c := range r.StructuralCheck {
		if !c.Passed {
			return ""
		}
	}
	return "structural"
}

// Blockers are the reasons the files must not be published, one sentence each for the step
// summary: a failed smoke run, decision gate or size check, or a failed structural check.
// Checks not run yet do not block here; the publish step decides which it requires.
func (r *Report) Blockers() []string {
	var out []string
	for _, c := range r.StructuralCheck {
		if !c.Passed {
			out = append(out, "structural check failed: "+strings.Join(c.Problems, "; "))
		}
	}
	if r.SizeCheck != nil && !r.SizeCheck.Passed {
		out = append(out, "size check failed: "+strings.Join(r.SizeCheck.Problems, "; "))
	}
	if r.Smoke != nil && !r.Smoke.Passed {
		out = append(out, "smoke test failed: "+strings.Join(r.Smoke.Problems, "; "))
	}
	if r.Speed != nil && r.Speed.BlocksPublish {
		out = append(out, "slow path (speed.refuse_slow_path): "+strings.Join(r.Speed.SlowPath, "; "))
	}
	if r.Gate != nil && !r.Gate.Passed {
		out = append(out, "decision gate failed: "+strings.Join(r.Gate.Problems, "; "))
	}
	return out
}

// TotalBytes is what the size check compares with the estimate: every file the export
// wrote (a MediaTek embedding table too, which its estimate includes).
func (r *Report) TotalBytes() int64 {
	var n int64
	for _, f := range r.Files {
		n += f.Bytes
	}
	return n
}
