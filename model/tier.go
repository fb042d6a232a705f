package model

import (
	"cmp"
	"fmt"
	"slices"
)

// LockHotExperts locks in RAM (mlock) the n most-routed experts of each
// MoE layer by ExpertCounts so far — the rest of a model file's experts
// stay mmap'd, paged in when routed to and evictable — and returns the
// bytes locked. Experts never routed to are not locked. An error says what
// the OS refused (typically RLIMIT_MEMLOCK) and how many bytes were locked
// before it; locks last until the model's mapping is closed.
func (m *Model) LockHotExperts(n int) (int64, error) {
	counts := m.ExpertCounts()
	var locked int64
	for l := range m.Layers {
		b := m.Layers[l].MoE
		if b == nil || counts[l] == nil {
			continue
		}
		order := make([]int, len(b.Experts))
		for e := range order {
			order[e] = e
		}
		slices.SortStableFunc(order, func(x, y int) int { return cmp.Compare(counts[l][y], counts[l][x]) })
		for _, e := range order[:min(n, len(order))] {
			if counts[l][e] == 0 {
				break
			}
			x := &b.Experts[e]
			for _, q := range []*[]byte{&x.Gate.Data, &x.Up.Data, &x.Down.Data} {
				if err := mlock(*q); err != nil {
					return locked, fmt.Errorf("model: locking expert %d of layer %d after %d bytes: %w", e, l, locked, err)
				}
				locked += int64(len(*q))
			}
		}
	}
	return locked, nil
}
