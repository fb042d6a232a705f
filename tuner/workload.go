package tuner

import (
	"fmt"
	"strings"

	"github.com/ktune/ktune/internal/arch"
	"github.com/ktune/ktune/internal/kernel"
)

// A Workload is one (op, dtype, shape) the tuner measures, with the shape
// class it stands for.
type Workload struct {
	Op         string
	DType      kernel.DType
	Shape      kernel.Shape
	ShapeClass string // "decode-1", "prefill-512", "ctx-32K"
	Label      string // which projection or layer part, e.g. "moe.expert.gate_up"
	// Cold marks bandwidth-bound workloads timed with weights that do not
	// stay in cache (several copies cycled, ≥ ColdBytes in all).
	Cold bool
}

// VerifyShape is the shape a candidate tuned for w is checked at against
// the reference: w.Shape itself, or the smaller shape its kernel family
// declares (kernel.Op.Verify) with the same panels, chunks and context
// splits.
func (w Workload) VerifyShape() kernel.Shape {
	if op := kernel.LookupOp(w.Op); op != nil {
		return op.VerifyShape(w.Shape, w.DType)
	}
	return w.Shape
}

// ShapeClasses are the token counts and contexts the tuner covers.
type ShapeClasses struct {
	Decode   []int // tokens per decode step (batch of sequences)
	Prefill  []int // prompt tokens
	Contexts []int // MLA cached tokens
}

// FullClasses are the shape classes the engine runs; QuickClasses a
// subset for --quick. Prefill stops at 512 tokens: the engine runs a
// longer prompt as passes of model.DefaultPrefillChunk = 512 tokens, so no
// kernel ever sees a longer prefill.
var (
	FullClasses  = ShapeClasses{Decode: []int{1, 2, 4, 8}, Prefill: []int{64, 512}, Contexts: []int{4096, 32768, 131072}}
	QuickClasses = ShapeClasses{Decode: []int{1, 8}, Prefill: []int{512}, Contexts: []int{32768}}
)

func ctxName(c int) string {
	if c%1024 == 0 {
		return fmt.Sprintf("ctx-%dK", c/1024)
	}
	return fmt.Sprintf("ctx-%d", c)
}

