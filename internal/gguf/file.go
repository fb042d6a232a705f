package gguf

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"unsafe"

	"github.com/ktune/ktune/internal/mapfile"
)

// The metadata keys of llama.cpp's gguf-split.
const (
	KeySplitNo           = "split.no"            // 0-based part index (uint16)
	KeySplitCount        = "split.count"         // number of parts (uint16)
	KeySplitTensorsCount = "split.tensors.count" // tensors in all parts (int32)
)

// File is an open GGUF file, or all parts of a split one. Its methods are
// safe for concurrent use, except Close.
type File struct {
	// Path is the path of the first part (the path given to Open when the
	// file is not split).
	Path string
	// Parts lists the paths of all parts, in order (just Path if not split).
	Parts []string
	// Version is the GGUF version (always 3).
	Version uint32
	// Alignment is the first part's data alignment (general.alignment or 32).
	Alignment int
	// Metadata is the first part's metadata (the split.* keys included).
	Metadata *Metadata
	// Tensors are the tensor infos of all parts in file order.
	Tensors []TensorInfo

	parts  []*part
	byName map[string]int
	closed bool
}

// Open opens and validates the GGUF file at path. A part of a split set
// (NAME-00002-of-00003.gguf) opens the whole set, which must be complete.
// The caller must Close the File. Slices from TensorData point into the
// mapping and are valid only until Close.
func Open(path string) (*File, error) {
	p, err := openPart(path)
	if err != nil {
		return nil, err
	}
	count, no, err := splitInfo(p)
	if err != nil {
		p.close()
		return nil, err
	}
	if count <= 1 {
		return assemble([]*part{p})
	}
	m := splitName.FindStringSubmatch(filepath.Base(path))
	if m == nil {
		p.close()
		return nil, errorf(path, "", KeySplitCount, "is %d but the file name does not end in -NNNNN-of-%05d.gguf, so the other parts cannot be found", count, count)
	}
	nameNo, _ := strconv.Atoi(m[2])
	nameCount, _ := strconv.Atoi(m[3])
	if uint64(nameCount) != count || uint64(nameNo) != no+1 {
		p.close()
		return nil, errorf(path, "", "", "the file name says part %d of %d but its metadata says part %d of %d (split.no is 0-based)", nameNo, nameCount, no+1, count)
	}
	parts := make([]*part, count)
	parts[no] = p
	closeAll := func() {
		for _, q := range parts {
			if q != nil {
				q.close()
			}
		}
	}
	dir := filepath.Dir(path)
	for i := range parts {
		if parts[i] != nil {
			continue
		}
		name := filepath.Join(dir, fmt.Sprintf("%s-%05d-of-%05d.gguf", m[1], i+1, count))
		if _, err := os.Stat(name); err != nil {
			closeAll()
			return nil, ioError(path, fmt.Sprintf("split part %d of %d (%s) is missing", i+1, count, name), err)
		}
		q, err := openPart(name)
		if err != nil {
			closeAll()
			return nil, err
		}
		parts[i] = q
		qc, qno, err := splitInfo(q)
		if err != nil {
			closeAll()
			return nil, err
		}
		if qc != count || qno != uint64(i) {
			closeAll()
			return nil, errorf(name, "", "", "split metadata says part %d of %d; expected part %d of %d", qno+1, qc, i+1, count)
		}
	}
	f, err := assemble(parts)
	if err != nil {
		closeAll()
		return nil, err
	}
	return f, nil
}

var splitName = regexp.MustCompile(`^(.*)-(\d{5})-of-(\d{5})\.gguf$`)

// splitInfo returns a part's split.count (1 if absent) and split.no (0 if
// absent).
func splitInfo(p *part) (count, no uint64, err error) {
	count, no = 1, 0
	if p.meta.Has(KeySplitCount) {
		if count, err = p.meta.Uint(KeySplitCount); err != nil {
			return 0, 0, err
		}
		if count == 0 || count > 99999 {
			return 0, 0, errorf(p.path, "", KeySplitCount, "%d is not a valid number of parts", count)
		}
	}
	if p.meta.Has(KeySplitNo) {
		if no, err = p.meta.Uint(KeySplitNo); err != nil {
			return 0, 0, err
		}
	}
	if no >= count {
		return 0, 0, errorf(p.path, "", KeySplitNo, "is %d but split.count is %d", no, count)
	}
	return count, no, nil
}

// assemble builds a File from its parts, in order.
func assemble(parts []*part) (*File, error) {
	first := parts[0]
	f := &File{
		Path:      first.path,
		Version:   first.version,
		Alignment: int(first.alignment),
		Metadata:  first.meta,
		parts:     parts,
		byName:    map[string]int{},
	}
	for i, p := range parts {
		f.Parts = append(f.Parts, p.path)
		for _, t := range p.tensors {
			if j, dup := f.byName[t.Name]; dup {
				return nil, errorf(p.path, t.Name, "", "duplicate tensor name (also in %s)", parts[f.Tensors[j].Part].path)
			}
			t.Part = i
			f.byName[t.Name] = len(f.Tensors)
			f.Tensors = append(f.Tensors, t)
		}
	}
	if len(parts) > 1 && first.meta.Has(KeySplitTensorsCount) {
		n, err := first.meta.Uint(KeySplitTensorsCount)
		if err != nil {
			return nil, err
		}
		if n != uint64(len(f.Tensors)) {
			return nil, errorf(first.path, "", KeySplitTensorsCount, "is %d but the %d parts hold %d tensors", n, len(parts), len(f.Tensors))
		}
	}
	return f, nil
}

