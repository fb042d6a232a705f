package reports

import (
	"fmt"
	"math"
)

// Geomean is the geometric mean of xs, exp(mean(log x)), as benchstat's
// geomean row computes it. It is NaN when xs is empty or holds a value
// that is not positive and finite; drop missing entries first.
func Geomean(xs []float64) float64 {
	if len(xs) == 0 {
		return math.NaN()
	}
	var s float64
	for _, x := range xs {
		if !(x > 0) || math.IsInf(x, 0) {
			return math.NaN()
		}
		s += math.Log(x)
	}
	return math.Exp(s / float64(len(xs)))
}

// SideBySide lays out one figure per (row, machine) for a comparison of
// machines: the row's key columns, each machine's figure, then each later
// machine's ratio to the first, and a final geomean row over the rows
// where every machine has a figure. values[i][j] is row i on machine j
// (NaN when missing, shown as "—"); format renders a figure.
func SideBySide(keyHeader []string, machines []string, keys [][]string, values [][]float64, format func(float64) string) (header []string, rows [][]string, err error) {
	if len(keys) != len(values) {
		return nil, nil, fmt.Errorf("SideBySide: %d key rows for %d value rows", len(keys), len(values))
	}
	header = append(append([]string(nil), keyHeader...), machines...)
	for _, m := range machines[min(1, len(machines)):] {
		header = append(header, m+" / "+machines[0])
	}
	cell := func(v float64, f func(float64) string) string {
		if math.IsNaN(v) {
			return "—"
		}
		return f(v)
	}
	ratio := func(v float64) string { return fmt.Sprintf("%.2f×", v) }
	cols := make([][]float64, len(machines)) // complete rows only, per machine
	for i, vs := range values {
		if len(keys[i]) != len(keyHeader) || len(vs) != len(machines) {
			return nil, nil, fmt.Errorf("SideBySide: row %d has %d keys and %d values for %d key columns and %d machines", i, len(keys[i]), len(vs), len(keyHeader), len(machines))
		}
		row := append([]string(nil), keys[i]...)
		complete := true
		for _, v := range vs {
			row = append(row, cell(v, format))
			complete = complete && v > 0 && !math.IsInf(v, 0)
		}
		for _, v := range vs[min(1, len(vs)):] {
			row = append(row, cell(v/vs[0], ratio))
		}
		if complete {
			for j, v := range vs {
				cols[j] = append(cols[j], v)
			}
		}
		rows = append(rows, row)
	}
	if len(machines) > 0 && len(cols[0]) > 0 {
		row := make([]string, len(keyHeader))
		if len(row) > 0 {
			row[0] = fmt.Sprintf("geomean (%d rows)", len(cols[0]))
		}
		g := make([]float64, len(machines))
		for j := range machines {
			g[j] = Geomean(cols[j])
			row = append(row, format(g[j]))
		}
		for j := 1; j < len(machines); j++ {
			row = append(row, ratio(g[j]/g[0]))
		}
		rows = append(rows, row)
	}
	return header, rows, nil
}
