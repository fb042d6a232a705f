package moe

import (
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"sort"
	"testing"

	"github.com/ktune/ktune/internal/golden"
	"github.com/ktune/ktune/internal/kernel"
	"github.com/ktune/ktune/internal/kerneltest"
	"github.com/ktune/ktune/internal/quant"
)

func TestMain(m *testing.M) { kerneltest.Main(m, "moe") }

// loadBlock reads a moe golden file into block weights of dtype dt.
func loadBlock(t *testing.T, f *golden.File, dt kernel.DType) *BlockWeights {
	var cfg struct {
		Hidden    int     `json:"hidden_size"`
		E         int     `json:"num_experts"`
		K         int     `json:"num_experts_per_token"`
		I         int     `json:"moe_intermediate_size"`
		S         int     `json:"num_shared_experts"`
		G         int     `json:"num_expert_group"`
		TG        int     `json:"topk_group"`
		Scale     float32 `json:"routed_scaling_factor"`
		Renorm    bool    `json:"moe_renormalize"`
		Act       string  `json:"moe_router_activation_func"`
		GroupedTK bool    `json:"use_grouped_topk"`
	}
	if err := json.Unmarshal(f.Config, &cfg); err != nil {
		t.Fatal(err)
	}
	const p = "model.layers.1.block_sparse_moe."
	mat := func(name string, dt kernel.DType) *quant.Matrix {
		d := f.Dims(t, p+name)
		m, err := quant.Quantize(dt, f.F32(t, p+name), d[0], d[1], false)
		if err != nil {
			t.Fatal(err)
		}
		return m
	}
	b := &BlockWeights{Hidden: cfg.Hidden, Router: mat("gate.weight", kernel.F32), Bias: f.F32(t, p+"gate.e_score_correction_bias"),
		Cfg: RouterConfig{Experts: cfg.E, TopK: cfg.K, Groups: cfg.G, TopKGroup: cfg.TG, Renormalize: cfg.Renorm, Scale: cfg.Scale}}
	for e := 0; e < cfg.E; e++ {
		pre := fmt.Sprintf("experts.%d.", e)
		b.Experts = append(b.Experts, Expert{Gate: mat(pre+"w1.weight", dt), Up: mat(pre+"w3.weight", dt), Down: mat(pre+"w2.weight", dt)})
	}
	if cfg.S > 0 {
		b.Shared = &Expert{Gate: mat("shared_experts.gate_proj.weight", dt), Up: mat("shared_experts.up_proj.weight", dt), Down: mat("shared_experts.down_proj.weight", dt)}
	}
	if err := b.Validate(); err != nil {
		t.Fatal(err)
	}
	return b
}

// TestRouterGolden: exact expert ids (as sets) and weights within 1e-5.
func TestRouterGolden(t *testing.T) {
	for _, f := range golden.Load(t, golden.MoE) {
		t.Run(f.Name(), func(t *testing.T) {
			b := loadBlock(t, f, kernel.F32)
			logits := f.F32(t, "router_logits")
			N, K, E := f.Dims(t, "x")[0], b.Cfg.TopK, b.Cfg.Experts
			ids, w, s := make([]int32, N*K), make([]float32, N*K), make([]float32, N*E)
			Route(ids, w, s, logits, b.Bias, N, &b.Cfg)
			golden.Check(t, "router_scores", s, f.F32(t, "router_scores"), 1e-6)
			wantIDs, wantW := f.I64(t, "topk_ids"), f.F32(t, "topk_weights")
			for n := 0; n < N; n++ {
				got, want := map[int32]float32{}, map[int32]float32{}
				for k := 0; k < K; k++ {
					got[ids[n*K+k]] = w[n*K+k]
					want[int32(wantIDs[n*K+k])] = wantW[n*K+k]
				}
				for e, ww := range want {
					gw, ok := got[e]
					if !ok {
						t.Fatalf("token %d: experts %v, want %v", n, keys(got), keys(want))
					}
					if d := gw - ww; d > 1e-5 || d < -1e-5 {
						t.Errorf("token %d expert %d: weight %v, want %v", n, e, gw, ww)
					}
				}
			}
		})
	}
}

