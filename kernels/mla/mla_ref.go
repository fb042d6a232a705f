package mla

import (
	"math"

	"github.com/ktune/ktune/internal/kernel"
)

// decodeRef: for each sequence and head, float64 scores against every
// cached token, a full softmax, and z = Σ_j p_j ĉ_j.
func decodeRef(d *Decode, _ int, _ kernel.Values) {
	W := d.R + d.DR
	for b, c := range d.Caches {
		n := c.Len()
		rows := make([]float32, n*W)
		c.Block(0, n, rows)
		for h := 0; h < d.NH; h++ {
			q := d.Q[(b*d.NH+h)*W : (b*d.NH+h+1)*W]
			s := make([]float64, n)
			mx := math.Inf(-1)
			for j := range s {
				var dot float64
				for i, v := range q {
					dot += float64(v) * float64(rows[j*W+i])
				}
				s[j] = dot * float64(d.Scale)
				mx = math.Max(mx, s[j])
			}
			var sum float64
			for j := range s {
				s[j] = math.Exp(s[j] - mx)
				sum += s[j]
			}
			z := d.Z[(b*d.NH+h)*d.R : (b*d.NH+h+1)*d.R]
			for i := range z {
				var acc float64
				for j := range s {
					acc += s[j] * float64(rows[j*W+i])
				}
				z[i] = float32(acc / sum)
			}
		}
	}
}

// prefillRef: the naive form in float64: decompress k_h = [W_UK ĉ | k_pe]
// and v_h = W_UV ĉ for every key, then causal softmax attention per head.
func prefillRef(p *Prefill, _ int, _ kernel.Values) {
	W, QW := p.R+p.DR, p.DN+p.DR
	N, T := p.Cache.Len(), p.T()
	rows := make([]float32, N*W)
	p.Cache.Block(0, N, rows)
	for h := 0; h < p.NH; h++ {
		k := make([]float64, N*QW)
		v := make([]float64, N*p.DV)
		for j := 0; j < N; j++ {
			c := rows[j*W : j*W+p.R]
			for e := 0; e < p.DN; e++ {
				k[j*QW+e] = dotF64(p.WUK[(h*p.DN+e)*p.R:(h*p.DN+e+1)*p.R], c)
			}
			for e := 0; e < p.DR; e++ {
				k[j*QW+p.DN+e] = float64(rows[j*W+p.R+e])
			}
			for e := 0; e < p.DV; e++ {
				v[j*p.DV+e] = dotF64(p.WUV[(h*p.DV+e)*p.R:(h*p.DV+e+1)*p.R], c)
			}
		}
		for t := 0; t < T; t++ {
			q := p.Q[(t*p.NH+h)*QW : (t*p.NH+h+1)*QW]
			last := p.P + t
			s := make([]float64, last+1)
			mx := math.Inf(-1)
			for j := range s {
				var dot float64
				for e, qv := range q {
					dot += float64(qv) * k[j*QW+e]
				}
				s[j] = dot * float64(p.Scale)
				mx = math.Max(mx, s[j])
			}
			var sum float64
			for j := range s {
				s[j] = math.Exp(s[j] - mx)
				sum += s[j]
			}
			o := p.O[(t*p.NH+h)*p.DV : (t*p.NH+h+1)*p.DV]
			for e := range o {
				var acc float64
				for j := range s {
					acc += s[j] * v[j*p.DV+e]
				}
				o[e] = float32(acc / sum)
			}
		}
	}
}

func dotF64(a, b []float32) float64 {
	var s float64
	for i, x := range a {
		s += float64(x) * float64(b[i])
	}
	return s
}
