package model

import (
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"unsafe"

	"github.com/ktune/ktune/internal/arch"
	"github.com/ktune/ktune/internal/gguf"
	"github.com/ktune/ktune/internal/kernel"
	"github.com/ktune/ktune/internal/quant"
	"github.com/ktune/ktune/internal/safetensors"
	"github.com/ktune/ktune/internal/version"
	"github.com/ktune/ktune/model/kfile"
)

// Meta keys a model file records its weight formats under (Formats'
// DType, AttnDType, FFNDType, ExpertDType, HeadDType, GateDType).
const (
	MetaDType       = "dtype"
	MetaAttnDType   = "dtype.attn"
	MetaFFNDType    = "dtype.ffn"
	MetaExpertDType = "dtype.experts"
	MetaHeadDType   = "dtype.head"
	MetaGateDType   = "dtype.gates"
)

// dtypeFields pairs the meta keys with the formats they set.
func dtypeFields(o *Formats) []struct {
	key string
	p   *kernel.DType
} {
	return []struct {
		key string
		p   *kernel.DType
	}{{MetaDType, &o.DType}, {MetaAttnDType, &o.AttnDType}, {MetaFFNDType, &o.FFNDType},
		{MetaExpertDType, &o.ExpertDType}, {MetaHeadDType, &o.HeadDType}, {MetaGateDType, &o.GateDType}}
}

// InputError is a problem with a model's input — a checkpoint, a model
// file, their config or a tensor's values — rather than with the machine
// (the command-line programs exit 2 on it, 1 on other failures).
type InputError struct{ Err error }

func (e *InputError) Error() string { return e.Err.Error() }
func (e *InputError) Unwrap() error { return e.Err }

// inputErr marks err (nil stays nil) as an InputError.
func inputErr(err error) error {
	if err == nil {
		return nil
	}
	return &InputError{err}
}

// ConvertFile converts the Hugging Face checkpoint in dir into a model
// file at out (written atomically): config.json verbatim, then every tensor
// of TensorSpecs(cfg, opt) in model order — matrices packed in the dtypes opt
// chooses, small tensors as raw f32, the embedding table raw in its
// checkpoint dtype. One tensor is converted at a time. meta is added to
// the header; progress, if set, is called after each tensor.
//
// Problems with the checkpoint are InputErrors naming the file and, for a
// tensor, the tensor: a NaN or ±Inf value in any tensor, or a finite
// weight too large for its packed format (bf16, or a q8/q4 group's f16
// scale), is refused, and nothing is written.
func ConvertFile(dir, out string, opt LoadOptions, meta map[string]string, progress func(done, total int, name string)) error {
	cfgPath := filepath.Join(dir, "config.json")
	raw, err := os.ReadFile(cfgPath)
	if err != nil {
		return inputErr(fmt.Errorf("model: %w", err))
	}
	cfg, err := arch.Parse(raw, cfgPath)
	if err != nil {
		return inputErr(fmt.Errorf("model: %w", err))
	}
	if err := opt.defaults(cfg); err != nil {
		return err
	}
	if opt.usesStored() {
		return fmt.Errorf("model: %s: a Hugging Face checkpoint has no stored formats (%q); give a dtype", dir, AsStored)
	}
	src, err := NewCheckpointSource(dir, cfg, opt.Threads)
	if err != nil {
		return inputErr(err)
	}
	defer src.Close()
	src.Search, src.Imatrix = opt.QuantSearch, opt.Imatrix
	return writeModelFile(out, raw, cfg, src, opt, filepath.Base(filepath.Clean(dir)), meta, progress)
}

