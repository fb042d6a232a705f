// A synthetic model file: random weights at a config's widths, written
// tensor by tensor like a converted checkpoint (krun convert --synthetic).

package model

import (
	"encoding/binary"
	"encoding/json"
	"fmt"
	"hash/fnv"
	"math"
	"math/rand/v2"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/ktune/ktune/internal/arch"
	"github.com/ktune/ktune/internal/kernel"
	"github.com/ktune/ktune/internal/pool"
	"github.com/ktune/ktune/internal/quant"
	"github.com/ktune/ktune/internal/safetensors"
	"github.com/ktune/ktune/model/kfile"
)

// MetaSynthetic is the meta key a synthetic model file is marked by: its
// value says how it was made (the seed), and that it is no checkpoint.
const MetaSynthetic = "synthetic"

// synthChunkPanels is how many panels (16 rows each) of a matrix, and
// synthChunkRows how many rows of the embedding table, one draw source
// fills: the unit of parallel work, fixed so that the bytes do not depend
// on the threads.
const (
	synthChunkPanels = 4
	synthChunkRows   = 256
)

// SyntheticSource is a Source of random weights for a config, made on
// demand from a seed: each tensor's bytes depend only on the seed, its
// name, its format and shape (so a 3-layer and a 27-layer file share
// layer 0). Matrices are drawn straight in their packed format with
// variance 1/K (y = W·x keeps x's scale; quant.FillRandom, zero-mean
// codes), the router likewise; the embedding table is BF16 uniform in
// ±1; norms are 1, conv taps uniform in ±0.5, A_log, dt_bias and the
// router bias 0, MLA's kv_b_proj uniform with variance 1/rank — the
// statistics model.Random uses, which keep activations of order 1 through
// the layers. Work is split over threads by fixed chunks, each with its
// own seeded draw source.
type SyntheticSource struct {
	seed    uint64
	threads int
	shapes  map[string][]int64
	// Reuse lets each Matrix call hand out the bytes of the previous
	// call's matrix: for a writer done with each tensor before it asks
	// for the next (WriteSynthetic), not for a model built of them.
	Reuse bool
	spare []byte      // the previous call's matrix bytes (Reuse)
	ahead chan drawn  // Ahead's matrices, in the plan's order
	free  chan []byte // bytes handed back for Ahead's drawing (Reuse)
	stop  chan struct{}
}

// drawn is a matrix Ahead drew.
type drawn struct {
	name string
	dt   kernel.DType
	m    *quant.Matrix
	err  error
}

// NewSyntheticSource is the synthetic source for cfg's tensors (threads 0:
// every CPU).
func NewSyntheticSource(cfg *arch.Config, seed uint64, threads int) *SyntheticSource {
	if threads <= 0 {
		threads = pool.Default().Size()
	}
	s := &SyntheticSource{seed: seed, threads: threads, shapes: map[string][]int64{}}
	for _, t := range cfg.TensorNames() {
		s.shapes[t.Name] = t.Shape
	}
	return s
}

// Where names the source (there is no file).
func (s *SyntheticSource) Where(string) string {
	return fmt.Sprintf("synthetic weights (seed %d)", s.seed)
}

// Mapped is false: every tensor is made in memory.
func (s *SyntheticSource) Mapped() bool { return false }

// rng is the draw source of chunk c of tensor name.
func (s *SyntheticSource) rng(name string, c int) *rand.Rand {
	h := fnv.New64a()
	h.Write([]byte(name))
	return rand.New(rand.NewPCG(s.seed^h.Sum64(), uint64(c)))
}

func (s *SyntheticSource) spec(name string) (TensorSpec, error) {
	sh, ok := s.shapes[name]
	if !ok {
		return TensorSpec{}, fmt.Errorf("not a tensor of the config")
	}
	return TensorSpec{Name: name, Shape: sh}, nil
}

