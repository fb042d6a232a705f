//go:build amd64 && gc && !purego

package roofline

func readAsm(streams int) func([]byte) uint64 {
	switch {
	case haveAVX512():
		return map[int]func([]byte) uint64{1: read1AVX512, 2: read2AVX512, 4: read4AVX512, 8: read8AVX512}[streams]
	case haveAVX2():
		return map[int]func([]byte) uint64{1: read1AVX2, 2: read2AVX2, 4: read4AVX2, 8: read8AVX2}[streams]
	}
	return nil
}
