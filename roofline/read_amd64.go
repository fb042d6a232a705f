//go:build amd64 && gc && !purego

package roofline

// The read kernels by stream count (index log2(streams)), built once: the
// lookup runs on every call, and small working sets make thousands of calls
// per millisecond (a map literal here cost more than reading 4 KiB).
var (
	readAVX512Fns = [4]func([]byte) uint64{read1AVX512, read2AVX512, read4AVX512, read8AVX512}
	readAVX2Fns   = [4]func([]byte) uint64{read1AVX2, read2AVX2, read4AVX2, read8AVX2}
)

func readAsm(streams int) func([]byte) uint64 {
	var i int
	switch streams {
	case 1:
		i = 0
	case 2:
		i = 1
	case 4:
		i = 2
	case 8:
		i = 3
	default:
		return nil
	}
	switch {
	case haveAVX512():
		return readAVX512Fns[i]
	case haveAVX2():
		return readAVX2Fns[i]
	}
	return nil
}
