// Package benchconf writes the configuration lines that head a file of Go
// benchmark results (benchfmt): the machine and build that produced the
// figures, and the units' directions, read by benchstat and kprofile. The
// kernel tests' -bench output and kprofile bench share it.
package benchconf

import (
	"fmt"
	"io"

	"github.com/ktune/ktune/internal/cpu"
	"github.com/ktune/ktune/internal/version"
)

// Write writes the file-level configuration lines and the units.
func Write(w io.Writer) {
	info := cpu.Get()
	fmt.Fprintf(w, "fingerprint: %s\n", info.Fingerprint())
	fmt.Fprintf(w, "effective-features: %s\n", info.Effective)
	fmt.Fprintf(w, "ktune-version: %s\n", version.String())
	fmt.Fprintf(w, "go-version: %s\n", version.Go())
	for _, u := range []string{"GFLOP/s", "GB/s", "GOP/s", "tokens/s"} {
		fmt.Fprintf(w, "Unit %s better=higher\n", u)
	}
}
