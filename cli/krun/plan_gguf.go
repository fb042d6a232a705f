package krun

import (
	"fmt"
	"io"
	"math"
	"os"
	"strings"

	"github.com/ktune/ktune/cli"
	"github.com/ktune/ktune/internal/arch"
	"github.com/ktune/ktune/model"
)

// looksGGUF reports whether path is (or is named as) a GGUF file: plan
// then plans GGUF file types by default, and a file named .gguf that is
// not one is refused as such.
func looksGGUF(path string) bool {
	if st, err := os.Stat(path); err == nil && st.IsDir() {
		return false
	}
	return isGGUF(path) || strings.HasSuffix(strings.ToLower(path), ".gguf")
}

// ggufRow is one file type of the plan's table.
type ggufRow struct {
	name string
	l    *model.GGUFLayout
	this bool // the MODEL file
	fits []model.GGUFFit
}

// runPlanGGUF prints the GGUF plan: the MODEL file and how it runs in each
// budget, then every file type of its config (NewCmdPlan's help).
func runPlanGGUF(o *PlanOptions) error {
	var cfg *arch.Config
	var file *model.GGUFLayout
	name := "Kimi-Linear-48B-A3B (built-in config)"
	switch {
	case o.Kimi48B:
		cfg = arch.Kimi48B()
	case looksGGUF(o.Model):
		var err error
		if file, err = model.OpenGGUFLayout(o.Model); err != nil {
			return &cli.UsageError{Err: err}
		}
		cfg, name = file.Cfg, modelName(o.Model)
	default:
		var err error
		if cfg, err = peekConfig(o.Model); err != nil {
			return err
		}
		name = modelName(o.Model)
	}
	fo, budgets, err := o.fitBudgets(cfg)
	if err != nil {
		return err
	}
	var rate float64 // bytes/s, 0: not given
	if o.DiskRead != "" {
		r, err := parseBytes(o.DiskRead)
		if err != nil {
			return cli.Usagef("--disk-read: %v", err)
		}
		if r <= 0 {
			return cli.Usagef("--disk-read %q: want a rate above 0 (like 2G, per second)", o.DiskRead)
		}
		rate = float64(r)
	}
	layouts, err := model.GGUFTypeLayouts(cfg)
	if err != nil {
		return err
	}
	var rows []ggufRow
	for i, ft := range model.GGUFFileTypes {
		r := ggufRow{name: ft.Name, l: layouts[i]}
		if file != nil && file.FileType == ft.ID {
			r.l, r.this = file, true // the file's own bytes
		}
		rows = append(rows, r)
	}
	if file != nil && !anyThis(rows) { // a type llama-quantize's list here lacks
		rows = append(rows, ggufRow{name: model.GGUFFileTypeName(file.FileType), l: file, this: true})
	}
	for i := range rows {
		for _, b := range budgets {
			f, err := rows[i].l.Fit(b, fo)
			if err != nil {
				return err
			}
			rows[i].fits = append(rows[i].fits, f)
		}
	}
	w := o.Out
	if file != nil {
		if err := printGGUFFile(w, o.Format, name, file, budgets, fo, rate); err != nil {
			return err
		}
		fmt.Fprintln(w)
	}
	return printGGUFTypes(w, o.Format, name, rows, budgets, rate, file != nil)
}

func anyThis(rows []ggufRow) bool {
	for _, r := range rows {
		if r.this {
			return true
		}
	}
	return false
}

// relErr formats a layout's rel. error ("—" unmeasured).
func relErr(l *model.GGUFLayout) string {
	switch {
	case math.IsNaN(l.RelErr):
		return "—"
	case l.RelErr == 0:
		return "0"
	}
	return fmt.Sprintf("%.4f", l.RelErr)
}

// diskTime is n bytes at rate as a time per token, or "".
func diskTime(n int64, rate float64) string {
	if rate <= 0 || n <= 0 {
		return ""
	}
	s := float64(n) / rate
	return fmt.Sprintf("%.3g ms (≤ %.3g tokens/s)", 1000*s, 1/s)
}

