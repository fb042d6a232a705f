//go:build amd64 && gc && !purego

package gemm

import (
	"testing"

	"github.com/ktune/ktune/internal/cpu"
)

// TestStreamsDefault: one stream by default on the captured Zen 4 (AMD
// family 25, the EPYC KVM guest where two read slower), two on the Zen 5
// and Xeon machines where two read faster; a configuration without the
// parameter takes this machine's default.
func TestStreamsDefault(t *testing.T) {
	for _, c := range []struct {
		vendor string
		family int
		want   int
	}{{"AuthenticAMD", 25, 1}, {"AuthenticAMD", 26, 2}, {"GenuineIntel", 6, 2}} {
		if got := vnniStreams(&cpu.Info{Vendor: c.vendor, Family: c.family}, nil); got != c.want {
			t.Errorf("%s family %d: %d streams, want %d", c.vendor, c.family, got, c.want)
		}
	}
	if got, want := defaultStreams(), vnniStreams(cpu.Get(), nil); got != want {
		t.Errorf("this machine's default %d, want %d", got, want)
	}
}
