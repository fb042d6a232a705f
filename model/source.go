package model

import (
	"fmt"
	"math"
	"sync"

	"github.com/ktune/ktune/internal/arch"
	"github.com/ktune/ktune/internal/half"
	"github.com/ktune/ktune/internal/kernel"
	"github.com/ktune/ktune/internal/pool"
	"github.com/ktune/ktune/internal/quant"
	"github.com/ktune/ktune/internal/safetensors"
	"github.com/ktune/ktune/model/kfile"
)

// Source supplies the tensors a model is built from, by their checkpoint
// names (arch.Config.TensorNames). A Hugging Face checkpoint converts each
// matrix when asked (CheckpointSource); a model file (LoadFile) hands out
// views of its mapping, already packed.
type Source interface {
	// Matrix returns the tensor name ([N, K], or [N, 1, …] read as N rows)
	// packed in dt.
	Matrix(name string, dt kernel.DType) (*quant.Matrix, error)
	// Float32 returns a tensor as f32: norms, conv taps, A_log, dt_bias,
	// the router bias, MLA's kv_b_proj.
	Float32(name string) ([]float32, error)
	// Embedding returns the row-major table name in its stored dtype.
	Embedding(name string) (safetensors.DType, []byte, error)
	// Where names the file that holds name (the source itself for ""),
	// for error messages.
	Where(name string) string
	// Mapped reports whether the returned tensors are views of a mapping
	// rather than process memory.
	Mapped() bool
}

// CheckpointSource is a Hugging Face checkpoint folder as a Source: every
// tensor was checked against the config when it was opened, and matrices
// are converted from the mapping on each call.
type CheckpointSource struct {
	ck      *safetensors.Checkpoint
	threads int
	// Search packs Q8/Q4 groups with the scale search of
	// quant.QuantizeWeighted (uniform importance) instead of max-abs.
	Search bool
	// Imatrix, if set, weights the search of the matrices it covers by
	// their input channels' energies (LoadOptions.Imatrix).
	Imatrix *Imatrix
}

// NewCheckpointSource opens the checkpoint in dir and checks its tensors
// against cfg, reporting every missing, extra or mis-shaped tensor at once.
// threads bounds the conversion's workers (0: every CPU).
func NewCheckpointSource(dir string, cfg *arch.Config, threads int) (*CheckpointSource, error) {
	ck, err := safetensors.OpenCheckpoint(dir)
	if err != nil {
		return nil, fmt.Errorf("model: load %s: %w", dir, err)
	}
	if err := checkTensors(cfg, ck); err != nil {
		ck.Close()
		return nil, err
	}
	if threads <= 0 {
		threads = pool.Default().Size()
	}
	return &CheckpointSource{ck: ck, threads: threads}, nil
}

// Close unmaps the checkpoint.
func (s *CheckpointSource) Close() error { return s.ck.Close() }

// Mapped is false: matrices and f32 tensors are converted into memory (the
// embedding table alone is read in place).
func (s *CheckpointSource) Mapped() bool { return false }

// Where is the shard holding name.
func (s *CheckpointSource) Where(name string) string {
	if _, f, ok := s.ck.Info(name); ok && f != nil {
		return f.Path
	}
	return s.ck.Dir
}

// Float32 widens a tensor to f32; a NaN or ±Inf value is an error.
func (s *CheckpointSource) Float32(name string) ([]float32, error) {
	v, err := s.ck.Float32(name)
	if err != nil {
		return nil, err
	}
	for i, x := range v {
		if math.IsNaN(float64(x)) || math.IsInf(float64(x), 0) {
			return nil, fmt.Errorf("value %v at index %d is not finite", x, i)
		}
	}
	return v, nil
}

// Embedding returns the table's bytes in place; a NaN or ±Inf value is an
// error.
func (s *CheckpointSource) Embedding(name string) (safetensors.DType, []byte, error) {
	info, _, ok := s.ck.Info(name)
	if !ok {
		return "", nil, fmt.Errorf("not in the checkpoint")
	}
	raw, err := s.ck.Bytes(name)
	if err != nil {
		return "", nil, err
	}
	if i, v := kfile.FirstNonFinite(string(info.DType), raw); i >= 0 {
		k := int(info.NumElements()) / max(int(info.Shape[0]), 1)
		return "", nil, fmt.Errorf("value %v at row %d, column %d is not finite", v, i/max(k, 1), i%max(k, 1))
	}
	return info.DType, raw, nil
}

