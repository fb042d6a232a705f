// bench's printing: the progress lines on stderr as package bench
// measures, and the tables in -o's format.

package krun

import (
	"encoding/csv"
	"encoding/json"
	"fmt"
	"strconv"

	"github.com/ktune/ktune/cli"
	"github.com/ktune/ktune/internal/cpu"
	"github.com/ktune/ktune/model"
	"github.com/ktune/ktune/model/bench"
)

// report is what bench says on stderr as it measures.
func (o *BenchOptions) report() bench.Report {
	return bench.Report{Loaded: o.printLoaded, Preloaded: o.printPreloaded, LockedHot: o.printLockedHot,
		DiskCeiling: o.printDiskCeiling, Row: o.printRow}
}

// printLoaded says where a model file's weights are, whether its experts
// are prefetched, and its expert cache.
func (o *BenchOptions) printLoaded(l bench.Loaded) {
	if o.Synthetic {
		return
	}
	state := map[bool]string{false: "off", true: "on"}[l.Prefetch]
	where := "mapped"
	if l.Copied > 0 {
		where = "copied into memory (" + cli.HumanBytes(l.Copied) + ")"
	}
	fmt.Fprintf(o.Err, "krun: %s: weights %s, expert prefetch %s\n", l.Name, where, state)
	switch c := l.Cache; {
	case c.Slots > 0 && o.NoPrefetch: // its hooks are the prefetch's: every expert reads the mapping
		fmt.Fprintf(o.Err, "krun: %s: expert cache of %d experts in %s unused (--no-prefetch)\n", l.Name, c.Slots, cli.HumanBytes(c.Bytes))
	case c.Slots > 0:
		fmt.Fprintf(o.Err, "krun: %s: expert cache of %d experts in %s (read with O_DIRECT)\n", l.Name, c.Slots, cli.HumanBytes(c.Bytes))
	}
}

// printPreloaded says what the preload read before measuring.
func (o *BenchOptions) printPreloaded(name string, p model.PreloadStats) {
	if p.Planned > 0 {
		fmt.Fprintf(o.Err, "krun: %s: preloaded %s of the weights into memory in %.1f s\n", name, cli.HumanBytes(p.Walked), p.Duration.Seconds())
	}
}

// printLockedHot says what --lock-hot locked, or the OS's refusal.
func (o *BenchOptions) printLockedHot(n int, locked int64, err error) {
	if err != nil {
		fmt.Fprintf(o.Err, "krun: --lock-hot: %v; measuring with %s locked\n", err, cli.HumanBytes(locked))
		return
	}
	fmt.Fprintf(o.Err, "krun: --lock-hot %d: %s of experts locked in RAM\n", n, cli.HumanBytes(locked))
}

// printDiskCeiling says what the disk read ceiling measured.
func (o *BenchOptions) printDiskCeiling(d bench.DiskCeiling) {
	if d.Err != nil {
		fmt.Fprintf(o.Err, "krun: disk read ceiling not measured: %v\n", d.Err)
		return
	}
	in := "4 MiB reads"
	if d.Block > 0 {
		in = cli.HumanBytes(int64(d.Block)) + " reads, an expert matrix each"
	}
	fmt.Fprintf(o.Err, "krun: disk read ceiling %.2f GB/s (%s of %s in %s, %d at a time, O_DIRECT)\n", d.BytesPerSec/1e9, cli.HumanBytes(int64(d.Bytes)), d.Path, in, d.Queue)
}

// printRow is a row's progress line.
func (o *BenchOptions) printRow(r bench.Row) {
	of := "the bound"
	if r.NPrompt > 0 {
		of = "the weights' read bound"
	}
	fmt.Fprintf(o.Err, "krun: %s %s t=%d %s: %.2f ± %.2f tokens/s, %s of %s%s\n", r.Model, r.DType, r.Threads, r.Test, r.Mean, r.SD, boundPct(r.BoundFrac), of, pagedNote(&r))
}

