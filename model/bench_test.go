package model

import (
	"fmt"
	"math"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/ktune/ktune/internal/arch"
	"github.com/ktune/ktune/internal/golden"
	"github.com/ktune/ktune/internal/kernel"
	"github.com/ktune/ktune/roofline"
)

// TestRandom: a synthetic model at the tiny model's widths runs, gives
// finite logits, and prefill-then-decode matches one prefill.
func TestRandom(t *testing.T) {
	cfg, err := arch.Load(tinyDir(t))
	if err != nil {
		t.Fatal(err)
	}
	for _, dt := range []kernel.DType{kernel.F32, kernel.BF16, kernel.Q8, kernel.Q5, kernel.Q4, kernel.Q2} {
		m, err := Random(cfg, LoadOptions{Formats: Formats{DType: dt}, Runtime: Runtime{Classes: []kernel.Class{kernel.ClassF32}}}, 1)
		if err != nil {
			t.Fatal(err)
		}
		ids := []int32{3, 1, 4, 1, 5, 9, 2, 6}
		whole, err := m.PrefillWith(m.NewState(0), ids, PrefillOptions{AllLogits: true})
		if err != nil {
			t.Fatal(err)
		}
		for i, v := range whole {
			if math.IsNaN(float64(v)) || math.IsInf(float64(v), 0) {
				t.Fatalf("%s: logit %d = %v", dt, i, v)
			}
		}
		st := m.NewState(0)
		if _, err := m.Prefill(st, ids[:5]); err != nil {
			t.Fatal(err)
		}
		V := m.Shapes.Vocab
		for i := 5; i < len(ids); i++ {
			lg, err := m.Decode([]*State{st}, ids[i:i+1])
			if err != nil {
				t.Fatal(err)
			}
			// tolerance relative to the logits' size
			if d := relRMS(lg[0], whole[i*V:(i+1)*V]); d > 1e-5 {
				t.Errorf("%s: decode %d vs prefill: relative RMS %.3g", dt, i, d)
			}
		}
		t.Logf("%s: %v; decode reads %d weight bytes per token", dt, m.Memory(), m.DecodeWeightBytes())
	}
}

// readCeiling measures the read bandwidth (bytes/s) of threads workers
// streaming a buffer far larger than the caches, as the decode GEMVs do.
func readCeiling(threads int) float64 {
	buf := make([]byte, 512<<20)
	for i := 0; i < len(buf); i += 4096 {
		buf[i] = byte(i)
	}
	best := 0.0
	for range 3 {
		t0 := time.Now()
		roofline.ReadParallel(buf, 4, threads)
		best = max(best, float64(len(buf))/time.Since(t0).Seconds())
	}
	return best
}

// benchModel runs prefill (T tokens from an empty state) and decode (one
// token after a short prompt) and reports tokens/s; decode also reports
// its weight bytes per token, the read ceiling measured in the same run,
// and the fraction of the bound (bytes/token × tokens/s ÷ ceiling).
func benchModel(b *testing.B, name string, m *Model, threads int) {
	m.opt.Threads = threads
	V := int32(m.Shapes.Vocab)
	b.Run(fmt.Sprintf("model=%s/op=prefill/t=64/dtype=%s/threads=%d", name, m.opt.DType, threads), func(b *testing.B) {
		ids := make([]int32, 64)
		for i := range ids {
			ids[i] = int32(i*7919) % V
		}
		st := m.NewState(0)
		for b.Loop() {
			st.Reset()
			if _, err := m.Prefill(st, ids); err != nil {
				b.Fatal(err)
			}
		}
		b.ReportMetric(float64(len(ids)*b.N)/b.Elapsed().Seconds(), "tokens/s")
	})
	b.Run(fmt.Sprintf("model=%s/op=decode/dtype=%s/threads=%d", name, m.opt.DType, threads), func(b *testing.B) {
		ceiling := readCeiling(threads)
		st := m.NewState(0)
		if _, err := m.Prefill(st, []int32{1, 2, 3, 4}); err != nil {
			b.Fatal(err)
		}
		// DecodeTo into reused buffers, as krun's loop: a decode step
		// allocates nothing (TestDecodeAllocs)
		out, sts, ids := [][]float32{make([]float32, V)}, []*State{st}, []int32{0}
		b.ResetTimer()
		b.ReportAllocs()
		i := int32(0)
		for b.Loop() {
			if st.Len() >= 512 {
				st.Reset()
			}
			i++
			ids[0] = i * 7919 % V
			if err := m.DecodeTo(out, sts, ids); err != nil {
				b.Fatal(err)
			}
		}
		tps := float64(b.N) / b.Elapsed().Seconds()
		bytes := float64(m.DecodeWeightBytes())
		b.ReportMetric(tps, "tokens/s")
		b.ReportMetric(bytes*tps/1e9, "GB/s")
		b.ReportMetric(ceiling/1e9, "ceiling-GB/s")
		b.ReportMetric(bytes*tps/ceiling, "bound-frac")
	})
}

func BenchmarkTinyModel(b *testing.B) {
	files, err := golden.Find(golden.TinyModel)
	if err != nil || len(files) == 0 {
		b.Fatalf("no tiny_model golden folder: %v", err)
	}
	dir := files[0].Dir()
	for _, f := range files {
		f.Close()
	}
	for _, dt := range []kernel.DType{kernel.F32, kernel.Q8, kernel.Q4} {
		m, err := Load(dir, LoadOptions{Formats: Formats{DType: dt}})
		if err != nil {
			b.Fatal(err)
		}
		for threads := 1; threads <= 2; threads++ {
			benchModel(b, "tiny", m, threads)
		}
		m.Close()
	}
}

// BenchmarkSynthetic: random weights at Kimi Linear's widths;
// KTUNE_SYNTH_LAYERS layers (default 2: a KDA layer with the dense MLP and
// an MLA layer with 256 experts), KTUNE_SYNTH_DTYPES (default q4,q8).
func BenchmarkSynthetic(b *testing.B) {
	layers := 2
	if s := os.Getenv("KTUNE_SYNTH_LAYERS"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil {
			b.Fatal(err)
		}
		layers = n
	}
	dts := []kernel.DType{kernel.Q4, kernel.Q8}
	if s := os.Getenv("KTUNE_SYNTH_DTYPES"); s != "" {
		dts = nil
		for _, x := range strings.Split(s, ",") {
			dts = append(dts, kernel.DType(x))
		}
	}
	cfg, err := SyntheticConfig(layers)
	if err != nil {
		b.Fatal(err)
	}
	for _, dt := range dts {
		t0 := time.Now()
		m, err := Random(cfg, LoadOptions{Formats: Formats{DType: dt}}, 1)
		if err != nil {
			b.Fatal(err)
		}
		b.Logf("%s: built in %v; %v; decode reads %.1f MiB/token", dt, time.Since(t0).Round(time.Millisecond), m.Memory(), float64(m.DecodeWeightBytes())/(1<<20))
		for threads := 1; threads <= 2; threads++ {
			benchModel(b, fmt.Sprintf("synthetic-%dl", layers), m, threads)
		}
		m.Close()
	}
}
