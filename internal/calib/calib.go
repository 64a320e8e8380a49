// Package calib is the GPTQ solve's calibration (docs/research/calibration.md): which rows
// the fp32 model is asked to continue, and what the solve may make of its answers. The
// driver renders and generates; every rule is here: the prompt limit, the shared app head
// counted once, and a refusal when the model mostly said nothing.
package calib

import (
	"fmt"
	"strings"

	"github.com/experimentalmachines/exe-expo/internal/config"
	"github.com/experimentalmachines/exe-expo/internal/drivers"
)

// MaxSeqLength is the eager model's sequence length in the solve (the reference's): a row
// with its reply must fit in it.
const MaxSeqLength = 2048

// Plan lists the rows in the reference's order: the search rows (each question followed by
// the gate's trailer naming its subject) and the known questions, both rendered as the app
// renders a conversation, then the general prompts in the plain chat template.
func Plan(c config.Calibration, trailer string) []drivers.CalibRow {
	var rows []drivers.CalibRow
	for _, s := range c.Search {
		rows = append(rows, drivers.CalibRow{Name: s.Question, App: true, MaxNewTokens: c.AppReplyTokens,
			User: s.Question + " " + strings.ReplaceAll(trailer, "{subject}", s.Subject)})
	}
	for _, q := range c.Known {
		rows = append(rows, drivers.CalibRow{Name: q, User: q, App: true, MaxNewTokens: c.AppReplyTokens})
	}
	for _, q := range c.General {
		rows = append(rows, drivers.CalibRow{Name: q, User: q, MaxNewTokens: c.GeneralReplyTokens})
	}
	return rows
}

// Set is the calibration as the solve reads it, with the counts its summary reports.
type Set struct {
	Rows []drivers.SolveRow
	// AppRows counts the rows rendered under the app's prompt; Head is the length of the
	// head they share, counted only in the first of them.
	AppRows int
	Head    int
	// Positions counts the positions that enter the Hessians.
	Positions int
	// Empty lists the rows the fp32 model answered with nothing.
	Empty []string
}

// Assemble checks what the driver returned for plan and turns it into the solve's rows:
// each prompt followed by its reply, every app row but the first counted from the end of
// the shared head. A prompt over limit tokens (past the head, for an app row), a row
// longer than MaxSeqLength, or more than half the replies empty is an error.
func Assemble(plan []drivers.CalibRow, got []drivers.CalibReply, limit int) (Set, error) {
	if len(got) != len(plan) {
		return Set{}, fmt.Errorf("the calibration has %d rows and the driver answered %d", len(plan), len(got))
	}
	s := Set{Head: sharedHead(plan, got)}
	first := true
	for i, row := range plan {
		r := got[i]
		if err := s.check(row, r, limit); err != nil {
			return Set{}, err
		}
		keep := 0
		if row.App {
			s.AppRows++
			if !first {
				keep = s.Head
			}
			first = false
		}
		tokens := append(append([]int{}, r.Prompt...), r.Reply...)
		s.Rows = append(s.Rows, drivers.SolveRow{Tokens: tokens, KeepFrom: keep})
		s.Positions += len(tokens) - keep
		if strings.TrimSpace(r.Text) == "" {
			s.Empty = append(s.Empty, row.Name)
		}
	}
	if 2*len(s.Empty) > len(plan) {
		return Set{}, fmt.Errorf("the fp32 model's reply is empty on %d of %d calibration rows (%s): more than half, so the solve would calibrate on the prompts alone",
			len(s.Empty), len(plan), examples(s.Empty))
	}
	return s, nil
}

// check holds one row to the prompt limit and the solve's sequence length.
func (s *Set) check(row drivers.CalibRow, r drivers.CalibReply, limit int) error {
	if row.App && len(r.Prompt)-s.Head > limit {
		return fmt.Errorf("calibration row %q has %d prompt tokens past the %d-token app head, over calibration.prompt_limit %d",
			row.Name, len(r.Prompt)-s.Head, s.Head, limit)
	}
	if !row.App && len(r.Prompt) > limit {
		return fmt.Errorf("calibration row %q has %d prompt tokens, over calibration.prompt_limit %d", row.Name, len(r.Prompt), limit)
	}
	if n := len(r.Prompt) + len(r.Reply); n > MaxSeqLength {
		return fmt.Errorf("calibration row %q is %d tokens with its reply, over the solve's %d-token sequence", row.Name, n, MaxSeqLength)
	}
	if len(r.Prompt) == 0 {
		return fmt.Errorf("calibration row %q rendered to no tokens", row.Name)
	}
	return nil
}

// sharedHead is the length of the prefix every app row's prompt shares (the system
// prompt, primer and tools as the chat template renders them); 0 with fewer than two app
// rows, which share nothing to count once. It is never a whole prompt.
func sharedHead(plan []drivers.CalibRow, got []drivers.CalibReply) int {
	var prompts [][]int
	for i, row := range plan {
		if row.App && i < len(got) {
			prompts = append(prompts, got[i].Prompt)
		}
	}
	if len(prompts) < 2 {
		return 0
	}
	n := len(prompts[0])
	for _, p := range prompts[1:] {
		n = min(n, len(p))
		for i := 0; i < n; i++ {
			if p[i] != prompts[0][i] {
				n = i
				break
			}
		}
	}
	for _, p := range prompts {
		if n >= len(p) {
			n = len(p) - 1
		}
	}
	return max(n, 0)
}

// examples names the first three rows of a list, and how many more there are.
func examples(names []string) string {
	quoted := make([]string, 0, 3)
	for _, n := range names[:min(3, len(names))] {
		quoted = append(quoted, fmt.Sprintf("%q", n))
	}
	if more := len(names) - len(quoted); more > 0 {
		return strings.Join(quoted, ", ") + fmt.Sprintf(" and %d more", more)
	}
	return strings.Join(quoted, ", ")
}
