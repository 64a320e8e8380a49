package drivers

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"
)

// TestTorchDrivers runs the real drivers with torch (Debian's python3-torch at
// /usr/bin/python3). testdata/tiny_models.py writes a tiny random HF model per family as
// real safetensors and a small linear with correlated inputs; Go plans each conversion and
// the GPTQ solve, the drivers run in parallel, and one python process then checks every
// output: the converted model run with ExecuTorch's conventions must match the HF model
// run with HF's, and the codes must beat round-to-nearest. A torch start-up costs seconds
// here, so the fixtures and the checks each take one process.
func TestTorchDrivers(t *testing.T) {
	py := torchPython(t)
	root := t.TempDir()
	script := filepath.Join("testdata", "tiny_models.py")
	pyJSON(t, py, nil, script, "make-all", root)

	jobs := torchJobs(t, root)
	var mu sync.Mutex
	checks := map[string][]string{}
	results := map[string]any{}
	t.Run("run", func(t *testing.T) {
		for _, j := range jobs {
			t.Run(j.name, func(t *testing.T) {
				t.Parallel()
				check, res, err := j.run(py)
				if err != nil {
					t.Fatal(err)
				}
				mu.Lock()
				if check != nil {
					checks[j.name] = check
				}
				results[j.name] = res
				mu.Unlock()
			})
		}
	})
	if t.Failed() {
		return
	}
	jobFile := filepath.Join(root, "jobs.json")
	b, _ := json.Marshal(checks)
	if err := os.WriteFile(jobFile, b, 0o644); err != nil {
		t.Fatal(err)
	}
	var reports map[string]json.RawMessage
	pyJSON(t, py, &reports, script, "check-all", jobFile)
	for _, j := range jobs {
		t.Run("check/"+j.name, func(t *testing.T) { j.verify(t, results[j.name], reports[j.name]) })
	}
}

type torchJob struct {
	name   string
	run    func(py string) (check []string, result any, err error)
	verify func(t *testing.T, result any, report json.RawMessage)
}

func torchJobs(t *testing.T, root string) []torchJob {
	var jobs []torchJob
	for _, tc := range []struct {
		family string
		dtypes map[string]int
		shards int
	}{
		{"llama", map[string]int{"float16": 21}, 1},
		{"qwen2_5", map[string]int{"bfloat16": 27}, 1},
		{"qwen3", map[string]int{"bfloat16": 25}, 2},
		{"lfm2", map[string]int{"float32": 24}, 1},
	} {
		plan, tied := tinyPlan(t, root, tc.family, "consolidated.pth")
		if len(plan.Shards) != tc.shards {
			t.Errorf("%s: %d shards, want %d", tc.family, len(plan.Shards), tc.shards)
		}
		jobs = append(jobs, convertJob(tc.family, tc.family, plan, func(t *testing.T, res ConvertResult, rep checkReport) {
			if res.Tensors != plan.ExpectTensors || res.TiedEmbeddings != tied || fmt.Sprint(res.Dtypes) != fmt.Sprint(tc.dtypes) {
				t.Errorf("result %+v, want %d tensors, tied %v, dtypes %v", res, plan.ExpectTensors, tied, tc.dtypes)
			}
			if !rep.Allclose || rep.CheckpointTensors != plan.ExpectTensors || rep.MaxAbs < 0.1 {
				t.Fatalf("HF and ExecuTorch layouts disagree (or logits too small to tell): %+v", rep)
			}
			// Each tensor views its own slice of the mmap and the tied head shares the
			// embedding's storage, so the checkpoint is no bigger than the weights.
			in, out := fileSizes(t, plan.Shards...), fileSizes(t, plan.Output)
			if out > in+in/5+64<<10 {
				t.Errorf("checkpoint %d bytes from %d bytes of safetensors", out, in)
			}
			t.Logf("max |logit| %.3g, max diff %.3g; %d bytes in, %d out", rep.MaxAbs, rep.MaxAbsDiff, in, out)
		}))
	}
	// The check must notice a conversion that forgets the un-permute, or splits wrongly.
	noPermute, _ := tinyPlan(t, root, "llama", "no-unpermute.pth")
	for k, r := range noPermute.Tensors {
		r.Unpermute = 0
		noPermute.Tensors[k] = r
	}
	badSplit, _ := tinyPlan(t, root, "lfm2", "bad-split.pth")
	s := badSplit.Tensors["model.layers.0.conv.in_proj.weight"].Split
	s[0], s[1] = s[1], s[0] // B and C swapped
	for name, p := range map[string]Convert{"llama-no-unpermute": noPermute, "lfm2-bad-split": badSplit} {
		family := map[string]string{"llama-no-unpermute": "llama", "lfm2-bad-split": "lfm2"}[name]
		jobs = append(jobs, convertJob(name, family, p, func(t *testing.T, _ ConvertResult, rep checkReport) {
			if rep.Allclose || rep.MaxAbsDiff < 1e-3 {
				t.Fatalf("a spoiled plan passed the check: %+v", rep)
			}
		}))
	}
	return append(jobs, gptqJob(root), gptqRefusalJob(root))
}

