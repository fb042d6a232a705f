package model

import (
	"fmt"
	"slices"
	"strings"

	"github.com/ktune/ktune/internal/cpu"
	"github.com/ktune/ktune/internal/mapfile"
	"github.com/ktune/ktune/internal/pool"
	"github.com/ktune/ktune/model/kfile"
)

// WeightsMode is where a model file's packed matrices live while the model
// runs (LoadOptions.Weights).
//
// A mapped matrix is read in place from the page cache: nothing is copied,
// a model larger than RAM runs (cold experts stay on disk until routed to)
// and several processes share one copy. But the page cache maps the file in
// 4 KiB pages, or whatever folio sizes the file system made, so streaming
// the weights costs a TLB miss every 4 KiB, and in a virtual machine each
// miss walks two page tables. Copied into anonymous memory advised for
// transparent huge pages (Linux), the same matrices stream with one TLB
// entry per 2 MiB: measured on a 2-vCPU KVM guest (2-layer checkpoint,
// q4-all, `krun bench -p 64 -n 16 -t 1,2 -r 4`, --load map and auto
// alternating, 2 rounds), pp64 at 1 thread 340–394 → 570–700 tokens/s and
// tg16 41–42 → 60–69, with far less spread between samples.
type WeightsMode string

const (
	// WeightsAuto copies when the copy fits in the available memory beside
	// the budget the memory check makes (caches included), with a tenth
	// to spare, and maps otherwise, and where the available memory is
	// unknown (macOS). Where files are not mapped (mapfile.Supported
	// false: Windows) the weights are in memory already, as read.
	WeightsAuto WeightsMode = ""
	// WeightsMap reads the matrices in place from the file's mapping.
	WeightsMap WeightsMode = "map"
	// WeightsCopy copies them into memory, or refuses to load where the
	// copy does not fit.
	WeightsCopy WeightsMode = "copy"
	// WeightsRepack converts a GGUF file's matrices into the panel formats
	// in memory (quant.FromGGML) instead of running its blocks in place
	// (LoadGGUF); for a model file, whose matrices are packed already, it
	// is WeightsCopy.
	WeightsRepack WeightsMode = "repack"
)

// WeightsModes are the names ParseWeightsMode takes.
var WeightsModes = []string{"auto", "map", "copy", "repack"}

// ParseWeightsMode reads a --load value: auto, map, copy or repack (any
// case).
func ParseWeightsMode(s string) (WeightsMode, error) {
	switch strings.ToLower(s) {
	case "auto", "":
		return WeightsAuto, nil
	case "map":
		return WeightsMap, nil
	case "copy":
		return WeightsCopy, nil
	case "repack":
		return WeightsRepack, nil
	}
	return "", fmt.Errorf("unknown weights placement %q; want one of %s", s, strings.Join(WeightsModes, ", "))
}

// WeightsCopied reports how many bytes of packed matrices the model holds
// in its own memory, copied out of its model file's mapping at load
// (LoadOptions.Weights); 0 for a mapped model.
func (m *Model) WeightsCopied() int64 { return int64(len(m.copied)) }

// placeWeights copies m's matrices out of the mapping of the file at path
// as opt.Weights says (after the load's checks, m.mem budgeted); offset
// locates a matrix's bytes in that mapping (false: not in it).
func (m *Model) placeWeights(path string, offset func([]byte) (int64, bool), opt LoadOptions) error {
	if opt.Weights == WeightsMap || !mapfile.Supported {
		return nil // mapped as asked, or read into memory already (mapfile.Map)
	}
	type view struct {
		off int64
		q   *[]byte
	}
	var views []view
	seen := map[int64]bool{}
	var total, moved int64
	for _, pq := range m.matrices() {
		q := *pq
		if q == nil {
			continue
		}
		off, ok := offset(q.Data)
		if !ok || seen[off] {
			continue // on the heap (converted), or already counted (shared)
		}
		seen[off] = true
		views = append(views, view{off, &q.Data})
		total += alignUp(int64(len(q.Data)), kfile.Alignment)
		moved += int64(len(q.Data))
	}
	if total == 0 {
		return nil
	}
	avail := opt.AvailableMemory
	if avail == 0 {
		avail = cpu.AvailableMemory()
	}
	need := m.mem.Budgeted + total
	switch {
	case opt.Weights == WeightsAuto && (avail <= 0 || need > avail/10*9):
		return nil
	case opt.Weights != WeightsAuto && avail > 0 && need > avail:
		return fmt.Errorf("model: %s: copying the weights into memory needs %s (weights %s, and the budget's %s) but only %s is available; map them instead (--load map)",
			path, mib(need), mib(total), mib(m.mem.Budgeted), mib(avail))
	}
	mem, release, err := mapfile.Anon(int(total))
	if err != nil {
		if opt.Weights == WeightsAuto {
			return nil
		}
		return fmt.Errorf("model: %s: cannot allocate %s for the weights: %v; map them instead (--load map)", path, mib(total), err)
	}
	// file order, so the copy streams the mapping once; each matrix at a
	// page boundary (mlock, mincore per expert as in the file)
	slices.SortFunc(views, func(a, b view) int { return int(a.off - b.off) })
	dst := make([][]byte, len(views))
	var at int64
	for i, v := range views {
		n := int64(len(*v.q))
		dst[i] = mem[at : at+n : at+n]
		at += alignUp(n, kfile.Alignment)
	}
	pool.Default().For(m.opt.Threads, len(views), 1, func(_, lo, hi int) {
		for i := lo; i < hi; i++ {
			copy(dst[i], *views[i].q)
			// the file's pages of the copy leave the resident set at once
			// (they stay in the page cache): RSS would count them twice,
			// and its peak would be the file's size more than the copy's
			mapfile.Drop(*views[i].q)
		}
	})
	for i, v := range views {
		*v.q = dst[i]
	}
	m.copied, m.releaseCopied = mem, release
	m.mem.WeightsMapped -= min(moved, m.mem.WeightsMapped)
	m.mem.WeightsHeap += total
	m.mem.budget()
	return nil
}

func alignUp(n, a int64) int64 { return (n + a - 1) / a * a }
