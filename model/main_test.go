package model

import (
	"flag"
	"fmt"
	"os"
	"testing"

	"github.com/ktune/ktune/internal/kerneltest"
)

// TestMain logs the machine and the kernels in use; with -bench it also
// writes the benchfmt configuration lines, including this package's units.
func TestMain(m *testing.M) {
	flag.Parse()
	if _, ok := os.LookupEnv(VerifyEnv); !ok {
		os.Setenv(VerifyEnv, "off") // no records of verified GGUF files in the user's cache
	}
	if f := flag.Lookup("test.bench"); f != nil && f.Value.String() != "" {
		fmt.Println("Unit bound-frac better=higher")
		fmt.Println("Unit ceiling-GB/s better=higher")
	}
	kerneltest.Main(m, "gemm", "kda", "mla", "moe", "norm")
}
