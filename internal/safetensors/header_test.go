package safetensors

import (
	"encoding/binary"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// rawFile writes a file made of an 8-byte length field, the given header and
// dataLen zero bytes, and returns its path.
func rawFile(t *testing.T, header string, dataLen int) string {
	t.Helper()
	b := make([]byte, 8, 8+len(header)+dataLen)
	binary.LittleEndian.PutUint64(b, uint64(len(header)))
	b = append(b, header...)
	b = append(b, make([]byte, dataLen)...)
	return writeRaw(t, b)
}

func writeRaw(t *testing.T, b []byte) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "model.safetensors")
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// wantError checks that err is an *Error whose text names path and contains
// every one of parts.
func wantError(t *testing.T, err error, path string, parts ...string) {
	t.Helper()
	if err == nil {
		t.Fatalf("no error, want one mentioning %q", parts)
	}
	var se *Error
	if !errors.As(err, &se) {
		t.Errorf("error %v is a %T, want *safetensors.Error", err, err)
	}
	msg := err.Error()
	if !strings.HasPrefix(msg, "safetensors: ") || !strings.Contains(msg, path) {
		t.Errorf("error %q does not start with \"safetensors: \" or does not name %s", msg, path)
	}
	for _, p := range parts {
		if !strings.Contains(msg, p) {
			t.Errorf("error %q does not mention %q", msg, p)
		}
	}
	t.Log(msg)
}