func keys(m map[int32]float32) []int32 {
	var k []int32
	for e := range m {
		k = append(k, e)
	}
	sort.Slice(k, func(i, j int) bool { return k[i] < k[j] })
	return k
}

// TestBlockGolden: the whole block (router, experts, shared expert)
// against every moe golden file, with every regime crossover and 1–2
// threads, f32 weights.
func TestBlockGolden(t *testing.T) {
	for _, f := range golden.Load(t, golden.MoE) {
		t.Run(f.Name(), func(t *testing.T) {
			b := loadBlock(t, f, kernel.F32)
			x := f.F32(t, "x")
			N := f.Dims(t, "x")[0]
			for _, cross := range []int{1, 1000} {
				for threads := 1; threads <= 2; threads++ {
					y := make([]float32, len(x))
					b.Forward(y, x, N, BlockOptions{Threads: threads, ExpertParallel: cross, Debug: func(name string, got []float32) {
						golden.Check(t, name, got, f.F32(t, name), 1e-4)
					}})
					golden.Check(t, fmt.Sprintf("y cross=%d threads=%d", cross, threads), y, f.F32(t, "y"), 1e-4)
				}
			}
		})
	}
}

func TestPermute(t *testing.T) {
	ids := []int32{3, 1, 1, 0, 3, 3} // 3 tokens × top-2
	w := []float32{1, 2, 3, 4, 5, 6}
	r := Permute(ids, w, 3, 2, 4)
	if fmt.Sprint(r.Count) != "[1 2 0 3]" || fmt.Sprint(r.Offset) != "[0 1 3 3 6]" {
		t.Fatalf("count %v offset %v", r.Count, r.Offset)
	}
	if fmt.Sprint(r.Token) != "[1 0 1 0 2 2]" || fmt.Sprint(r.Slot) != "[3 1 2 0 4 5]" {
		t.Errorf("token %v slot %v", r.Token, r.Slot)
	}
	if st := r.Stats(); st.Active != 3 || st.Max != 3 || st.Mean != 2 {
		t.Errorf("stats %+v", st)
	}
	if fmt.Sprint(r.Active()) != "[0 1 3]" {
		t.Errorf("active %v", r.Active())
	}
}

// TestRouteTies: equal selection scores pick the lower expert id.
func TestRouteTies(t *testing.T) {
	c := &RouterConfig{Experts: 4, TopK: 2, Groups: 1, TopKGroup: 1, Renormalize: true, Scale: 1}
	ids, w := make([]int32, 2), make([]float32, 2)
	Route(ids, w, nil, []float32{0, 1, 1, 1}, []float32{0, 0, 0, 0}, 1, c)
	if ids[0] != 1 || ids[1] != 2 {
		t.Errorf("ties broke as %v", ids)
	}
	if (&RouterConfig{Experts: 4, TopK: 5}).Validate() == nil {
		t.Error("top-5 of 4 accepted")
	}
}

// TestBlockVariants: every variant against the reference for 1, 2, 7, 64
// and 512 tokens (short: fewer), uniform and skewed routing.
func TestBlockVariants(t *testing.T) {
	ns := []int{1, 2, 7, 64, 512}
	if testing.Short() {
		ns = []int{1, 7, 64}
	}
	var shapes []kernel.Shape
	for _, n := range ns {
		shapes = append(shapes, kernel.MakeShape(blockKeys, n, 8, 2, 40, 24))
	}
	kerneltest.ForEachVariant(t, OpBlock, func(t *testing.T, v *kernel.Variant) {
		for _, dt := range v.DTypes {
			t.Run(string(dt), func(t *testing.T) {
				if ty, ok := quant.GGUFType(dt); ok {
					// rows of whole ggml blocks: c and i of one block
					bs := max(ty.BlockSize(), 32)
					var gs []kernel.Shape
					for _, n := range ns[:2] {
						gs = append(gs, kernel.MakeShape(blockKeys, n, 8, 2, bs, bs))
					}
					kerneltest.CheckVariant(t, v, dt, gs, 3, 1)
					return
				}
				kerneltest.CheckVariant(t, v, dt, shapes, 3, 1)
			})
		}
	})
}

