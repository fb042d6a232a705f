// A synthetic kimi-linear GGUF file: random blocks at a config's widths,
// laid out and typed as llama.cpp's converter and llama-quantize write a
// checkpoint (krun synth), streamed to disk.

package model

import (
	"encoding/binary"
	"fmt"
	"hash/fnv"
	"io"
	"math"
	"math/rand/v2"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/ktune/ktune/internal/arch"
	"github.com/ktune/ktune/internal/atomicfile"
	"github.com/ktune/ktune/internal/gguf"
	"github.com/ktune/ktune/internal/pool"
	"github.com/ktune/ktune/internal/quant"
)

// synthGGUFChunk is about how many bytes of a tensor one draw source fills
// (whole rows, at least one): the unit of parallel work, fixed so that the
// bytes do not depend on the threads (a variable: tests make it small).
var synthGGUFChunk = 1 << 20

// SynthGGUF is a kimi-linear GGUF file of random weights at a config's
// widths, in file type Type: the tensors (names, ggml dims, GGUF order)
// and metadata llama.cpp's convert_hf_to_gguf.py writes for the config's
// checkpoint, each tensor in the type llama-quantize gives it
// (LlamaQuantTypes), in the order llama-quantize writes them
// (GGUFTensorCompare) with its trimmed dims (ssm_a [1, H], the conv taps
// [W, 1, H·D]); MLA's kv_b_proj split into attn_k_b [dn, r, H] and attn_v_b
// [r, dv, H]; a placeholder vocabulary of vocab_size tokens <t0> … (model
// gpt2, pre kimi-k2, no merges), as the golden GGUF files have. So llama.cpp
// and krun run one and the same file.
//
// The weights mirror SyntheticSource's statistics: every matrix (the
// router too) random blocks of the allocated type (quant.FillRandomGGUF),
// zero-mean with standard deviation 1/√K for rows of K (attn_k_b: 1/√r,
// the rank, as the kv_b_proj rows it came from), the embedding table
// likewise with 1/√3 (uniform ±1's); norms 1, conv taps uniform in ±0.5,
// ssm_a −1 (−exp(A_log) with A_log 0), ssm_dt.bias and the router bias 0.
// Each tensor's bytes depend only on the seed, its name, type and shape
// (fixed chunks of rows, each with its own seeded draw source): the same
// config, type and seed give the same file at any thread count, and a
// 2-layer and a 27-layer file share layer 0.
type SynthGGUF struct {
	Config  *arch.Config
	Type    GGUFFileType
	Seed    uint64
	Meta    []gguf.KV
	Tensors []SynthGGUFTensor // in file order
}

// SynthGGUFTensor is one tensor of a SynthGGUF.
type SynthGGUFTensor struct {
	Name string
	Dims []uint64 // ggml order, trailing 1s trimmed
	Type gguf.Type
}

// NewSynthGGUF lays out the synthetic file of cfg in file type ft.
func NewSynthGGUF(cfg *arch.Config, ft GGUFFileType, seed uint64) (*SynthGGUF, error) {
	if err := cfg.Validate(); err != nil {
		return nil, fmt.Errorf("model: %w", err)
	}
	if _, err := ParseGGUFFileType(ft.Name); err != nil {
		return nil, err
	}
	return newSynthGGUF(cfg, ft, seed, synthGGUFShapes(cfg))
}

// newSynthGGUF is NewSynthGGUF with cfg's tensors (synthGGUFShapes)
// given: they take a while to list for 48B, and do not depend on ft.
func newSynthGGUF(cfg *arch.Config, ft GGUFFileType, seed uint64, shapes []GGUFTensorShape) (*SynthGGUF, error) {
	types, err := LlamaQuantTypes(ft, cfg, shapes)
	if err != nil {
		return nil, err
	}
	s := &SynthGGUF{Config: cfg, Type: ft, Seed: seed}
	for i, t := range shapes {
		s.Tensors = append(s.Tensors, SynthGGUFTensor{Name: t.Name, Dims: t.Dims, Type: types[i]})
	}
	slices.SortFunc(s.Tensors, func(a, b SynthGGUFTensor) int { return GGUFTensorCompare(a.Name, b.Name) })
	s.Meta = synthGGUFMeta(cfg, ft, seed, shapes)
	return s, nil
}

