// Package kfile reads and writes ktune's model file (.kt): one mmap-able
// file holding a model's config.json and every tensor the engine reads,
// matrices already in quant's canonical packed layouts, so that loading is
// a mapping and a table lookup, with no conversion or copy. The format is
// documented in docs/kt-format.md; in short (all integers little-endian):
//
//	offset  size  field
//	0       8     magic "KTMODEL\x00"
//	8       4     format version (1)
//	12      4     CRC32C of bytes 16 .. 32+C+T (the rest of the header)
//	16      8     C, the length of config.json
//	24      8     T, the length of the tensor table
//	32      C     config.json, verbatim
//	32+C    T     the tensor table: a JSON object (see Table)
//	…             zero padding; tensors at their offsets, each a multiple
//	              of the table's alignment (4096), each with a CRC32C
//
// ParseHeader checks everything it can without reading tensor data: the
// magic, version, lengths, header checksum, and every table entry (known
// layout and dtype, size matching its shape, aligned, inside the file, no
// overlaps, nothing after the last tensor). Verify checks the tensors'
// checksums.
package kfile

import (
	"bytes"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"hash/crc32"
	"io/fs"
	"maps"
	"math"
	"math/bits"
	"reflect"
	"slices"

	"github.com/ktune/ktune/internal/kernel"
	"github.com/ktune/ktune/internal/quant"
)

const (
	// Magic starts every model file.
	Magic = "KTMODEL\x00"
	// Version is the format version this package writes and reads.
	Version = 1
	// PrefixLen is the fixed part of the header before config.json.
	PrefixLen = 32
	// Alignment is the data alignment Write uses: a page, so that a tensor
	// can be locked (mlock) and its residency counted (mincore) on its own.
	Alignment = 4096
	// MinAlignment is the least alignment a reader accepts (a cache line:
	// the kernels read packed panels in 64-byte lines).
	MinAlignment = 64
	// maxHeader bounds C+T (a 48B model's table is a few MiB).
	maxHeader = 1 << 30
)

// Layouts of a tensor's bytes.
const (
	// LayoutPacked is quant's canonical packed layout of an [N, K] matrix
	// in DType f32, bf16, q8 or q4.
	LayoutPacked = "packed"
	// LayoutRaw is row-major little-endian values in DType F32, BF16 or
	// F16 (safetensors' names), of any shape.
	LayoutRaw = "raw"
)

// Tensor is one entry of the tensor table.
type Tensor struct {
	Name   string  `json:"name"`
	Layout string  `json:"layout"`
	DType  string  `json:"dtype"`
	Shape  []int64 `json:"shape"`
	HasMin bool    `json:"has_min,omitempty"` // q4 with a per-group min
	Offset int64   `json:"offset"`            // from the start of the file
	Size   int64   `json:"size"`              // bytes
	CRC32C string  `json:"crc32c"`            // 8 hex digits, of the Size bytes at Offset
}

// Table is the JSON tensor table.
type Table struct {
	Alignment int64             `json:"alignment"`
	Meta      map[string]string `json:"meta,omitempty"`
	Tensors   []Tensor          `json:"tensors"`
}

// Header is a parsed model-file header.
type Header struct {
	Version   int
	Config    []byte // config.json, verbatim
	Table     Table
	DataStart int64 // first byte after the header (32+C+T)
	FileSize  int64

	index map[key]int
}

type key struct{ name, layout string }

// Lookup finds the entry for name in layout.
func (h *Header) Lookup(name, layout string) (*Tensor, bool) {
	i, ok := h.index[key{name, layout}]
	if !ok {
		return nil, false
	}
	return &h.Table.Tensors[i], true
}

// castagnoli is the CRC32C table (hardware-accelerated on amd64 and arm64).
var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// Checksum is the CRC32C of b.
func Checksum(b []byte) uint32 { return crc32.Checksum(b, castagnoli) }

// formatCRC writes a checksum as the table stores it: 8 hex digits.
func formatCRC(c uint32) string { return fmt.Sprintf("%08x", c) }

// Error is a problem with a model file; Path names the file.
type Error struct {
	Path string
	Msg  string
	Err  error // the cause of an I/O error (IOError), else nil
}

func (e *Error) Error() string { return "kfile: " + e.Path + ": " + e.Msg }

// Unwrap returns the cause, so that errors.Is(err, fs.ErrNotExist) works
// on Open's errors.
func (e *Error) Unwrap() error { return e.Err }

// IOError is err, from stating or opening path, as an Error that names the
// file once: "kfile: x.kt: no such file or directory" (an *fs.PathError's
// operation and path dropped).
func IOError(path string, err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		err = pe.Err
	}
	return &Error{Path: path, Msg: err.Error(), Err: err}
}

func errorf(path, format string, args ...any) error {
	return &Error{Path: path, Msg: fmt.Sprintf(format, args...)}
}

