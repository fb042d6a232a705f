package safetensors

import (
	"errors"
	"fmt"
	"io/fs"
)

// DType is a tensor element type as spelled in a safetensors header.
type DType string

// The element types this package supports. A header naming any other dtype is
// rejected with an "unknown dtype" error.
const (
	F32  DType = "F32"
	F16  DType = "F16"
	BF16 DType = "BF16"
	I32  DType = "I32"
	I64  DType = "I64"
)

// Size returns the size of one element in bytes, or 0 for an unknown dtype.
func (d DType) Size() int {
	switch d {
	case F32, I32:
		return 4
	case F16, BF16:
		return 2
	case I64:
		return 8
	}
	return 0
}

// Valid reports whether d is one of the supported dtypes.
func (d DType) Valid() bool { return d.Size() != 0 }

// IsFloat reports whether d is a floating-point dtype (F32, F16 or BF16).
func (d DType) IsFloat() bool { return d == F32 || d == F16 || d == BF16 }

// IsInt reports whether d is an integer dtype (I32 or I64).
func (d DType) IsInt() bool { return d == I32 || d == I64 }

// TensorInfo describes one tensor of a file.
type TensorInfo struct {
	Name  string
	DType DType
	Shape []int64
	// Begin and End are absolute byte offsets in the file: the tensor's data
	// is bytes [Begin, End).
	Begin, End int64
}

// NumElements returns the number of elements, the product of the shape (1 for
// a scalar). For headers accepted by [ParseHeader] the product cannot overflow.
func (t TensorInfo) NumElements() int64 {
	n := int64(1)
	for _, d := range t.Shape {
		n *= d
	}
	return n
}

// ByteSize returns the size of the tensor's data in bytes, End-Begin.
func (t TensorInfo) ByteSize() int64 { return t.End - t.Begin }

// Error is the error type of this package. Its text names the file, the
// tensor when there is one, and the problem, for example
//
//	safetensors: /x/model.safetensors: tensor "a.weight": data_offsets [0,100) exceed the data section (96 bytes)
type Error struct {
	// Path is the file (or, for a checkpoint, the folder or index file) concerned.
	Path string
	// Tensor is the tensor concerned, or "".
	Tensor string
	// Msg describes the problem.
	Msg string
	// Err is the underlying error, if any (an I/O error, for instance).
	Err error
}

func (e *Error) Error() string {
	s := "safetensors: " + e.Path + ": "
	if e.Tensor != "" {
		s += fmt.Sprintf("tensor %q: ", e.Tensor)
	}
	s += e.Msg
	if e.Err != nil {
		s += ": " + e.Err.Error()
	}
	return s
}

// Unwrap returns the underlying error, so that errors.Is(err, fs.ErrNotExist)
// works on errors from Open.
func (e *Error) Unwrap() error { return e.Err }

func errorf(path, tensor, format string, args ...any) *Error {
	return &Error{Path: path, Tensor: tensor, Msg: fmt.Sprintf(format, args...)}
}

// ioError wraps an I/O error. The path is dropped from *fs.PathError values
// because the *Error already names the file.
func ioError(path, msg string, err error) *Error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		err = pe.Err
	}
	return &Error{Path: path, Msg: msg, Err: err}
}
