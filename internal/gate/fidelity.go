package gate

import (
	"bufio"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"os"
	"path"
	"path/filepath"
	"strings"

	exeexpo "github.com/experimentalmachines/exe-expo"
	"github.com/experimentalmachines/exe-expo/internal/config"
	"github.com/experimentalmachines/exe-expo/internal/fileutil"
)

// The fidelity measure (docs/research/quality.md): beside the gate's prompts, fp32 and the
// export read the same fixed English text (gate.fidelity_text), and at every position the
// export's next-token distribution is compared with fp32's. gate.json keeps fp32's side
// compactly (its top-k tokens' log-probabilities and the rest's mass per position), so the
// export is measured later with the tokenizer alone.

// TextID names the fidelity text file and the hash of the text fed to the models.
type TextID struct {
	File   string `json:"file"`
	SHA256 string `json:"sha256"`
}

func (t TextID) String() string { return fmt.Sprintf("%s (sha256 %s)", t.File, t.SHA256) }

// FidelityText is the configured text and how much of it is read.
type FidelityText struct {
	ID   TextID
	Text string
	// Tokens is how many of the text's first tokens are fed (one position each); TopK how
	// many of fp32's most probable tokens are kept per position.
	Tokens, TopK int
}

// LoadFidelityText reads gate.fidelity_text from the config folder cfgDir, or from the copy
// of config/ embedded in the binary when cfgDir is "" (the embedded configuration). Lines
// starting with "#" at the top of the file (its source) are not part of the text.
func LoadFidelityText(cfgDir string, g config.Gate) (FidelityText, error) {
	var data []byte
	var err error
	name := path.Join("config", g.FidelityText)
	if cfgDir == "" {
		data, err = exeexpo.ConfigFS.ReadFile(name)
	} else {
		name = filepath.Join(cfgDir, g.FidelityText)
		data, err = os.ReadFile(name)
	}
	if errors.Is(err, fs.ErrNotExist) {
		return FidelityText{}, fmt.Errorf("gate.fidelity_text names %s, which is not in the config folder: %s", g.FidelityText, fileutil.Reason(err))
	}
	if err != nil {
		return FidelityText{}, fileutil.Error("read the fidelity text", name, err)
	}
	text := stripHeader(string(data))
	if len(strings.Fields(text)) < g.FidelityTokens/2 {
		return FidelityText{}, fmt.Errorf("the fidelity text %s has %d words, too few for gate.fidelity_tokens %d", name, len(strings.Fields(text)), g.FidelityTokens)
	}
	sum := sha256.Sum256([]byte(text))
	return FidelityText{ID: TextID{File: g.FidelityText, SHA256: hex.EncodeToString(sum[:])}, Text: text,
		Tokens: g.FidelityTokens, TopK: g.FidelityTopK}, nil
}

// stripHeader drops the leading "#" lines and blank lines and trims the rest.
func stripHeader(s string) string {
	sc := bufio.NewScanner(strings.NewReader(s))
	var body []string
	started := false
	for sc.Scan() {
		line := sc.Text()
		if !started && (strings.HasPrefix(line, "#") || strings.TrimSpace(line) == "") {
			continue
		}
		started = true
		body = append(body, line)
	}
	return strings.TrimSpace(strings.Join(body, "\n"))
}

// FidelityReference is fp32's side of the fidelity measure, kept in gate.json.
type FidelityReference struct {
	Text TextID `json:"text"`
	TopK int    `json:"top_k"`
	// Tokens are the text's first tokens as the source's tokenizer made them; the export is
	// fed exactly these.
	Tokens []int `json:"tokens"`
	// Positions are fp32's next-token distribution after each of Tokens.
	Positions []RefPosition `json:"positions"`
}

// RefPosition is fp32's next-token distribution at one position, coarse-grained to TopK
// buckets and one for the rest of the vocabulary.
type RefPosition struct {
	// IDs are fp32's TopK most probable tokens, most probable first: IDs[0] is its argmax.
	IDs []int `json:"ids"`
	// LogP are their natural log-probabilities.
	LogP []float64 `json:"logp"`
	// Rest is the probability of every other token.
	Rest float64 `json:"rest"`
}

// FidelityMeasured is the export's side: per position, its distribution on fp32's buckets.
type FidelityMeasured struct {
	Positions []MeasuredPosition `json:"positions"`
}

// MeasuredPosition is the export's next-token distribution at one position.
type MeasuredPosition struct {
	// Token is the export's argmax.
	Token int `json:"token"`
	// LogP are the export's log-probabilities of fp32's IDs at this position, in their order.
	LogP []float64 `json:"logp"`
	// Rest is the export's probability of every token outside fp32's IDs.
	Rest float64 `json:"rest"`
}

// Fidelity is the measure's verdict-free figures, recorded beside the gate's.
type Fidelity struct {
	Text      TextID `json:"text"`
	Positions int    `json:"positions"`
	TopK      int    `json:"top_k"`
	// Agreed counts the positions where the export's argmax is fp32's; NextTokenAgreement
	// is their share.
	Agreed             int     `json:"agreed"`
	NextTokenAgreement float64 `json:"next_token_agreement"`
	// MeanKL is the mean over positions of KL(fp32 || export) in nats, computed over fp32's
	// TopK tokens and one bucket for the rest of the vocabulary: by the data-processing
	// inequality a lower bound of the full-vocabulary KL (docs/research/quality.md).
	// MaxKL is the largest position's.
	MeanKL float64 `json:"mean_kl"`
	MaxKL  float64 `json:"max_kl"`
	// Deep are the same figures over the positions from Deep.From on, deep in the window,
	// where the KV cache holds that many tokens; nil when no deep start was asked.
	Deep *DeepFidelity `json:"deep,omitempty"`
}

