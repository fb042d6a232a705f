package kfile

import (
	"os"
	"sync"
	"unsafe"

	"github.com/ktune/ktune/internal/mapfile"
	"github.com/ktune/ktune/internal/pool"
)

// File is an open, mapped model file.
type File struct {
	Path   string
	Header *Header
	data   []byte
	unmap  func([]byte) error
}

// Open maps path read-only and parses its header. The mapping stays until
// Close; tensors' bytes are views of it, paged in from disk when touched.
func Open(path string) (*File, error) {
	if st, err := os.Stat(path); err != nil {
		return nil, IOError(path, err)
	} else if k := mapfile.NotRegular(st.Mode()); k != "" && !st.IsDir() {
		return nil, errorf(path, "is %s, not a model file", k) // (a pipe's open would wait)
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, IOError(path, err)
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, IOError(path, err)
	}
	if st.IsDir() {
		return nil, errorf(path, "is a folder, not a model file")
	}
	size := st.Size()
	if size < PrefixLen {
		head := make([]byte, size)
		n, _ := f.ReadAt(head, 0)
		_, err := ParseHeader(path, head[:n], size)
		return nil, err
	}
	data, unmap, err := mapfile.Map(f, size)
	if err != nil {
		return nil, errorf(path, "cannot map: %v", err)
	}
	h, err := ParseHeader(path, data, size)
	if err != nil {
		if unmap != nil {
			unmap(data)
		}
		return nil, err
	}
	return &File{Path: path, Header: h, data: data, unmap: unmap}, nil
}

// Close unmaps the file; the tensors' bytes must not be used afterwards.
func (f *File) Close() error {
	if f.data == nil {
		return nil
	}
	var err error
	if f.unmap != nil {
		err = f.unmap(f.data)
	}
	f.data = nil
	return err
}

// Size is the file's size in bytes.
func (f *File) Size() int64 { return f.Header.FileSize }

// Bytes returns a tensor's bytes (a view of the mapping).
func (f *File) Bytes(t *Tensor) []byte { return f.data[t.Offset : t.Offset+t.Size : t.Offset+t.Size] }

// Contains reports whether addr lies in the file's mapping.
func (f *File) Contains(addr uintptr) bool {
	if len(f.data) == 0 {
		return false
	}
	base := uintptr(unsafe.Pointer(unsafe.SliceData(f.data)))
	return addr >= base && addr-base < uintptr(len(f.data))
}

// Offset reports whether b is a view of the mapping (as Bytes gives),
// and if so the file offset it starts at.
func (f *File) Offset(b []byte) (int64, bool) {
	if len(b) == 0 || len(f.data) == 0 {
		return 0, false
	}
	base, p := uintptr(unsafe.Pointer(unsafe.SliceData(f.data))), uintptr(unsafe.Pointer(unsafe.SliceData(b)))
	if p < base || p-base+uintptr(len(b)) > uintptr(len(f.data)) {
		return 0, false
	}
	return int64(p - base), true
}

// VerifyTensor checks one tensor's checksum, then that its values (or a
// quantized matrix's scales) are finite (CheckFinite).
func (f *File) VerifyTensor(t *Tensor) error {
	b := f.Bytes(t)
	if got := Checksum(b); got != t.CRC() {
		return errorf(f.Path, "tensor %q: checksum mismatch (stored %s, computed %08x): the file is corrupt", t.Name, t.CRC32C, got)
	}
	if err := CheckFinite(t, b); err != nil {
		return errorf(f.Path, "%v", err)
	}
	return nil
}

// Verify checks every tensor (VerifyTensor: checksum and finite values) on
// threads workers, reading the whole file, and reports the first problem
// in table order.
func (f *File) Verify(threads int) error {
	ts := f.Header.Table.Tensors
	errs := make([]error, len(ts))
	pool.Default().For(max(threads, 1), len(ts), 1, func(_, lo, hi int) {
		for i := lo; i < hi; i++ {
			errs[i] = f.VerifyTensor(&ts[i])
		}
	})
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

var pageSize = sync.OnceValue(os.Getpagesize)

// Resident returns how many of a tensor's bytes are in RAM now (pages the
// OS reports resident, counted whole), or −1 where the OS cannot tell.
func (f *File) Resident(t *Tensor) int64 {
	ps := int64(pageSize())
	lo, hi := t.Offset/ps*ps, min((t.Offset+t.Size+ps-1)/ps*ps, int64(len(f.data)))
	if t.Size == 0 || hi <= lo {
		return 0
	}
	pages, ok := residentPages(f.data[lo:hi], int(ps))
	if !ok {
		return -1
	}
	// whole pages, clipped to the tensor
	return min(int64(pages)*ps, t.Size)
}