// ConvertGGUF converts a Kimi Linear GGUF file into a model file at out,
// as ConvertFile does a checkpoint folder: the matrices of a weight group
// opt leaves unset repacked from their ggml types as LoadGGUF does
// (without requantizing: each keeps its own format, the groups' meta say
// "stored"), those of a group given a dtype requantized from the GGUF's
// dequantized weights into it (a preset); the small
// tensors f32 (with the converter's transforms undone, see GGUFSource),
// the embedding table in its f32/f16/bf16 type or, quantized, widened to
// f32. The stored config.json is the one ConfigFromGGUF rebuilds.
func ConvertGGUF(path, out string, opt LoadOptions, meta map[string]string, progress func(done, total int, name string)) error {
	f, err := gguf.Open(path)
	if err != nil {
		return inputErr(fmt.Errorf("model: %w", err))
	}
	defer f.Close()
	cfg, err := ConfigFromGGUF(f)
	if err != nil {
		return inputErr(err)
	}
	opt.storedDefaults()
	if err := opt.defaults(cfg); err != nil {
		return err
	}
	src, err := NewGGUFSource(f, cfg, opt.Threads)
	if err != nil {
		return inputErr(err)
	}
	src.EmbedF32, src.Repack, src.Search, src.Imatrix = true, opt.GGUFRepack, opt.QuantSearch, opt.Imatrix
	raw, err := json.MarshalIndent(cfg, "", "  ")
	if err != nil {
		return err
	}
	return writeModelFile(out, raw, cfg, src, opt, filepath.Base(path), meta, progress)
}

// writeModelFile writes src's tensors as the model file out (see
// ConvertFile); cfgJSON is stored as the config.
func writeModelFile(out string, cfgJSON []byte, cfg *arch.Config, src Source, opt LoadOptions, source string, meta map[string]string, progress func(done, total int, name string)) error {
	plan, ts, m, err := modelTable(cfg, src, opt, source, meta)
	if err != nil {
		return err
	}
	raw := cfgJSON
	wantDType := make([]kernel.DType, len(plan)) // what the source is asked for (AsStored: its own)
	for i, p := range plan {
		wantDType[i] = p.DType
	}
	var bad error // a tensor of the checkpoint refused
	err = kfile.Write(out, raw, m, ts, func(i int) ([]byte, error) {
		p := plan[i]
		var b []byte
		var err error
		switch p.Kind {
		case Packed:
			var q *quant.Matrix
			if q, err = src.Matrix(p.Name, wantDType[i]); err == nil {
				q, err = asDeclared(q, ts[i].DType, ts[i].HasMin)
			}
			if err == nil {
				b = q.Data
			}
		case Float32:
			var v []float32
			if v, err = src.Float32(p.Name); err == nil {
				b = safetensors.F32Bytes(v)
			}
		case EmbeddingTable:
			_, b, err = src.Embedding(p.Name)
		}
		if err != nil {
			bad = fmt.Errorf("model: %s: tensor %q: %w; nothing was written", src.Where(p.Name), p.Name, err)
			return nil, err
		}
		if progress != nil {
			progress(i+1, len(plan), p.Name)
		}
		return b, nil
	})
	if bad != nil {
		return inputErr(bad)
	}
	return err
}

// modelTable is the model file's tensor table for src under opt (each
// tensor's name, layout, format and shape; Write fills the rest) in Plan
// order, and its meta: the formats, the source, then meta.
func modelTable(cfg *arch.Config, src Source, opt LoadOptions, source string, meta map[string]string) ([]TensorSpec, []kfile.Tensor, map[string]string, error) {
	plan, err := TensorSpecs(cfg, opt)
	if err != nil {
		return nil, nil, nil, inputErr(err)
	}
	if err := opt.defaults(cfg); err != nil {
		return nil, nil, nil, err
	}
	ts := make([]kfile.Tensor, len(plan))
	for i, p := range plan {
		t := &ts[i]
		t.Name, t.Shape = p.Name, p.Shape
		switch p.Kind {
		case Packed:
			dt, hasMin := p.DType, false
			if sf, ok := src.(storedFormatter); ok {
				if dt, hasMin, err = sf.StoredFormat(p.Name, p.DType); err != nil {
					return nil, nil, nil, inputErr(fmt.Errorf("model: %s: tensor %q: %w", src.Where(p.Name), p.Name, err))
				}
			}
			t.Layout, t.DType, t.HasMin, t.Shape = kfile.LayoutPacked, string(dt), hasMin, []int64{int64(p.N()), int64(p.K())}
		case Float32:
			t.Layout, t.DType = kfile.LayoutRaw, string(safetensors.F32)
		case EmbeddingTable:
			var dt safetensors.DType
			if ed, ok := src.(embeddingDTyper); ok { // without making the table
				dt, err = ed.EmbeddingDType(p.Name)
			} else {
				dt, _, err = src.Embedding(p.Name)
			}
			if err != nil {
				return nil, nil, nil, inputErr(fmt.Errorf("model: %s: tensor %q: %w; nothing was written", src.Where(p.Name), p.Name, err))
			}
			t.Layout, t.DType = kfile.LayoutRaw, string(dt)
		}
	}
	m := map[string]string{"ktune_version": version.String(), "source": source}
	for _, f := range dtypeFields(&opt.Formats) {
		m[f.key] = string(*f.p)
	}
	// a group of mixed formats (a fit plan's) is read back per tensor
	if opt.SharedDType != opt.FFNDType {
		m[MetaFFNDType] = string(AsStored)
	}
	if opt.expertsMixed(cfg) {
		m[MetaExpertDType] = string(AsStored)
	}
	for k, v := range meta {
		m[k] = v
	}
	return plan, ts, m, nil
}