// Matrix packs a tensor into dt: blocks of rows are widened from the
// mapping into a small f32 buffer and packed straight into their panels, so
// the source is read once and never copied whole.
func (s *CheckpointSource) Matrix(name string, dt kernel.DType) (*quant.Matrix, error) {
	info, _, ok := s.ck.Info(name)
	if !ok {
		return nil, fmt.Errorf("not in the checkpoint")
	}
	raw, err := s.ck.Bytes(name)
	if err != nil {
		return nil, err
	}
	n := int(info.Shape[0])
	k := int(info.NumElements()) / max(n, 1)
	es := info.DType.Size()
	return packRowsWeighted(dt, n, k, s.threads, s.Search, s.Imatrix.importance(name, dt), func(dst []float32, r0, r1 int) error {
		return safetensors.DecodeFloat32(dst, info.DType, raw[r0*k*es:r1*k*es])
	})
}

// convRows is the number of rows converted per work item (a multiple of
// quant.PanelRows, so that blocks map onto whole packed panels).
const convRows = 256

// packRows builds an n×k matrix in dt from rows supplied in blocks by
// fill(dst [(r1−r0)·k], r0, r1), on threads workers; search picks each
// Q8/Q4 group's scale by quant.QuantizeWeighted's search.
func packRows(dt kernel.DType, n, k, threads int, search bool, fill func(dst []float32, r0, r1 int) error) (*quant.Matrix, error) {
	return packRowsWeighted(dt, n, k, threads, search, nil, fill)
}

// packRowsWeighted is packRows whose search weights input channel j by
// imp[j] (nil: uniform; imp implies the search).
func packRowsWeighted(dt kernel.DType, n, k, threads int, search bool, imp []float32, fill func(dst []float32, r0, r1 int) error) (*quant.Matrix, error) {
	search = search || imp != nil
	m, err := quant.New(dt, n, k, false)
	if err != nil {
		return nil, err
	}
	pb := m.PanelBytes()
	blocks := (n + convRows - 1) / convRows
	var mu sync.Mutex
	var first error
	pool.Default().For(threads, blocks, 1, func(_, lo, hi int) {
		buf := make([]float32, convRows*k)
		for b := lo; b < hi; b++ {
			r0, r1 := b*convRows, min((b+1)*convRows, n)
			tmp := buf[:(r1-r0)*k]
			err := fill(tmp, r0, r1)
			if err == nil {
				err = checkRange(dt, tmp, r0, k)
			}
			var q *quant.Matrix
			if err == nil && search {
				q, err = quant.QuantizeWeighted(dt, tmp, r1-r0, k, false, imp)
			} else if err == nil {
				q, err = quant.Quantize(dt, tmp, r1-r0, k, false)
			}
			if err == nil {
				err = checkScales(q, r0)
			}
			if err != nil {
				mu.Lock()
				if first == nil {
					first = err
				}
				mu.Unlock()
				return
			}
			copy(m.Data[r0/quant.PanelRows*pb:], q.Data)
		}
	})
	return m, first
}

// checkRange refuses, in rows from r0 of k values each, a NaN or ±Inf
// weight, and (for bf16) one that rounds to ±Inf in bf16.
func checkRange(dt kernel.DType, rows []float32, r0, k int) error {
	for i, v := range rows {
		bad := math.IsNaN(float64(v)) || math.IsInf(float64(v), 0)
		if !bad && dt == kernel.BF16 && half.F32ToBF16(v)&0x7f80 == 0x7f80 {
			return fmt.Errorf("weight %v at row %d, column %d overflows bf16 (largest %g)", v, r0+i/k, i%k, half.BF16ToF32(0x7f7f))
		}
		if bad {
			return fmt.Errorf("weight %v at row %d, column %d is not finite", v, r0+i/k, i%k)
		}
	}
	return nil
}

// checkScales refuses a q8/q4 block (rows from r0) whose f16 scale
// overflowed: a group of finite weights too large for the format.
func checkScales(q *quant.Matrix, r0 int) error {
	if quant.IsK(q.DType) {
		for r := 0; r < q.N; r++ {
			for g := 0; g < q.Kp/quant.GroupK; g += quant.KGroups {
				d, dm := quant.KSuper(q.DType, q.Panel(r/quant.PanelRows), r%quant.PanelRows, g)
				if math.IsInf(float64(d), 0) || math.IsNaN(float64(d)) || math.IsInf(float64(dm), 0) || math.IsNaN(float64(dm)) {
					return fmt.Errorf("row %d, columns %d..%d: weights too large for %s (the super-block's f16 scale overflows; a range of about %.3g fits)",
						r0+r, g*quant.GroupK, min((g+quant.KGroups)*quant.GroupK, q.K)-1, q.DType, 65504*63*float64(quant.KLevels(q.DType)))
				}
			}
		}
		return nil
	}
	if q.DType != kernel.Q8 && q.DType != kernel.Q4 && q.DType != kernel.Q3 && q.DType != kernel.Q6 && q.DType != kernel.Q5 && q.DType != kernel.Q2 {
		return nil
	}
	for r := 0; r < q.N; r++ {
		for g := 0; g < q.Groups(); g++ {
			if d := q.Scale(r, g); math.IsInf(float64(d), 0) || math.IsNaN(float64(d)) {
				return fmt.Errorf("row %d, columns %d..%d: weights too large for %s (the group's f16 scale overflows; |weight| up to about %.3g fit)",
					r0+r, g*quant.GroupK, min((g+1)*quant.GroupK, q.K)-1, q.DType, q8Max(q.DType))
			}
		}
	}
	return nil
}

