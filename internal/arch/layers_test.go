package arch

import "testing"

// TestLayerCounts checks the counting helpers against LayerKind and IsMoE,
// layer by layer, over many layouts.
func TestLayerCounts(t *testing.T) {
	for L := 1; L <= 12; L++ {
		for first := -1; first <= L+1; first++ {
			for freq := 0; freq <= 4; freq++ {
				for _, experts := range []int{0, 8} {
					c := &Config{NumHiddenLayers: L, FirstKDenseReplace: first, MoELayerFreq: freq, NumExperts: experts}
					// KDA at odd 1-based layers, MLA at multiples of 3 (some in
					// both), plus out-of-range and repeated entries.
					c.LinearAttn.KDALayers = []int{0, L + 1, 1, 1}
					c.LinearAttn.FullAttnLayers = []int{-2, L + 5}
					for x := 1; x <= L; x++ {
						if x%2 == 1 {
							c.LinearAttn.KDALayers = append(c.LinearAttn.KDALayers, x)
						}
						if x%3 == 0 {
							c.LinearAttn.FullAttnLayers = append(c.LinearAttn.FullAttnLayers, x, x)
						}
					}
					var kda, mla, moe int
					for l := range L {
						switch c.LayerKind(l) {
						case KDA:
							kda++
						case MLA:
							mla++
						}
						if c.IsMoE(l) {
							moe++
						}
					}
					if c.NumKDALayers() != kda || c.NumMLALayers() != mla || c.NumMoELayers() != moe ||
						c.NumDenseLayers() != L-moe {
						t.Fatalf("L=%d first=%d freq=%d experts=%d: counts %d/%d/%d/%d, want %d/%d/%d/%d", L, first, freq, experts,
							c.NumKDALayers(), c.NumMLALayers(), c.NumMoELayers(), c.NumDenseLayers(), kda, mla, moe, L-moe)
					}
				}
			}
		}
	}
}
