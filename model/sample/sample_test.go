package sample

import (
	"errors"
	"math"
	"math/rand/v2"
	"slices"
	"sort"
	"testing"
)

var nan = float32(math.NaN())
var inf = float32(math.Inf(1))

func mustNew(t *testing.T, cfg Config) *Sampler {
	t.Helper()
	s, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestGreedy(t *testing.T) {
	s := mustNew(t, Config{})
	for _, c := range []struct {
		l    []float32
		want int32
	}{
		{[]float32{1, 3, 3, 2}, 1}, // tie: lowest id
		{[]float32{nan, 1, nan, 0.5}, 1},
		{[]float32{nan, -inf, -5}, 2},
		{[]float32{0, inf, inf}, 1},
		{[]float32{-1}, 0},
	} {
		if got := s.Sample(c.l, nil); got != c.want {
			t.Errorf("greedy %v = %d, want %d", c.l, got, c.want)
		}
	}
}

func TestNoCandidate(t *testing.T) {
	for _, cfg := range []Config{{}, {Temperature: 1}, {Temperature: 1, TopK: 3, TopP: 0.5}} {
		s := mustNew(t, cfg)
		for _, l := range [][]float32{{nan, nan}, {-inf, nan}, {}} {
			if _, err := s.TrySample(l, nil); !errors.Is(err, ErrNoCandidate) {
				t.Errorf("%+v on %v: err = %v, want ErrNoCandidate", cfg, l, err)
			}
		}
		func() {
			defer func() {
				if r := recover(); r != ErrNoCandidate {
					t.Errorf("Sample on all-NaN: recovered %v, want ErrNoCandidate", r)
				}
			}()
			s.Sample([]float32{nan}, nil)
		}()
	}
}

func TestNaNNeverDrawn(t *testing.T) {
	s := mustNew(t, Config{Temperature: 5, Seed: 1})
	l := []float32{nan, 0, nan, 0, nan}
	for range 2000 {
		if id := s.Sample(l, nil); id != 1 && id != 3 {
			t.Fatalf("drew %d (NaN)", id)
		}
	}
	// +Inf wins outright: uniform among the +Inf ids.
	l = []float32{100, inf, 0, inf}
	n1 := 0
	for range 2000 {
		switch s.Sample(l, nil) {
		case 1:
			n1++
		case 3:
		default:
			t.Fatal("drew a finite logit over +Inf")
		}
	}
	if n1 < 850 || n1 > 1150 {
		t.Errorf("+Inf ids drawn %d/2000 and %d/2000; want about even", n1, 2000-n1)
	}
}

func randLogits(rng *rand.Rand, n int, scale float64, quant bool) []float32 {
	l := make([]float32, n)
	for i := range l {
		v := rng.NormFloat64() * scale
		if quant {
			v = math.Round(v) // many ties
		}
		l[i] = float32(v)
	}
	return l
}

func TestTopK1IsGreedy(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	g := mustNew(t, Config{})
	for trial := range 200 {
		l := randLogits(rng, 1+rng.IntN(300), 2, trial%2 == 0)
		s := mustNew(t, Config{Temperature: 0.1 + 2*rng.Float32(), TopK: 1, TopP: 0.9, Seed: uint64(trial)})
		if a, b := s.Sample(l, nil), g.Sample(l, nil); a != b {
			t.Fatalf("trial %d: top-k=1 drew %d, greedy %d", trial, a, b)
		}
	}
}

// refFilter is a plain reference for filter: sort everything (logit desc, id asc), softmax in
// float64, then cut by top-k, top-p and min-p. It returns id -> normalised probability.
func refFilter(l []float32, cfg Config) map[int32]float64 {
	type kv struct {
		id int32
		v  float64
	}
	var all []kv
	for i, v := range l {
		if !math.IsNaN(float64(v)) && !math.IsInf(float64(v), -1) {
			all = append(all, kv{int32(i), float64(v) / float64(cfg.Temperature)})
		}
	}
	sort.SliceStable(all, func(i, j int) bool { return all[i].v > all[j].v })
	if cfg.TopK > 0 && cfg.TopK < len(all) {
		all = all[:cfg.TopK]
	}
	p := make([]float64, len(all))
	tot := 0.0
	for i := range all {
		p[i] = math.Exp(all[i].v - all[0].v)
		tot += p[i]
	}
	n := len(all)
	if cfg.TopP > 0 && cfg.TopP < 1 {
		acc := 0.0
		for i := range all {
			if acc >= float64(cfg.TopP)*tot {
				n = i
				break
			}
			acc += p[i]
		}
	}
	out := map[int32]float64{}
	kept := 0.0
	for i := range n {
		if cfg.MinP > 0 && p[i] < float64(cfg.MinP)*p[0] {
			continue
		}
		out[all[i].id] = p[i]
		kept += p[i]
	}
	for id := range out {
		out[id] /= kept
	}
	return out
}

func TestFilterAgainstReference(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	for trial := range 300 {
		n := 1 + rng.IntN(3000) // past partialTopP, so both top-p paths run
		scale := []float64{0.01, 1, 8}[trial%3]
		l := randLogits(rng, n, scale, trial%5 == 0)
		if trial%7 == 0 {
			l[rng.IntN(n)] = nan
		}
		cfg := Config{Temperature: 0.2 + 1.5*rng.Float32()}
		if rng.IntN(2) == 0 {
			cfg.TopK = 1 + rng.IntN(n+5)
		}
		if rng.IntN(3) > 0 {
			cfg.TopP = rng.Float32()
		}
		if rng.IntN(3) == 0 {
			cfg.MinP = rng.Float32() * 0.5
		}
		s := mustNew(t, cfg)
		got, err := s.filter(l)
		if err != nil {
			t.Fatal(err)
		}
		want := refFilter(l, cfg)
		if len(got) != len(want) {
			t.Fatalf("trial %d %+v n=%d: kept %d, reference %d", trial, cfg, n, len(got), len(want))
		}
		tot := mass(got)
		for _, c := range got {
			w, ok := want[c.id]
			if !ok || math.Abs(c.p/tot-w) > 1e-9 {
				t.Fatalf("trial %d: id %d p=%g, reference %g (present %v)", trial, c.id, c.p/tot, w, ok)
			}
		}
	}
}

// chiSquare returns sum (obs-exp)^2/exp over the ids of want (normalised probabilities) and
// fails if any draw fell outside want.
func chiSquare(t *testing.T, s *Sampler, l []float32, want map[int32]float64, draws int) float64 {
	t.Helper()
	counts := map[int32]int{}
	for range draws {
		id := s.Sample(l, nil)
		if _, ok := want[id]; !ok {
			t.Fatalf("drew %d, outside the kept set %v", id, want)
		}
		counts[id]++
	}
	x2 := 0.0
	for id, p := range want {
		e := p * float64(draws)
		d := float64(counts[id]) - e
		x2 += d * d / e
	}
	return x2
}

func TestDistribution(t *testing.T) {
	// Fixed seeds: the statistics are deterministic, so this cannot flake. The bounds are the
	// chi-square 0.999 quantiles for the degrees of freedom (df = kept - 1).
	l := []float32{2, 1, 0.5, 0, -1, -3, nan, -inf}
	for _, c := range []struct {
		cfg   Config
		kept  int
		bound float64
	}{
		{Config{Temperature: 1, Seed: 11}, 6, 20.5},                      // df 5
		{Config{Temperature: 0.7, TopK: 4, Seed: 12}, 4, 16.3},           // df 3
		{Config{Temperature: 1.3, MinP: 0.1, Seed: 13}, 4, 16.3},         // p >= 0.1 pmax: logits >= 2-1.3*ln10
		{Config{Temperature: 1, TopP: 0.75, Seed: 14}, 2, 10.8},          // df 1
		{Config{Temperature: 1, TopP: 0.95, TopK: 3, Seed: 15}, 3, 13.8}, // df 2
	} {
		s := mustNew(t, c.cfg)
		want := refFilter(l, c.cfg)
		if len(want) != c.kept {
			t.Fatalf("%+v: reference keeps %d, test expects %d", c.cfg, len(want), c.kept)
		}
		if x2 := chiSquare(t, s, l, want, 100_000); x2 > c.bound {
			t.Errorf("%+v: chi-square %.2f > %.1f", c.cfg, x2, c.bound)
		}
	}
}

func TestTopPSubset(t *testing.T) {
	// Probabilities 0.5, 0.3, 0.15, 0.05: the mass before id 2 is 0.8, so top-p 0.75 keeps
	// {0, 1} and top-p 0.85 keeps {0, 1, 2}.
	l := []float32{float32(math.Log(0.5)), float32(math.Log(0.3)), float32(math.Log(0.15)), float32(math.Log(0.05))}
	for _, c := range []struct {
		p    float32
		want []int32
	}{{0.75, []int32{0, 1}}, {0.85, []int32{0, 1, 2}}, {0.4, []int32{0}}, {1, []int32{0, 1, 2, 3}}} {
		s := mustNew(t, Config{Temperature: 1, TopP: c.p})
		kept, _ := s.filter(l)
		var ids []int32
		for _, k := range kept {
			ids = append(ids, k.id)
		}
		slices.Sort(ids)
		if !slices.Equal(ids, c.want) {
			t.Errorf("top-p %v kept %v, want %v", c.p, ids, c.want)
		}
	}
}

func TestRepetitionPenalty(t *testing.T) {
	l := []float32{2, -1, 0.5, 0, 1}
	orig := slices.Clone(l)
	s := mustNew(t, Config{RepeatPenalty: 2})
	got := slices.Clone(s.penalised(l, []int32{0, 1, 1, 3, 99, -1}))
	if want := []float32{1, -2, 0.5, 0, 1}; !slices.Equal(got, want) {
		t.Errorf("penalised = %v, want %v", got, want)
	}
	if !slices.Equal(l, orig) {
		t.Error("Sample modified the caller's logits")
	}
	s = mustNew(t, Config{RepeatPenalty: 2, RepeatLastN: 2})
	got = s.penalised(l, []int32{0, 1, 4})
	if want := []float32{2, -2, 0.5, 0, 0.5}; !slices.Equal(got, want) {
		t.Errorf("last-2 penalised = %v, want %v", got, want)
	}
	// The effect on decoding: greedy moves off a repeated token.
	s = mustNew(t, Config{RepeatPenalty: 1.5})
	if id := s.Sample([]float32{2, 1.5}, []int32{0}); id != 1 {
		t.Errorf("greedy with penalty picked %d, want 1", id)
	}
	// And on sampling: the repeated token's share drops from e^1/(e^1+1) to e^0.5/(e^0.5+1).
	s = mustNew(t, Config{Temperature: 1, RepeatPenalty: 2, Seed: 3})
	n0 := 0
	for range 20000 {
		if s.Sample([]float32{1, 0}, []int32{0}) == 0 {
			n0++
		}
	}
	if f, want := float64(n0)/20000, math.Exp(0.5)/(math.Exp(0.5)+1); math.Abs(f-want) > 0.015 {
		t.Errorf("penalised token drawn %.3f of the time, want %.3f", f, want)
	}
}

func TestDeterministic(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 9))
	l := randLogits(rng, 1000, 2, false)
	cfg := Config{Temperature: 0.8, TopK: 50, TopP: 0.9, RepeatPenalty: 1.1, Seed: 42}
	run := func(s *Sampler) []int32 {
		var ids []int32
		for range 50 {
			ids = append(ids, s.Sample(l, ids))
		}
		return ids
	}
	a, b := mustNew(t, cfg), mustNew(t, cfg)
	ra, rb := run(a), run(b)
	if !slices.Equal(ra, rb) {
		t.Fatal("same seed, different tokens")
	}
	a.Reseed(42)
	if !slices.Equal(run(a), ra) {
		t.Fatal("Reseed did not restart the sequence")
	}
	cfg.Seed = 43
	if slices.Equal(run(mustNew(t, cfg)), ra) {
		t.Error("a different seed gave the same 50 tokens")
	}
}