// embeddingDTyper is a Source that can say the embedding table's dtype
// without making the table (SyntheticSource).
type embeddingDTyper interface {
	EmbeddingDType(name string) (safetensors.DType, error)
}

// storedFormatter is a Source that can say what format Matrix(name, dt)
// gives before packing it (GGUFSource for AsStored).
type storedFormatter interface {
	StoredFormat(name string, dt kernel.DType) (kernel.DType, bool, error)
}

// asDeclared returns q in the format a model file's header declared for
// it: q itself, or widened to f32 when the header says f32 (a type whose
// exact repack depends on its values, declared f32 beforehand, happened
// to fit a packed format); any other difference (a repack that fell back
// to f32 on an overflowing scale) is an error.
func asDeclared(q *quant.Matrix, dt string, hasMin bool) (*quant.Matrix, error) {
	switch {
	case string(q.DType) == dt && q.HasMin == hasMin:
		return q, nil
	case dt == string(kernel.F32):
		return quant.Quantize(kernel.F32, q.Dequantize(), q.N, q.K, false)
	}
	return nil, fmt.Errorf("packs as %s, not the %s its type repacks into (a scale overflows that format); convert with --gguf-repack exact or a --preset", q.DType, dt)
}

// LoadFile maps a model file written by ConvertFile and builds the model
// on views of the mapping: no weight is converted (MLA's kv_b_proj alone
// is split into two small f32 copies). Then, as opt.Weights says, the
// packed matrices are copied into memory (huge pages) where they fit
// (WeightsMode), or stay views of the mapping: untouched tensors — cold
// experts — then stay on disk until a token routes to them (and are
// prefetched when one does: SetPrefetch). The file's weight formats
// apply; an opt dtype that disagrees with them is an error (convert again
// to change them). The header is always checked, the
// tensors' checksums unless opt.NoVerify. Errors name the file and the
// problem: bad magic or version, a corrupt header or tensor table, a
// checksum mismatch, a tensor missing, extra or mis-shaped for the config.
//
// Every problem of the file is an InputError (the memory check's refusal
// is not): the checks VerifyFile makes.
func LoadFile(path string, opt LoadOptions) (*Model, error) {
	f, err := kfile.Open(path)
	if err != nil {
		return nil, inputErr(fmt.Errorf("model: %w", err))
	}
	m, err := loadFile(f, opt)
	if err != nil {
		f.Close()
		return nil, err
	}
	m.closer, m.mapped = f, true
	if err := m.placeWeights(f.Path, f.Offset, opt); err != nil { // weights.go
		m.Close()
		return nil, err
	}
	m.file, m.inFile = f.Path, f.Contains // a fault there is a FaultError (forward.go)
	m.statFiles([]string{f.Path})
	locate := func(b []byte) (int, int64, bool) { off, ok := f.Offset(b); return 0, off, ok }
	m.startExpertCache(locate, func() (blockReader, error) { return openDirect([]string{f.Path}) }) // expertcache.go
	m.SetPrefetch(PrefetchDefault())                                                                // expert prefetch (prefetch.go)
	m.startPreload()                                                                                // the page cache warmed in the background (preload.go)
	return m, nil
}