// Workloads lists the workloads for cfg: every kernel op of the model at
// the shape classes, weight dtypes as deployed (Q8 and Q4 for the big
// matrices, f32 for attention state and norms). quick keeps one
// representative projection per op and Q4 only.
func Workloads(cfg *arch.Config, sc ShapeClasses, quick bool) []Workload {
	s := cfg.Shapes()
	var out []Workload
	add := func(op string, dt kernel.DType, class, label string, cold bool, keys []string, vals ...int) {
		out = append(out, Workload{Op: op, DType: dt, Shape: kernel.MakeShape(keys, vals...), ShapeClass: class, Label: label, Cold: cold})
	}
	gemmKeys := []string{"m", "n", "k"}
	weightDTypes := []kernel.DType{kernel.Q8, kernel.Q4}
	if quick {
		weightDTypes = []kernel.DType{kernel.Q4}
	}
	type lin struct {
		label string
		n, k  int
	}
	// projections: one attention input, one attention output, the experts
	var attn []lin
	if s.NumKDALayers > 0 {
		attn = append(attn, lin{"kda.q_proj", s.KDAProj, s.Hidden})
		if !quick {
			attn = append(attn, lin{"kda.o_proj", s.Hidden, s.KDAProj})
		}
	}
	var down []lin
	if s.Experts > 0 {
		down = append(down, lin{"moe.expert.down", s.Hidden, s.ExpertInter})
	}
	for _, dt := range weightDTypes {
		for _, m := range sc.Decode {
			class := fmt.Sprintf("decode-%d", m)
			for _, l := range append(append([]lin{}, attn...), down...) {
				add("gemm.gemv", dt, class, l.label, true, gemmKeys, m, l.n, l.k)
			}
			if s.Experts > 0 {
				add("gemm.gateup", dt, class, "moe.expert.gate_up", true, gemmKeys, m, s.ExpertInter, s.Hidden)
			}
		}
		for _, t := range sc.Prefill {
			class := fmt.Sprintf("prefill-%d", t)
			for _, l := range attn {
				add("gemm.gemm", dt, class, l.label, false, gemmKeys, t, l.n, l.k)
			}
			if s.Experts > 0 && s.Experts >= s.TopK {
				// tokens per routed expert with uniform routing
				per := max(t*s.TopK/s.Experts, 1)
				add("gemm.gateup", dt, class, "moe.expert.gate_up", false, gemmKeys, per, s.ExpertInter, s.Hidden)
			}
		}
		if s.Experts > 0 {
			blockKeys := []string{"n", "e", "k", "c", "i"}
			for _, n := range sc.Decode {
				if quick && n != sc.Decode[0] {
					continue
				}
				// not cycled through copies: one block of all the experts is
				// already ≥ 1 GiB at Kimi's shape
				add("moe.block", dt, fmt.Sprintf("decode-%d", n), "moe", false, blockKeys, n, s.Experts, s.TopK, s.Hidden, s.ExpertInter)
			}
			for _, t := range sc.Prefill {
				add("moe.block", dt, fmt.Sprintf("prefill-%d", t), "moe", false, blockKeys, t, s.Experts, s.TopK, s.Hidden, s.ExpertInter)
			}
		}
	}
	if s.NumKDALayers > 0 {
		H, D := s.KDAHeads, s.KDAHeadDim
		for _, b := range sc.Decode {
			add("kda.decode", kernel.F32, fmt.Sprintf("decode-%d", b), "kda", false, []string{"b", "h", "dk", "dv"}, b, H, D, D)
		}
		for _, t := range sc.Prefill {
			add("kda.prefill", kernel.F32, fmt.Sprintf("prefill-%d", t), "kda", false, []string{"b", "t", "h", "dk", "dv"}, 1, t, H, D, D)
		}
	}
	if s.NumMLALayers > 0 {
		for _, c := range sc.Contexts {
			add("mla.decode", kernel.F32, ctxName(c), "mla", false, []string{"b", "c", "nh", "r", "dr"}, 1, c, s.MLAHeads, s.KVLoraRank, s.QKRope)
		}
		for _, t := range sc.Prefill {
			add("mla.prefill", kernel.F32, fmt.Sprintf("prefill-%d", t), "mla", false, []string{"t", "p", "nh", "dn", "dr", "dv", "r"},
				t, 0, s.MLAHeads, s.QKNope, s.QKRope, s.VHead, s.KVLoraRank)
		}
	}
	for _, m := range []int{1, 512} {
		add("norm.rmsnorm", kernel.F32, map[int]string{1: "decode-1", 512: "prefill-512"}[m], "norm", false, []string{"m", "n"}, m, s.Hidden)
	}
	// keep only ops this build registers, at shapes they accept
	kept := out[:0]
	for _, w := range out {
		if op := kernel.LookupOp(w.Op); op != nil && op.Serves(w.DType) && op.Check(w.Shape) == nil {
			kept = append(kept, w)
		}
	}
	return kept
}

// FilterOps keeps the workloads whose op is in only (comma-separated op
// names or families: "gemm", "kda.decode"); empty keeps all.
func FilterOps(ws []Workload, only string) ([]Workload, error) {
	if only == "" {
		return ws, nil
	}
	want := strings.Split(only, ",")
	for _, o := range want {
		found := false
		for _, op := range kernel.Ops() {
			if op.Name == o || op.Family() == o {
				found = true
			}
		}
		if !found {
			return nil, fmt.Errorf("--only: unknown op or family %q", o)
		}
	}
	var out []Workload
	for _, w := range ws {
		for _, o := range want {
			if w.Op == o || strings.HasPrefix(w.Op, o+".") {
				out = append(out, w)
				break
			}
		}
	}
	return out, nil
}