// FromBytes parses a GGUF file held in memory (one that is not split). The
// File uses data without copying it; data must not be modified while the
// File is in use. path is used only in error messages.
func FromBytes(path string, data []byte) (*File, error) {
	p, err := parsePart(path, data)
	if err != nil {
		return nil, err
	}
	count, _, err := splitInfo(p)
	if err != nil {
		return nil, err
	}
	if count > 1 {
		return nil, errorf(path, "", KeySplitCount, "is %d: a part of a split file; open it with Open", count)
	}
	return assemble([]*part{p})
}

// openPart maps (or reads) and parses one file.
func openPart(path string) (*part, error) {
	if st, err := os.Stat(path); err != nil {
		return nil, ioError(path, "cannot open file", err)
	} else if k := mapfile.NotRegular(st.Mode()); k != "" && !st.IsDir() {
		return nil, errorf(path, "", "", "is %s, not a GGUF file", k) // (a pipe's open would wait)
	}
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
		return nil, errorf(path, "", "", "is a directory, not a GGUF file")
	}
	if st.Size() > math.MaxInt {
		return nil, errorf(path, "", "", "file of %d bytes is too large for this platform", st.Size())
	}
	data, release, err := mapfile.Map(osf, st.Size())
	if err != nil {
		return nil, ioError(path, "cannot map file", err)
	}
	p, err := parsePart(path, data)
	if err != nil {
		if release != nil {
			release(data)
		}
		return nil, err
	}
	p.release = release
	return p, nil
}

func (p *part) close() error {
	data, release := p.data, p.release
	p.data, p.release = nil, nil
	if release != nil {
		if err := release(data); err != nil {
			return ioError(p.path, "cannot unmap file", err)
		}
	}
	return nil
}

// Tensor returns the info of the tensor called name.
func (f *File) Tensor(name string) (TensorInfo, bool) {
	i, ok := f.byName[name]
	if !ok {
		return TensorInfo{}, false
	}
	return f.Tensors[i], true
}

// TensorData returns the raw bytes of the tensor called name, a view into the
// file's mapping: it must not be modified and is valid only until Close.
func (f *File) TensorData(name string) ([]byte, error) {
	if f.closed {
		return nil, errorf(f.Path, name, "", "file is closed")
	}
	i, ok := f.byName[name]
	if !ok {
		return nil, errorf(f.Path, name, "", "no such tensor")
	}
	t := &f.Tensors[i]
	p := f.parts[t.Part]
	if t.Size == 0 {
		return []byte{}, nil
	}
	end := t.FileOffset + t.Size
	return p.data[t.FileOffset:end:end], nil
}

// Close releases the files' memory. Slices from TensorData must no longer be
// used. Close is idempotent.
func (f *File) Close() error {
	if f.closed {
		return nil
	}
	f.closed = true
	var first error
	for _, p := range f.parts {
		if err := p.close(); err != nil && first == nil {
			first = err
		}
	}
	return first
}

// Offset locates b in the files' mappings: its offset counted across the
// parts as if they were one file (part i's offsets follow part i−1's
// size), and whether b lies inside one part's mapping at all.
func (f *File) Offset(b []byte) (int64, bool) {
	if len(b) == 0 || f.closed {
		return 0, false
	}
	p := uintptr(unsafe.Pointer(unsafe.SliceData(b)))
	var before int64
	for _, q := range f.parts {
		if len(q.data) > 0 {
			base := uintptr(unsafe.Pointer(unsafe.SliceData(q.data)))
			if p >= base && p-base+uintptr(len(b)) <= uintptr(len(q.data)) {
				return before + int64(p-base), true
			}
		}
		before += int64(len(q.data))
	}
	return 0, false
}

// Contains reports whether addr lies in one of the file's mappings (a
// memory fault there is the file's: cut short or unreadable).
func (f *File) Contains(addr uintptr) bool {
	for _, q := range f.parts {
		if len(q.data) > 0 {
			base := uintptr(unsafe.Pointer(unsafe.SliceData(q.data)))
			if addr >= base && addr-base < uintptr(len(q.data)) {
				return true
			}
		}
	}
	return false
}

// Locate returns the part (an index of Parts) and the offset in that
// part's file of the bytes b, where b lies in one part's mapping.
func (f *File) Locate(b []byte) (part int, off int64, ok bool) {
	if len(b) == 0 || f.closed {
		return 0, 0, false
	}
	p := uintptr(unsafe.Pointer(unsafe.SliceData(b)))
	for i, q := range f.parts {
		if len(q.data) > 0 {
			base := uintptr(unsafe.Pointer(unsafe.SliceData(q.data)))
			if p >= base && p-base+uintptr(len(b)) <= uintptr(len(q.data)) {
				return i, int64(p - base), true
			}
		}
	}
	return 0, 0, false
}

// DataSize is the bytes of tensor data in all parts (what a model reads in
// place from the mapping).
func (f *File) DataSize() int64 {
	var n int64
	for _, t := range f.Tensors {
		n += int64(t.Size)
	}
	return n
}