// aboveBound is the fraction of a bound past which a row is marked: a
// rate above its read bound means the run read less than the bound counts
// (weights a prefill reuses from cache) or the ceiling measured low.
const aboveBound = 1.05

// boundPct formats a fraction of a bound, marking one above it.
func boundPct(f float64) string {
	if f > aboveBound {
		return fmt.Sprintf("%.0f%% (above the bound: fewer bytes read than counted, or a ceiling measured low)", 100*f)
	}
	return fmt.Sprintf("%.0f%%", 100*f)
}

// pagedNote is the stderr line's page-in part of a row that paged in.
func pagedNote(r *BenchRow) string {
	if r.PageInsTok == nil || (*r.PageInsTok == 0 && (r.DiskBytesTok == nil || *r.DiskBytesTok == 0)) {
		return ""
	}
	s := fmt.Sprintf("; %.1f page-ins/token", *r.PageInsTok)
	if r.DiskBytesTok != nil {
		s += fmt.Sprintf(", %s/token read at %.2f GB/s", cli.HumanBytes(int64(*r.DiskBytesTok)), *r.DiskGBs)
	}
	if r.PagedBoundFrac > 0 {
		s += fmt.Sprintf(", %.0f%% of the paged bound (disk %.2f GB/s)", 100*r.PagedBoundFrac, r.DiskCeilingGBs)
	}
	if r.ExpertCacheHit != nil {
		s += fmt.Sprintf(", %.0f%% expert cache hits", 100**r.ExpertCacheHit)
	}
	return s
}

// write prints the tables in o.Format.
func (o *BenchOptions) write(rows []BenchRow, ops []OpRow) error {
	switch o.Format {
	case "json":
		return o.writeJSON(rows, ops)
	case "csv":
		return o.writeCSV(rows, ops)
	}
	if err := o.writeRows(rows); err != nil {
		return err
	}
	if len(ops) == 0 {
		return nil
	}
	fmt.Fprintln(o.Out)
	return o.writeOps(ops)
}

// writeJSON writes the rows and op rows as one json object, with the CPU.
func (o *BenchOptions) writeJSON(rows []BenchRow, ops []OpRow) error {
	enc := json.NewEncoder(o.Out)
	enc.SetIndent("", "  ")
	return enc.Encode(struct {
		CPU  string     `json:"cpu"`
		Rows []BenchRow `json:"results"`
		Ops  []OpRow    `json:"ops,omitempty"`
	}{cpu.Get().Brand + " (" + cpu.Fingerprint() + ")", rows, ops})
}

// writeCSV writes the rows, then after an empty line the op rows with
// their own header.
func (o *BenchOptions) writeCSV(rows []BenchRow, ops []OpRow) error {
	w := csv.NewWriter(o.Out)
	w.Write([]string{"model", "dtype", "params", "threads", "test", "n_prompt", "n_gen", "n_depth", "avg_ts", "stddev_ts", "weight_bytes_per_token", "read_ceiling_gbs", "bound_frac",
		"page_ins_per_token", "disk_read_bytes_per_token", "disk_read_gbs", "prefetch", "disk_ceiling_gbs", "paged_bound_frac"})
	for _, r := range rows {
		w.Write([]string{r.Model, r.DType, r.Params, strconv.Itoa(r.Threads), r.Test, strconv.Itoa(r.NPrompt), strconv.Itoa(r.NGen), strconv.Itoa(r.Depth),
			f(r.Mean, 3), f(r.SD, 3), strconv.FormatInt(r.BytesTok, 10), f(r.CeilingGBs, 3), f(r.BoundFrac, 4),
			fOrNA(r.PageInsTok, 2), fOrNA(r.DiskBytesTok, 0), fOrNA(r.DiskGBs, 4), strconv.FormatBool(r.Prefetch), f(r.DiskCeilingGBs, 3), f(r.PagedBoundFrac, 4)})
	}
	if len(ops) > 0 {
		w.Write(nil)
		w.Write([]string{"model", "dtype", "threads", "test", "op", "layer", "ms_per_token", "share", "weight_bytes_per_token", "roof_ms_per_token", "roof_frac"})
		for _, r := range ops {
			w.Write([]string{r.Model, r.DType, strconv.Itoa(r.Threads), r.Test, r.Op, strconv.Itoa(r.Layer), f(r.MsPerTok, 4), f(r.Share, 4), strconv.FormatInt(r.BytesTok, 10), f(r.RoofMs, 4), f(r.RoofFrac, 4)})
		}
	}
	w.Flush()
	return w.Error()
}