// Matrix draws name packed in dt (not AsStored: a synthetic model has no
// stored formats), or takes it from Ahead's drawing.
func (s *SyntheticSource) Matrix(name string, dt kernel.DType) (*quant.Matrix, error) {
	if s.ahead != nil {
		if s.spare != nil { // the caller is done with it
			select {
			case s.free <- s.spare:
			default:
			}
			s.spare = nil
		}
		if d, ok := <-s.ahead; ok && d.name == name && d.dt == dt {
			if s.Reuse && d.err == nil {
				s.spare = d.m.Data
			}
			return d.m, d.err
		}
		s.Close() // out of the plan's order: draw each call from now on
	}
	m, err := s.draw(name, dt, s.spare)
	if s.Reuse && err == nil {
		s.spare = m.Data
	}
	return m, err
}

// Ahead draws the packed matrices of plan (Plan's list, in the order
// Matrix will be asked for them) on a goroutine, one ahead of the Matrix
// calls, so that drawing overlaps the caller's writing; a call out of
// that order stops it (each call then draws its matrix). Close stops it.
func (s *SyntheticSource) Ahead(plan []TensorSpec) {
	s.Close()
	s.ahead, s.free, s.stop = make(chan drawn, 1), make(chan []byte, 4), make(chan struct{})
	ahead, free, stop := s.ahead, s.free, s.stop
	go func() {
		defer close(ahead)
		for _, p := range plan {
			if p.Kind != Packed {
				continue
			}
			var buf []byte
			select {
			case buf = <-free:
			default:
			}
			m, err := s.draw(p.Name, p.DType, buf)
			select {
			case ahead <- drawn{p.Name, p.DType, m, err}:
			case <-stop:
				return
			}
		}
	}()
}

// Close stops Ahead's drawing (and waits for it).
func (s *SyntheticSource) Close() error {
	if s.stop != nil {
		close(s.stop)
		for range s.ahead {
		}
		s.ahead, s.free, s.stop = nil, nil, nil
	}
	return nil
}

// draw makes name in dt, in buf's bytes when they are large enough.
func (s *SyntheticSource) draw(name string, dt kernel.DType, buf []byte) (*quant.Matrix, error) {
	t, err := s.spec(name)
	if err != nil {
		return nil, err
	}
	var m *quant.Matrix
	if size := quant.Size(dt, t.N(), t.K(), false); int64(cap(buf)) >= size {
		// FillRandom writes every byte: no need to clear
		m, err = quant.View(dt, t.N(), t.K(), false, buf[:size])
	} else {
		m, err = quant.New(dt, t.N(), t.K(), false)
	}
	if err != nil {
		return nil, err
	}
	std := 1 / math.Sqrt(float64(t.K()))
	chunks := (m.Panels() + synthChunkPanels - 1) / synthChunkPanels
	s.parallel(chunks, func(c int) {
		quant.FillRandom(s.rng(name, c), m, c*synthChunkPanels, min((c+1)*synthChunkPanels, m.Panels()), std)
	})
	return m, nil
}

// parallel runs f(0) … f(n−1) on s.threads goroutines. (Not the kernels'
// pool: its workers spin between jobs, which costs a writer that
// alternates drawing with blocking writes.)
func (s *SyntheticSource) parallel(n int, f func(c int)) {
	var next atomic.Int64
	var wg sync.WaitGroup
	for range min(s.threads, n) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for c := int(next.Add(1) - 1); c < n; c = int(next.Add(1) - 1) {
				f(c)
			}
		}()
	}
	wg.Wait()
}

// Float32 makes a small tensor by its role (the suffix of its name).
func (s *SyntheticSource) Float32(name string) ([]float32, error) {
	t, err := s.spec(name)
	if err != nil {
		return nil, err
	}
	v := make([]float32, t.Elements())
	uniform := func(a float32) {
		r := s.rng(name, 0)
		for i := range v {
			v[i] = a * (2*r.Float32() - 1)
		}
	}
	switch {
	case strings.HasSuffix(name, "norm.weight"): // every RMSNorm's gain
		for i := range v {
			v[i] = 1
		}
	case strings.HasSuffix(name, "_conv1d.weight"):
		uniform(0.5)
	case strings.HasSuffix(name, ".A_log"), strings.HasSuffix(name, ".dt_bias"), strings.HasSuffix(name, ".e_score_correction_bias"):
		// zero
	case strings.HasSuffix(name, ".kv_b_proj.weight"):
		uniform(float32(math.Sqrt(3 / float64(t.K()))))
	default:
		return nil, fmt.Errorf("no synthetic rule for this f32 tensor")
	}
	return v, nil
}

