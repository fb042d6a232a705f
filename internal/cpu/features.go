package cpu

import (
	"encoding/json"
	"fmt"
	"math/bits"
	"sort"
	"strings"
)

// Feature is one CPU capability a kernel variant may require. Its String
// form is the spelling of /proc/cpuinfo, used everywhere (JSON, flags, env).
type Feature uint8

// x86 features.
const (
	AVX2 Feature = iota
	FMA
	AVX512F
	AVX512BW
	AVX512VL
	AVX512DQ
	AVX512VNNI
	AVXVNNI
	AVX512BF16
	AVX512FP16
	AMXTile
	AMXInt8
	AMXBF16
	// arm64 features.
	ASIMD
	ASIMDDP
	I8MM
	BF16
	SVE
	SVE2
	SME
	numFeatures
)

var featureNames = [numFeatures]string{
	AVX2:       "avx2",
	FMA:        "fma",
	AVX512F:    "avx512f",
	AVX512BW:   "avx512bw",
	AVX512VL:   "avx512vl",
	AVX512DQ:   "avx512dq",
	AVX512VNNI: "avx512_vnni",
	AVXVNNI:    "avx_vnni",
	AVX512BF16: "avx512_bf16",
	AVX512FP16: "avx512_fp16",
	AMXTile:    "amx_tile",
	AMXInt8:    "amx_int8",
	AMXBF16:    "amx_bf16",
	ASIMD:      "asimd",
	ASIMDDP:    "asimddp",
	I8MM:       "i8mm",
	BF16:       "bf16",
	SVE:        "sve",
	SVE2:       "sve2",
	SME:        "sme",
}

// X86 and ARM64 are the features of each architecture.
var (
	X86   = NewSet(AVX2, FMA, AVX512F, AVX512BW, AVX512VL, AVX512DQ, AVX512VNNI, AVXVNNI, AVX512BF16, AVX512FP16, AMXTile, AMXInt8, AMXBF16)
	ARM64 = NewSet(ASIMD, ASIMDDP, I8MM, BF16, SVE, SVE2, SME)
	// AMX is the set of tile features, which also need the Linux permission.
	AMX = NewSet(AMXTile, AMXInt8, AMXBF16)
)

func (f Feature) String() string {
	if f < numFeatures {
		return featureNames[f]
	}
	return fmt.Sprintf("feature(%d)", uint8(f))
}

// AllFeatures lists every feature in declaration order.
func AllFeatures() []Feature {
	fs := make([]Feature, numFeatures)
	for i := range fs {
		fs[i] = Feature(i)
	}
	return fs
}

// ParseFeature maps a /proc/cpuinfo spelling (case-insensitive) to a Feature.
func ParseFeature(name string) (Feature, error) {
	n := strings.ToLower(strings.TrimSpace(name))
	for i, s := range featureNames {
		if s == n {
			return Feature(i), nil
		}
	}
	return 0, fmt.Errorf("unknown CPU feature %q (known: %s)", name, strings.Join(featureNames[:], ", "))
}

// Set is a set of features.
type Set uint64

// NewSet returns the set holding fs.
func NewSet(fs ...Feature) Set {
	var s Set
	for _, f := range fs {
		s |= 1 << f
	}
	return s
}

// ParseSet parses a comma-separated list of feature names; empty entries are ignored.
func ParseSet(list string) (Set, error) {
	var s Set
	for _, name := range strings.Split(list, ",") {
		if strings.TrimSpace(name) == "" {
			continue
		}
		f, err := ParseFeature(name)
		if err != nil {
			return 0, err
		}
		s |= 1 << f
	}
	return s, nil
}

// MarshalJSON writes s as its sorted feature names (the names
// /proc/cpuinfo uses), so a report reads like the machine's flags.
func (s Set) MarshalJSON() ([]byte, error) { return json.Marshal(s.Names()) }

// UnmarshalJSON reads a list of feature names (MarshalJSON's form).
func (s *Set) UnmarshalJSON(b []byte) error {
	var names []string
	if err := json.Unmarshal(b, &names); err != nil {
		return err
	}
	v, err := ParseSet(strings.Join(names, ","))
	if err != nil {
		return err
	}
	*s = v
	return nil
}

// Has reports whether f is in s.
func (s Set) Has(f Feature) bool { return s&(1<<f) != 0 }

// HasAll reports whether every feature of req is in s.
func (s Set) HasAll(req Set) bool { return s&req == req }

// Union, Intersect and Minus are the set operations.
func (s Set) Union(o Set) Set     { return s | o }
func (s Set) Intersect(o Set) Set { return s & o }
func (s Set) Minus(o Set) Set     { return s &^ o }

// Len is the number of features in s.
func (s Set) Len() int { return bits.OnesCount64(uint64(s)) }

// Features lists the features of s in declaration order.
func (s Set) Features() []Feature {
	var fs []Feature
	for f := Feature(0); f < numFeatures; f++ {
		if s.Has(f) {
			fs = append(fs, f)
		}
	}
	return fs
}

// Names lists the /proc/cpuinfo names of s, sorted.
func (s Set) Names() []string {
	names := []string{}
	for _, f := range s.Features() {
		names = append(names, f.String())
	}
	sort.Strings(names)
	return names
}

func (s Set) String() string { return strings.Join(s.Names(), ",") }

// MarshalText writes the comma-separated names.
func (s Set) MarshalText() ([]byte, error) { return []byte(s.String()), nil }

// UnmarshalText parses a comma-separated list of names.
func (s *Set) UnmarshalText(b []byte) error {
	v, err := ParseSet(string(b))
	if err != nil {
		return err
	}
	*s = v
	return nil
}

// Levels are the ISA caps KTUNE_MAX_ISA accepts, each the full set of
// features allowed at that level. A cap keeps the hardware's features that
// are in its level's set; x86 levels drop every arm64 feature and vice versa.
var levels = []struct {
	name string
	set  Set
}{
	{"generic", 0},
	{"avx2", NewSet(AVX2, FMA)},
	{"avx_vnni", NewSet(AVX2, FMA, AVXVNNI)},
	{"avx512", NewSet(AVX2, FMA, AVX512F, AVX512BW, AVX512VL, AVX512DQ)},
	{"avx512_vnni", NewSet(AVX2, FMA, AVX512F, AVX512BW, AVX512VL, AVX512DQ, AVX512VNNI, AVXVNNI)},
	{"avx512_bf16", NewSet(AVX2, FMA, AVX512F, AVX512BW, AVX512VL, AVX512DQ, AVX512VNNI, AVXVNNI, AVX512BF16, AVX512FP16)},
	{"amx", X86},
	{"neon", NewSet(ASIMD)},
	{"dotprod", NewSet(ASIMD, ASIMDDP)},
	{"i8mm", NewSet(ASIMD, ASIMDDP, I8MM, BF16)},
	{"sve", NewSet(ASIMD, ASIMDDP, I8MM, BF16, SVE)},
	{"sve2", NewSet(ASIMD, ASIMDDP, I8MM, BF16, SVE, SVE2)},
	{"sme", ARM64},
}

// LevelNames lists the names KTUNE_MAX_ISA accepts.
func LevelNames() []string {
	names := make([]string, len(levels))
	for i, l := range levels {
		names[i] = l.name
	}
	return names
}

// Level returns the feature set allowed at the named ISA level.
func Level(name string) (Set, error) {
	n := strings.ToLower(strings.TrimSpace(name))
	for _, l := range levels {
		if l.name == n {
			return l.set, nil
		}
	}
	return 0, fmt.Errorf("unknown ISA level %q (known: %s)", name, strings.Join(LevelNames(), ", "))
}
