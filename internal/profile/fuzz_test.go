package profile

import (
	"strings"
	"testing"
)

// FuzzParse: any bytes are refused with an error naming the file, or
// parsed into a profile whose Validate and Sort run without a panic.
func FuzzParse(f *testing.F) {
	f.Add([]byte(`{"schema": 1, "fingerprint": "x", "entries": [{"op": "gemm.gemv", "dtype": "q4", "threads": 2, "shape": [{"Key": "n", "Value": 4}], "best": {"variant": "generic", "median": 1e-3}}]}`))
	f.Add([]byte(`{"schema": 99, "fingerprint": "y", "entries": [{"threads": -1}, {"threads": 1e9}]}`))
	f.Add([]byte(`[]`))
	f.Fuzz(func(t *testing.T, data []byte) {
		p, err := parse("fuzz.json", data)
		if err != nil {
			if !strings.Contains(err.Error(), "fuzz.json") {
				t.Fatalf("an error that does not name the file: %v", err)
			}
			return
		}
		p.Validate()
		p.Sort()
	})
}