// synthGGUFShapes lists the GGUF tensors of cfg (ggufName's names and
// dims, as the loader expects them; the stacked experts once, kv_b_proj
// as k_b and v_b), trailing 1s trimmed as llama-quantize writes them.
func synthGGUFShapes(cfg *arch.Config) []GGUFTensorShape {
	sh := cfg.Shapes()
	var out []GGUFTensorShape
	for _, spec := range cfg.TensorNames() {
		ref, dims := ggufName(spec, sh)
		switch {
		case ref.name == "" || ref.expert > 0:
			continue
		case ref.vb != "":
			out = append(out,
				GGUFTensorShape{ref.name, []uint64{uint64(sh.QKNope), uint64(sh.KVLoraRank), uint64(sh.MLAHeads)}},
				GGUFTensorShape{ref.vb, []uint64{uint64(sh.KVLoraRank), uint64(sh.VHead), uint64(sh.MLAHeads)}})
			continue
		}
		d := trimOnes(dims)
		if len(d) == 0 {
			d = []uint64{1}
		}
		out = append(out, GGUFTensorShape{ref.name, slices.Clone(d)})
	}
	return out
}

// synthGGUFMeta is the metadata, in the converter's order, with
// general.quantization_version and general.file_type last (llama-quantize
// sets them so).
func synthGGUFMeta(cfg *arch.Config, ft GGUFFileType, seed uint64, shapes []GGUFTensorShape) []gguf.KV {
	var kv []gguf.KV
	add := func(key string, v any) { kv = append(kv, gguf.KV{Key: key, Value: gguf.MustValue(v)}) }
	k := func(s string) string { return GGUFArch + "." + s }
	u := func(n int) uint32 { return uint32(n) }
	sh := cfg.Shapes()
	add("general.architecture", GGUFArch)
	add("general.type", "model")
	add("general.name", fmt.Sprintf("Kimi Linear synthetic (random weights, seed %d, krun synth)", seed))
	add("general.size_label", ggufSizeLabel(shapes))
	add(k("block_count"), u(cfg.NumHiddenLayers))
	if cfg.ModelMaxLength > 0 {
		add(k("context_length"), u(cfg.ModelMaxLength))
	}
	add(k("embedding_length"), u(cfg.HiddenSize))
	add(k("feed_forward_length"), u(cfg.IntermediateSize))
	add(k("attention.head_count"), u(cfg.NumAttentionHeads))
	kvHeads := make([]int32, cfg.NumHiddenLayers) // 0: KDA; 1: MLA as MQA (the converter's)
	for l := range kvHeads {
		if cfg.LayerKind(l) == arch.MLA {
			kvHeads[l] = 1
		}
	}
	add(k("attention.head_count_kv"), kvHeads)
	if cfg.RopeTheta != 0 {
		add(k("rope.freq_base"), float32(cfg.RopeTheta))
	}
	add(k("attention.layer_norm_rms_epsilon"), float32(cfg.RMSNormEps))
	if cfg.NumExperts > 0 {
		add(k("expert_count"), u(cfg.NumExperts))
		add(k("expert_used_count"), u(cfg.NumExpertsPerToken))
		if cfg.NumExpertGroup > 1 { // (the converter reads n_group, which Kimi's config lacks)
			add(k("expert_group_count"), u(cfg.NumExpertGroup))
		}
		add(k("expert_group_used_count"), u(cfg.TopKGroup))
		add(k("expert_gating_func"), uint32(2)) // sigmoid
	}
	keyLen := u(cfg.KVLoraRank + cfg.QKRopeHeadDim) // MLA as MQA over the latent
	if cfg.HeadDim != 0 {
		// the base converter's head_dim keys; Kimi's then overwrites key_length in place
		add(k("attention.key_length"), keyLen)
		add(k("attention.value_length"), u(cfg.HeadDim))
	}
	add(k("vocab_size"), u(cfg.VocabSize))
	add(k("ssm.conv_kernel"), u(cfg.LinearAttn.ShortConvKernelSize))
	add(k("kda.head_dim"), u(cfg.LinearAttn.HeadDim))
	add(k("attention.kv_lora_rank"), u(cfg.KVLoraRank))
	add(k("rope.dimension_count"), u(cfg.QKRopeHeadDim))
	if cfg.HeadDim == 0 {
		add(k("attention.key_length"), keyLen)
	}
	add(k("attention.key_length_mla"), u(cfg.QKNopeHeadDim+cfg.QKRopeHeadDim))
	add(k("attention.value_length_mla"), u(cfg.VHeadDim))
	if cfg.NumExperts > 0 {
		add(k("expert_feed_forward_length"), u(cfg.MoEIntermediateSize))
		add(k("expert_shared_count"), u(cfg.NumSharedExperts))
		add(k("leading_dense_block_count"), u(cfg.FirstKDenseReplace))
		add(k("expert_weights_scale"), float32(cfg.RoutedScalingFactor))
	}
	tokens := make([]string, sh.Vocab)
	types := make([]int32, sh.Vocab)
	for i := range tokens {
		tokens[i], types[i] = "<t"+strconv.Itoa(i)+">", 1 // normal
	}
	add("tokenizer.ggml.model", "gpt2")
	add("tokenizer.ggml.pre", "kimi-k2")
	add("tokenizer.ggml.tokens", tokens)
	add("tokenizer.ggml.token_type", types)
	add("tokenizer.ggml.bos_token_id", u(cfg.BOSTokenID))
	add("tokenizer.ggml.eos_token_id", u(cfg.EOSTokenID))
	add("tokenizer.ggml.padding_token_id", u(cfg.PadTokenID))
	add("general.quantization_version", uint32(2))
	add("general.file_type", ft.ID)
	return kv
}