// gptqRefusalJob hands the solver a Hessian that does not fit the weight: the error must
// name the linear.
func gptqRefusalJob(root string) torchJob {
	dir := filepath.Join(root, "gptq")
	plan := NewGPTQ(filepath.Join(dir, "refused.pt"), []Linear{
		{Name: "layers.3.feed_forward.w2", Weight: filepath.Join(dir, "weight.pt"), Hessian: filepath.Join(dir, "weight.pt")},
	})
	return torchJob{
		name: "gptq-refusal",
		run: func(py string) ([]string, any, error) {
			_, err := Runner{Python: py}.GPTQ(context.Background(), plan)
			var de *Error
			if !errors.As(err, &de) || de.Subject != "layers.3.feed_forward.w2" || !strings.Contains(de.Message, "does not match 256 input columns") {
				return nil, nil, fmt.Errorf("error %v, want one naming the linear and the Hessian shape", err)
			}
			if _, statErr := os.Stat(plan.Out); statErr == nil {
				return nil, nil, fmt.Errorf("codes written despite the error")
			}
			return nil, nil, nil
		},
		verify: func(*testing.T, any, json.RawMessage) {},
	}
}

// tinyPlan plans the conversion of root/<family> into a checkpoint named out.
func tinyPlan(t testing.TB, root, family, out string) (Convert, bool) {
	t.Helper()
	dir := filepath.Join(root, family)
	var facts struct {
		Layers  int  `json:"layers"`
		Heads   int  `json:"heads"`
		KVHeads int  `json:"kv_heads"`
		Tied    bool `json:"tied"`
	}
	b, err := os.ReadFile(filepath.Join(dir, "facts.json"))
	if err == nil {
		err = json.Unmarshal(b, &facts)
	}
	if err != nil {
		t.Fatalf("facts of %s: %v", family, err)
	}
	shards, err := ShardFiles(dir)
	if err != nil {
		t.Fatal(err)
	}
	plan, err := PlanConvert(Arch{Family: family, Layers: facts.Layers, Heads: facts.Heads, KVHeads: facts.KVHeads,
		TiedEmbeddings: facts.Tied, Tensors: headerNames(t, shards)}, shards, filepath.Join(dir, "checkpoint", out))
	if err != nil {
		t.Fatal(err)
	}
	return plan, facts.Tied
}

type checkReport struct {
	MaxAbsDiff        float64   `json:"max_abs_diff"`
	MaxAbs            float64   `json:"max_abs"`
	Allclose          bool      `json:"allclose"`
	PerLayer          []float64 `json:"per_layer"`
	CheckpointTensors int       `json:"checkpoint_tensors"`
}

func convertJob(name, family string, plan Convert, verify func(*testing.T, ConvertResult, checkReport)) torchJob {
	return torchJob{
		name: name,
		run: func(py string) ([]string, any, error) {
			res, err := Runner{Python: py}.Convert(context.Background(), plan)
			return []string{"model", family, filepath.Dir(filepath.Dir(plan.Output)), plan.Output}, res, err
		},
		verify: func(t *testing.T, result any, raw json.RawMessage) {
			var rep checkReport
			if err := json.Unmarshal(raw, &rep); err != nil {
				t.Fatalf("report %s: %v", raw, err)
			}
			verify(t, result.(ConvertResult), rep)
		},
	}
}

// gptqJob solves the same layer twice: from activations (fake-quantised per token) and
// from the exact Hessian X^T X, whose error the check recomputes independently.
func gptqJob(root string) torchJob {
	dir := filepath.Join(root, "gptq")
	out := filepath.Join(dir, "codes.pt")
	plan := NewGPTQ(out, []Linear{
		{Name: "from_activations", Weight: filepath.Join(dir, "weight.pt"), Activations: filepath.Join(dir, "activations.pt")},
		{Name: "from_hessian", Weight: filepath.Join(dir, "weight.pt"), Hessian: filepath.Join(dir, "hessian.pt")},
		{Name: "from_dict", Weight: filepath.Join(dir, "weights.pt"), WeightKey: "layers.0.feed_forward.w2.weight",
			Hessian: filepath.Join(dir, "hessian.pt")},
		{Name: "identity", Weight: filepath.Join(dir, "weight.pt"), Hessian: filepath.Join(dir, "identity.pt")},
	})
	return torchJob{
		name: "gptq",
		run: func(py string) ([]string, any, error) {
			res, err := Runner{Python: py}.GPTQ(context.Background(), plan)
			return []string{"gptq", dir, out}, res, err
		},
		verify: func(t *testing.T, result any, raw json.RawMessage) {
			verifyGPTQ(t, result.(GPTQResult), raw)
		},
	}
}

