package gguf

import (
	"errors"
	"fmt"
	"io/fs"
	"strconv"
	"strings"
)

// TensorInfo describes one tensor.
type TensorInfo struct {
	Name string
	// Dims are the sizes in GGUF (ggml ne) order: Dims[0] is the row length,
	// the fastest-varying dimension. A PyTorch [out, in] weight is [in, out].
	Dims []uint64
	Type Type
	// Offset is the byte offset in its part's data section, as stored.
	Offset uint64
	// Size is the data's byte size, product(Dims)/BlockSize*BlockBytes.
	Size uint64
	// Part is the index of the part holding the data (0 unless split).
	Part int
	// FileOffset is the data's absolute byte offset in its part's file.
	FileOffset uint64
}

// NumElements returns the product of Dims (1 for a scalar).
func (t TensorInfo) NumElements() uint64 {
	n := uint64(1)
	for _, d := range t.Dims {
		n *= d
	}
	return n
}

// Error is the error type of this package. Its text names the file, the
// tensor or metadata key when there is one, and the problem, e.g.
//
//	gguf: /m/x.gguf: tensor "blk.0.attn_q.weight": offset 100 is not a multiple of the alignment 32
type Error struct {
	Path   string // the file concerned
	Tensor string // the tensor concerned, or ""
	Key    string // the metadata key concerned, or ""
	Msg    string
	Err    error // the underlying error (I/O), if any
}

func (e *Error) Error() string {
	s := "gguf: " + e.Path + ": "
	if e.Tensor != "" {
		s += "tensor " + quoteName(e.Tensor) + ": "
	}
	if e.Key != "" {
		s += "metadata " + quoteName(e.Key) + ": "
	}
	s += e.Msg
	if e.Err != nil {
		s += ": " + e.Err.Error()
	}
	return s
}

// quoteName quotes a key or tensor name read from a file for a message:
// a long one (a corrupt file's bytes read as a name) is cut to its first
// nameShown bytes and its length, so that the message stays one short line.
func quoteName(n string) string {
	if len(n) <= nameShown {
		return strconv.Quote(n)
	}
	return fmt.Sprintf("%s… (%d bytes)", strconv.Quote(strings.ToValidUTF8(n[:nameShown], "\uFFFD")), len(n))
}

// nameShown is the most bytes of a name a message shows.
const nameShown = 64

// Unwrap returns the underlying error, so that errors.Is(err,
// fs.ErrNotExist) works on errors from Open.
func (e *Error) Unwrap() error { return e.Err }

func errorf(path, tensor, key, format string, args ...any) *Error {
	return &Error{Path: path, Tensor: tensor, Key: key, Msg: fmt.Sprintf(format, args...)}
}

// ioError wraps an I/O error, dropping the path of an *fs.PathError because
// the *Error already names the file.
func ioError(path, msg string, err error) *Error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		err = pe.Err
	}
	return &Error{Path: path, Msg: msg, Err: err}
}
