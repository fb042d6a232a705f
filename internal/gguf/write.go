package gguf

import (
	"bufio"
	"encoding/binary"
	"fmt"
	"io"
	"math"
)

// KV is one metadata key/value for Write.
type KV struct {
	Key   string
	Value Value
}

// WriteTensor is one tensor for Write: Data must hold exactly
// Type.ByteSize(Dims) bytes, or, for a tensor too large to hold in memory,
// Data is nil and Fill writes them (streamed: Write calls Fill when the
// tensor's turn comes, and fails unless it wrote exactly that many).
type WriteTensor struct {
	Name string
	Dims []uint64 // GGUF order: Dims[0] is the row length
	Type Type
	Data []byte
	Fill func(w io.Writer) error
}

// Write writes a GGUF version 3 file: the metadata in order, then the
// tensors, each at the next multiple of the alignment (general.alignment if
// meta sets it as a uint32, else 32). Tensors with a Fill are streamed, so
// a file larger than memory can be written.
func Write(w io.Writer, meta []KV, tensors []WriteTensor) error {
	l, err := layout(meta, tensors)
	if err != nil {
		return err
	}
	bw := bufio.NewWriterSize(w, 1<<16)
	e := &encoder{w: bw}
	if err := e.header(meta, tensors, l); err != nil {
		return err
	}
	for i, t := range tensors {
		e.raw(make([]byte, l.start+l.offsets[i]-e.n))
		if e.err != nil {
			return e.err
		}
		if t.Data != nil || t.Fill == nil {
			e.raw(t.Data)
			continue
		}
		cw := &countWriter{w: bw}
		if err := t.Fill(cw); err != nil {
			return fmt.Errorf("gguf: tensor %q: %w", t.Name, err)
		}
		if cw.n != l.sizes[i] {
			return fmt.Errorf("gguf: tensor %q: Fill wrote %d bytes, %s %v takes %d", t.Name, cw.n, t.Type, t.Dims, l.sizes[i])
		}
		e.n += cw.n
	}
	if e.err != nil {
		return e.err
	}
	return bw.Flush()
}

// Size returns the bytes Write writes for meta and tensors: the header, its
// padding, and the tensors' data at their aligned offsets (Data and Fill
// are not consulted, but a Data of the wrong length is an error as for
// Write).
func Size(meta []KV, tensors []WriteTensor) (uint64, error) {
	l, err := layout(meta, tensors)
	if err != nil {
		return 0, err
	}
	if len(tensors) == 0 {
		return l.start, nil
	}
	last := len(tensors) - 1
	return l.start + l.offsets[last] + l.sizes[last], nil
}

// fileLayout is where Write puts things: the data section's start and each
// tensor's offset in it and size.
type fileLayout struct {
	align, start   uint64
	offsets, sizes []uint64
}

// layout checks meta's alignment and the tensors' sizes and places them.
func layout(meta []KV, tensors []WriteTensor) (fileLayout, error) {
	l := fileLayout{align: DefaultAlignment, offsets: make([]uint64, len(tensors)), sizes: make([]uint64, len(tensors))}
	for _, kv := range meta {
		if kv.Key == "general.alignment" {
			a, ok := kv.Value.x.(uint32)
			if !ok || a == 0 || a&(a-1) != 0 {
				return l, fmt.Errorf("gguf: general.alignment must be a uint32 power of two, not %s %v", kv.Value.Type, kv.Value)
			}
			l.align = uint64(a)
		}
	}
	var off uint64
	for i, t := range tensors {
		size, err := t.Type.ByteSize(t.Dims)
		if err != nil {
			return l, fmt.Errorf("gguf: tensor %q: %v", t.Name, err)
		}
		if (t.Data != nil || t.Fill == nil) && uint64(len(t.Data)) != size {
			return l, fmt.Errorf("gguf: tensor %q: data is %d bytes, %s %v takes %d", t.Name, len(t.Data), t.Type, t.Dims, size)
		}
		off = (off + l.align - 1) / l.align * l.align
		l.offsets[i], l.sizes[i] = off, size
		off += size
	}
	// the header's size: encode it to a counter
	c := &encoder{w: io.Discard}
	if err := c.header(meta, tensors, l); err != nil {
		return l, err
	}
	l.start = (c.n + l.align - 1) / l.align * l.align
	return l, nil
}

// header writes the magic, the counts, the metadata, the tensor infos and
// the padding up to the data section (l.start; 0 while layout measures).
func (e *encoder) header(meta []KV, tensors []WriteTensor, l fileLayout) error {
	e.raw([]byte("GGUF"))
	e.u32(3)
	e.u64(uint64(len(tensors)))
	e.u64(uint64(len(meta)))
	for _, kv := range meta {
		e.str(kv.Key)
		e.u32(uint32(kv.Value.Type))
		if err := e.value(kv.Value.x); err != nil {
			return fmt.Errorf("gguf: metadata %q: %v", kv.Key, err)
		}
	}
	for i, t := range tensors {
		e.str(t.Name)
		e.u32(uint32(len(t.Dims)))
		for _, d := range t.Dims {
			e.u64(d)
		}
		e.u32(uint32(t.Type))
		e.u64(l.offsets[i])
	}
	if l.start > e.n {
		e.raw(make([]byte, l.start-e.n))
	}
	return e.err
}

// countWriter counts the bytes written through it.
type countWriter struct {
	w io.Writer
	n uint64
}

func (c *countWriter) Write(b []byte) (int, error) {
	n, err := c.w.Write(b)
	c.n += uint64(n)
	return n, err
}

// encoder writes little-endian fields, keeping the first error and the count.
type encoder struct {
	w   io.Writer
	n   uint64
	err error
}

func (e *encoder) raw(b []byte) {
	if e.err != nil {
		return
	}
	n, err := e.w.Write(b)
	e.n += uint64(n)
	e.err = err
}

func (e *encoder) u32(v uint32) { e.raw(binary.LittleEndian.AppendUint32(nil, v)) }
func (e *encoder) u64(v uint64) { e.raw(binary.LittleEndian.AppendUint64(nil, v)) }
func (e *encoder) str(s string) { e.u64(uint64(len(s))); e.raw([]byte(s)) }

// value writes the encoding of a Value's Go value (no type tag).
func (e *encoder) value(x any) error {
	switch v := x.(type) {
	case uint8:
		e.raw([]byte{v})
	case int8:
		e.raw([]byte{byte(v)})
	case uint16:
		e.raw(binary.LittleEndian.AppendUint16(nil, v))
	case int16:
		e.raw(binary.LittleEndian.AppendUint16(nil, uint16(v)))
	case uint32:
		e.u32(v)
	case int32:
		e.u32(uint32(v))
	case float32:
		e.u32(math.Float32bits(v))
	case bool:
		b := byte(0)
		if v {
			b = 1
		}
		e.raw([]byte{b})
	case string:
		e.str(v)
	case uint64:
		e.u64(v)
	case int64:
		e.u64(uint64(v))
	case float64:
		e.u64(math.Float64bits(v))
	case *Array:
		e.u32(uint32(v.Elem))
		n := v.Len()
		e.u64(uint64(n))
		for i := 0; i < n; i++ {
			if err := e.value(v.Index(i).x); err != nil {
				return err
			}
		}
	default:
		return fmt.Errorf("no GGUF encoding for %T", x)
	}
	return nil
}