// ggufSizeLabel is the converter's general.size_label (gguf-py's
// size_label of get_total_parameter_count): "256x1.3B" — the expert count
// times the parameters of the shared tensors plus one expert's.
func ggufSizeLabel(shapes []GGUFTensorShape) string {
	var total, shared, expert, expertSum, expertTensors uint64
	for _, t := range shapes {
		n := uint64(1)
		for _, d := range t.Dims {
			n *= d
		}
		total += n
		if strings.Contains(t.Name, "_exps.") && len(t.Dims) >= 3 {
			expert += n / t.Dims[2]
			expertSum += t.Dims[2]
			expertTensors++
		} else {
			shared += n
		}
	}
	if expertTensors == 0 {
		return roundedCount(total)
	}
	return fmt.Sprintf("%dx%s", expertSum/expertTensors, roundedCount(shared+expert))
}

// roundedCount is gguf-py's model_weight_count_rounded_notation with two
// digits: 1.9M, 48B.
func roundedCount(n uint64) string {
	x, suffix := float64(n), "K"
	switch {
	case x > 1e12:
		x, suffix = x*1e-12, "T"
	case x > 1e9:
		x, suffix = x*1e-9, "B"
	case x > 1e6:
		x, suffix = x*1e-6, "M"
	default:
		x *= 1e-3
	}
	digits := len(strings.TrimLeft(strconv.FormatFloat(math.RoundToEven(x), 'f', 0, 64), "0"))
	return strconv.FormatFloat(x, 'f', max(2-digits, 0), 64) + suffix
}

// Size is the file's size in bytes.
func (s *SynthGGUF) Size() (int64, error) {
	n, err := gguf.Size(s.Meta, s.writeTensors(1, nil))
	return int64(n), err
}

// TypeSummary counts the tensors of each type: "34 f32, 55 q8_0" (by
// ggml type id).
func (s *SynthGGUF) TypeSummary() string {
	counts := map[gguf.Type]int{}
	for _, t := range s.Tensors {
		counts[t.Type]++
	}
	var ids []gguf.Type
	for t := range counts {
		ids = append(ids, t)
	}
	slices.Sort(ids)
	var parts []string
	for _, t := range ids {
		parts = append(parts, fmt.Sprintf("%d %s", counts[t], t))
	}
	return strings.Join(parts, ", ")
}

// WriteFile writes the file at path atomically (a temporary file in its
// folder, renamed at the end) with threads drawing (0: every CPU);
// progress, if set, is called after each tensor.
func (s *SynthGGUF) WriteFile(path string, threads int, progress func(done, total int, name string)) error {
	return atomicfile.WriteFile(path, func(f *os.File) error { return s.Write(f, threads, progress) })
}

// Write writes the file to w, streaming each tensor in chunks (a few per
// thread in memory at a time).
func (s *SynthGGUF) Write(w io.Writer, threads int, progress func(done, total int, name string)) error {
	if threads <= 0 {
		threads = pool.Default().Size()
	}
	return gguf.Write(w, s.Meta, s.writeTensors(threads, progress))
}

// writeTensors are the tensors for gguf.Write, each with a Fill.
func (s *SynthGGUF) writeTensors(threads int, progress func(done, total int, name string)) []gguf.WriteTensor {
	ts := make([]gguf.WriteTensor, len(s.Tensors))
	for i, t := range s.Tensors {
		ts[i] = gguf.WriteTensor{Name: t.Name, Dims: t.Dims, Type: t.Type, Fill: func(w io.Writer) error {
			if err := s.fill(w, t, threads); err != nil {
				return err
			}
			if progress != nil {
				progress(i+1, len(ts), t.Name)
			}
			return nil
		}}
	}
	return ts
}

