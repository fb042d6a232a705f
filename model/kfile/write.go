package kfile

import (
	"bufio"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"io"
	"os"

	"github.com/ktune/ktune/internal/atomicfile"
)

// Write writes a model file to path atomically (a temporary file renamed
// into place): config.json verbatim, meta, and tensors, whose Name, Layout,
// DType, Shape and HasMin the caller sets (Write fills Offset, Size and
// CRC32C). data(i) supplies tensor i's bytes when its turn comes, so a
// converter holds one tensor at a time; its length must match the entry.
func Write(path string, config []byte, meta map[string]string, tensors []Tensor, data func(i int) ([]byte, error)) error {
	tab, table, _, err := layout(config, meta, tensors)
	if err != nil {
		return fmt.Errorf("kfile: %s: %v", path, err)
	}
	ts := tab.Tensors
	header := func() []byte {
		b := make([]byte, PrefixLen, PrefixLen+len(config)+len(table))
		copy(b, Magic)
		binary.LittleEndian.PutUint32(b[8:], Version)
		binary.LittleEndian.PutUint64(b[16:], uint64(len(config)))
		binary.LittleEndian.PutUint64(b[24:], uint64(len(table)))
		b = append(append(b, config...), table...)
		binary.LittleEndian.PutUint32(b[12:], Checksum(b[16:]))
		return b
	}
	return atomicfile.WriteFile(path, func(f *os.File) error {
		w := &posWriter{w: bufio.NewWriterSize(f, 1<<20)}
		if _, err := w.Write(header()); err != nil { // checksums still zero
			return err
		}
		for i := range ts {
			t := &ts[i]
			b, err := data(i)
			if err != nil {
				return fmt.Errorf("tensor %q: %w", t.Name, err)
			}
			if int64(len(b)) != t.Size {
				return fmt.Errorf("tensor %q: %d bytes, want %d for %s %s %v", t.Name, len(b), t.Size, t.Layout, t.DType, t.Shape)
			}
			if err := w.pad(t.Offset); err != nil {
				return err
			}
			if _, err := w.Write(b); err != nil {
				return err
			}
			t.CRC32C = formatCRC(Checksum(b))
		}
		if err := w.w.Flush(); err != nil {
			return err
		}
		// the final header: same length, checksums filled in
		var err error
		if table, err = json.Marshal(&tab); err != nil {
			return err
		}
		_, err = f.WriteAt(header(), 0)
		return err
	})
}

// Size is the size of the file Write would write with these arguments.
func Size(config []byte, meta map[string]string, tensors []Tensor) (int64, error) {
	_, _, end, err := layout(config, meta, tensors)
	return end, err
}

// layout places the tensors (a copy of them, with Offset and Size set and
// zero checksums) after the header and returns the table, its JSON and the
// file's size.
func layout(config []byte, meta map[string]string, tensors []Tensor) (Table, []byte, int64, error) {
	ts := make([]Tensor, len(tensors))
	copy(ts, tensors)
	for i := range ts {
		t := &ts[i]
		size, err := ExpectedSize(t)
		if err != nil {
			return Table{}, nil, 0, fmt.Errorf("tensor %q: %v", t.Name, err)
		}
		t.Size, t.CRC32C = size, formatCRC(0)
	}
	tab := Table{Alignment: Alignment, Meta: meta, Tensors: ts}
	// lay out: the offsets depend on the table's length, which depends on
	// the offsets' digits; iterate to the fixed point (two or three rounds;
	// the checksums are fixed-width, so filling them in keeps the length)
	var table []byte
	dataStart := int64(-1)
	for {
		off := dataStart
		for i := range ts {
			off = alignUp(off, Alignment)
			ts[i].Offset = off
			off += ts[i].Size
		}
		var err error
		if table, err = json.Marshal(&tab); err != nil {
			return Table{}, nil, 0, err
		}
		end := int64(PrefixLen + len(config) + len(table))
		if end <= dataStart {
			return tab, table, max(off, dataStart), nil
		}
		dataStart = end
	}
}

func alignUp(x, a int64) int64 { return (x + a - 1) / a * a }

// posWriter counts what it writes, to pad up to each tensor's offset.
type posWriter struct {
	w   *bufio.Writer
	pos int64
}

func (p *posWriter) Write(b []byte) (int, error) {
	n, err := p.w.Write(b)
	p.pos += int64(n)
	return n, err
}

var zeros [Alignment]byte

func (p *posWriter) pad(to int64) error {
	for p.pos < to {
		if _, err := p.Write(zeros[:min(to-p.pos, int64(len(zeros)))]); err != nil {
			return err
		}
	}
	if p.pos != to {
		return io.ErrShortWrite
	}
	return nil
}
