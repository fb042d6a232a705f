// The rows' labels.

package bench

import (
	"fmt"
	"strings"

	"github.com/ktune/ktune/internal/kernel"
	"github.com/ktune/ktune/model"
)

// DTypeLabel names a model's formats: the base dtype, and the groups that
// differ from it ("q8 (experts q4)").
func DTypeLabel(o model.LoadOptions) string {
	var diff []string
	for _, g := range []struct {
		name string
		dt   kernel.DType
	}{{"attn", o.AttnDType}, {"ffn", o.FFNDType}, {"experts", o.ExpertDType}, {"head", o.HeadDType}} {
		if g.dt != o.DType {
			diff = append(diff, g.name+" "+string(g.dt))
		}
	}
	if len(diff) == 0 {
		return string(o.DType)
	}
	return string(o.DType) + " (" + strings.Join(diff, ", ") + ")"
}

// ParamsLabel writes a parameter count as llama-bench does (2.45 B, 1.20 M).
func ParamsLabel(n int64) string {
	if n >= 1e9 {
		return fmt.Sprintf("%.2f B", float64(n)/1e9)
	}
	return fmt.Sprintf("%.2f M", float64(n)/1e6)
}
