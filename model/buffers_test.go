package model

import (
	"fmt"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/ktune/ktune/internal/arch"
	"github.com/ktune/ktune/internal/golden"
	"github.com/ktune/ktune/internal/kernel"
)

// TestDecodeTo: DecodeTo writes into the caller's buffers exactly what
// Decode returns (bit for bit), one sequence or a batch, step after step
// with the same buffers, and each batch row is what that sequence gives
// decoded alone (Decode is DecodeTo underneath, so the batch is also
// checked against single-sequence steps); a wrong buffer count or a short
// buffer is refused before any state changes.
func TestDecodeTo(t *testing.T) {
	for _, c := range loadTiny(t) {
		t.Run(c.f.Name(), func(t *testing.T) {
			m := mustLoad(t, c.f.Dir(), LoadOptions{})
			for _, B := range []int{1, 3} {
				var a, b, alone []*State // Decode's, DecodeTo's, one at a time
				bufs := make([][]float32, B)
				for i := 0; i < B; i++ {
					p := c.ids[0][:c.T-i]
					for _, set := range []*[]*State{&a, &b, &alone} {
						st := m.NewState(0)
						if _, err := m.Prefill(st, p); err != nil {
							t.Fatal(err)
						}
						*set = append(*set, st)
					}
					bufs[i] = make([]float32, c.V+i) // longer than V is fine
				}
				for step := 0; step < 3; step++ {
					ids := make([]int32, B)
					for i := range ids {
						ids[i] = c.gen[0][(i+step)%c.nDecode]
					}
					want, err := m.Decode(a, ids)
					if err != nil {
						t.Fatal(err)
					}
					if err := m.DecodeTo(bufs, b, ids); err != nil {
						t.Fatal(err)
					}
					for i := range ids {
						if !slices.Equal(bufs[i][:c.V], want[i]) {
							t.Fatalf("B=%d step %d seq %d: DecodeTo's logits differ from Decode's", B, step, i)
						}
						one := make([]float32, c.V)
						if err := m.DecodeTo([][]float32{one}, alone[i:i+1], ids[i:i+1]); err != nil {
							t.Fatal(err)
						}
						golden.Check(t, fmt.Sprintf("B=%d step %d seq %d against alone", B, step, i), bufs[i][:c.V], one, tolPaths)
					}
				}
				// refused: one buffer short of the batch, a short buffer
				n := b[0].Len()
				ids := make([]int32, B)
				if err := m.DecodeTo(bufs[:B-1], b, ids); err == nil || !strings.Contains(err.Error(), "logits buffers") {
					t.Errorf("B=%d, %d buffers: err %v", B, B-1, err)
				}
				short := slices.Clone(bufs)
				short[B-1] = make([]float32, c.V-1)
				if err := m.DecodeTo(short, b, ids); err == nil || !strings.Contains(err.Error(), fmt.Sprintf("logits buffer %d holds %d floats", B-1, c.V-1)) {
					t.Errorf("B=%d, short buffer: err %v", B, err)
				}
				if b[0].Len() != n {
					t.Errorf("B=%d: a refused DecodeTo changed the state (%d → %d tokens)", B, n, b[0].Len())
				}
			}
		})
	}
}

// TestPrefillLogitsBuffer: PrefillOptions.Logits receives the logits
// (the last position's, or all with AllLogits) and is what PrefillWith
// returns; a buffer too short is not written and a new slice comes back.
func TestPrefillLogitsBuffer(t *testing.T) {
	for _, c := range loadTiny(t) {
		t.Run(c.f.Name(), func(t *testing.T) {
			m := mustLoad(t, c.f.Dir(), LoadOptions{})
			p := c.ids[0]
			for _, all := range []bool{false, true} {
				n := c.V
				if all {
					n *= len(p)
				}
				want, err := m.PrefillWith(m.NewState(0), p, PrefillOptions{AllLogits: all})
				if err != nil {
					t.Fatal(err)
				}
				for _, size := range []int{n, n + 7, n - 1} {
					buf := make([]float32, size)
					got, err := m.PrefillWith(m.NewState(0), p, PrefillOptions{AllLogits: all, Logits: buf})
					if err != nil {
						t.Fatal(err)
					}
					if !slices.Equal(got, want) {
						t.Fatalf("all=%v, buffer of %d: logits differ from the allocating prefill's", all, size)
					}
					inBuf := &got[0] == &buf[0]
					if inBuf != (size >= n) {
						t.Errorf("all=%v, buffer of %d (want %d): result in the buffer %v", all, size, n, inBuf)
					}
					if size < n && slices.ContainsFunc(buf, func(v float32) bool { return v != 0 }) {
						t.Errorf("all=%v: a short buffer was written", all)
					}
				}
			}
		})
	}
}

