// The importance matrix (imatrix): per weight matrix, the energy of each
// input channel over calibration prompts, and its file.

package model

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/ktune/ktune/internal/quant"
	"io/fs"
	"math"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/ktune/ktune/internal/arch"
	"github.com/ktune/ktune/internal/kernel"
	"github.com/ktune/ktune/internal/safetensors"
)

// ImatrixFormat is the format (and version) an imatrix file's metadata
// names; a reader refuses any other.
const ImatrixFormat = "ktune-imatrix/1"

// Imatrix is an importance matrix: for each weight matrix the forward pass
// multiplies, keyed by the checkpoint tensor name it is built from
// ("model.layers.3.block_sparse_moe.experts.17.w2.weight", "lm_head.weight";
// model.embed_tokens.weight for a tied lm_head), the sum over the rows it
// saw of each input channel's squared activation, Σ x_j², and the number of
// rows. A routed expert sees only the tokens routed to it; a matrix that saw
// no row has no entry.
//
// The file (WriteImatrix, ReadImatrix) is a safetensors file:
//
//	tensors   NAME: F32 [K], Σ x_j² over the rows (accumulated in float64)
//	metadata  format         "ktune-imatrix/1"
//	          counts         JSON object {NAME: rows}, one per tensor, rows ≥ 1
//	          shape_digest   ShapeDigest of the model's config (16 hex digits)
//	          config         the config's sizes, for messages
//	          model          the model it was gathered on (a file or folder name)
//	          prompts, tokens  how much it saw (decimal)
//
// docs/imatrix.md describes it; convert --imatrix uses Σ x_j²/rows as the
// per-input-channel importance of quant.QuantizeWeighted.
type Imatrix struct {
	Path    string // the file it was read from ("" when gathered)
	Model   string // the model it was gathered on
	Digest  string // ShapeDigest of that model's config
	Config  string // that config's sizes (configSizes)
	Prompts int
	Tokens  int64
	Entries map[string]*ImatrixEntry
	// Unseen lists, after Calibrate, the matrices that saw no row (routed
	// experts no token was routed to), in model order; not stored.
	Unseen []string
}

// ImatrixEntry is one matrix's statistics.
type ImatrixEntry struct {
	Sum  []float64 // [K] Σ x_j² (float32 precision when read from a file)
	Rows int64     // rows seen
}

// Importance is the mean squared activation of each input channel,
// Σ x_j² / rows: the per-channel weight quant.QuantizeWeighted takes.
func (e *ImatrixEntry) Importance() []float32 {
	out := make([]float32, len(e.Sum))
	for j, s := range e.Sum {
		out[j] = float32(s / float64(max(e.Rows, 1)))
	}
	return out
}

// ShapeDigest identifies a config by its tensor list (names and shapes):
// an imatrix applies to the models of one digest.
func ShapeDigest(cfg *arch.Config) string {
	h := sha256.New()
	for _, t := range cfg.TensorNames() {
		fmt.Fprintf(h, "%s %v\n", t.Name, t.Shape)
	}
	return hex.EncodeToString(h.Sum(nil)[:8])
}

// configSizes names a config's sizes for messages.
func configSizes(cfg *arch.Config) string {
	return fmt.Sprintf("hidden_size=%d, num_hidden_layers=%d, num_experts=%d, vocab_size=%d",
		cfg.HiddenSize, cfg.NumHiddenLayers, cfg.NumExperts, cfg.VocabSize)
}

// WriteImatrix writes im to path atomically (a temporary file beside it,
// synced and renamed), tensors in name order.
func WriteImatrix(path string, im *Imatrix) error {
	names := slices.Sorted(func(yield func(string) bool) {
		for n := range im.Entries {
			if !yield(n) {
				return
			}
		}
	})
	counts := map[string]int64{}
	var ts []safetensors.WriteTensor
	for _, n := range names {
		e := im.Entries[n]
		if e.Rows < 1 {
			return fmt.Errorf("imatrix %s: tensor %q saw no rows", path, n)
		}
		counts[n] = e.Rows
		b := make([]byte, 4*len(e.Sum))
		for j, s := range e.Sum {
			binary.LittleEndian.PutUint32(b[4*j:], math.Float32bits(float32(s)))
		}
		ts = append(ts, safetensors.WriteTensor{Name: n, DType: safetensors.F32, Shape: []int64{int64(len(e.Sum))}, Data: b})
	}
	cj, err := json.Marshal(counts) // keys sorted
	if err != nil {
		return err
	}
	meta := map[string]string{"format": ImatrixFormat, "counts": string(cj), "shape_digest": im.Digest,
		"config": im.Config, "model": im.Model, "prompts": strconv.Itoa(im.Prompts), "tokens": strconv.FormatInt(im.Tokens, 10)}
	return safetensors.Write(path, meta, ts)
}

// ReadImatrix reads and checks an imatrix file. Every problem is an
// InputError naming the file and the problem.
func ReadImatrix(path string) (*Imatrix, error) {
	im, err := readImatrix(path)
	if err != nil {
		var se *safetensors.Error
		switch {
		case errors.Is(err, fs.ErrNotExist):
			return nil, inputErr(fmt.Errorf("imatrix %s: no such file", path))
		case errors.As(err, &se):
			return nil, inputErr(fmt.Errorf("imatrix %s: not a readable imatrix file: %w", path, err))
		}
		return nil, inputErr(fmt.Errorf("imatrix %s: %w", path, err))
	}
	return im, nil
}

func readImatrix(path string) (*Imatrix, error) {
	f, err := safetensors.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return parseImatrix(f, path)
}

