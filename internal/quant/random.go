package quant

import (
	"encoding/binary"
	"math/rand/v2"

	"github.com/ktune/ktune/internal/half"
	"github.com/ktune/ktune/internal/kernel"
)

// Random returns an n×k matrix of random weights with standard deviation
// about std, for tests, tuning and benchmarks. Q8 and Q4 are filled
// directly in the packed format — uniform integers under per-group scales
// drawn around std — which is two orders of magnitude faster than drawing
// normal floats and quantizing them (a 256-expert MoE block is 1.8 G
// weights); Q3 and Q6 likewise; F32 and BF16 hold normal draws. Padded rows and columns are
// zero.
func Random(r *rand.Rand, dt kernel.DType, n, k int, hasMin bool, std float64) (*Matrix, error) {
	if dt == kernel.F32 || dt == kernel.BF16 {
		w := make([]float32, n*k)
		for i := range w {
			w[i] = float32(std * r.NormFloat64())
		}
		return Quantize(dt, w, n, k, hasMin)
	}
	m, err := New(dt, n, k, hasMin)
	if err != nil {
		return nil, err
	}
	// the integer std of a uniform draw: Q8 q ∈ [−128, 127], Q4 q ∈ [0, 15], Q3 u ∈ [0, 7], Q6 u ∈ [0, 63]
	qstd := 73.9
	gb, groups, valBytes := m.GroupBytes(), m.Groups(), 8*LineBytes
	switch dt {
	case kernel.Q4:
		qstd, valBytes = 4.61, 4*LineBytes
	case kernel.Q3: // u ∈ [0, 7]
		qstd, valBytes = 2.29, Q3Lines*LineBytes
	case kernel.Q6: // u ∈ [0, 63]
		qstd, valBytes = 18.47, Q6Lines*LineBytes
	}
	for p := 0; p < m.Panels(); p++ {
		panel := m.Panel(p)
		for g := 0; g < groups; g++ {
			rec := panel[g*gb : (g+1)*gb]
			for i := 0; i+8 <= valBytes; i += 8 {
				binary.LittleEndian.PutUint64(rec[i:], r.Uint64())
			}
			for pr := 0; pr < PanelRows; pr++ {
				d := std / qstd * (0.75 + 0.5*r.Float64())
				if p*PanelRows+pr >= n {
					d = 0
				}
				binary.LittleEndian.PutUint16(rec[valBytes+2*pr:], half.F32ToF16(float32(d)))
				if dt == kernel.Q4 && hasMin { // w = d·q + m, centred
					binary.LittleEndian.PutUint16(rec[valBytes+2*PanelRows+2*pr:], half.F32ToF16(float32(-7.5*d)))
				}
			}
			// padded columns of the last group: zero (a mid value with a min;
			// the activations there are zero either way)
			if g == groups-1 {
				for j := k - g*GroupK; j < GroupK; j++ {
					for pr := 0; pr < PanelRows; pr++ {
						switch dt {
						case kernel.Q8:
							rec[q8Offset(pr, j)] = 128
						case kernel.Q3:
							setQ3(rec, pr, j, Q3Zero)
						case kernel.Q6:
							setQ6(rec, pr, j, Q6Zero)
						default:
							setNibble(rec, pr, j, 8)
						}
					}
				}
			}
		}
	}
	return m, nil
}
