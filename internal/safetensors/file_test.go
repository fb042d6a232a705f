package safetensors

import (
	"bytes"
	"encoding/binary"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func TestWriteRoundTrip(t *testing.T) {
	f32 := []float32{1, -2.5, 3.25, 0, float32(math.Inf(-1)), 1e-30, 6.5e4, -7}
	bf16 := []float32{1, -2.5, 3.25, 0, float32(math.Inf(1)), 0.15625, 256, -1.5} // exactly representable
	f16 := []float32{1, -2.5, 3.25, 0, 65504, 1.0 / (1 << 24), 0.099975586, -0.5} // exactly representable
	i32 := []int32{0, 1, -1, math.MaxInt32, math.MinInt32, 42}
	i64 := []int64{0, 1, -1, math.MaxInt64, math.MinInt64, 1 << 40}
	tensors := []WriteTensor{
		{Name: "w.f32", DType: F32, Shape: []int64{2, 4}, Data: F32Bytes(f32)},
		{Name: "w.bf16", DType: BF16, Shape: []int64{2, 2, 2}, Data: BF16Bytes(bf16)},
		{Name: "w.f16", DType: F16, Shape: []int64{8}, Data: F16Bytes(f16)},
		{Name: "ids.i32", DType: I32, Shape: []int64{3, 2}, Data: I32Bytes(i32)},
		{Name: "ids.i64", DType: I64, Shape: []int64{6}, Data: I64Bytes(i64)},
		{Name: "scalar", DType: F32, Shape: nil, Data: F32Bytes([]float32{0.5})},
		{Name: "empty", DType: F32, Shape: []int64{0, 3}, Data: nil},
	}
	meta := map[string]string{"format": "pt", "note": `quotes " and <tags> & ünïcode`}
	path := filepath.Join(t.TempDir(), "rt.safetensors")
	if err := Write(path, meta, tensors); err != nil {
		t.Fatal(err)
	}
	f, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()

	if f.Header.DataStart%8 != 0 {
		t.Errorf("DataStart = %d, not 8-byte aligned", f.Header.DataStart)
	}
	if got := f.Metadata(); len(got) != len(meta) || got["format"] != "pt" || got["note"] != meta["note"] {
		t.Errorf("Metadata() = %v, want %v", got, meta)
	}
	wantNames := []string{"empty", "ids.i32", "ids.i64", "scalar", "w.bf16", "w.f16", "w.f32"}
	if got := f.Names(); !slices.Equal(got, wantNames) {
		t.Errorf("Names() = %v, want %v", got, wantNames)
	}
	for _, wt := range tensors {
		info, ok := f.Info(wt.Name)
		if !ok || info.DType != wt.DType || !slices.Equal(info.Shape, append([]int64{}, wt.Shape...)) {
			t.Errorf("Info(%q) = %+v, %v", wt.Name, info, ok)
		}
		b, err := f.Bytes(wt.Name)
		if err != nil || !bytes.Equal(b, wt.Data) {
			t.Errorf("Bytes(%q) = %v, %v; want %v", wt.Name, b, err, wt.Data)
		}
	}
	for name, want := range map[string][]float32{"w.f32": f32, "w.bf16": bf16, "w.f16": f16, "scalar": {0.5}, "empty": {}} {
		got, err := f.Float32(name)
		if err != nil || !slices.Equal(got, want) {
			t.Errorf("Float32(%q) = %v, %v; want %v", name, got, err, want)
		}
		dst := make([]float32, len(want))
		if err := f.Float32Into(name, dst); err != nil || !slices.Equal(dst, want) {
			t.Errorf("Float32Into(%q) = %v, %v; want %v", name, dst, err, want)
		}
	}
	wantI32 := make([]int64, len(i32))
	for i, v := range i32 {
		wantI32[i] = int64(v)
	}
	for name, want := range map[string][]int64{"ids.i32": wantI32, "ids.i64": i64} {
		got, err := f.Int64(name)
		if err != nil || !slices.Equal(got, want) {
			t.Errorf("Int64(%q) = %v, %v; want %v", name, got, err, want)
		}
	}

	// No temporary file is left behind.
	entries, _ := os.ReadDir(filepath.Dir(path))
	if len(entries) != 1 {
		t.Errorf("folder holds %d entries after Write, want 1", len(entries))
	}
}

func TestWriteOverwritesAndPads(t *testing.T) {
	path := filepath.Join(t.TempDir(), "x.safetensors")
	for i := 1; i <= 3; i++ {
		data := make([]float32, i)
		if err := Write(path, nil, []WriteTensor{{Name: strings.Repeat("n", i), DType: F32, Shape: []int64{int64(i)}, Data: F32Bytes(data)}}); err != nil {
			t.Fatal(err)
		}
		raw, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		n := binary.LittleEndian.Uint64(raw)
		if n%8 != 0 || !strings.HasPrefix(string(raw[8:8+n]), "{") || int(8+n)+4*i != len(raw) {
			t.Errorf("file %d: header length %d, file size %d", i, n, len(raw))
		}
		if strings.Contains(string(raw[8:8+n]), metadataKey) {
			t.Errorf("empty metadata was written: %s", raw[8:8+n])
		}
	}
	if st, err := os.Stat(path); err != nil || st.Mode().Perm()&0o444 != 0o444 {
		t.Errorf("Stat = %v, %v: want a readable file", st, err)
	}
}

func TestWriteRejects(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "bad.safetensors")
	four := F32Bytes([]float32{1, 2, 3, 4})
	tests := []struct {
		name    string
		tensors []WriteTensor
		want    string
	}{
		{"size", []WriteTensor{{Name: "a", DType: F32, Shape: []int64{3}, Data: four}}, "has 16 bytes of data but shape [3] of F32 needs 12"},
		{"dtype", []WriteTensor{{Name: "a", DType: "F64", Shape: []int64{2}, Data: four}}, `unknown dtype "F64"`},
		{"duplicate", []WriteTensor{{Name: "a", DType: F32, Shape: []int64{4}, Data: four}, {Name: "a", DType: F32, Shape: []int64{4}, Data: four}}, "duplicate tensor name"},
		{"negative", []WriteTensor{{Name: "a", DType: F32, Shape: []int64{-1, 0}, Data: nil}}, "invalid or too large"},
		{"empty name", []WriteTensor{{Name: "", DType: F32, Shape: []int64{4}, Data: four}}, "invalid tensor name"},
		{"metadata name", []WriteTensor{{Name: metadataKey, DType: F32, Shape: []int64{4}, Data: four}}, "invalid tensor name"},
		{"bad UTF-8", []WriteTensor{{Name: "a\xff", DType: F32, Shape: []int64{4}, Data: four}}, "not valid UTF-8"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			wantError(t, Write(path, nil, tc.tensors), path, tc.want)
		})
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 0 {
		t.Errorf("failed writes left %d files", len(entries))
	}
	missing := filepath.Join(dir, "no", "such", "dir", "x.safetensors")
	wantError(t, Write(missing, nil, nil), missing, "cannot create temporary file")
}

