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
// Type.ByteSize(Dims) bytes.
type WriteTensor struct {
	Name string
	Dims []uint64 // GGUF order: Dims[0] is the row length
	Type Type
	Data []byte
}

// Write writes a GGUF version 3 file: the metadata in order, then the
// tensors, each at the next multiple of the alignment (general.alignment if
// meta sets it as a uint32, else 32). It is meant for tests and small tools.
func Write(w io.Writer, meta []KV, tensors []WriteTensor) error {
	align := uint64(DefaultAlignment)
	for _, kv := range meta {
		if kv.Key == "general.alignment" {
			a, ok := kv.Value.x.(uint32)
			if !ok || a == 0 || a&(a-1) != 0 {
				return fmt.Errorf("gguf: general.alignment must be a uint32 power of two, not %s %v", kv.Value.Type, kv.Value)
			}
			align = uint64(a)
		}
	}
	bw := bufio.NewWriter(w)
	e := &encoder{w: bw}
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
	offsets := make([]uint64, len(tensors))
	var off uint64
	for i, t := range tensors {
		size, err := t.Type.ByteSize(t.Dims)
		if err != nil {
			return fmt.Errorf("gguf: tensor %q: %v", t.Name, err)
		}
		if uint64(len(t.Data)) != size {
			return fmt.Errorf("gguf: tensor %q: data is %d bytes, %s %v takes %d", t.Name, len(t.Data), t.Type, t.Dims, size)
		}
		off = (off + align - 1) / align * align
		offsets[i] = off
		off += size
		e.str(t.Name)
		e.u32(uint32(len(t.Dims)))
		for _, d := range t.Dims {
			e.u64(d)
		}
		e.u32(uint32(t.Type))
		e.u64(offsets[i])
	}
	pos := e.n
	start := (pos + align - 1) / align * align
	e.raw(make([]byte, start-pos))
	for i, t := range tensors {
		e.raw(make([]byte, start+offsets[i]-e.n))
		e.raw(t.Data)
	}
	if e.err != nil {
		return e.err
	}
	return bw.Flush()
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
