package model

import (
	"os"

	"github.com/ktune/ktune/kernels/moe"
)

// Expert prefetch. A model file's weights are views of its mapping
// (LoadFile), so a model larger than RAM runs: the pages of experts no
// token has routed to lately are evicted and read again when routed to.
// The router's choice is known before any expert's weights are read, so
// each MoE block's Prefetch hook asks the OS to start reading the chosen
// experts' three matrices (madvise MADV_WILLNEED over their page-aligned
// byte ranges) before the first expert runs: the disk reads of experts
// 2..8 overlap expert 1's compute, and each expert is read in large
// requests instead of fault by fault. Where the OS says which pages are
// resident (Linux: mincore, about 1 µs per MB of mapped pages), only the
// missing runs are advised: the advice itself walks the page cache at
// about 25 µs per MB, a quarter of a resident expert's compute. A GGUF
// file run in place (LoadGGUF) is prefetched the same way. Heap models
// (Random, a checkpoint folder, a repacked GGUF file) have nothing to read
// and get no hook.

// PrefetchEnv is the environment variable that sets the default of
// expert prefetch for model files: "0" turns it off, anything else (or
// unset) leaves it on.
const PrefetchEnv = "KTUNE_PREFETCH"

// PrefetchSupported reports whether this OS can prefetch mapped weights
// (Linux and macOS: madvise); elsewhere SetPrefetch is a no-op.
const PrefetchSupported = prefetchSupported

// prefetchChunk is the most bytes one madvise call advises: Linux starts
// at most max(the file's read-ahead window, the device's optimal request
// size) of reads per WILLNEED call, so a whole 2.5 MB expert matrix in
// one call would be read only in part where read_ahead_kb is the usual
// 128.
const prefetchChunk = 512 << 10

// PrefetchDefault is the default of expert prefetch: on unless
// KTUNE_PREFETCH=0.
func PrefetchDefault() bool { return os.Getenv(PrefetchEnv) != "0" }

// SetPrefetch turns expert prefetch on or off and returns whether it is
// on: it can be only for a model whose weights are mapped from a model
// file or a GGUF file (LoadFile, LoadGGUF in place, which turn it on
// unless KTUNE_PREFETCH=0), not copied out of it (LoadOptions.Weights), on Linux
// and macOS; for other models it removes any hook and returns false.
func (m *Model) SetPrefetch(on bool) bool {
	if m.cache != nil { // the expert cache's hooks instead (expertcache.go)
		m.cacheHooks(on)
		return on
	}
	on = on && m.mapped && m.copied == nil && prefetchSupported
	for l := range m.Layers {
		if b := m.Layers[l].MoE; b != nil {
			b.Prefetch = nil
			if on {
				b.Prefetch = expertPrefetcher(b)
			}
		}
	}
	return on
}

// Prefetching reports whether expert prefetch is on.
func (m *Model) Prefetching() bool {
	for l := range m.Layers {
		if b := m.Layers[l].MoE; b != nil && b.Prefetch != nil {
			return true
		}
	}
	return false
}

// expertPrefetcher is b's Prefetch hook: WILLNEED on each chosen expert's
// gate, up and down matrices, in the order the experts start. vec is the
// residency scratch of willNeed (the hook runs on the goroutine that owns
// the model).
func expertPrefetcher(b *moe.BlockWeights) func(experts []int) {
	var vec []byte
	return func(experts []int) {
		for _, e := range experts {
			x := &b.Experts[e]
			willNeed(x.Gate.Data, &vec)
			willNeed(x.Up.Data, &vec)
			willNeed(x.Down.Data, &vec)
		}
	}
}