func TestBadHeaders(t *testing.T) {
	const a = `"a.weight":{"dtype":"F32","shape":[2,3],"data_offsets":[0,24]}`
	tests := []struct {
		name    string
		header  string
		dataLen int
		want    []string
	}{
		{"not JSON", `{"a.weight":`, 0, []string{"header is not valid JSON: unexpected end of JSON input"}},
		{"garbage", `hello`, 0, []string{"header is not valid JSON"}},
		{"empty header", ``, 0, []string{"header is not valid JSON"}},
		{"not an object", `[1,2,3]`, 0, []string{"header is not a JSON object"}},
		{"string header", `"abc"`, 0, []string{"header is not a JSON object"}},
		{"trailing data", `{}{}`, 0, []string{"header is not valid JSON", "unexpected data after"}},
		{"invalid UTF-8", "{\"a\xff\":{}}", 0, []string{"not valid UTF-8"}},
		{"entry not an object", `{"a.weight":5}`, 0, []string{`tensor "a.weight"`, "entry must be an object, got number"}},
		{"entry null", `{"a.weight":null}`, 0, []string{`tensor "a.weight"`, "entry must be an object, got null"}},
		{"missing dtype", `{"a.weight":{"shape":[1],"data_offsets":[0,4]}}`, 4, []string{`missing "dtype"`}},
		{"missing shape", `{"a.weight":{"dtype":"F32","data_offsets":[0,4]}}`, 4, []string{`missing "shape"`}},
		{"missing offsets", `{"a.weight":{"dtype":"F32","shape":[1]}}`, 4, []string{`missing "data_offsets"`}},
		{"dtype not string", `{"a.weight":{"dtype":4,"shape":[1],"data_offsets":[0,4]}}`, 4, []string{"dtype must be a string, got number"}},
		{"unknown dtype", `{"a.weight":{"dtype":"F8_E4M3","shape":[1],"data_offsets":[0,1]}}`, 1, []string{`tensor "a.weight"`, `unknown dtype "F8_E4M3"`}},
		{"lower-case dtype", `{"a.weight":{"dtype":"f32","shape":[1],"data_offsets":[0,4]}}`, 4, []string{`unknown dtype "f32"`}},
		{"shape not array", `{"a.weight":{"dtype":"F32","shape":"2x3","data_offsets":[0,24]}}`, 24, []string{"shape must be an array", "got string"}},
		{"shape null", `{"a.weight":{"dtype":"F32","shape":null,"data_offsets":[0,24]}}`, 24, []string{"shape must be an array", "got null"}},
		{"negative dim", `{"a.weight":{"dtype":"F32","shape":[-2,3],"data_offsets":[0,24]}}`, 24, []string{"negative dim"}},
		{"fractional dim", `{"a.weight":{"dtype":"F32","shape":[1.5,2],"data_offsets":[0,12]}}`, 12, []string{"1.5 is not an integer"}},
		{"exponent dim", `{"a.weight":{"dtype":"F32","shape":[1e1],"data_offsets":[0,40]}}`, 40, []string{"1e1 is not an integer"}},
		{"string dim", `{"a.weight":{"dtype":"F32","shape":["2"],"data_offsets":[0,8]}}`, 8, []string{"string is not an integer"}},
		{"huge dim", `{"a.weight":{"dtype":"F32","shape":[99999999999999999999],"data_offsets":[0,8]}}`, 8, []string{"is outside the int64 range"}},
		{"offsets not array", `{"a.weight":{"dtype":"F32","shape":[1],"data_offsets":{}}}`, 4, []string{"data_offsets must be an array of two integers"}},
		{"three offsets", `{"a.weight":{"dtype":"F32","shape":[1],"data_offsets":[0,4,8]}}`, 8, []string{"data_offsets must be an array of two integers, got 3 values"}},
		{"float offset", `{"a.weight":{"dtype":"F32","shape":[1],"data_offsets":[0,4.0]}}`, 4, []string{"4.0 is not an integer"}},
		{"negative offset", `{"a.weight":{"dtype":"F32","shape":[0],"data_offsets":[-4,0]}}`, 4, []string{"data_offsets [-4,0) are negative"}},
		{"begin after end", `{"a.weight":{"dtype":"F32","shape":[1],"data_offsets":[8,4]}}`, 8, []string{"data_offsets [8,4) have begin > end"}},
		{"offsets out of range", `{"a.weight":{"dtype":"F32","shape":[25],"data_offsets":[0,100]}}`, 96, []string{`tensor "a.weight": data_offsets [0,100) exceed the data section (96 bytes)`}},
		{"size mismatch", `{"a.weight":{"dtype":"F32","shape":[2,3],"data_offsets":[0,20]}}`, 24, []string{"data_offsets [0,20) hold 20 bytes but shape [2 3] of F32 needs 24"}},
		{"BF16 size mismatch", `{"a.weight":{"dtype":"BF16","shape":[4],"data_offsets":[0,16]}}`, 16, []string{"shape [4] of BF16 needs 8"}},
		{"element count overflow", `{"a.weight":{"dtype":"F32","shape":[4294967296,4294967296],"data_offsets":[0,8]}}`, 8, []string{"too large"}},
		{"byte count overflow", `{"a.weight":{"dtype":"I64","shape":[2305843009213693952],"data_offsets":[0,8]}}`, 8, []string{"too large"}},
		{"overlap", `{` + a + `,"b":{"dtype":"F32","shape":[2],"data_offsets":[20,28]}}`, 28, []string{`tensor "b": data_offsets [20,28) overlap tensor "a.weight" [0,24)`}},
		{"same offsets", `{` + a + `,"b":{"dtype":"F32","shape":[6],"data_offsets":[0,24]}}`, 24, []string{"overlap"}},
		{"nested overlap", `{"big":{"dtype":"F32","shape":[8],"data_offsets":[0,32]},"c":{"dtype":"F32","shape":[1],"data_offsets":[8,12]},"e":{"dtype":"F32","shape":[0],"data_offsets":[4,4]}}`, 32, []string{`tensor "c"`, `overlap tensor "big"`}},
		{"duplicate tensor", `{` + a + `,` + a + `}`, 24, []string{`tensor "a.weight": duplicate tensor name`}},
		{"empty name", `{"":{"dtype":"F32","shape":[1],"data_offsets":[0,4]}}`, 4, []string{"empty tensor name"}},
		{"metadata not object", `{"__metadata__":"x",` + a + `}`, 24, []string{"__metadata__: must be an object of strings, got string"}},
		{"metadata value not string", `{"__metadata__":{"format":1},` + a + `}`, 24, []string{`__metadata__: value of "format" must be a string, got number`}},
		{"duplicate metadata", `{"__metadata__":{},"__metadata__":{}}`, 0, []string{"duplicate __metadata__"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			path := rawFile(t, tc.header, tc.dataLen)
			f, err := Open(path)
			if err == nil {
				f.Close()
			}
			wantError(t, err, path, tc.want...)
		})
	}
}