// DeepFidelity is the fidelity figures over the text's positions from From on.
type DeepFidelity struct {
	From               int     `json:"from"`
	Positions          int     `json:"positions"`
	Agreed             int     `json:"agreed"`
	NextTokenAgreement float64 `json:"next_token_agreement"`
	MeanKL             float64 `json:"mean_kl"`
	MaxKL              float64 `json:"max_kl"`
}

// massTolerance is how far a position's buckets may sum from 1 before the numbers are
// taken for a driver's error rather than rounding.
const massTolerance = 1e-6

// minRest stands in for an export rest mass of zero (or below) where fp32's is not, so a
// vanishing bucket costs a large finite KL term instead of an infinity JSON cannot hold.
const minRest = 1e-300

// CheckReference refuses a reference whose positions are not distributions over TopK
// buckets and the rest.
func (f FidelityReference) CheckReference() error {
	if f.TopK <= 0 {
		return fmt.Errorf("the fidelity reference keeps %d tokens per position", f.TopK)
	}
	if len(f.Positions) != len(f.Tokens) || len(f.Tokens) == 0 {
		return fmt.Errorf("the fidelity reference has %d positions for %d tokens", len(f.Positions), len(f.Tokens))
	}
	for i, p := range f.Positions {
		if len(p.IDs) != f.TopK || len(p.LogP) != f.TopK {
			return fmt.Errorf("fidelity reference position %d keeps %d tokens and %d log-probabilities, not %d", i, len(p.IDs), len(p.LogP), f.TopK)
		}
		if err := checkMass(p.LogP, p.Rest); err != nil {
			return fmt.Errorf("fidelity reference position %d: %w", i, err)
		}
	}
	return nil
}

func checkMass(logp []float64, rest float64) error {
	if rest < 0 || math.IsNaN(rest) {
		return fmt.Errorf("the rest's probability is %v", rest)
	}
	sum := rest
	for _, l := range logp {
		if math.IsNaN(l) || l > 1e-9 {
			return fmt.Errorf("log-probability %v is not a log-probability", l)
		}
		sum += math.Exp(l)
	}
	if math.Abs(sum-1) > massTolerance {
		return fmt.Errorf("the buckets' probabilities sum to %.9f, not 1", sum)
	}
	return nil
}

// CompareFidelity computes next-token agreement and mean bucketed KL(fp32 || export), over
// every position and, when deepFrom > 0, again over the positions from deepFrom on.
func CompareFidelity(ref FidelityReference, got FidelityMeasured, deepFrom int) (Fidelity, error) {
	if err := ref.CheckReference(); err != nil {
		return Fidelity{}, err
	}
	if len(got.Positions) != len(ref.Positions) {
		return Fidelity{}, fmt.Errorf("the export was measured at %d positions of the fidelity text, the reference has %d", len(got.Positions), len(ref.Positions))
	}
	f := Fidelity{Text: ref.Text, Positions: len(ref.Positions), TopK: ref.TopK}
	if deepFrom >= len(ref.Positions) {
		return Fidelity{}, fmt.Errorf("the deep positions start at %d, past the fidelity text's %d positions (gate.fidelity_deep_from)", deepFrom, len(ref.Positions))
	}
	var deep *DeepFidelity
	if deepFrom > 0 {
		deep = &DeepFidelity{From: deepFrom, Positions: len(ref.Positions) - deepFrom}
	}
	var sum, deepSum float64
	for i, r := range ref.Positions {
		g := got.Positions[i]
		if len(g.LogP) != len(r.LogP) {
			return Fidelity{}, fmt.Errorf("fidelity position %d: the export gives %d log-probabilities for fp32's %d tokens", i, len(g.LogP), len(r.LogP))
		}
		if err := checkMass(g.LogP, g.Rest); err != nil {
			return Fidelity{}, fmt.Errorf("fidelity position %d of the export: %w", i, err)
		}
		agreed := g.Token == r.IDs[0]
		if agreed {
			f.Agreed++
		}
		kl := BucketKL(r.LogP, r.Rest, g.LogP, g.Rest)
		sum += kl
		f.MaxKL = math.Max(f.MaxKL, kl)
		if deep != nil && i >= deepFrom {
			if agreed {
				deep.Agreed++
			}
			deepSum += kl
			deep.MaxKL = math.Max(deep.MaxKL, kl)
		}
	}
	f.NextTokenAgreement = float64(f.Agreed) / float64(f.Positions)
	f.MeanKL = sum / float64(f.Positions)
	if deep != nil {
		deep.NextTokenAgreement = float64(deep.Agreed) / float64(deep.Positions)
		deep.MeanKL = deepSum / float64(deep.Positions)
		f.Deep = deep
	}
	return f, nil
}

// BucketKL is KL(P || Q) in nats between two distributions given on the same buckets: the
// log-probabilities of the kept tokens and the probability of the rest. A bucket P gives no
// probability costs nothing; the result is never negative (rounding is clamped to 0).
func BucketKL(pLogP []float64, pRest float64, qLogP []float64, qRest float64) float64 {
	var kl float64
	for j, lp := range pLogP {
		p := math.Exp(lp)
		if p == 0 {
			continue
		}
		kl += p * (lp - qLogP[j])
	}
	if pRest > 0 {
		kl += pRest * (math.Log(pRest) - math.Log(math.Max(qRest, minRest)))
	}
	return math.Max(kl, 0)
}