// VerifyFile makes every check LoadFile makes on an open model file except
// the memory check: the stored config, the meta's weight formats, every
// tensor's checksum and values (kfile.File.Verify, on threads workers),
// and the tensor table against the config (each tensor present, in the
// formats the meta names, of the config's shape; none extra). Its errors
// are LoadFile's, as InputErrors.
func VerifyFile(f *kfile.File, threads int) error {
	m, err := checkFile(f, &LoadOptions{Runtime: Runtime{Threads: threads}})
	if m != nil {
		m.Close()
	}
	return err
}

// CheckTable makes VerifyFile's checks but for the packed weights' (no
// checksums, no scale checks; LoadFile's with LoadOptions.NoVerify): the
// stored config, the meta's weight formats, the tensor table against the
// config, and the small raw tensors' values, which it reads. Its errors are
// LoadFile's, as InputErrors.
func CheckTable(f *kfile.File) error {
	m, err := checkFile(f, &LoadOptions{Runtime: Runtime{Threads: 1}, Files: Files{NoVerify: true}})
	if m != nil {
		m.Close()
	}
	return err
}

func loadFile(f *kfile.File, opt LoadOptions) (*Model, error) {
	m, err := checkFile(f, &opt)
	if err != nil {
		return nil, err
	}
	mem, err := EstimateMemory(m.Cfg, opt, m.Embed.DType.Size())
	if err != nil {
		return nil, err
	}
	mem.WeightsMapped, mem.WeightsHeap = f.Size()-f.Header.DataStart, m.mem.WeightsHeap
	mem.budget()
	if err := checkFits(&mem, &opt, "model file "+f.Path); err != nil {
		return nil, err
	}
	m.mem = mem
	return m, nil
}

// checkFile builds a model on f's mapping under opt (its dtypes filled in
// from the meta), making every check of the file; the model's
// mem.WeightsHeap holds its heap bytes.
func checkFile(f *kfile.File, opt *LoadOptions) (*Model, error) {
	m, err := checkFileErr(f, opt)
	return m, inputErr(err)
}

func checkFileErr(f *kfile.File, optp *LoadOptions) (*Model, error) {
	opt := *optp
	defer func() { *optp = opt }()
	cfg, err := arch.Parse(f.Header.Config, f.Path+" (stored config.json)")
	if err != nil {
		return nil, fmt.Errorf("model: %w", err)
	}
	meta := f.Header.Table.Meta
	for _, fd := range dtypeFields(&opt.Formats) {
		v, ok := meta[fd.key]
		stored := kernel.DType(v)
		switch {
		case !ok:
			return nil, fmt.Errorf("model: %s: the header has no %q entry in its meta; not written by krun convert?", f.Path, fd.key)
		case stored != AsStored && !weightDType(stored):
			return nil, fmt.Errorf("model: %s: the header's meta entry %q is %q, not a weight format (%s)", f.Path, fd.key, v, weightDTypes)
		case *fd.p != "" && *fd.p != stored:
			return nil, fmt.Errorf("model: %s stores %s as %s, but %s was asked for; convert the checkpoint again to change formats", f.Path, fd.key, stored, *fd.p)
		}
		*fd.p = stored
	}
	if err := opt.defaults(cfg); err != nil {
		return nil, fmt.Errorf("model: %s: %w", f.Path, err)
	}
	if !opt.NoVerify {
		if err := f.Verify(opt.Threads); err != nil {
			return nil, fmt.Errorf("model: %w", err)
		}
	}
	src := &fileSource{f: f, shapes: map[string][]int64{}, used: map[*kfile.Tensor]bool{}}
	for _, t := range cfg.TensorNames() {
		src.shapes[t.Name] = t.Shape
	}
	m, heap, err := build(cfg, src, opt)
	if err != nil {
		return nil, err
	}
	if err := src.checkExtra(); err != nil {
		return nil, err
	}
	m.mem.WeightsHeap = heap
	return m, nil
}