func verifyGPTQ(t *testing.T, res GPTQResult, raw json.RawMessage) {
	var rep struct {
		RTN             float64 `json:"rtn"`
		DictMatchesFile bool    `json:"dict_matches_file"`
		IdentityIsClip  bool    `json:"identity_is_clip_search"`
		InvCholRelDiff  float64 `json:"inverse_cholesky_rel_diff"`
		Linears         map[string]struct {
			Error         float64  `json:"error"`
			Problems      []string `json:"problems"`
			DistinctCodes int      `json:"distinct_codes"`
		} `json:"linears"`
	}
	if err := json.Unmarshal(raw, &rep); err != nil {
		t.Fatalf("report %s: %v", raw, err)
	}
	if len(res.Linears) != 4 || len(rep.Linears) != 4 {
		t.Fatalf("solved %d linears, codes hold %d; want 4", len(res.Linears), len(rep.Linears))
	}
	if rep.InvCholRelDiff > 1e-10 {
		t.Errorf("the driver's factor of H^-1 differs from cholesky(cholesky_inverse(cholesky(H))) by %g", rep.InvCholRelDiff)
	}
	if !rep.IdentityIsClip {
		t.Errorf("with an identity Hessian the codes differ from round-to-nearest with the best clip per group")
	}
	for i, st := range res.Linears {
		if want := st.Name == "from_dict"; st.HessianReused != want {
			t.Errorf("linear %d %s: hessian_reused %v, want %v", i, st.Name, st.HessianReused, want)
		}
	}
	if !rep.DictMatchesFile {
		t.Errorf("the weight read from a dict by key solved differently from the same weight in its own file")
	}
	for _, st := range res.Linears[:3] { // the identity Hessian knows nothing of X
		got := rep.Linears[st.Name]
		if len(got.Problems) > 0 {
			t.Errorf("%s: %v", st.Name, got.Problems)
		}
		if st.DeadColumns != 1 || st.Rows != 48 || st.Cols != 256 || got.DistinctCodes < 12 {
			t.Errorf("%s: stats %+v, %d distinct codes", st.Name, st, got.DistinctCodes)
		}
		if !(st.ErrorGPTQ < 0.8*st.ErrorRTN) {
			t.Errorf("%s: driver says GPTQ %.4g vs RTN %.4g; want GPTQ well below", st.Name, st.ErrorGPTQ, st.ErrorRTN)
		}
		if !(got.Error < 0.8*rep.RTN) {
			t.Errorf("%s: ||XW'-XW||² GPTQ %.4g vs RTN %.4g (checked independently)", st.Name, got.Error, rep.RTN)
		}
		t.Logf("%s: output error GPTQ %.4g, RTN %.4g (%.1f%% less), %.2fs", st.Name, got.Error, rep.RTN,
			100*(1-got.Error/rep.RTN), st.Seconds)
	}
	exact := res.Linears[1]
	if exact.Name != "from_hessian" || !near(exact.ErrorGPTQ, rep.Linears["from_hessian"].Error) || !near(exact.ErrorRTN, rep.RTN) {
		t.Errorf("driver's errors %.6g / %.6g differ from the check's %.6g / %.6g",
			exact.ErrorGPTQ, exact.ErrorRTN, rep.Linears["from_hessian"].Error, rep.RTN)
	}
}

func fileSizes(t testing.TB, paths ...string) int64 {
	t.Helper()
	var n int64
	for _, p := range paths {
		st, err := os.Stat(p)
		if err != nil {
			t.Fatal(err)
		}
		n += st.Size()
	}
	return n
}

// near allows for the driver's fp32 error statistics.
func near(a, b float64) bool { return math.Abs(a-b) <= 1e-4*math.Max(math.Abs(a), math.Abs(b)) }

// headerNames reads the tensor names of safetensors files from their headers.
func headerNames(t testing.TB, shards []string) []string {
	t.Helper()
	var names []string
	for _, s := range shards {
		f, err := os.Open(s)
		if err != nil {
			t.Fatal(err)
		}
		var n uint64
		err = binary.Read(f, binary.LittleEndian, &n)
		raw := make([]byte, n)
		if err == nil {
			_, err = f.ReadAt(raw, 8)
		}
		f.Close()
		var h map[string]json.RawMessage
		if err == nil {
			err = json.Unmarshal(raw, &h)
		}
		if err != nil {
			t.Fatalf("header of %s: %v", s, err)
		}
		for k := range h {
			if k != "__metadata__" {
				names = append(names, k)
			}
		}
	}
	sort.Strings(names)
	return names
}