// TestSkewedRouting: a bias that sends every token to the same experts
// (one expert computes all tokens: the prefill regime's worst case).
func TestSkewedRouting(t *testing.T) {
	r := rand.New(rand.NewPCG(8, 8))
	b, err := RandomBlock(r, kernel.Q8, 8, 2, 48, 32)
	if err != nil {
		t.Fatal(err)
	}
	b.Bias[3], b.Bias[5] = 100, 90
	n := 65
	x := make([]float32, n*48)
	kerneltest.FillNormal(r, x, 0, 1)
	want := make([]float32, len(x))
	refForward(b, want, x, n)
	for _, ep := range []int{1, 64, 100} {
		y := make([]float32, len(x))
		rt := b.Forward(y, x, n, BlockOptions{Threads: 2, ExpertParallel: ep, Rules: kernel.Rules{Classes: []kernel.Class{kernel.ClassF32}}})
		if st := rt.Stats(); st.Active != 2 || st.Max != n {
			t.Fatalf("skewed routing stats %+v", st)
		}
		kerneltest.Close(t, fmt.Sprintf("ep=%d", ep), y, want, kernel.TolF32)
	}
}

// TestTopK: the insertion selection against a stable sort by decreasing
// value, on random values with many ties, −Inf and NaN (ranked last), for
// every K; a selection that breaks ties the other way, or lets a NaN in
// ahead of a number, fails it.
func TestTopK(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	for trial := 0; trial < 500; trial++ {
		E := 1 + r.IntN(40)
		sel := make([]float32, E)
		for i := range sel {
			switch r.IntN(8) {
			case 0:
				sel[i] = float32(math.NaN())
			case 1:
				sel[i] = float32(math.Inf(-1))
			default:
				sel[i] = float32(r.IntN(6)) // ties
			}
		}
		order := make([]int, E)
		for i := range order {
			order[i] = i
		}
		sort.SliceStable(order, func(i, j int) bool { // numbers by decreasing value, then NaNs
			a, b := sel[order[i]], sel[order[j]]
			if a != a || b != b {
				return a == a
			}
			return a > b
		})
		for K := 1; K <= E; K++ {
			got := topK(make([]int, K), sel)
			if fmt.Sprint(got) != fmt.Sprint(order[:K]) {
				t.Fatalf("sel %v K=%d: %v, want %v", sel, K, got, order[:K])
			}
		}
	}
}

// TestRouteRenormalize: with renormalisation the top-k weights sum to the
// scale; with top-1 the weight is the expert's sigmoid score times the
// scale, not renormalised to 1 (the rule the spec gives: renormalised only
// if TopK > 1); without renormalisation the scores are kept.
func TestRouteRenormalize(t *testing.T) {
	logits := []float32{0.5, -1, 2, 0.25}
	bias := make([]float32, 4)
	sig := func(x float32) float32 { return float32(1 / (1 + math.Exp(-float64(x)))) }
	near := func(a, b float32) bool { return math.Abs(float64(a-b)) <= 1e-6*math.Abs(float64(b)) }
	for _, c := range []struct {
		k      int
		renorm bool
		want   []float32
	}{
		{1, true, []float32{2.5 * sig(2)}},
		{1, false, []float32{2.5 * sig(2)}},
		{2, true, []float32{2.5 * sig(2) / (sig(2) + sig(0.5)), 2.5 * sig(0.5) / (sig(2) + sig(0.5))}},
		{2, false, []float32{2.5 * sig(2), 2.5 * sig(0.5)}},
	} {
		cfg := &RouterConfig{Experts: 4, TopK: c.k, Groups: 1, TopKGroup: 1, Renormalize: c.renorm, Scale: 2.5}
		ids, w := make([]int32, c.k), make([]float32, c.k)
		Route(ids, w, nil, logits, bias, 1, cfg)
		for i := range w {
			if !near(w[i], c.want[i]) {
				t.Errorf("top-%d renormalize=%v: w = %v, want %v (ids %v)", c.k, c.renorm, w, c.want, ids)
				break
			}
		}
	}
}
