package tuner

import (
	"fmt"
	"strings"

	"github.com/ktune/ktune/internal/arch"
	"github.com/ktune/ktune/internal/kernel"
)

// A Workload is one (op, dtype, shape) the tuner measures, with the shape
// class it stands for: each kernel family declares its own beside its
// kernels (kernel.RegisterWorkloads, in the family's tune.go), with the
// shape its candidates are checked at (VerifyShape).
type Workload = kernel.Workload

// ShapeClasses are the token counts and contexts the tuner covers.
type ShapeClasses = kernel.ShapeClasses

// FullClasses are the shape classes the engine runs; QuickClasses a
// subset for --quick. Prefill stops at 512 tokens: the engine runs a
// longer prompt as passes of model.DefaultPrefillChunk = 512 tokens, so no
// kernel ever sees a longer prefill.
var (
	FullClasses  = ShapeClasses{Decode: []int{1, 2, 4, 8}, Prefill: []int{64, 512}, Contexts: []int{4096, 32768, 131072}}
	QuickClasses = ShapeClasses{Decode: []int{1, 8}, Prefill: []int{512}, Contexts: []int{32768}}
)

// Workloads lists the workloads every kernel family declares for cfg at
// the shape classes (quick: a representative subset). A workload the
// tuner cannot run is an error of its family: CheckWorkloads reports it.
func Workloads(cfg *arch.Config, sc ShapeClasses, quick bool) []Workload {
	return kernel.Workloads(cfg.Shapes(), sc, quick)
}

// CheckWorkloads returns the first workload the tuner cannot run (op not
// registered, dtype not served, shape or verification shape refused).
func CheckWorkloads(ws []Workload) error {
	for _, w := range ws {
		if err := w.Check(); err != nil {
			return fmt.Errorf("tuner: %v", err)
		}
	}
	return nil
}

// FilterOps keeps the workloads whose op is in only (comma-separated op
// names or families: "gemm", "kda.decode"); empty keeps all.
func FilterOps(ws []Workload, only string) ([]Workload, error) {
	if only == "" {
		return ws, nil
	}
	want := strings.Split(only, ",")
	for _, o := range want {
		found := false
		for _, op := range kernel.Ops() {
			if op.Name == o || op.Family() == o {
				found = true
			}
		}
		if !found {
			return nil, fmt.Errorf("--only: unknown op or family %q", o)
		}
	}
	var out []Workload
	for _, w := range ws {
		for _, o := range want {
			if w.Op == o || strings.HasPrefix(w.Op, o+".") {
				out = append(out, w)
				break
			}
		}
	}
	return out, nil
}