// TestPrefillNoLogits: a prompt fed in two pieces, the first with
// NoLogits, returns nil for it and leaves the state the same two pieces
// with logits leave (the second piece's logits and the next decode's
// match bit for bit); NoLogits with AllLogits is refused.
func TestPrefillNoLogits(t *testing.T) {
	for _, c := range loadTiny(t) {
		t.Run(c.f.Name(), func(t *testing.T) {
			m := mustLoad(t, c.f.Dir(), LoadOptions{})
			p := c.ids[0]
			cut := len(p) / 2
			whole := m.NewState(0)
			if _, err := m.PrefillWith(whole, p[:cut], PrefillOptions{}); err != nil {
				t.Fatal(err)
			}
			want, err := m.PrefillWith(whole, p[cut:], PrefillOptions{})
			if err != nil {
				t.Fatal(err)
			}
			st := m.NewState(0)
			first, err := m.PrefillWith(st, p[:cut], PrefillOptions{NoLogits: true})
			if err != nil || first != nil {
				t.Fatalf("NoLogits prefill: %d logits, %v; want none", len(first), err)
			}
			got, err := m.PrefillWith(st, p[cut:], PrefillOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(got, want) {
				t.Fatal("logits after a NoLogits piece differ from those after a piece with logits")
			}
			a, err := m.Decode([]*State{whole}, []int32{p[0]})
			if err != nil {
				t.Fatal(err)
			}
			b, err := m.Decode([]*State{st}, []int32{p[0]})
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(a[0], b[0]) {
				t.Fatal("a decode after a NoLogits piece differs")
			}
			if _, err := m.PrefillWith(m.NewState(0), p, PrefillOptions{NoLogits: true, AllLogits: true}); err == nil {
				t.Error("NoLogits with AllLogits accepted")
			}
		})
	}
}

// TestDecodeToAllocates: a DecodeTo step allocates far less than one
// logits buffer, where a Decode step allocates at least one: the decode
// loop's per-step garbage (fresh pages, each a fault on first touch) is
// gone. The model is random at the tiny model's widths with a vocabulary
// of 131072, so that a [V] buffer (512 KiB) stands far above the step's
// other allocations (~74 KB at these widths). (A DecodeTo that makes its own [V] buffer fails it.)
func TestDecodeToAllocates(t *testing.T) {
	cfg, err := arch.Load(tinyDir(t))
	if err != nil {
		t.Fatal(err)
	}
	cfg.VocabSize = 1 << 17
	m, err := Random(cfg, LoadOptions{Formats: Formats{DType: kernel.Q8}, Runtime: Runtime{Threads: 1}}, 1)
	if err != nil {
		t.Fatal(err)
	}
	V := m.Shapes.Vocab
	st := m.NewState(0)
	if _, err := m.Prefill(st, []int32{3, 1, 4, 1, 5}); err != nil {
		t.Fatal(err)
	}
	buf := [][]float32{make([]float32, V)}
	sts := []*State{st}
	id := []int32{9}
	perStep := func(f func() error) float64 {
		const steps = 20
		if err := f(); err != nil { // warm: pools and caches filled
			t.Fatal(err)
		}
		var m0, m1 runtime.MemStats
		runtime.ReadMemStats(&m0)
		for range steps {
			if err := f(); err != nil {
				t.Fatal(err)
			}
		}
		runtime.ReadMemStats(&m1)
		return float64(m1.TotalAlloc-m0.TotalAlloc) / steps
	}
	dec := perStep(func() error { _, err := m.Decode(sts, id); return err })
	to := perStep(func() error { return m.DecodeTo(buf, sts, id) })
	t.Logf("bytes allocated per step: Decode %.0f, DecodeTo %.0f (a logits buffer: %d)", dec, to, 4*V)
	if dec < float64(4*V) {
		t.Errorf("Decode allocated %.0f bytes per step, less than its [V] result (%d): the measure is broken", dec, 4*V)
	}
	if to > float64(2*V) {
		t.Errorf("DecodeTo allocated %.0f bytes per step; want under half a logits buffer (%d)", to, 2*V)
	}
}
