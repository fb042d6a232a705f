package safetensors

import (
	"encoding/binary"
	"slices"
	"testing"
)

var fuzzSeeds = []string{
	`{}`,
	`{"__metadata__":{"format":"pt"}}`,
	`{"a":{"dtype":"F32","shape":[2,3],"data_offsets":[0,24]}}`,
	`{"a":{"dtype":"BF16","shape":[4],"data_offsets":[0,8]},"b":{"dtype":"I64","shape":[],"data_offsets":[8,16]}}`,
	`{"a":{"dtype":"F16","shape":[0],"data_offsets":[4,4]},"b":{"dtype":"I32","shape":[1],"data_offsets":[0,4]}}  `,
	`{"b":{"dtype":"F32","shape":[1],"data_offsets":[16,20]},"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]}}`,
	`{"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]},"b":{"dtype":"F32","shape":[2],"data_offsets":[4,12]}}`,
	`{"a":{"dtype":"F32","shape":[25],"data_offsets":[0,100]}}`,
	`{"a":{"dtype":"F32","shape":[4294967296,4294967296],"data_offsets":[0,8]}}`,
	`{"a":{"dtype":"F32","shape":[-1],"data_offsets":[0,4]}}`,
	`{"a":{"dtype":"F32","shape":[1.5],"data_offsets":[0,4]}}`,
	`{"a":{"dtype":"X","shape":[1],"data_offsets":[0,4]}}`,
	`{"a":{"dtype":"F32","shape":[1],"data_offsets":[8,4]}}`,
	`{"a":{"dtype":"F32","shape":[1],"data_offsets":[0,4]},"a":{"dtype":"F32","shape":[1],"data_offsets":[4,8]}}`,
	`{"__metadata__":{"k":1}}`,
	`{"a":null}`,
	`[1,2]`,
	`{"a":`,
	``,
	"{\"\xff\":1}",
}

func FuzzParseHeader(f *testing.F) {
	for _, s := range fuzzSeeds {
		f.Add([]byte(s), int64(8+len(s)+64))
		f.Add([]byte(s), int64(8+len(s)+24))
	}
	f.Add([]byte(`{"a":{"dtype":"F32","shape":[1],"data_offsets":[5368709120,5368709124]}}`), int64(6<<30))
	f.Add([]byte(`{}`), int64(-1))
	f.Fuzz(func(t *testing.T, hdr []byte, fileSize int64) {
		h, err := ParseHeader("fuzz.safetensors", hdr, fileSize)
		if err != nil {
			if _, ok := err.(*Error); !ok {
				t.Fatalf("error %v is a %T", err, err)
			}
			return
		}
		checkHeader(t, h, int64(len(hdr)), fileSize)
	})
}

// FuzzFromBytes fuzzes whole in-memory files, length field included, and
// reads every tensor of the accepted ones.
func FuzzFromBytes(f *testing.F) {
	for _, s := range fuzzSeeds {
		b := make([]byte, 8, 8+len(s)+32)
		binary.LittleEndian.PutUint64(b, uint64(len(s)))
		b = append(b, s...)
		f.Add(append(b, make([]byte, 24)...))
	}
	f.Add([]byte{1, 2, 3})
	f.Fuzz(func(t *testing.T, data []byte) {
		file, err := FromBytes("fuzz.safetensors", data)
		if err != nil {
			return
		}
		checkHeader(t, file.Header, int64(binary.LittleEndian.Uint64(data)), int64(len(data)))
		for _, name := range file.Names() {
			info, _ := file.Info(name)
			b, err := file.Bytes(name)
			if err != nil || int64(len(b)) != info.ByteSize() {
				t.Fatalf("Bytes(%q): %d bytes, %v", name, len(b), err)
			}
			if info.DType.IsFloat() {
				v, err := file.Float32(name)
				if err != nil || int64(len(v)) != info.NumElements() {
					t.Fatalf("Float32(%q): %v", name, err)
				}
			} else {
				v, err := file.Int64(name)
				if err != nil || int64(len(v)) != info.NumElements() {
					t.Fatalf("Int64(%q): %v", name, err)
				}
			}
		}
	})
}

// checkHeader asserts the invariants of an accepted header.
func checkHeader(t *testing.T, h *Header, headerLen, fileSize int64) {
	t.Helper()
	if h.DataStart != 8+headerLen || h.DataStart > fileSize || h.FileSize != fileSize {
		t.Fatalf("DataStart %d, FileSize %d for header length %d and file size %d", h.DataStart, h.FileSize, headerLen, fileSize)
	}
	if h.Metadata == nil {
		t.Fatal("nil Metadata")
	}
	seen := map[string]bool{}
	var prev *TensorInfo
	var maxEnd int64
	for i := range h.Tensors {
		ti := &h.Tensors[i]
		if ti.Name == "" || ti.Name == metadataKey || seen[ti.Name] {
			t.Fatalf("bad or duplicate name %q", ti.Name)
		}
		seen[ti.Name] = true
		if !ti.DType.Valid() {
			t.Fatalf("%q: dtype %q", ti.Name, ti.DType)
		}
		if ti.Begin < h.DataStart || ti.Begin > ti.End || ti.End > fileSize {
			t.Fatalf("%q: offsets [%d,%d) outside [%d,%d)", ti.Name, ti.Begin, ti.End, h.DataStart, fileSize)
		}
		n, ok := byteSize(ti.Shape, ti.DType)
		if !ok || n != ti.End-ti.Begin || ti.NumElements()*int64(ti.DType.Size()) != n {
			t.Fatalf("%q: shape %v of %s in %d bytes", ti.Name, ti.Shape, ti.DType, ti.End-ti.Begin)
		}
		if slices.ContainsFunc(ti.Shape, func(d int64) bool { return d < 0 }) {
			t.Fatalf("%q: negative dim in %v", ti.Name, ti.Shape)
		}
		if prev != nil && ti.Begin < prev.Begin {
			t.Fatalf("tensors not sorted by Begin")
		}
		if ti.End > ti.Begin {
			if ti.Begin < maxEnd {
				t.Fatalf("%q [%d,%d) overlaps an earlier tensor ending at %d", ti.Name, ti.Begin, ti.End, maxEnd)
			}
			maxEnd = ti.End
		}
		if got, ok := h.Lookup(ti.Name); !ok || got.Begin != ti.Begin {
			t.Fatalf("Lookup(%q) = %+v, %v", ti.Name, got, ok)
		}
		prev = ti
	}
}
