package moe

import (
	"github.com/ktune/ktune/internal/kernel"
	"github.com/ktune/ktune/internal/quant"
	"github.com/ktune/ktune/kernels/gemm"
)

// Which kernel runs: the MoE block's rules on top of the caller's
// kernel.Rules are here. A tuning profile's moe.block entry names the
// experts' gemm variant and the regime crossover (profileChoice); without
// one, the crossover grows with the batch (defaultCross) and the gemm
// dispatch picks each expert matmul's variant; a named variant runs with
// the dispatch's configuration when it picked the same (planNamed).

// DefaultExpertParallel is the least regime crossover: up to 32 tokens,
// experts side by side (one per thread) beat one expert at a time on all
// threads, which pays a pool dispatch and a split per expert matmul (krun
// bench pp512 on the 2-layer Kimi-width q8 checkpoint, 2 threads: median
// 755 against 665 tokens/s at 8; the tuner's ep choice overrides it).
// Without a profile's choice the crossover grows with the batch (see
// defaultCross).
const DefaultExpertParallel = 32

// defaultCross is the regime crossover without a profile's choice for a
// batch of n tokens routed to k experts each on th threads: an expert runs
// on one thread, beside the others, unless it holds more than half of one
// thread's share of the n·k rows. The workers take the experts one at a
// time, so the experts side by side balance as long as none is a large
// part of a thread's share, and they pay no split or dispatch per matmul:
// on the 2-layer checkpoint's real routing at 512 tokens (experts of up to
// 115 tokens), 2 threads, the block took 113–122 ms with every expert side
// by side against 128–146 ms with a crossover of 32.
func defaultCross(n, k, th int) int {
	return max(DefaultExpertParallel, n*k/(2*th))
}

// profileChoice is what the caller's tuning profile chose for the
// moe.block op at this shape (r.ChooseDims): the regime crossover and the
// experts' gemm variant; without one, the default crossover and "" (gemm
// dispatch).
func (b *BlockWeights) profileChoice(n, threads int, r kernel.Rules) (ep int, kern string) {
	ep = defaultCross(n, b.Cfg.TopK, threads)
	if len(b.Experts) == 0 || r.Chooser == nil {
		return ep, ""
	}
	dt := b.Experts[0].Gate.DType
	c := r.ChooseDims(OpBlock, dt, blockKeys, []int{n, b.Cfg.Experts, b.Cfg.TopK, b.Hidden, b.Experts[0].Gate.N}, threads)
	if c.Variant == nil || c.Variant.Reference {
		return ep, ""
	}
	if v, ok := c.Config.Params["ep"]; ok && v != 0 {
		ep = v
	}
	return ep, c.Variant.Name
}

// planNamed is the plan of gemm variant kern for op on w: the dispatch's
// (profile's) configuration when it chose the same variant, else kern's
// default configuration.
func planNamed(op, kern string, w *quant.Matrix, m, threads int, rules kernel.Rules) kernel.Choice {
	p := gemm.Choose(rules, op, w.DType, m, w.N, w.K, threads)
	if p.Variant != nil && p.Variant.Name == kern {
		return p
	}
	v, err := kernel.Lookup(op + "/" + kern)
	if err != nil || !v.Available() || !v.Serves(w.DType) {
		return p // a profile naming a gemm variant this build or CPU lacks
	}
	return kernel.Choice{Variant: v, Config: v.DefaultConfig(kernel.MakeShape([]string{"m", "n", "k"}, m, w.N, w.K), threads)}
}