// ElemSize is the size of one raw value of dtype dt (0: unknown).
func ElemSize(dt string) int {
	switch dt {
	case "F32":
		return 4
	case "BF16", "F16":
		return 2
	}
	return 0
}

// ExpectedSize is the byte size a tensor's layout, dtype and shape imply.
func ExpectedSize(t *Tensor) (int64, error) {
	if len(t.Shape) == 0 {
		return 0, errors.New("empty shape")
	}
	n := int64(1)
	for _, d := range t.Shape {
		if d < 1 {
			return 0, fmt.Errorf("dimension %d in shape %v", d, t.Shape)
		}
		hi, lo := bits.Mul64(uint64(n), uint64(d))
		if hi != 0 || lo > 1<<47 {
			return 0, fmt.Errorf("shape %v is too large", t.Shape)
		}
		n = int64(lo)
	}
	switch t.Layout {
	case LayoutRaw:
		es := ElemSize(t.DType)
		if es == 0 {
			return 0, fmt.Errorf("raw dtype %q (want F32, BF16 or F16)", t.DType)
		}
		if t.HasMin {
			return 0, errors.New("has_min on a raw tensor")
		}
		return n * int64(es), nil
	case LayoutPacked:
		dt := kernel.DType(t.DType)
		switch dt {
		case kernel.F32, kernel.BF16, kernel.Q8, kernel.Q4, kernel.Q3, kernel.Q6, kernel.Q5, kernel.Q2, kernel.Q3K, kernel.Q4K, kernel.Q5K, kernel.Q6K:
		default:
			return 0, fmt.Errorf("packed dtype %q (want f32, bf16, q8, q6k, q6, q5k, q5, q4k, q4, q3k, q3 or q2)", t.DType)
		}
		if len(t.Shape) != 2 || t.Shape[0] > math.MaxInt32 || t.Shape[1] > math.MaxInt32 {
			return 0, fmt.Errorf("packed shape %v (want [N, K])", t.Shape)
		}
		if t.HasMin && dt != kernel.Q4 {
			return 0, fmt.Errorf("has_min on a %s matrix (q4 only)", dt)
		}
		return quant.Size(dt, int(t.Shape[0]), int(t.Shape[1]), t.HasMin), nil
	}
	return 0, fmt.Errorf("layout %q (want packed or raw)", t.Layout)
}

// ParseHeader parses and checks the header at the start of data (at least
// the whole header; usually the whole mapped file) of a file of fileSize
// bytes. path names the file in errors. It never reads tensor data.
func ParseHeader(path string, data []byte, fileSize int64) (*Header, error) {
	if len(data) < PrefixLen || fileSize < PrefixLen {
		if len(data) >= len(Magic) && string(data[:len(Magic)]) != Magic {
			return nil, errorf(path, "not a ktune model file (bad magic %q)", data[:len(Magic)])
		}
		return nil, errorf(path, "truncated: %d bytes, shorter than the %d-byte header prefix", min(int64(len(data)), fileSize), PrefixLen)
	}
	if string(data[:8]) != Magic {
		hint := ""
		if binary.LittleEndian.Uint64(data) < 1<<30 && len(data) > 8 && data[8] == '{' {
			hint = " (this looks like a safetensors file: pass its folder, or convert it with krun convert)"
		}
		return nil, errorf(path, "not a ktune model file (bad magic %q)%s", data[:8], hint)
	}
	h := &Header{Version: int(binary.LittleEndian.Uint32(data[8:])), FileSize: fileSize}
	if h.Version != Version {
		return nil, errorf(path, "format version %d; this build reads version %d (convert the model again)", h.Version, Version)
	}
	crc := binary.LittleEndian.Uint32(data[12:])
	c, t := binary.LittleEndian.Uint64(data[16:]), binary.LittleEndian.Uint64(data[24:])
	if c > maxHeader || t > maxHeader {
		return nil, errorf(path, "corrupt header: config length %d and table length %d (at most %d each)", c, t, maxHeader)
	}
	end := int64(PrefixLen) + int64(c) + int64(t)
	if end > fileSize || end > int64(len(data)) {
		return nil, errorf(path, "truncated: the header needs %d bytes but the file has %d", end, min(fileSize, int64(len(data))))
	}
	if got := Checksum(data[16:end]); got != crc {
		return nil, errorf(path, "header checksum mismatch (stored %08x, computed %08x): the file is corrupt", crc, got)
	}
	h.DataStart = end
	h.Config = data[PrefixLen : PrefixLen+c]
	if !json.Valid(h.Config) || !bytes.HasPrefix(bytes.TrimSpace(h.Config), []byte("{")) {
		return nil, errorf(path, "corrupt header: the stored config.json is not a JSON object")
	}
	dec := json.NewDecoder(bytes.NewReader(data[PrefixLen+c : end]))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&h.Table); err != nil {
		return nil, errorf(path, "corrupt tensor table: %v", tableError(data[PrefixLen+c:end], err))
	}
	if err := h.checkTable(); err != nil {
		return nil, errorf(path, "%v", err)
	}
	return h, nil
}