// parseImatrix is readImatrix on the opened file f (read from path).
func parseImatrix(f *safetensors.File, path string) (*Imatrix, error) {
	md := f.Metadata()
	switch v := md["format"]; {
	case v == ImatrixFormat:
	case strings.HasPrefix(v, "ktune-imatrix/"):
		return nil, fmt.Errorf("format %q; this krun reads %q (written by another version?)", v, ImatrixFormat)
	default:
		return nil, fmt.Errorf("a safetensors file but not an imatrix (metadata format %q, want %q)", v, ImatrixFormat)
	}
	im := &Imatrix{Path: path, Model: md["model"], Digest: md["shape_digest"], Config: md["config"], Entries: map[string]*ImatrixEntry{}}
	if len(im.Digest) != 16 {
		return nil, fmt.Errorf("metadata shape_digest %q is not 16 hex digits", im.Digest)
	}
	var err2 error
	if im.Prompts, err2 = strconv.Atoi(md["prompts"]); err2 != nil || im.Prompts < 0 {
		return nil, fmt.Errorf("metadata prompts %q is not a count", md["prompts"])
	}
	if im.Tokens, err2 = strconv.ParseInt(md["tokens"], 10, 64); err2 != nil || im.Tokens < 0 {
		return nil, fmt.Errorf("metadata tokens %q is not a count", md["tokens"])
	}
	var counts map[string]int64
	if err := json.Unmarshal([]byte(md["counts"]), &counts); err != nil {
		return nil, fmt.Errorf("metadata counts is not a JSON object of row counts: %v", err)
	}
	for _, n := range f.Names() {
		info, _ := f.Info(n)
		if info.DType != safetensors.F32 || len(info.Shape) != 1 || info.Shape[0] < 1 {
			return nil, fmt.Errorf("tensor %q is %s %v; want F32 [K]", n, info.DType, info.Shape)
		}
		rows, ok := counts[n]
		if !ok || rows < 1 {
			return nil, fmt.Errorf("tensor %q has no row count ≥ 1 in the metadata counts", n)
		}
		v, err := f.Float32(n)
		if err != nil {
			return nil, err
		}
		e := &ImatrixEntry{Sum: make([]float64, len(v)), Rows: rows}
		for j, x := range v {
			if !(x >= 0) || math.IsInf(float64(x), 0) {
				return nil, fmt.Errorf("tensor %q: value %v of input channel %d is not finite and ≥ 0", n, x, j)
			}
			e.Sum[j] = float64(x)
		}
		im.Entries[n] = e
	}
	for n := range counts {
		if im.Entries[n] == nil {
			return nil, fmt.Errorf("metadata counts names %q, which is not a tensor of the file", n)
		}
	}
	if len(im.Entries) == 0 {
		return nil, errors.New("no tensors")
	}
	return im, nil
}

// Match checks that im was gathered on a model of cfg's shape (the model
// at modelPath, for messages): the same ShapeDigest, and every entry a
// matrix of cfg with as many input channels. Errors name both files.
func (im *Imatrix) Match(cfg *arch.Config, modelPath string) error {
	if d := ShapeDigest(cfg); d != im.Digest {
		return inputErr(fmt.Errorf("imatrix %s was gathered on another model (%s: %s; %s: %s)",
			im.Path, filepath.Base(im.Path), orUnknown(im.Config), modelPath, configSizes(cfg)))
	}
	k := map[string]int{}
	for _, t := range cfg.TensorNames() {
		if len(t.Shape) >= 2 {
			n := int64(1)
			for _, d := range t.Shape[1:] {
				n *= d
			}
			k[t.Name] = int(n)
		}
	}
	for _, n := range slices.Sorted(func(yield func(string) bool) {
		for n := range im.Entries {
			if !yield(n) {
				return
			}
		}
	}) {
		want, ok := k[n]
		switch {
		case !ok:
			return inputErr(fmt.Errorf("imatrix %s: tensor %q is not a weight matrix of %s", im.Path, n, modelPath))
		case want != len(im.Entries[n].Sum):
			return inputErr(fmt.Errorf("imatrix %s: tensor %q has %d input channels; in %s it has %d",
				im.Path, n, len(im.Entries[n].Sum), modelPath, want))
		}
	}
	return nil
}

func orUnknown(s string) string {
	if s == "" {
		return "sizes unknown"
	}
	return s
}

// importance returns the per-input-channel weights of the matrix name
// packed in dt: the entry's Importance for a Q8/Q6/Q5/Q4/Q3 matrix the
// imatrix covers, nil (uniform) otherwise.
func (im *Imatrix) importance(name string, dt kernel.DType) []float32 {
	if im == nil || !quantized(dt) {
		return nil
	}
	if e := im.Entries[name]; e != nil {
		return e.Importance()
	}
	return nil
}

// quantized reports whether dt chooses scales (the formats the imatrix
// weights).
func quantized(dt kernel.DType) bool {
	return dt == kernel.Q8 || dt == kernel.Q6 || dt == kernel.Q5 || dt == kernel.Q4 || dt == kernel.Q3 || dt == kernel.Q2 || quant.IsK(dt)
}

// ImatrixCoverage splits the matrices of cfg under opt that are quantized
// (Q8/Q6/Q5/Q4/Q3/Q2) into those im weights and those it lacks (which get the
// unweighted search), by name in model order.
func ImatrixCoverage(cfg *arch.Config, opt LoadOptions, im *Imatrix) (weighted, missing []string, err error) {
	plan, err := TensorSpecs(cfg, opt)
	if err != nil {
		return nil, nil, err
	}
	for _, p := range plan {
		if p.Kind != Packed || !quantized(p.DType) {
			continue
		}
		if im.Entries[p.Name] != nil {
			weighted = append(weighted, p.Name)
		} else {
			missing = append(missing, p.Name)
		}
	}
	return weighted, missing, nil
}
