package kfile

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ktune/ktune/internal/kernel"
	"github.com/ktune/ktune/internal/quant"
)

// smallFile writes a two-tensor file and returns its path and bytes.
func smallFile(t testing.TB) (string, []byte) {
	t.Helper()
	q, err := quant.Quantize(kernel.Q8, make([]float32, 20*40), 20, 40, false)
	if err != nil {
		t.Fatal(err)
	}
	norm := []byte{0, 0, 128, 63, 0, 0, 0, 64} // f32 1, 2
	ts := []Tensor{
		{Name: "w", Layout: LayoutPacked, DType: "q8", Shape: []int64{20, 40}},
		{Name: "n", Layout: LayoutRaw, DType: "F32", Shape: []int64{2}},
	}
	path := filepath.Join(t.TempDir(), "m.kt")
	err = Write(path, []byte(`{"a": 1}`), map[string]string{"k": "v"}, ts, func(i int) ([]byte, error) {
		return [][]byte{q.Data, norm}[i], nil
	})
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return path, b
}

func TestWriteOpen(t *testing.T) {
	path, b := smallFile(t)
	f, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if string(f.Header.Config) != `{"a": 1}` || f.Header.Table.Meta["k"] != "v" {
		t.Errorf("header %q %v", f.Header.Config, f.Header.Table.Meta)
	}
	n, ok := f.Header.Lookup("n", LayoutRaw)
	if !ok || !bytes.Equal(f.Bytes(n), []byte{0, 0, 128, 63, 0, 0, 0, 64}) || n.Offset%Alignment != 0 {
		t.Fatalf("tensor n: %+v", n)
	}
	if err := f.Verify(2); err != nil {
		t.Fatal(err)
	}
	if r := f.Resident(n); r != -1 && (r < 0 || r > n.Size) {
		t.Errorf("resident %d of %d", r, n.Size)
	}
	if int64(len(b)) != n.Offset+n.Size {
		t.Errorf("file %d bytes, last tensor ends at %d", len(b), n.Offset+n.Size)
	}
	// Size foretells the file's size
	ts := []Tensor{{Name: "w", Layout: LayoutPacked, DType: "q8", Shape: []int64{20, 40}}, {Name: "n", Layout: LayoutRaw, DType: "F32", Shape: []int64{2}}}
	if size, err := Size([]byte(`{"a": 1}`), map[string]string{"k": "v"}, ts); err != nil || size != int64(len(b)) {
		t.Errorf("Size = %d, %v; the file has %d bytes", size, err, len(b))
	}
	// a wrong-sized tensor is refused and leaves nothing behind
	dir := t.TempDir()
	err = Write(filepath.Join(dir, "x.kt"), []byte(`{}`), nil, []Tensor{{Name: "n", Layout: LayoutRaw, DType: "F32", Shape: []int64{3}}},
		func(int) ([]byte, error) { return make([]byte, 8), nil })
	if err == nil || !strings.Contains(err.Error(), "want 12") {
		t.Errorf("err = %v", err)
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 0 {
		t.Errorf("left %v behind", ents)
	}
}

// TestTrailingBytes: bytes after the last tensor are refused, naming the
// file and how many; the file Write leaves ends with its last tensor.
func TestTrailingBytes(t *testing.T) {
	path, b := smallFile(t)
	for _, n := range []int{1, 7, Alignment} {
		if err := os.WriteFile(path, append(bytes.Clone(b), make([]byte, n)...), 0o644); err != nil {
			t.Fatal(err)
		}
		f, err := Open(path)
		if err == nil {
			f.Close()
			t.Fatalf("%d trailing bytes accepted", n)
		}
		if want := fmt.Sprintf("kfile: %s: %d extra bytes after the last tensor", path, n); !strings.Contains(err.Error(), want) {
			t.Errorf("%d trailing bytes: %v, want %q", n, err, want)
		}
	}
}

// TestOpenMissing: a missing file's error names it once, without the
// syscall, and is still fs.ErrNotExist.
func TestOpenMissing(t *testing.T) {
	path := filepath.Join(t.TempDir(), "none.kt")
	_, err := Open(path)
	if want := "kfile: " + path + ": no such file or directory"; err == nil || err.Error() != want || !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("Open: %v, want %q (fs.ErrNotExist)", err, want)
	}
}

