package gguf

import (
	"fmt"
	"math/bits"
)

// Type is a ggml tensor type id (enum ggml_type).
type Type uint32

// The ggml tensor types. Ids 4, 5, 31-33 and 36-38 were used by types since
// removed from ggml; files holding them are refused.
const (
	TypeF32     Type = 0
	TypeF16     Type = 1
	TypeQ4_0    Type = 2
	TypeQ4_1    Type = 3
	TypeQ5_0    Type = 6
	TypeQ5_1    Type = 7
	TypeQ8_0    Type = 8
	TypeQ8_1    Type = 9
	TypeQ2_K    Type = 10
	TypeQ3_K    Type = 11
	TypeQ4_K    Type = 12
	TypeQ5_K    Type = 13
	TypeQ6_K    Type = 14
	TypeQ8_K    Type = 15
	TypeIQ2_XXS Type = 16
	TypeIQ2_XS  Type = 17
	TypeIQ3_XXS Type = 18
	TypeIQ1_S   Type = 19
	TypeIQ4_NL  Type = 20
	TypeIQ3_S   Type = 21
	TypeIQ2_S   Type = 22
	TypeIQ4_XS  Type = 23
	TypeI8      Type = 24
	TypeI16     Type = 25
	TypeI32     Type = 26
	TypeI64     Type = 27
	TypeF64     Type = 28
	TypeIQ1_M   Type = 29
	TypeBF16    Type = 30
	TypeTQ1_0   Type = 34
	TypeTQ2_0   Type = 35
	TypeMXFP4   Type = 39
)

// qk is QK_K, the super-block size of the K-quants and most IQ types.
const qk = 256

// typeTraits is one row of ggml's type_traits table: a block of blockSize
// elements is stored in blockBytes bytes.
type typeTraits struct {
	name                  string
	blockSize, blockBytes uint64
	removed               bool
}

// traits is indexed by Type. The block layouts are those of ggml-common.h
// (e.g. block_q4_K: d, dmin (2 halves), 12 scale bytes, QK_K/2 nibbles).
var traits = [...]typeTraits{
	TypeF32:     {"f32", 1, 4, false},
	TypeF16:     {"f16", 1, 2, false},
	TypeQ4_0:    {"q4_0", 32, 2 + 16, false},
	TypeQ4_1:    {"q4_1", 32, 2 + 2 + 16, false},
	4:           {"q4_2", 0, 0, true},
	5:           {"q4_3", 0, 0, true},
	TypeQ5_0:    {"q5_0", 32, 2 + 4 + 16, false},
	TypeQ5_1:    {"q5_1", 32, 2 + 2 + 4 + 16, false},
	TypeQ8_0:    {"q8_0", 32, 2 + 32, false},
	TypeQ8_1:    {"q8_1", 32, 2 + 2 + 32, false},
	TypeQ2_K:    {"q2_K", qk, qk/16 + qk/4 + 2 + 2, false},
	TypeQ3_K:    {"q3_K", qk, qk/8 + qk/4 + 12 + 2, false},
	TypeQ4_K:    {"q4_K", qk, 2 + 2 + 12 + qk/2, false},
	TypeQ5_K:    {"q5_K", qk, 2 + 2 + 12 + qk/8 + qk/2, false},
	TypeQ6_K:    {"q6_K", qk, qk/2 + qk/4 + qk/16 + 2, false},
	TypeQ8_K:    {"q8_K", qk, 4 + qk + qk/16*2, false},
	TypeIQ2_XXS: {"iq2_xxs", qk, 2 + qk/8*2, false},
	TypeIQ2_XS:  {"iq2_xs", qk, 2 + qk/8*2 + qk/32, false},
	TypeIQ3_XXS: {"iq3_xxs", qk, 2 + 3*qk/8, false},
	TypeIQ1_S:   {"iq1_s", qk, 2 + qk/8 + qk/32*2, false},
	TypeIQ4_NL:  {"iq4_nl", 32, 2 + 16, false},
	TypeIQ3_S:   {"iq3_s", qk, 2 + qk/4 + qk/32 + qk/8 + qk/64, false},
	TypeIQ2_S:   {"iq2_s", qk, 2 + qk/4 + qk/32 + qk/32, false},
	TypeIQ4_XS:  {"iq4_xs", qk, 2 + 2 + qk/64 + qk/2, false},
	TypeI8:      {"i8", 1, 1, false},
	TypeI16:     {"i16", 1, 2, false},
	TypeI32:     {"i32", 1, 4, false},
	TypeI64:     {"i64", 1, 8, false},
	TypeF64:     {"f64", 1, 8, false},
	TypeIQ1_M:   {"iq1_m", qk, qk/8 + qk/16 + qk/32, false},
	TypeBF16:    {"bf16", 1, 2, false},
	31:          {"q4_0_4_4", 0, 0, true},
	32:          {"q4_0_4_8", 0, 0, true},
	33:          {"q4_0_8_8", 0, 0, true},
	TypeTQ1_0:   {"tq1_0", qk, (qk-4*qk/64)/5 + qk/64 + 2, false},
	TypeTQ2_0:   {"tq2_0", qk, qk/4 + 2, false},
	36:          {"iq4_nl_4_4", 0, 0, true},
	37:          {"iq4_nl_4_8", 0, 0, true},
	38:          {"iq4_nl_8_8", 0, 0, true},
	TypeMXFP4:   {"mxfp4", 32, 1 + 16, false},
}

