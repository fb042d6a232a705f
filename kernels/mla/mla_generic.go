package mla

import (
	"math"

	"github.com/ktune/ktune/internal/kernel"
	"github.com/ktune/ktune/internal/scratch"
	"github.com/ktune/ktune/internal/vmath"
)

// softmaxState is the running (max, sum, weighted sum) of online softmax.
type softmaxState struct {
	m, l float32
	acc  []float32
}

// update folds scores s (already scaled) with value rows vals (stride
// ldv, width len(acc)) into st.
func (st *softmaxState) update(s []float32, vals []float32, ldv int) {
	mx := st.m
	for _, x := range s {
		mx = max(mx, x)
	}
	if mx == float32(math.Inf(-1)) {
		return
	}
	corr := float32(math.Exp(float64(st.m - mx)))
	if corr != 1 {
		st.l *= corr
		for i := range st.acc {
			st.acc[i] *= corr
		}
	}
	for j, x := range s {
		p := float32(math.Exp(float64(x - mx)))
		st.l += p
		vmath.Axpy(p, vals[j*ldv:j*ldv+len(st.acc)], st.acc)
	}
	st.m = mx
}

// decodeGeneric: per sequence the context is cut into split ranges (items
// spread over the threads); each walks its range in key blocks of kb,
// scoring all heads against each dequantized block, with online softmax;
// the partial results are merged per head at the end.
func decodeGeneric(d *Decode, threads int, prm kernel.Values) {
	kb, split := max(prm["kb"], 1), max(prm["split"], 1)
	B := len(d.Caches)
	items := B * split
	t := genericTasks.GetOr(newGenericTask)
	defer t.release()
	t.d, t.kb, t.split = d, kb, split
	t.accs = growF32(t.accs, items*d.NH*d.R)
	clear(t.accs)
	t.parts = t.parts[:0]
	for i := 0; i < items*d.NH; i++ {
		t.parts = append(t.parts, softmaxState{m: float32(math.Inf(-1)), acc: t.accs[i*d.R : (i+1)*d.R]})
	}
	forRanges(threads, items, t.body)
	for b := 0; b < B; b++ {
		for h := 0; h < d.NH; h++ {
			mergeInto(d.Z[(b*d.NH+h)*d.R:(b*d.NH+h+1)*d.R], t.parts, b*split, split, d.NH, h)
		}
	}
}

// genericTask is decodeGeneric's call, pooled with its loop body bound
// once, so that a call allocates nothing.
type genericTask struct {
	d         *Decode
	kb, split int
	parts     []softmaxState
	accs      []float32
	body      func(w, lo, hi int)
}

var genericTasks scratch.Keep[*genericTask]

func newGenericTask() *genericTask {
	t := &genericTask{}
	t.body = t.run
	return t
}

func (t *genericTask) release() {
	clear(t.parts)
	*t = genericTask{parts: t.parts[:0], accs: t.accs, body: t.body}
	genericTasks.Put(t)
}

// run walks work items [lo, hi) (sequence, context range).
func (t *genericTask) run(_, lo, hi int) {
	d, kb, split := t.d, t.kb, t.split
	W := d.R + d.DR
	tile, s := scratch.Get(kb*W), scratch.Get(kb)
	defer scratch.Put(tile, s)
	for it := lo; it < hi; it++ {
		b, sp := it/split, it%split
		c := d.Caches[b]
		n := c.Len()
		j0, j1 := n*sp/split, n*(sp+1)/split
		for k0 := j0; k0 < j1; k0 += kb {
			m := min(kb, j1-k0)
			c.Block(k0, m, tile)
			for h := 0; h < d.NH; h++ {
				q := d.Q[(b*d.NH+h)*W : (b*d.NH+h+1)*W]
				for j := 0; j < m; j++ {
					s[j] = d.Scale * vmath.Dot(q, tile[j*W:(j+1)*W])
				}
				t.parts[it*d.NH+h].update(s[:m], tile, W)
			}
		}
	}
}

// growF32 returns s[:n], or a new slice when s holds fewer than n.
func growF32(s []float32, n int) []float32 {
	if cap(s) < n {
		return make([]float32, n)
	}
	return s[:n]
}

// mergeInto combines the split partial states of head h into z.
func mergeInto(z []float32, parts []softmaxState, first, split, nh, h int) {
	M := float32(math.Inf(-1))
	for s := 0; s < split; s++ {
		M = max(M, parts[(first+s)*nh+h].m)
	}
	clear(z)
	var l float32
	for s := 0; s < split; s++ {
		st := &parts[(first+s)*nh+h]
		if st.l == 0 {
			continue
		}
		e := float32(math.Exp(float64(st.m - M)))
		l += st.l * e
		vmath.Axpy(e, st.acc, z)
	}
	if l > 0 {
		inv := 1 / l
		for i := range z {
			z[i] *= inv
		}
	}
}

// prefillGeneric: heads spread over the threads; per head, each key block
// is dequantized and decompressed once (k = [W_UK ĉ | k_pe], v = W_UV ĉ),
// then every query that can see part of it updates its online softmax.
func prefillGeneric(p *Prefill, threads int, prm kernel.Values) {
	kb := max(prm["kb"], 1)
	W, QW := p.R+p.DR, p.DN+p.DR
	T := p.T()
	forRanges(threads, p.NH, func(_, lo, hi int) {
		tile := make([]float32, kb*W)
		k := make([]float32, kb*QW)
		v := make([]float32, kb*p.DV)
		s := make([]float32, kb)
		st := make([]softmaxState, T)
		accs := make([]float32, T*p.DV)
		for h := lo; h < hi; h++ {
			for t := range st {
				st[t] = softmaxState{m: float32(math.Inf(-1)), acc: accs[t*p.DV : (t+1)*p.DV]}
				clear(st[t].acc)
			}
			wuk := p.WUK[h*p.DN*p.R : (h+1)*p.DN*p.R]
			wuv := p.WUV[h*p.DV*p.R : (h+1)*p.DV*p.R]
			for j0 := 0; j0 < p.P+T; j0 += kb {
				m := min(kb, p.P+T-j0)
				p.Cache.Block(j0, m, tile)
				for j := 0; j < m; j++ {
					c := tile[j*W : j*W+p.R]
					for e := 0; e < p.DN; e++ {
						k[j*QW+e] = vmath.Dot(wuk[e*p.R:(e+1)*p.R], c)
					}
					copy(k[j*QW+p.DN:(j+1)*QW], tile[j*W+p.R:(j+1)*W])
					for e := 0; e < p.DV; e++ {
						v[j*p.DV+e] = vmath.Dot(wuv[e*p.R:(e+1)*p.R], c)
					}
				}
				// queries t see keys ≤ P+t: the first that sees this block is t = j0−P.
				for t := max(0, j0-p.P); t < T; t++ {
					q := p.Q[(t*p.NH+h)*QW : (t*p.NH+h+1)*QW]
					vis := min(m, p.P+t-j0+1)
					for j := 0; j < vis; j++ {
						s[j] = p.Scale * vmath.Dot(q, k[j*QW:(j+1)*QW])
					}
					st[t].update(s[:vis], v, p.DV)
				}
			}
			for t := 0; t < T; t++ {
				o := p.O[(t*p.NH+h)*p.DV : (t*p.NH+h+1)*p.DV]
				inv := 1 / st[t].l
				for e := range o {
					o[e] = st[t].acc[e] * inv
				}
			}
		}
	})
}