func TestAccessorErrors(t *testing.T) {
	path := filepath.Join(t.TempDir(), "x.safetensors")
	err := Write(path, nil, []WriteTensor{
		{Name: "f", DType: F32, Shape: []int64{2}, Data: F32Bytes([]float32{1, 2})},
		{Name: "i", DType: I64, Shape: []int64{1}, Data: I64Bytes([]int64{7})},
	})
	if err != nil {
		t.Fatal(err)
	}
	f, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	_, err = f.Float32("i")
	wantError(t, err, path, `tensor "i"`, "dtype I64 is not a float type")
	_, err = f.Int64("f")
	wantError(t, err, path, `tensor "f"`, "dtype F32 is not an integer type")
	wantError(t, f.Float32Into("f", make([]float32, 3)), path, `tensor "f"`, "destination has 3 elements, the tensor has 2")
	_, err = f.Bytes("nope")
	wantError(t, err, path, `tensor "nope"`, "no such tensor")
	if _, ok := f.Info("nope"); ok {
		t.Error(`Info("nope") succeeded`)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
	_, err = f.Float32("f")
	wantError(t, err, path, "file is closed")
}

func TestGapsAllowed(t *testing.T) {
	// Tensors with padding between them and after the last one, listed out of order.
	hdr := `{"b":{"dtype":"F32","shape":[1],"data_offsets":[16,20]},"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]}}`
	for len(hdr)%8 != 0 {
		hdr += " "
	}
	raw := make([]byte, 8, 8+len(hdr)+32)
	binary.LittleEndian.PutUint64(raw, uint64(len(hdr)))
	raw = append(raw, hdr...)
	data := make([]byte, 32)
	copy(data[0:], F32Bytes([]float32{1, 2}))
	copy(data[16:], F32Bytes([]float32{3}))
	raw = append(raw, data...)

	f, err := FromBytes("mem.safetensors", raw)
	if err != nil {
		t.Fatal(err)
	}
	a, _ := f.Float32("a")
	b, _ := f.Float32("b")
	if !slices.Equal(a, []float32{1, 2}) || !slices.Equal(b, []float32{3}) {
		t.Errorf("a = %v, b = %v", a, b)
	}
	if f.Header.Tensors[0].Name != "a" {
		t.Errorf("Tensors not sorted by offset: %+v", f.Header.Tensors)
	}

	path := writeRaw(t, raw)
	g, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	if b, _ := g.Float32("b"); !slices.Equal(b, []float32{3}) {
		t.Errorf("b = %v", b)
	}
}