// EmbeddingDType is the table's dtype, BF16, without making it.
func (s *SyntheticSource) EmbeddingDType(name string) (safetensors.DType, error) {
	if _, err := s.spec(name); err != nil {
		return "", err
	}
	return safetensors.BF16, nil
}

// Embedding makes the table: BF16, uniform in ±1 (a random int16 /
// 32768, truncated to bf16: four values per 64 random bits).
func (s *SyntheticSource) Embedding(name string) (safetensors.DType, []byte, error) {
	t, err := s.spec(name)
	if err != nil {
		return "", nil, err
	}
	rows, cols := t.N(), t.K()
	b := make([]byte, 2*rows*cols)
	chunks := (rows + synthChunkRows - 1) / synthChunkRows
	s.parallel(chunks, func(c int) {
		r := s.rng(name, c)
		var x uint64
		for i := c * synthChunkRows * cols; i < min((c+1)*synthChunkRows, rows)*cols; i++ {
			if i%4 == 0 {
				x = r.Uint64()
			}
			v := float32(int16(x>>(16*(i%4)))) / 32768
			binary.LittleEndian.PutUint16(b[2*i:], uint16(math.Float32bits(v)>>16))
		}
	})
	return safetensors.BF16, b, nil
}

// syntheticMeta is the meta a synthetic file adds: how it was made, and
// that it is not a checkpoint.
func syntheticMeta(seed uint64, meta map[string]string) (string, map[string]string) {
	m := map[string]string{MetaSynthetic: fmt.Sprintf("random weights (seed %d) at the config's widths, written by krun convert --synthetic: not a checkpoint, its outputs mean nothing; no tokenizer (give token ids)", seed)}
	for k, v := range meta {
		m[k] = v
	}
	return fmt.Sprintf("synthetic (seed %d)", seed), m
}

// WriteSynthetic writes a model file of cfg's shape with random weights
// (SyntheticSource, from seed) at out, atomically, in the formats opt
// chooses (a preset, group overrides, a fit plan's per-layer experts),
// one tensor at a time, as ConvertFile writes a checkpoint; its meta
// marks it synthetic (MetaSynthetic). Loading it is loading any model
// file. meta is added to the header; progress, if set, is called after
// each tensor. The same cfg, opt (but Threads) and seed give the same
// bytes.
func WriteSynthetic(cfg *arch.Config, out string, opt LoadOptions, seed uint64, meta map[string]string, progress func(done, total int, name string)) error {
	raw, err := synthCheck(cfg, &opt)
	if err != nil {
		return err
	}
	source, m := syntheticMeta(seed, meta)
	plan, err := TensorSpecs(cfg, opt)
	if err != nil {
		return err
	}
	src := NewSyntheticSource(cfg, seed, opt.Threads)
	src.Reuse = true
	src.Ahead(plan) // drawing overlaps writing
	defer src.Close()
	return writeModelFile(out, raw, cfg, src, opt, source, m, progress)
}

// SyntheticFileSize is the size in bytes of the file WriteSynthetic would
// write with these arguments (to check the disk's room first).
func SyntheticFileSize(cfg *arch.Config, opt LoadOptions, seed uint64, meta map[string]string) (int64, error) {
	raw, err := synthCheck(cfg, &opt)
	if err != nil {
		return 0, err
	}
	source, m := syntheticMeta(seed, meta)
	_, ts, m, err := modelTable(cfg, NewSyntheticSource(cfg, seed, 1), opt, source, m)
	if err != nil {
		return 0, err
	}
	return kfile.Size(raw, m, ts)
}

// synthCheck validates cfg and opt for a synthetic file and returns the
// config.json it stores.
func synthCheck(cfg *arch.Config, opt *LoadOptions) ([]byte, error) {
	if err := cfg.Validate(); err != nil {
		return nil, fmt.Errorf("model: %w", err)
	}
	if err := opt.defaults(cfg); err != nil {
		return nil, err
	}
	if opt.usesStored() {
		return nil, fmt.Errorf("model: a synthetic model has no stored formats (%q); give a dtype", AsStored)
	}
	return json.MarshalIndent(cfg, "", "  ")
}