// tableError words the table decoder's type error in the format's terms:
// a meta entry by its key, a field by its JSON name and the JSON it needs
// (not Go's field and type names).
func tableError(table []byte, err error) error {
	var te *json.UnmarshalTypeError
	if !errors.As(err, &te) {
		return err
	}
	if te.Field == "meta" {
		var m struct {
			Meta map[string]json.RawMessage `json:"meta"`
		}
		if json.Unmarshal(table, &m) != nil {
			return fmt.Errorf("meta is a JSON %s; want an object of strings", te.Value)
		}
		for _, k := range slices.Sorted(maps.Keys(m.Meta)) {
			var s string
			if json.Unmarshal(m.Meta[k], &s) != nil {
				return fmt.Errorf("meta entry %q is %.40s; every meta value must be a JSON string", k, m.Meta[k])
			}
		}
	}
	want := "a " + te.Type.Kind().String()
	switch te.Type.Kind() {
	case reflect.Int, reflect.Int64:
		want = "an integer"
	case reflect.String:
		want = "a string"
	case reflect.Bool:
		want = "true or false"
	case reflect.Slice:
		want = "an array"
	case reflect.Map, reflect.Struct:
		want = "an object"
	}
	return fmt.Errorf("field %q is a JSON %s; want %s", te.Field, te.Value, want)
}

// checkTable checks every entry against the layout rules and the file's
// extent, and builds the index.
func (h *Header) checkTable() error {
	a := h.Table.Alignment
	if a < MinAlignment || a > 1<<20 || a&(a-1) != 0 {
		return fmt.Errorf("tensor table: alignment %d (want a power of two from %d to 1 MiB)", a, MinAlignment)
	}
	if len(h.Table.Tensors) == 0 {
		return errors.New("tensor table: no tensors")
	}
	h.index = make(map[key]int, len(h.Table.Tensors))
	order := make([]int, 0, len(h.Table.Tensors))
	for i := range h.Table.Tensors {
		t := &h.Table.Tensors[i]
		bad := func(format string, args ...any) error {
			return fmt.Errorf("tensor table entry %d (%q): %s", i, t.Name, fmt.Sprintf(format, args...))
		}
		if t.Name == "" {
			return bad("no name")
		}
		k := key{t.Name, t.Layout}
		if _, dup := h.index[k]; dup {
			return bad("appears twice as %s", t.Layout)
		}
		h.index[k] = i
		want, err := ExpectedSize(t)
		if err != nil {
			return bad("%v", err)
		}
		if t.Size != want {
			return bad("size %d, but a %s %s %v tensor has %d bytes", t.Size, t.Layout, t.DType, t.Shape, want)
		}
		if t.Offset%a != 0 {
			return bad("offset %d is not a multiple of the alignment %d", t.Offset, a)
		}
		if t.Offset < h.DataStart || t.Offset > h.FileSize || t.Size > h.FileSize-t.Offset {
			return bad("bytes [%d, %d) lie outside the data section [%d, %d) (truncated file?)", t.Offset, t.Offset+t.Size, h.DataStart, h.FileSize)
		}
		if b, err := hex.DecodeString(t.CRC32C); err != nil || len(b) != 4 {
			return bad("crc32c %q (want 8 hex digits)", t.CRC32C)
		}
		order = append(order, i)
	}
	ts := h.Table.Tensors
	slices.SortFunc(order, func(x, y int) int { return int(min(max(ts[x].Offset-ts[y].Offset, -1), 1)) })
	for j := 1; j < len(order); j++ {
		p, q := &ts[order[j-1]], &ts[order[j]]
		if p.Offset+p.Size > q.Offset {
			return fmt.Errorf("tensor table: %q [%d, %d) overlaps %q at %d", p.Name, p.Offset, p.Offset+p.Size, q.Name, q.Offset)
		}
	}
	// the file ends with the last tensor (Write pads only before a tensor)
	last := &ts[order[len(order)-1]]
	if end := last.Offset + last.Size; end < h.FileSize {
		return fmt.Errorf("%d extra bytes after the last tensor (%q ends at %d; the file has %d bytes): a model file ends with its last tensor", h.FileSize-end, last.Name, end, h.FileSize)
	}
	return nil
}

// CRC is the entry's stored checksum.
func (t *Tensor) CRC() uint32 {
	b, _ := hex.DecodeString(t.CRC32C) // checked by ParseHeader
	if len(b) != 4 {
		return 0
	}
	return binary.BigEndian.Uint32(b)
}
