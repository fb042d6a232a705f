package kda

import "math"

// recurrentRef is the reference KDA recurrence (golden README §3.1), in
// float64, token by token, for one (sequence, head):
//
//	S'  = diag(exp(g_t)) · S
//	u   = β_t · (v_t − S'ᵀ k_t)
//	S   = S' + k_t uᵀ
//	o_t = Sᵀ (scale · q_t)
//
// q, k, g are T rows of stride sq (K used), v and o T rows of stride sv (V
// used), beta T values of stride sb; state is K×V row-major, updated.
func recurrentRef(o, state []float32, q, k, v, g, beta []float32, T, K, V, sq, sv, sb int, scale float32) {
	S := make([]float64, K*V)
	for i := range S {
		S[i] = float64(state[i])
	}
	p := make([]float64, V)
	for t := 0; t < T; t++ {
		qt, kt, gt := q[t*sq:t*sq+K], k[t*sq:t*sq+K], g[t*sq:t*sq+K]
		vt, b := v[t*sv:t*sv+V], float64(beta[t*sb])
		clear(p)
		for i := 0; i < K; i++ {
			a := math.Exp(float64(gt[i]))
			row := S[i*V : (i+1)*V]
			for j := range row {
				row[j] *= a
				p[j] += float64(kt[i]) * row[j]
			}
		}
		for j := range p {
			p[j] = b * (float64(vt[j]) - p[j]) // u
		}
		ot := o[t*sv : t*sv+V]
		out := make([]float64, V)
		for i := 0; i < K; i++ {
			row := S[i*V : (i+1)*V]
			ki, qi := float64(kt[i]), float64(scale)*float64(qt[i])
			for j := range row {
				row[j] += ki * p[j]
				out[j] += qi * row[j]
			}
		}
		for j := range ot {
			ot[j] = float32(out[j])
		}
	}
	for i := range S {
		state[i] = float32(S[i])
	}
}
