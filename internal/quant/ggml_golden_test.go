package quant

import (
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ktune/ktune/internal/gguf"
	"github.com/ktune/ktune/internal/golden"
)

// ggmlGoldenBounds: per type, the relative RMS of a llama.cpp-quantized
// tensor (DequantizeGGML) against the same tensor of the unquantized file,
// and of our fast repack against DequantizeGGML. Measured on the golden
// tiny model (largest over its tensors): q8_0 0.55%, q6_K 1.9%, q5_1
// 3.8%, q5_K 3.7%, q5_0 4.3%, q4_K 7.2%, q4_0 8.9%, q3_K 15.4%, q2_K 31%;
// fast: q4_K 0.07%, q5_1/q5_K → Q8 0.55%, q6_K → Q6 1.55%, q3_K → Q4
// 6.2%, q2_K → Q4 with min 6.9%. The bounds leave about a third of margin.
var ggmlGoldenBounds = map[gguf.Type]struct{ quant, fast float64 }{
	gguf.TypeF16:  {0.001, 0.003},
	gguf.TypeBF16: {0.005, 0},
	gguf.TypeQ8_0: {0.01, 0},
	gguf.TypeQ6_K: {0.03, 0.021},
	gguf.TypeQ5_0: {0.06, 0},
	gguf.TypeQ5_1: {0.06, 0.008},
	gguf.TypeQ5_K: {0.06, 0.008},
	gguf.TypeQ4_0: {0.12, 0},
	gguf.TypeQ4_1: {0.12, 0},
	gguf.TypeQ4_K: {0.12, 0.001},
	gguf.TypeQ3_K: {0.21, 0.085},
	gguf.TypeQ2_K: {0.40, 0.095},
	// the codebook types (gguf-community): iq4_nl 7.7%, iq4_xs 7.7%,
	// mxfp4 11.5% against the F32 file; fast (Q8, scale rounded to f16)
	// iq4_xs 0.021%, iq4_nl and mxfp4 exact
	gguf.TypeIQ4_NL: {0.10, 0},
	gguf.TypeIQ4_XS: {0.10, 0.0003},
	gguf.TypeMXFP4:  {0.16, 0},
}

// TestGGMLGolden checks the bit layouts against llama.cpp's own quantizer:
// every quantized tensor of every golden GGUF file dequantizes to within
// its type's quantization error of the same tensor in the unquantized
// file; FromGGML keeps it exactly (exact mode) or within the fast bound.
func TestGGMLGolden(t *testing.T) {
	serialSweep(t)
	defer setFastQ6(true)() // q6_K → Q6 (Q8 is TestFromGGMLQ6Fallback's)
	defer setFastQ5(true)() // q5_0 → Q5 (Q8 is TestFromGGMLQ5's)
	dir, err := golden.Dir()
	if err != nil {
		t.Fatal(err)
	}
	var files []*gguf.File
	err = filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() && strings.HasSuffix(path, ".gguf") {
			f, err := gguf.Open(path)
			if err != nil {
				return err
			}
			files = append(files, f)
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		for _, f := range files {
			f.Close()
		}
	}()
	// The reference: a file with every tensor f32 (failing that, f32, f16
	// or bf16), the one with the most tensors.
	var ref *gguf.File
	refRank := 0
	for _, f := range files {
		rank := 2
		for _, ti := range f.Tensors {
			if ti.Type == gguf.TypeF16 || ti.Type == gguf.TypeBF16 {
				rank = min(rank, 1)
			} else if ti.Type != gguf.TypeF32 {
				rank = 0
			}
		}
		if rank > refRank || (rank == refRank && rank > 0 && len(f.Tensors) > len(ref.Tensors)) {
			ref, refRank = f, rank
		}
	}
	if ref == nil {
		t.Fatalf("no unquantized *.gguf file under %s", dir)
	}
	t.Logf("reference %s", filepath.Base(ref.Path))
	checked := map[gguf.Type]int{}
	for _, f := range files {
		if f == ref {
			continue
		}
		name := filepath.Base(f.Path)
		for _, ti := range f.Tensors {
			bound, ok := ggmlGoldenBounds[ti.Type]
			if ti.Type == gguf.TypeF32 {
				continue
			}
			if !ok {
				t.Errorf("%s: %s is of type %s, which has no bound here", name, ti.Name, ti.Type)
				continue
			}
			rt, ok := ref.Tensor(ti.Name)
			if !ok || rt.NumElements() != ti.NumElements() {
				t.Errorf("%s: %s is not in %s with the same shape", name, ti.Name, filepath.Base(ref.Path))
				continue
			}
			raw, err := f.TensorData(ti.Name)
			if err != nil {
				t.Fatal(err)
			}
			rraw, err := ref.TensorData(ti.Name)
			if err != nil {
				t.Fatal(err)
			}
			nel := int(ti.NumElements())
			got, want := make([]float32, nel), make([]float32, nel)
			if err := DequantizeGGML(ti.Type, raw, got); err != nil {
				t.Fatalf("%s: %s: %v", name, ti.Name, err)
			}
			if err := DequantizeGGML(rt.Type, rraw, want); err != nil {
				t.Fatalf("%s: %s: %v", filepath.Base(ref.Path), ti.Name, err)
			}
			if os.Getenv("KTUNE_LOG_BOUNDS") != "" {
				t.Logf("%s %s %s: quant %.4g", name, ti.Name, ti.Type, relRMS(got, want))
			}
			if e := relRMS(got, want); e > bound.quant {
				t.Errorf("%s: %s (%s %v): relative RMS %.4g against %s > %.3g", name, ti.Name, ti.Type, ti.Dims, e, filepath.Base(ref.Path), bound.quant)
			}
			k := int(ti.Dims[0])
			n := nel / k
			m, exact, err := FromGGML(ti.Type, raw, n, k, RepackExact)
			if err != nil {
				t.Fatalf("%s: %s: %v", name, ti.Name, err)
			}
			if same, i := ggmlSame(m, got); !same || !exact {
				t.Errorf("%s: %s (%s): exact repack to %s: exact=%v, element %d differs", name, ti.Name, ti.Type, formatOf(m), exact, i)
			}
			m, _, err = FromGGML(ti.Type, raw, n, k, RepackFast)
			if err != nil {
				t.Fatalf("%s: %s: %v", name, ti.Name, err)
			}
			if e := relRMS(m.Dequantize(), got); e > bound.fast {
				t.Errorf("%s: %s (%s): fast repack to %s: relative RMS %.4g > %.3g", name, ti.Name, ti.Type, formatOf(m), e, bound.fast)
			}
			checked[ti.Type]++
		}
	}
	if len(checked) == 0 {
		t.Fatalf("no quantized tensors in the *.gguf files under %s", dir)
	}
	t.Logf("tensors checked per type: %v", checked)
}