// fileSource hands out views of a model file's tensors, checked against
// the config's shapes.
type fileSource struct {
	f      *kfile.File
	shapes map[string][]int64 // config's tensor shapes
	used   map[*kfile.Tensor]bool
}

func (s *fileSource) Where(string) string { return s.f.Path }
func (s *fileSource) Mapped() bool        { return true }

// lookup finds name in layout and checks its shape against the config.
func (s *fileSource) lookup(name, layout string) (*kfile.Tensor, error) {
	want, ok := s.shapes[name]
	if !ok {
		return nil, fmt.Errorf("not a tensor of the stored config")
	}
	t, ok := s.f.Header.Lookup(name, layout)
	if !ok {
		return nil, fmt.Errorf("missing from the file (no %s entry); config/tensor mismatch", layout)
	}
	s.used[t] = true
	if layout == kfile.LayoutPacked {
		ts := TensorSpec{Shape: want}
		want = []int64{int64(ts.N()), int64(ts.K())}
	}
	if !slices.Equal(t.Shape, want) {
		return nil, fmt.Errorf("stored with shape %v, but the config wants %v; config/tensor mismatch", t.Shape, want)
	}
	return t, nil
}

func (s *fileSource) Matrix(name string, dt kernel.DType) (*quant.Matrix, error) {
	t, err := s.lookup(name, kfile.LayoutPacked)
	if err != nil {
		return nil, err
	}
	if dt == AsStored {
		dt = kernel.DType(t.DType) // each matrix in its own format
	}
	if kernel.DType(t.DType) != dt {
		return nil, fmt.Errorf("stored as %s, but the header's formats say %s", t.DType, dt)
	}
	return quant.View(dt, int(t.Shape[0]), int(t.Shape[1]), t.HasMin, s.f.Bytes(t))
}

// Float32 returns a raw F32 tensor in place (little-endian hosts), other
// raw dtypes widened.
func (s *fileSource) Float32(name string) ([]float32, error) {
	t, err := s.lookup(name, kfile.LayoutRaw)
	if err != nil {
		return nil, err
	}
	b := s.f.Bytes(t)
	// small tensors (norms, A_log, conv taps, …): checked even without
	// Verify, which checks every tensor
	if err := kfile.CheckFinite(t, b); err != nil {
		return nil, errors.New(strings.TrimPrefix(err.Error(), fmt.Sprintf("tensor %q: ", name)))
	}
	if t.DType == string(safetensors.F32) && littleEndian && len(b) > 0 {
		// aligned (kfile.MinAlignment) and read-only: a view
		return unsafe.Slice((*float32)(unsafe.Pointer(&b[0])), len(b)/4), nil
	}
	v := make([]float32, len(b)/kfile.ElemSize(t.DType))
	return v, safetensors.DecodeFloat32(v, safetensors.DType(t.DType), b)
}

func (s *fileSource) Embedding(name string) (safetensors.DType, []byte, error) {
	t, err := s.lookup(name, kfile.LayoutRaw)
	if err != nil {
		return "", nil, err
	}
	return safetensors.DType(t.DType), s.f.Bytes(t), nil
}

// checkExtra reports table entries the model did not use.
func (s *fileSource) checkExtra() error {
	var extra []string
	for i := range s.f.Header.Table.Tensors {
		t := &s.f.Header.Table.Tensors[i]
		if !s.used[t] {
			extra = append(extra, t.Name+" ("+t.Layout+")")
		}
	}
	if len(extra) == 0 {
		return nil
	}
	if len(extra) > 20 {
		extra = append(extra[:20], fmt.Sprintf("… and %d more", len(extra)-20))
	}
	return fmt.Errorf("model: %s: %d tensors the stored config does not use (config/tensor mismatch): %s", s.f.Path, len(extra), strings.Join(extra, ", "))
}

var littleEndian = binary.NativeEndian.Uint16([]byte{1, 0}) == 1
