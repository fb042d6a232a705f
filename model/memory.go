package model

import (
	"fmt"
	"strings"

	"github.com/ktune/ktune/internal/arch"
	"github.com/ktune/ktune/internal/cpu"
	"github.com/ktune/ktune/internal/kernel"
	"github.com/ktune/ktune/internal/quant"
	"github.com/ktune/ktune/kernels/mla"
)

// MemoryReport is what a model keeps resident, and what its states cost.
type MemoryReport struct {
	// WeightsMapped are weight bytes read in place from the mmap'd
	// checkpoint (the embedding table): page cache the OS can evict and
	// re-read, so they do not count against available memory.
	WeightsMapped int64
	// WeightsHeap are the converted weights held in process memory.
	WeightsHeap int64
	// KDAStatePerSeq is the KDA recurrent and conv state of one sequence,
	// all KDA layers (f32), independent of the context length.
	KDAStatePerSeq int64
	// MLACachePerToken is the MLA latent cache per token of context, all
	// MLA layers, in the cache dtype.
	MLACachePerToken int64
	// MLACacheSpillDir is LoadOptions.CacheSpillDir: when set, the MLA
	// cache pages are file-backed (mapped from an unlinked file there)
	// rather than heap, and Budgeted leaves them out.
	MLACacheSpillDir string

	// MaxSeqs and MaxTokens are the budget the load-time check used.
	MaxSeqs, MaxTokens int
	// Budgeted = WeightsHeap + MaxSeqs·(KDAStatePerSeq + MaxTokens·MLACachePerToken),
	// without the MLA term when the cache is spilled to a file.
	Budgeted int64
	// MLACacheFile is the budget's file-backed MLA cache,
	// MaxSeqs·MaxTokens·MLACachePerToken, when spilled (else 0).
	MLACacheFile int64
	// Available is the memory the check compared Budgeted with (0: unknown
	// or not checked).
	Available int64
}

// String formats the report on one line, sizes in MiB.
func (r MemoryReport) String() string {
	var b strings.Builder
	spill := ""
	if r.MLACacheSpillDir != "" {
		spill = " (file-backed in " + r.MLACacheSpillDir + ")"
	}
	fmt.Fprintf(&b, "weights %s heap + %s mmap'd; KDA state %s/seq; MLA cache %s/token%s; budget %d seq × %d tokens = %s",
		mib(r.WeightsHeap), mib(r.WeightsMapped), mib(r.KDAStatePerSeq), kib(r.MLACachePerToken), spill,
		r.MaxSeqs, r.MaxTokens, mib(r.Budgeted))
	if r.MLACacheFile > 0 {
		fmt.Fprintf(&b, " heap + %s file-backed MLA cache", mib(r.MLACacheFile))
	}
	if r.Available > 0 {
		fmt.Fprintf(&b, " of %s available", mib(r.Available))
	}
	return b.String()
}

func mib(n int64) string { return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20)) }
func kib(n int64) string { return fmt.Sprintf("%.1f KiB", float64(n)/(1<<10)) }

// Memory returns the model's memory report.
func (m *Model) Memory() MemoryReport { return m.mem }

// EstimateMemory computes the report for cfg under opt before anything is
// loaded; embedBytes is the size of one embedding value in the checkpoint
// (2 for BF16). Load uses it to refuse a model that cannot fit.
func EstimateMemory(cfg *arch.Config, opt LoadOptions, embedBytes int) (MemoryReport, error) {
	if err := opt.defaults(cfg); err != nil {
		return MemoryReport{}, err
	}
	s := cfg.Shapes()
	r := MemoryReport{MaxSeqs: opt.MaxSeqs, MaxTokens: opt.MaxTokens}
	r.WeightsMapped = int64(s.Vocab) * int64(s.Hidden) * int64(embedBytes)
	for _, l := range s.Linears() {
		if l.Name == "lm_head" && s.TiedEmbeddings {
			l.Stored = 1 // converted from the embedding table
		}
		if strings.HasPrefix(l.Name, "moe.expert.") && len(opt.ExpertDTypeByLayer) > 0 {
			for layer := range s.Layers { // per-layer formats (a fit plan)
				if cfg.IsMoE(layer) {
					r.WeightsHeap += int64(s.Experts) * quant.Size(opt.expertDType(layer), l.N, l.K, false)
				}
			}
			continue
		}
		r.WeightsHeap += int64(l.Stored) * linearBytes(l.Name, l.N, l.K, &opt.Formats)
	}
	// the small f32 tensors: norms, conv taps, A_log, dt_bias, score bias
	// (every tensor that is not a 2-D matrix)
	for _, t := range cfg.TensorNames() {
		if len(t.Shape) != 2 {
			n := int64(1)
			for _, d := range t.Shape {
				n *= d
			}
			r.WeightsHeap += 4 * n
		}
	}
	// kda.LayerCache keeps a window of W (not W−1) pre-conv values per
	// channel, so this is a little above arch's KDAStateBytesPerSeq.
	r.KDAStatePerSeq = int64(s.NumKDALayers) * 4 * (3*int64(s.KDAProj)*int64(s.ConvKernel) + int64(s.KDAStateValues))
	r.MLACachePerToken = int64(s.NumMLALayers) * int64(mla.RowBytes(s.MLACacheValuesPerToken, opt.CacheDType))
	r.MLACacheSpillDir = opt.CacheSpillDir
	r.budget()
	return r, nil
}