func TestBadFileSizes(t *testing.T) {
	t.Run("shorter than 8 bytes", func(t *testing.T) {
		path := writeRaw(t, []byte{1, 2, 3})
		_, err := Open(path)
		wantError(t, err, path, "file is 3 bytes, shorter than the 8-byte header length field")
	})
	t.Run("empty file", func(t *testing.T) {
		path := writeRaw(t, nil)
		_, err := Open(path)
		wantError(t, err, path, "file is 0 bytes")
	})
	t.Run("header length beyond the file", func(t *testing.T) {
		b := make([]byte, 8+10)
		binary.LittleEndian.PutUint64(b, 1000)
		path := writeRaw(t, b)
		_, err := Open(path)
		wantError(t, err, path, "header length 1000 exceeds the 10 bytes after the length field", "truncated")
	})
	t.Run("absurd header length", func(t *testing.T) {
		b := make([]byte, 16)
		binary.LittleEndian.PutUint64(b, 1<<62)
		path := writeRaw(t, b)
		_, err := Open(path)
		wantError(t, err, path, "larger than the 100 MiB limit")
	})
	t.Run("max uint64 header length", func(t *testing.T) {
		b := make([]byte, 16)
		binary.LittleEndian.PutUint64(b, ^uint64(0))
		path := writeRaw(t, b)
		_, err := Open(path)
		wantError(t, err, path, "MiB limit")
	})
	t.Run("truncated data", func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "x.safetensors")
		err := Write(path, nil, []WriteTensor{
			{Name: "a", DType: F32, Shape: []int64{4}, Data: F32Bytes([]float32{1, 2, 3, 4})},
			{Name: "b", DType: F32, Shape: []int64{2}, Data: F32Bytes([]float32{5, 6})},
		})
		if err != nil {
			t.Fatal(err)
		}
		st, _ := os.Stat(path)
		if err := os.Truncate(path, st.Size()-3); err != nil {
			t.Fatal(err)
		}
		_, err = Open(path)
		wantError(t, err, path, `tensor "b": data_offsets [16,24) exceed the data section (21 bytes)`)
	})
	t.Run("missing file", func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "nope.safetensors")
		_, err := Open(path)
		wantError(t, err, path, "cannot open file")
		if !errors.Is(err, os.ErrNotExist) {
			t.Errorf("errors.Is(%v, os.ErrNotExist) = false", err)
		}
	})
	t.Run("directory", func(t *testing.T) {
		path := t.TempDir()
		_, err := Open(path)
		wantError(t, err, path)
	})
}

func TestParseHeaderDirect(t *testing.T) {
	hdr := []byte(`{"b":{"dtype":"I64","shape":[2],"data_offsets":[16,32]}, "a":{"dtype":"F16","shape":[3],"data_offsets":[0,6]},` +
		`"z":{"dtype":"F32","shape":[0,5],"data_offsets":[6,6]},"__metadata__":{"k":"v"}}   `)
	h, err := ParseHeader("mem", hdr, int64(8+len(hdr)+40))
	if err != nil {
		t.Fatal(err)
	}
	if h.DataStart != int64(8+len(hdr)) || h.Metadata["k"] != "v" || len(h.Tensors) != 3 {
		t.Fatalf("unexpected header %+v", h)
	}
	// Sorted by begin: a [0,6), z [6,6), b [16,32) (a gap and trailing bytes are fine).
	for i, want := range []string{"a", "z", "b"} {
		if h.Tensors[i].Name != want {
			t.Errorf("Tensors[%d] = %q, want %q", i, h.Tensors[i].Name, want)
		}
	}
	b, ok := h.Lookup("b")
	if !ok || b.Begin != h.DataStart+16 || b.End != h.DataStart+32 || b.NumElements() != 2 || b.ByteSize() != 16 {
		t.Errorf("Lookup(b) = %+v, %v", b, ok)
	}
	if z, _ := h.Lookup("z"); z.NumElements() != 0 {
		t.Errorf("z has %d elements, want 0", z.NumElements())
	}
	if _, ok := h.Lookup("nope"); ok {
		t.Error("Lookup(nope) succeeded")
	}
	if got := h.Names(); strings.Join(got, ",") != "a,b,z" {
		t.Errorf("Names() = %v", got)
	}

	// Null metadata is accepted as no metadata; an empty object is a file without tensors.
	h, err = ParseHeader("mem", []byte(`{"__metadata__":null}`), 100)
	if err != nil || len(h.Metadata) != 0 || len(h.Tensors) != 0 {
		t.Errorf("null metadata: %+v, %v", h, err)
	}

	// The file size must cover the header.
	_, err = ParseHeader("mem", []byte(`{}`), 5)
	if err == nil || !strings.Contains(err.Error(), "extends past the end of the file") {
		t.Errorf("short file size: %v", err)
	}
}

func TestDTypeSize(t *testing.T) {
	for dt, want := range map[DType]int{F32: 4, F16: 2, BF16: 2, I32: 4, I64: 8, "F64": 0, "": 0} {
		if got := dt.Size(); got != want {
			t.Errorf("%q.Size() = %d, want %d", dt, got, want)
		}
	}
}
