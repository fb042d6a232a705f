package safetensors

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"unicode/utf8"

	"github.com/ktune/ktune/internal/atomicfile"
)

// WriteTensor is one tensor to write: Data holds its little-endian row-major
// bytes, exactly product(Shape)*DType.Size() of them.
type WriteTensor struct {
	Name  string
	DType DType
	Shape []int64
	Data  []byte
}

// Write writes a safetensors file holding tensors, in the given order and
// without gaps, and metadata (omitted when empty). The header is padded with
// spaces to a multiple of 8 bytes so that the data section starts 8-byte
// aligned. The file is written atomically (atomicfile: to a temporary
// file in the same folder, synced, then renamed over path; a symbolic
// link's target replaced, a device or pipe written through, anything else
// refused).
func Write(path string, metadata map[string]string, tensors []WriteTensor) error {
	header, err := encodeHeader(path, metadata, tensors)
	if err != nil {
		return err
	}

	// the folder must exist (atomicfile would make it)
	if dir := filepath.Dir(path); path != "-" {
		if _, err := os.Stat(dir); err != nil {
			return ioError(path, "cannot create temporary file", err)
		}
	}
	err = atomicfile.Write(path, func(w io.Writer) error {
		var lenBuf [8]byte
		binary.LittleEndian.PutUint64(lenBuf[:], uint64(len(header)))
		if _, err := w.Write(lenBuf[:]); err != nil {
			return err
		}
		if _, err := w.Write(header); err != nil {
			return err
		}
		for _, t := range tensors {
			if _, err := w.Write(t.Data); err != nil {
				return err
			}
		}
		return nil
	})
	var nf *atomicfile.NotFileError
	switch {
	case errors.As(err, &nf):
		return err
	case err != nil:
		return ioError(path, "cannot write", err)
	}
	return nil
}

// encodeHeader validates tensors and builds the padded header JSON.
func encodeHeader(path string, metadata map[string]string, tensors []WriteTensor) ([]byte, error) {
	var buf bytes.Buffer
	buf.WriteByte('{')
	sep := func() {
		if buf.Len() > 1 {
			buf.WriteByte(',')
		}
	}
	if len(metadata) > 0 {
		keys := make([]string, 0, len(metadata))
		for k, v := range metadata {
			if !utf8.ValidString(k) || !utf8.ValidString(v) {
				return nil, errorf(path, "", "metadata entry %q is not valid UTF-8", k)
			}
			keys = append(keys, k)
		}
		slices.Sort(keys)
		buf.WriteString(quote(metadataKey) + ":{")
		for i, k := range keys {
			if i > 0 {
				buf.WriteByte(',')
			}
			buf.WriteString(quote(k) + ":" + quote(metadata[k]))
		}
		buf.WriteByte('}')
	}

	seen := make(map[string]bool, len(tensors))
	var offset int64
	for _, t := range tensors {
		switch {
		case t.Name == "" || t.Name == metadataKey:
			return nil, errorf(path, t.Name, "invalid tensor name")
		case !utf8.ValidString(t.Name):
			return nil, errorf(path, t.Name, "tensor name is not valid UTF-8")
		case seen[t.Name]:
			return nil, errorf(path, t.Name, "duplicate tensor name")
		case !t.DType.Valid():
			return nil, errorf(path, t.Name, "unknown dtype %q", t.DType)
		}
		seen[t.Name] = true
		want, ok := byteSize(t.Shape, t.DType)
		if !ok {
			return nil, errorf(path, t.Name, "shape %v is invalid or too large", t.Shape)
		}
		if int64(len(t.Data)) != want {
			return nil, errorf(path, t.Name, "has %d bytes of data but shape %v of %s needs %d", len(t.Data), t.Shape, t.DType, want)
		}
		shape := t.Shape
		if shape == nil {
			shape = []int64{}
		}
		shapeJSON, _ := json.Marshal(shape)
		sep()
		fmt.Fprintf(&buf, `%s:{"dtype":%s,"shape":%s,"data_offsets":[%d,%d]}`,
			quote(t.Name), quote(string(t.DType)), shapeJSON, offset, offset+want)
		offset += want
	}
	buf.WriteByte('}')
	for buf.Len()%8 != 0 {
		buf.WriteByte(' ')
	}
	return buf.Bytes(), nil
}

// quote returns s as a JSON string.
func quote(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}