// printGGUFFile prints the file's summary and its budgets' table.
func printGGUFFile(w io.Writer, format, name string, l *model.GGUFLayout, budgets []int64, fo model.FitOptions, rate float64) error {
	hb := cli.HumanBytes
	fmt.Fprintf(w, "%s: GGUF %s (general.file_type %d), %s, %.2f bits per weight, rel. error %s\n",
		name, model.GGUFFileTypeName(l.FileType), l.FileType, hb(l.FileBytes), l.BitsPerWeight(), relErr(l))
	fmt.Fprintf(w, "weights run in place: %s of matrices (%s read by every token, %s of routed experts: %d of %d per MoE layer, %d layers); embedding %s (mapped, one row per token); f32 copies %s (norms, routers, MLA kv_b)\n",
		hb(l.Hot+l.Experts), hb(l.Hot), hb(l.Experts), l.TopK, l.NumExperts, l.MoELayers, hb(l.Embedding), hb(l.Heap))
	fmt.Fprintf(w, "a decoded token reads %s of weights: %s of matrices (attention, KDA gates, dense MLP, shared experts, lm_head), %s of routers and kv_b, %s of routed experts\n",
		hb(l.TokenBytes()), hb(l.Hot), hb(l.HeapPerToken), hb(l.Routed))
	if len(budgets) == 0 {
		return nil
	}
	f0, err := l.Fit(budgets[0], fo)
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "from RAM it needs %s resident (f32 copies %s, matrices %s as copied, KDA state %s, MLA cache %s for %d × %d tokens, %s): a budget of %s with the reserve\n",
		hb(f0.Need), hb(l.Heap), hb(l.Copied()), hb(f0.KDAState), hb(f0.MLACache), f0.Seqs, f0.Context, f0.CacheDType, hb(f0.MinBudget))
	head := []string{"budget", "reserve", "runs", "in RAM", "from disk per token"}
	if rate > 0 {
		head = append(head, "disk time per token")
	}
	var rows [][]string
	for _, b := range budgets {
		f, err := l.Fit(b, fo)
		if err != nil {
			return err
		}
		var runs, inRAM, disk string
		switch {
		case f.Resident:
			runs, inRAM, disk = "from RAM", fmt.Sprintf("all weights, %s spare", hb(b-f.Reserve-f.Need)), "0"
		case !f.Runs:
			runs, inRAM, disk = "no", fmt.Sprintf("the f32 copies and states alone need %s", hb(f.Need-l.Copied())), ""
		case f.HotFits && f.ExpertShare >= 1:
			runs, inRAM, disk = "mapped", "all weights in the page cache (too large to copy)", "0"
		case f.HotFits:
			runs, inRAM, disk = "paged", fmt.Sprintf("hot matrices + %.0f%% of the experts", 100*f.ExpertShare), "≈ "+hb(f.DiskPerToken)
		default:
			runs, inRAM, disk = "paged", fmt.Sprintf("%.0f%% of the hot matrices, no experts", 100*float64(f.Room)/float64(l.Hot)), "≥ "+hb(f.DiskPerToken)
		}
		row := []string{hb(b), hb(f.Reserve), runs, inRAM, disk}
		if rate > 0 {
			row = append(row, diskTime(f.DiskPerToken, rate))
		}
		rows = append(rows, row)
	}
	return cli.Table(w, format, head, rows)
}

// printGGUFTypes prints every file type, best first, with each budget's
// verdict and the recommendations.
func printGGUFTypes(w io.Writer, format, name string, rows []ggufRow, budgets []int64, rate float64, haveFile bool) error {
	hb := cli.HumanBytes
	ls := make([]*model.GGUFLayout, len(rows))
	for i, r := range rows {
		ls[i] = r.l
	}
	order := model.GGUFQualityOrder(ls)
	best := make([]int, len(budgets))
	for j := range budgets {
		fits := make([]model.GGUFFit, len(rows))
		for i := range rows {
			fits[i] = rows[i].fits[j]
		}
		best[j] = model.BestGGUF(ls, fits)
	}
	fmt.Fprintf(w, "GGUF file types of %s, best first (bits per weight; llama-quantize's allocation without an imatrix):\n", name)
	head := []string{"type", "bits/weight", "file", "per token", "rel. error"}
	for _, b := range budgets {
		head = append(head, hb(b))
	}
	var table [][]string
	var names strings.Builder
	for k, i := range order {
		r := rows[i]
		label := r.name
		if r.this {
			label += " (this file)"
		}
		switch {
		case k == 0:
		case r.l.RelErr == 0 && rows[order[k-1]].l.RelErr == 0:
			names.WriteString(" = ")
		default:
			names.WriteString(" > ")
		}
		names.WriteString(r.name)
		row := []string{label, fmt.Sprintf("%.2f", r.l.BitsPerWeight()), hb(r.l.FileBytes), hb(r.l.TokenBytes()), relErr(r.l)}
		for j := range budgets {
			row = append(row, verdict(r.fits[j], best[j] == i))
		}
		table = append(table, row)
	}
	if err := cli.Table(w, format, head, table); err != nil {
		return err
	}
	fmt.Fprintf(w, "quality order: %s (f32, bf16 and f16 hold the bf16 checkpoint's values; at about equal bits iq4_nl and iq4_xs are usually more accurate than q4_0, which bits do not show)\n",
		names.String())
	if len(budgets) > 0 {
		fmt.Fprintln(w, "RAM: runs from RAM; mapped: too large to copy (each matrix page-aligned), but the page cache holds the whole file; ★ the best type that runs from either; paged N%: the file stays mapped, the hot matrices and N% of the experts in RAM, the rest read from disk as routed")
		fmt.Fprintln(w, "recommended:")
	}
	for j, b := range budgets {
		fmt.Fprintf(w, "  %s: %s\n", hb(b), recommendation(rows, order, j, best[j], rate, haveFile))
	}
	return nil
}

