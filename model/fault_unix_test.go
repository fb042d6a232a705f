//go:build unix

package model

import (
	"errors"
	"os"
	"testing"

	"github.com/ktune/ktune/internal/kernel"
)

// TestFaultError: a mapped model whose file is cut short under it returns
// a FaultError naming the file from the step that meets the fault (on the
// caller's goroutine or a pool worker's), instead of crashing the process;
// every later step returns it at once. A model whose file is intact runs.
func TestFaultError(t *testing.T) {
	t.Setenv(PreloadEnv, "0")
	c := loadTiny(t)[0]
	path := convertTiny(t, c.f.Dir(), LoadOptions{Formats: Formats{DType: kernel.Q8}})
	for _, th := range []int{1, 2} {
		cp := path + ".copy"
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(cp, b, 0o644); err != nil {
			t.Fatal(err)
		}
		m, err := LoadFile(cp, LoadOptions{Runtime: Runtime{Threads: th}, Files: Files{Weights: WeightsMap, NoVerify: true}})
		if err != nil {
			t.Fatal(err)
		}
		st := m.NewState(0)
		if _, err := m.Prefill(st, c.ids[0]); err != nil || m.Fault() != nil {
			t.Fatalf("intact file: %v, fault %v", err, m.Fault())
		}
		if err := os.Truncate(cp, 4096); err != nil {
			t.Fatal(err)
		}
		_, err = m.Prefill(m.NewState(0), c.ids[0])
		var fe *FaultError
		if !errors.As(err, &fe) || fe.Path != cp || m.Fault() == nil {
			t.Fatalf("threads %d: prefill of a cut file: %v (fault %v), want a FaultError naming %s", th, err, m.Fault(), cp)
		}
		if _, err := m.Decode([]*State{st}, []int32{1}); !errors.As(err, &fe) {
			t.Errorf("threads %d: a step after the fault: %v, want the FaultError", th, err)
		}
		m.Close()
	}
}
