package bench

import (
	"bufio"
	"bytes"
	"os"
	"strconv"
)

// sampleIO reads the page-in counters.
func sampleIO() ioSample {
	return ioSample{MajFlt: majorFaults(), ReadBytes: procReadBytes()}
}

// procReadBytes is /proc/self/io's read_bytes: the bytes this process
// (all its threads) caused to be read from storage (-1: unknown).
func procReadBytes() int64 {
	b, err := os.ReadFile("/proc/self/io")
	if err != nil {
		return -1
	}
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		if v, ok := bytes.CutPrefix(sc.Bytes(), []byte("read_bytes:")); ok {
			n, err := strconv.ParseInt(string(bytes.TrimSpace(v)), 10, 64)
			if err != nil {
				return -1
			}
			return n
		}
	}
	return -1
}