// verdict is one budget's cell.
func verdict(f model.GGUFFit, best bool) string {
	switch {
	case f.Resident && best:
		return "RAM ★"
	case f.Resident:
		return "RAM"
	case !f.Runs:
		return "no"
	case f.InRAM() && best:
		return "mapped ★"
	case f.InRAM():
		return "mapped"
	case f.HotFits:
		return fmt.Sprintf("paged %.0f%%", 100*f.ExpertShare)
	}
	return "paged, hot on disk"
}

// recommendation is one budget's line: the best type from RAM (and the
// file, if it is not that), or how the smallest type runs paged.
func recommendation(rows []ggufRow, order []int, j, best int, rate float64, haveFile bool) string {
	hb := cli.HumanBytes
	paged := func(r ggufRow) string {
		f := r.fits[j]
		switch {
		case f.Resident:
			return "runs from RAM"
		case !f.Runs:
			return "does not run (the f32 copies and states alone exceed the budget)"
		case f.HotFits && f.ExpertShare >= 1:
			return "runs mapped, all of it in the page cache"
		case f.HotFits:
			s := fmt.Sprintf("runs paged with %.0f%% of its experts in RAM, ≈ %s per token from disk", 100*f.ExpertShare, hb(f.DiskPerToken))
			if t := diskTime(f.DiskPerToken, rate); t != "" {
				s += ", " + t
			}
			return s
		}
		s := fmt.Sprintf("runs paged with its hot matrices partly on disk, ≥ %s per token from disk", hb(f.DiskPerToken))
		if t := diskTime(f.DiskPerToken, rate); t != "" {
			s += ", " + t
		}
		return s
	}
	var s string
	shown := best
	if best >= 0 {
		r := rows[best]
		how := "from RAM"
		if !r.fits[j].Resident {
			how = "mapped, all of it in the page cache (too large to copy)"
		}
		s = fmt.Sprintf("%s (%s file, %s per token) %s", r.name, hb(r.l.FileBytes), hb(r.l.TokenBytes()), how)
		if r.this {
			s = r.name + " (this file) " + how
		}
		for k, i := range order {
			if i == best && k > 0 {
				if nb := rows[order[k-1]]; nb.fits[j].Runs && nb.l.RelErr != 0 {
					label := nb.name
					if nb.this {
						label, shown = nb.name+" (this file)", order[k-1]
					}
					s += fmt.Sprintf("; the next better, %s, %s", label, paged(nb))
				}
			}
		}
	} else {
		small := order[len(order)-1] // the smallest by bits
		for _, i := range order {
			if rows[i].l.FileBytes < rows[small].l.FileBytes {
				small = i
			}
		}
		r := rows[small]
		shown = small
		s = fmt.Sprintf("no type runs from RAM (the smallest, %s, needs a budget of %s); %s %s", r.name, hb(r.fits[j].MinBudget), r.name, paged(r))
	}
	if haveFile && (shown < 0 || !rows[shown].this) {
		for _, r := range rows {
			if r.this {
				s += fmt.Sprintf("; %s (this file) %s", r.name, paged(r))
			}
		}
	}
	return s
}