func (t Type) traits() typeTraits {
	if uint64(t) < uint64(len(traits)) {
		return traits[t]
	}
	return typeTraits{}
}

// Known reports whether t is a type this package can size: one in ggml's
// table that has not been removed.
func (t Type) Known() bool { return t.traits().blockSize != 0 }

// String returns ggml's name of the type ("f32", "q4_K", ...), or "type(N)"
// for an id this package does not know.
func (t Type) String() string {
	if n := t.traits().name; n != "" {
		return n
	}
	return fmt.Sprintf("type(%d)", uint32(t))
}

// BlockSize returns the number of elements in one block (1 for the plain
// types, 32 or 256 for the quantized ones), or 0 for an unknown type.
func (t Type) BlockSize() int { return int(t.traits().blockSize) }

// BlockBytes returns the bytes one block takes, or 0 for an unknown type.
func (t Type) BlockBytes() int { return int(t.traits().blockBytes) }

// IsQuantized reports whether t stores elements in blocks of more than one.
func (t Type) IsQuantized() bool { return t.traits().blockSize > 1 }

// ByteSize returns the bytes a tensor of type t and dims (GGUF order, dims[0]
// the row length) takes: product(dims)/BlockSize*BlockBytes. It fails for an
// unknown type, a row length that is not a multiple of the block size, or a
// size that overflows 63 bits.
func (t Type) ByteSize(dims []uint64) (uint64, error) {
	tr := t.traits()
	if tr.blockSize == 0 {
		if tr.removed {
			return 0, fmt.Errorf("type %d (%s) was removed from ggml and is not supported", uint32(t), tr.name)
		}
		return 0, fmt.Errorf("unknown ggml type id %d", uint32(t))
	}
	if len(dims) > 0 && dims[0]%tr.blockSize != 0 {
		return 0, fmt.Errorf("row length %d (dims[0]) is not a multiple of %s's block size %d", dims[0], tr.name, tr.blockSize)
	}
	if len(dims) == 0 && tr.blockSize != 1 {
		return 0, fmt.Errorf("a scalar cannot be of block type %s", tr.name)
	}
	n := uint64(1)
	for _, d := range dims {
		hi, lo := bits.Mul64(n, d)
		if hi != 0 || lo > 1<<63-1 {
			return 0, fmt.Errorf("element count of dims %v overflows", dims)
		}
		n = lo
	}
	hi, lo := bits.Mul64(n/tr.blockSize, tr.blockBytes)
	if hi != 0 || lo > 1<<63-1 {
		return 0, fmt.Errorf("byte size of %s dims %v overflows", tr.name, dims)
	}
	return lo, nil
}