// budget sets Budgeted (and MLACacheFile) from the other fields.
func (r *MemoryReport) budget() {
	cache := int64(r.MaxSeqs) * int64(r.MaxTokens) * r.MLACachePerToken
	r.Budgeted = r.WeightsHeap + int64(r.MaxSeqs)*r.KDAStatePerSeq
	r.MLACacheFile = 0
	if r.MLACacheSpillDir != "" {
		r.MLACacheFile = cache
	} else {
		r.Budgeted += cache
	}
}

// linearBytes is the resident size of a linear weight named as in
// arch.Shapes.Linears.
func linearBytes(name string, n, k int, opt *Formats) int64 {
	switch name {
	case "mla.kv_b_proj":
		return 4 * int64(n) * int64(k) // split into f32 W_UK, W_UV
	case "moe.gate":
		return quant.Size(kernel.F32, n, k, false)
	}
	return quant.Size(linearDType(name, opt), n, k, false)
}

// linearDType is the packed format of a linear weight.
func linearDType(name string, opt *Formats) kernel.DType {
	switch name {
	case "kda.f_a_proj", "kda.f_b_proj", "kda.g_a_proj", "kda.g_b_proj", "kda.b_proj":
		return opt.GateDType
	case "moe.gate":
		return kernel.F32
	case "lm_head":
		return opt.HeadDType
	case "dense.gate_proj", "dense.up_proj", "dense.down_proj":
		return opt.FFNDType
	case "moe.shared.gate_proj", "moe.shared.up_proj", "moe.shared.down_proj":
		return opt.SharedDType
	case "moe.expert.w1", "moe.expert.w2", "moe.expert.w3":
		return opt.ExpertDType
	}
	return opt.AttnDType
}

// checkFits refuses a budget above the available memory.
func checkFits(r *MemoryReport, opt *LoadOptions, what string) error {
	avail := opt.AvailableMemory
	if avail == 0 {
		avail = cpu.AvailableMemory()
	}
	if avail <= 0 {
		return nil // unknown or check disabled
	}
	r.Available = avail
	if r.Budgeted > avail {
		// what would help: the weights in memory only where they are
		// converted (a checkpoint, a preset); mapped ones (a model file, a
		// GGUF run in place) do not count here
		advice := "use a smaller weight dtype (q8, q4), fewer sequences, a shorter context or a cache spill folder"
		weights := fmt.Sprintf("weights %s as %s", mib(r.WeightsHeap), opt.DType)
		if opt.DType == AsStored {
			weights = fmt.Sprintf("weights %s in memory, %s mapped", mib(r.WeightsHeap), mib(r.WeightsMapped))
			advice = "the mapped weights need no room here, so run fewer sequences at once, a shorter context, a smaller MLA cache (--cache-dtype bf16 or q8) or spill the cache to disk (--cache-spill DIR)"
		}
		return fmt.Errorf("model: %s needs %s resident (%s, KDA state %s × %d seq, MLA cache %s × %d tokens × %d seq) but only %s is available; %s",
			what, mib(r.Budgeted), weights, mib(r.KDAStatePerSeq), r.MaxSeqs,
			kib(r.MLACachePerToken), r.MaxTokens, r.MaxSeqs, mib(avail), advice)
	}
	return nil
}