// withTable rebuilds a file's header around a new tensor table (its
// checksum recomputed), keeping the tensors where they are.
func withTable(t *testing.T, b []byte, table string) []byte {
	t.Helper()
	h, err := ParseHeader("m.kt", b, int64(len(b)))
	if err != nil {
		t.Fatal(err)
	}
	first := h.Table.Tensors[0].Offset
	out := make([]byte, PrefixLen, first)
	copy(out, b[:PrefixLen])
	binary.LittleEndian.PutUint64(out[24:], uint64(len(table)))
	out = append(append(out, h.Config...), table...)
	binary.LittleEndian.PutUint32(out[12:], Checksum(out[16:]))
	if int64(len(out)) > first {
		t.Fatalf("table too long")
	}
	return append(append(out, make([]byte, first-int64(len(out)))...), b[first:]...)
}

// TestTableTypeErrors: a value of the wrong JSON type in the tensor table
// is named by its key (a meta entry by name) and the JSON it needs, in the
// format's words, not Go's.
func TestTableTypeErrors(t *testing.T) {
	_, b := smallFile(t)
	h, err := ParseHeader("m.kt", b, int64(len(b)))
	if err != nil {
		t.Fatal(err)
	}
	table := string(b[PrefixLen+len(h.Config) : h.DataStart])
	for _, c := range []struct{ old, new, want string }{
		{`"k":"v"`, `"k":5`, `kfile: m.kt: corrupt tensor table: meta entry "k" is 5; every meta value must be a JSON string`},
		{`"k":"v"`, `"k":{"a":[1]}`, `meta entry "k" is {"a":[1]}; every meta value must be a JSON string`},
		{`"k":"v"`, `"j":"x","k":true`, `meta entry "k" is true;`},
		{`"meta":{"k":"v"}`, `"meta":[1]`, `meta is a JSON array; want an object of strings`},
		{`"alignment":4096`, `"alignment":"4096"`, `field "alignment" is a JSON string; want an integer`},
		{`"shape":[20,40]`, `"shape":{}`, `field "tensors.shape" is a JSON object; want an array`},
	} {
		if !strings.Contains(table, c.old) {
			t.Fatalf("%s not in %s", c.old, table)
		}
		bad := withTable(t, b, strings.Replace(table, c.old, c.new, 1))
		_, err := ParseHeader("m.kt", bad, int64(len(bad)))
		if err == nil || !strings.Contains(err.Error(), c.want) || strings.Contains(err.Error(), "Go ") {
			t.Errorf("%s: %v, want %q", c.new, err, c.want)
		}
	}
}

// FuzzParseHeader: no input makes the parser panic, and whatever it
// accepts is consistent (every tensor inside the file, aligned, of the
// size its shape implies).
func FuzzParseHeader(f *testing.F) {
	_, good := smallFile(f)
	f.Add(good)
	f.Add(good[:PrefixLen])
	f.Add(good[:40])
	f.Add([]byte(Magic))
	f.Add([]byte{})
	bad := bytes.Clone(good)
	binary.LittleEndian.PutUint64(bad[24:], 1<<62)
	f.Add(bad)
	f.Fuzz(func(t *testing.T, data []byte) {
		h, err := ParseHeader("fuzz.kt", data, int64(len(data)))
		if err != nil {
			if !strings.HasPrefix(err.Error(), "kfile: fuzz.kt: ") {
				t.Fatalf("error does not name the file: %v", err)
			}
			return
		}
		ends := false
		for i := range h.Table.Tensors {
			x := &h.Table.Tensors[i]
			want, err := ExpectedSize(x)
			if err != nil || want != x.Size || x.Offset < h.DataStart || x.Offset+x.Size > int64(len(data)) || x.Offset%h.Table.Alignment != 0 {
				t.Fatalf("accepted a bad entry %+v (%v)", x, err)
			}
			if x.Offset+x.Size == int64(len(data)) {
				ends = true
			}
			if y, ok := h.Lookup(x.Name, x.Layout); !ok || y != x {
				t.Fatalf("lookup of %q", x.Name)
			}
		}
		if !ends {
			t.Fatalf("accepted bytes after the last tensor")
		}
	})
}