// synthValue is how a tensor's values are made.
type synthValue struct {
	constant float32 // for const: every value
	isConst  bool
	std      float64 // else random blocks of this standard deviation
}

// synthValueOf is the rule for a tensor, by its name (SynthGGUF).
func (s *SynthGGUF) synthValueOf(t SynthGGUFTensor) synthValue {
	n := t.Name
	switch {
	case strings.HasSuffix(n, "_norm.weight"):
		return synthValue{constant: 1, isConst: true}
	case strings.HasSuffix(n, ".ssm_a"):
		return synthValue{constant: -1, isConst: true} // −exp(A_log = 0)
	case strings.HasSuffix(n, ".ssm_dt.bias"), strings.HasSuffix(n, ".exp_probs_b.bias"):
		return synthValue{isConst: true}
	case strings.Contains(n, ".ssm_conv1d_"):
		return synthValue{std: 0.5 / math.Sqrt(3)} // uniform in ±0.5
	case n == "token_embd.weight":
		return synthValue{std: 1 / math.Sqrt(3)} // uniform ±1's
	case strings.HasSuffix(n, ".attn_k_b.weight"): // [dn, r, H]: kv_b_proj's rows of r, transposed
		return synthValue{std: 1 / math.Sqrt(float64(t.Dims[1]))}
	}
	return synthValue{std: 1 / math.Sqrt(float64(t.Dims[0]))}
}

// rng is the draw source of chunk c of tensor name.
func (s *SynthGGUF) rng(name string, c int) *rand.Rand {
	h := fnv.New64a()
	h.Write([]byte(name))
	return rand.New(rand.NewPCG(s.Seed^h.Sum64(), uint64(c)))
}

// fill writes tensor t's bytes to w: chunks of whole rows drawn on threads
// goroutines, written in order, a bounded number in memory.
func (s *SynthGGUF) fill(w io.Writer, t SynthGGUFTensor, threads int) error {
	v := s.synthValueOf(t)
	rowBytes, err := t.Type.ByteSize(t.Dims[:1])
	if err != nil {
		return err
	}
	size, err := t.Type.ByteSize(t.Dims)
	if err != nil {
		return err
	}
	rows := int(size / rowBytes)
	if v.isConst {
		if t.Type != gguf.TypeF32 {
			return fmt.Errorf("model: synthetic constant tensor %s of type %s, not f32", t.Name, t.Type)
		}
		b := make([]byte, size)
		for i := 0; i < len(b); i += 4 {
			binary.LittleEndian.PutUint32(b[i:], math.Float32bits(v.constant))
		}
		_, err := w.Write(b)
		return err
	}
	per := max(1, synthGGUFChunk/int(rowBytes)) // rows per chunk
	chunks := (rows + per - 1) / per
	draw := func(c int, buf []byte) []byte {
		n := (min((c+1)*per, rows) - c*per) * int(rowBytes)
		buf = buf[:n]
		quant.FillRandomGGUF(s.rng(t.Name, c), t.Type, buf, v.std)
		return buf
	}
	if threads <= 1 || chunks == 1 {
		buf := make([]byte, per*int(rowBytes))
		for c := range chunks {
			if _, err := w.Write(draw(c, buf)); err != nil {
				return err
			}
		}
		return nil
	}
	// a pipeline: workers draw chunks into free buffers, this goroutine
	// writes them in order and hands each buffer back
	slots := 2 * threads
	free := make(chan []byte, slots)
	for range slots {
		free <- make([]byte, per*int(rowBytes))
	}
	ready := make([]chan []byte, chunks)
	for c := range ready {
		ready[c] = make(chan []byte, 1)
	}
	stop := make(chan struct{})
	var next atomic.Int64
	var wg sync.WaitGroup
	var order sync.Mutex // a buffer is taken in chunk order: no deadlock on free
	for range min(threads, chunks) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				select {
				case <-stop:
					return
				default:
				}
				order.Lock()
				c := int(next.Add(1) - 1)
				if c >= chunks {
					order.Unlock()
					return
				}
				var buf []byte
				select {
				case buf = <-free:
				case <-stop:
					order.Unlock()
					return
				}
				order.Unlock()
				ready[c] <- draw(c, buf)
			}
		}()
	}
	defer wg.Wait()
	defer close(stop)
	for c := range chunks {
		buf := <-ready[c]
		if _, err := w.Write(buf); err != nil {
			return err
		}
		free <- buf[:cap(buf)]
	}
	return nil
}
