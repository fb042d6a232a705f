package safetensors

import (
	"encoding/binary"
	"os"

	"github.com/ktune/ktune/internal/mapfile"
)

// File is an open safetensors file. Its data is mapped read-only into memory
// (or, on systems without mmap support here, read into memory). The methods
// are safe for concurrent use, except Close.
type File struct {
	// Path is the file's path as given to Open.
	Path string
	// Header is the validated header.
	Header *Header

	data    []byte             // the whole file
	release func([]byte) error // unmaps data; nil when nothing to release
	closed  bool
}

// Open opens and validates the safetensors file at path. The caller must
// Close it. Slices returned by [File.Bytes] point into the mapping and are
// valid only until Close. As with any memory-mapped file, the file must not
// be truncated by another process while it is open.
func Open(path string) (*File, error) {
	osf, err := os.Open(path)
	if err != nil {
		return nil, ioError(path, "cannot open file", err)
	}
	defer osf.Close()
	st, err := osf.Stat()
	if err != nil {
		return nil, ioError(path, "cannot stat file", err)
	}
	if st.IsDir() {
		return nil, errorf(path, "", "is a directory, not a safetensors file")
	}
	size := st.Size()
	if size < 8 {
		return nil, errorf(path, "", "file is %d bytes, shorter than the 8-byte header length field", size)
	}
	var lenBuf [8]byte
	if _, err := osf.ReadAt(lenBuf[:], 0); err != nil {
		return nil, ioError(path, "cannot read header length", err)
	}
	n, err := checkHeaderLen(path, binary.LittleEndian.Uint64(lenBuf[:]), size)
	if err != nil {
		return nil, err
	}
	hdr := make([]byte, n)
	if _, err := osf.ReadAt(hdr, 8); err != nil {
		return nil, ioError(path, "cannot read header", err)
	}
	h, err := ParseHeader(path, hdr, size)
	if err != nil {
		return nil, err
	}
	data, release, err := mapfile.Map(osf, size)
	if err != nil {
		return nil, ioError(path, "cannot map file", err)
	}
	return &File{Path: path, Header: h, data: data, release: release}, nil
}

// FromBytes parses a safetensors file held in memory. The returned File uses
// data without copying it; data must not be modified while the File is in
// use. path is used only in error messages.
func FromBytes(path string, data []byte) (*File, error) {
	size := int64(len(data))
	if size < 8 {
		return nil, errorf(path, "", "file is %d bytes, shorter than the 8-byte header length field", size)
	}
	n, err := checkHeaderLen(path, binary.LittleEndian.Uint64(data), size)
	if err != nil {
		return nil, err
	}
	h, err := ParseHeader(path, data[8:8+n], size)
	if err != nil {
		return nil, err
	}
	return &File{Path: path, Header: h, data: data}, nil
}

// checkHeaderLen validates the header length field n against the file size.
func checkHeaderLen(path string, n uint64, size int64) (int, error) {
	if n > MaxHeaderSize {
		return 0, errorf(path, "", "header length %d is larger than the %d MiB limit (corrupt file?)", n, MaxHeaderSize>>20)
	}
	if n > uint64(size-8) {
		return 0, errorf(path, "", "header length %d exceeds the %d bytes after the length field; the file is truncated or corrupt", n, size-8)
	}
	return int(n), nil
}

// Close releases the file's memory. Further calls to the accessors fail, and
// slices obtained from Bytes must no longer be used. Close is idempotent.
func (f *File) Close() error {
	if f.closed {
		return nil
	}
	f.closed = true
	data, release := f.data, f.release
	f.data, f.release = nil, nil
	if release != nil {
		if err := release(data); err != nil {
			return ioError(f.Path, "cannot unmap file", err)
		}
	}
	return nil
}

// Metadata returns the header's "__metadata__" map (empty if there is none).
// The map is shared; do not modify it.
func (f *File) Metadata() map[string]string { return f.Header.Metadata }

// Names returns the tensor names in sorted order.
func (f *File) Names() []string { return f.Header.Names() }

// Info returns the description of the tensor called name.
func (f *File) Info(name string) (TensorInfo, bool) { return f.Header.Lookup(name) }

// tensor returns the info and the raw bytes of the tensor called name.
func (f *File) tensor(name string) (TensorInfo, []byte, error) {
	if f.closed {
		return TensorInfo{}, nil, errorf(f.Path, name, "file is closed")
	}
	t, ok := f.Header.Lookup(name)
	if !ok {
		return t, nil, errorf(f.Path, name, "no such tensor")
	}
	return t, f.data[t.Begin:t.End:t.End], nil
}

// Bytes returns the raw little-endian data of the tensor called name. The
// slice is a view into the file's mapping: it must not be modified and is
// valid only until Close.
func (f *File) Bytes(name string) ([]byte, error) {
	_, b, err := f.tensor(name)
	return b, err
}

// Float32 returns the F32, F16 or BF16 tensor called name converted to a new
// []float32.
func (f *File) Float32(name string) ([]float32, error) {
	t, b, err := f.tensor(name)
	if err != nil {
		return nil, err
	}
	if !t.DType.IsFloat() {
		return nil, errorf(f.Path, name, "dtype %s is not a float type", t.DType)
	}
	dst := make([]float32, t.NumElements())
	if err := DecodeFloat32(dst, t.DType, b); err != nil {
		return nil, errorf(f.Path, name, "%v", err)
	}
	return dst, nil
}

// Float32Into converts the F32, F16 or BF16 tensor called name into dst,
// whose length must equal the tensor's element count.
func (f *File) Float32Into(name string, dst []float32) error {
	t, b, err := f.tensor(name)
	if err != nil {
		return err
	}
	if !t.DType.IsFloat() {
		return errorf(f.Path, name, "dtype %s is not a float type", t.DType)
	}
	if n := t.NumElements(); int64(len(dst)) != n {
		return errorf(f.Path, name, "destination has %d elements, the tensor has %d", len(dst), n)
	}
	if err := DecodeFloat32(dst, t.DType, b); err != nil {
		return errorf(f.Path, name, "%v", err)
	}
	return nil
}

// Int64 returns the I32 or I64 tensor called name converted to a new []int64.
func (f *File) Int64(name string) ([]int64, error) {
	t, b, err := f.tensor(name)
	if err != nil {
		return nil, err
	}
	if !t.DType.IsInt() {
		return nil, errorf(f.Path, name, "dtype %s is not an integer type", t.DType)
	}
	dst := make([]int64, t.NumElements())
	if err := DecodeInt64(dst, t.DType, b); err != nil {
		return nil, errorf(f.Path, name, "%v", err)
	}
	return dst, nil
}