func TestValidate(t *testing.T) {
	for _, c := range []Config{
		{Temperature: nan}, {Temperature: inf}, {TopK: -1}, {TopP: -0.1}, {TopP: nan},
		{MinP: 1.5}, {MinP: -1}, {RepeatPenalty: -1}, {RepeatPenalty: inf}, {RepeatLastN: -1},
	} {
		if _, err := New(c); err == nil {
			t.Errorf("New(%+v) accepted", c)
		}
	}
	for _, c := range []Config{{}, {Temperature: -1}, {Temperature: 1, TopP: 1, MinP: 1, TopK: 1 << 20}} {
		if _, err := New(c); err != nil {
			t.Errorf("New(%+v): %v", c, err)
		}
	}
}

func BenchmarkSample(b *testing.B) {
	rng := rand.New(rand.NewPCG(1, 1))
	l := randLogits(rng, 163840, 3, false)
	hist := make([]int32, 256)
	for i := range hist {
		hist[i] = int32(rng.IntN(len(l)))
	}
	for _, c := range []struct {
		name string
		cfg  Config
	}{
		{"greedy", Config{}},
		{"temp", Config{Temperature: 0.7}},
		{"topk40", Config{Temperature: 0.7, TopK: 40}},
		{"topp0.9", Config{Temperature: 0.7, TopP: 0.9}},
		{"all", Config{Temperature: 0.7, TopK: 40, TopP: 0.9, MinP: 0.05, RepeatPenalty: 1.1, RepeatLastN: 64}},
	} {
		b.Run(c.name, func(b *testing.B) {
			s, _ := New(c.cfg)
			for b.Loop() {
				s.Sample(l, hist)
			}
		})
	}
}