// q8Max is about the largest |weight| a q8 or q4 group can hold (the f16
// maximum times the largest quantized value).
func q8Max(dt kernel.DType) float64 {
	switch dt {
	case kernel.Q4:
		return 65504 * 8
	case kernel.Q3:
		return 65504 * 4
	case kernel.Q6:
		return 65504 * 32
	case kernel.Q5:
		return 65504 * 16
	case kernel.Q2: // the largest scale 65024, extremes two steps from the middle
		return 65024 * 2
	}
	return 65504 * 127
}

// TensorKind is how a model holds a tensor.
type TensorKind int

const (
	// Packed: a matrix in quant's canonical packed layout, in TensorSpec.DType.
	Packed TensorKind = iota
	// Float32: a small tensor widened to f32, row-major.
	Float32
	// EmbeddingTable: the token embedding table, row-major in its
	// checkpoint dtype, read in place.
	EmbeddingTable
)

func (k TensorKind) String() string {
	switch k {
	case Packed:
		return "packed"
	case Float32:
		return "f32"
	case EmbeddingTable:
		return "embedding"
	}
	return fmt.Sprintf("TensorKind(%d)", int(k))
}

// TensorSpec is one tensor a model is built from.
type TensorSpec struct {
	Name  string       // checkpoint name
	Kind  TensorKind   //
	DType kernel.DType // Packed: the packed format
	Shape []int64      // the checkpoint's shape (Packed: read as N = Shape[0] rows of K = the rest)
}

// N and K are a packed matrix's rows and inputs.
func (t TensorSpec) N() int { return int(t.Shape[0]) }

// K is the product of the dimensions after the first.
func (t TensorSpec) K() int {
	k := int64(1)
	for _, d := range t.Shape[1:] {
		k *= d
	}
	return int(k)
}

// Elements is the number of values.
func (t TensorSpec) Elements() int64 {
	n := int64(1)
	for _, d := range t.Shape {
		n *= d
	}
	return n
}

// TensorSpecs lists the tensors a model of cfg built under opt reads, in model
// order, with the form each is held in: exactly the calls Load makes on
// its Source (it runs the same build against a recording source). With
// tied embeddings the table appears twice: as EmbeddingTable and as the
// Packed lm_head. A model file stores one entry per TensorSpec.
func TensorSpecs(cfg *arch.Config, opt LoadOptions) ([]TensorSpec, error) {
	if err := cfg.Validate(); err != nil {
		return nil, fmt.Errorf("model: %w", err)
	}
	if err := opt.defaults(cfg); err != nil {
		return nil, err
	}
	rec := &planSource{shapes: map[string][]int64{}}
	for _, t := range cfg.TensorNames() {
		rec.shapes[t.Name] = t.Shape
	}
	m := &Model{Cfg: cfg, Shapes: cfg.Shapes(), opt: opt}
	ld := &loader{src: rec, opt: &m.opt}
	ld.build(m)
	if ld.err != nil {
		return nil, ld.err
	}
	return rec.specs, nil
}

// planSource records what build asks for and returns empty placeholders.
type planSource struct {
	shapes map[string][]int64
	specs  []TensorSpec
}

func (p *planSource) add(name string, kind TensorKind, dt kernel.DType) error {
	sh, ok := p.shapes[name]
	if !ok {
		return fmt.Errorf("not in the config's tensor list")
	}
	p.specs = append(p.specs, TensorSpec{Name: name, Kind: kind, DType: dt, Shape: sh})
	return nil
}

func (p *planSource) Matrix(name string, dt kernel.DType) (*quant.Matrix, error) {
	return &quant.Matrix{DType: dt}, p.add(name, Packed, dt)
}
func (p *planSource) Float32(name string) ([]float32, error) { return nil, p.add(name, Float32, "") }
func (p *planSource) Embedding(name string) (safetensors.DType, []byte, error) {
	return "", nil, p.add(name, EmbeddingTable, "")
}
func (p *planSource) Where(string) string { return "plan" }
func (p *planSource) Mapped() bool        { return true }