// writeRows writes the rows' table (md or text); a model file's rows, or
// rows that paged in, add what they paged in (a synthetic model's weights
// are on the heap).
func (o *BenchOptions) writeRows(rows []BenchRow) error {
	paged := o.Model != ""
	for _, r := range rows {
		paged = paged || (r.PageInsTok != nil && *r.PageInsTok > 0)
	}
	var tab [][]string
	for _, r := range rows {
		bound := ""
		if r.BoundFrac > 0 {
			bound = fmt.Sprintf("%s (%s/tok @ %.1f GB/s)", boundPct(r.BoundFrac), cli.HumanBytes(r.BytesTok), r.CeilingGBs)
		}
		row := []string{r.Model, r.DType, r.Params, strconv.Itoa(r.Threads), r.Test, fmt.Sprintf("%.2f ± %.2f", r.Mean, r.SD), bound}
		if paged {
			row = append(row, pagedCells(r)...)
		}
		tab = append(tab, row)
	}
	head := []string{"model", "dtype", "params", "threads", "test", "t/s", "of bound"}
	if paged {
		head = append(head, "prefetch", "page-ins/tok", "disk read", "of paged bound")
	}
	return cli.Table(o.Out, o.Format, head, tab)
}

// pagedCells are a row's page-in cells: prefetch, page-ins per token,
// disk read, fraction of the paged bound.
func pagedCells(r BenchRow) []string {
	pin, disk, pb := fOrNA(r.PageInsTok, 1), "n/a", ""
	if r.DiskBytesTok != nil {
		disk = fmt.Sprintf("%s/tok @ %.2f GB/s", cli.HumanBytes(int64(*r.DiskBytesTok)), *r.DiskGBs)
	}
	if r.PagedBoundFrac > 0 {
		pb = fmt.Sprintf("%.0f%% (disk %.2f GB/s)", 100*r.PagedBoundFrac, r.DiskCeilingGBs)
	}
	return []string{map[bool]string{false: "off", true: "on"}[r.Prefetch], pin, disk, pb}
}

// writeOps writes the --ops breakdown's table (md or text).
func (o *BenchOptions) writeOps(ops []OpRow) error {
	var tab [][]string
	for _, r := range ops {
		roof, frac, wt := "-", "-", "-"
		if r.RoofMs > 0 {
			roof, frac = fmt.Sprintf("%.3f", r.RoofMs), fmt.Sprintf("%.0f%%", 100*r.RoofFrac)
		}
		if r.BytesTok > 0 {
			wt = cli.HumanBytes(r.BytesTok)
		}
		op := r.Op
		if r.Layer >= 0 {
			op = fmt.Sprintf("  %s L%d", r.Op, r.Layer)
		}
		tab = append(tab, []string{r.Model, r.DType, strconv.Itoa(r.Threads), r.Test, op, fmt.Sprintf("%.3f", r.MsPerTok),
			fmt.Sprintf("%.1f%%", 100*r.Share), wt, roof, frac})
	}
	return cli.Table(o.Out, o.Format, []string{"model", "dtype", "threads", "test", "op", "ms/token", "share", "weights/token", "roof ms", "of roof"}, tab)
}

func f(x float64, prec int) string { return strconv.FormatFloat(x, 'f', prec, 64) }

// fOrNA is f of *x, or "n/a" for nil (a counter the OS does not give).
func fOrNA(x *float64, prec int) string {
	if x == nil {
		return "n/a"
	}
	return f(*x, prec)
}
