package kprofile

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/ktune/ktune/cli"
	"github.com/ktune/ktune/internal/profile"
	"github.com/ktune/ktune/reports"
	"github.com/ktune/ktune/roofline"
)

// machine is one profile read in report mode, with its ceilings.
type machine struct {
	Path     string
	Name     string // column header: CPU and mask, made unique
	P        *profile.Profile
	C        *roofline.Ceilings // nil: no ceilings, "% of roof" unknown
	CeilFrom string             // where the ceilings came from
	Warnings []string
}

// readMachine reads a profile on any machine (profile.Read; an unreadable
// or corrupt file is an input error, exit 2) and warns of what the
// engine's validation finds in it (validate). Its ceilings
// come from the profile; when it embeds none, from the ceilings.json that
// `ktune roofline --out DIR` writes beside it, if that file is for the
// same fingerprint.
func readMachine(path string) (*machine, error) {
	p, err := readProfile(path)
	if err != nil {
		return nil, err
	}
	m := &machine{Path: path, P: p, Warnings: validate(path, p)}
	if len(p.Ceilings) > 0 && string(p.Ceilings) != "null" {
		c, err := roofline.ParseCeilings(p.Ceilings)
		if err != nil {
			m.Warnings = append(m.Warnings, fmt.Sprintf("%s: embedded ceilings unreadable (%v); %% of roof not shown", path, err))
		} else {
			m.C, m.CeilFrom = c, "profile"
		}
	}
	if m.C == nil {
		side := filepath.Join(filepath.Dir(path), "ceilings.json")
		if c, err := roofline.Load(side); err == nil {
			if c.Fingerprint == p.Fingerprint {
				m.C, m.CeilFrom = c, side
			} else {
				m.Warnings = append(m.Warnings, fmt.Sprintf("%s is for %s, not %s: ignored", side, c.Fingerprint, p.Fingerprint))
			}
		} else if !os.IsNotExist(err) {
			m.Warnings = append(m.Warnings, fmt.Sprintf("%s: %v", side, err))
		}
	}
	m.Name = machineName(p)
	return m, nil
}

// readProfile is profile.Read with its errors made input errors (exit 2).
func readProfile(path string) (*profile.Profile, error) {
	p, err := profile.Read(path)
	if err != nil {
		return nil, &cli.UsageError{Err: err}
	}
	return p, nil
}

// validate is the engine's validation of a profile (profile.Profile.Validate)
// as messages naming path: one for another schema (whose entries are not
// checked), else one per bad entry.
func validate(path string, p *profile.Profile) []string {
	whole, entries := p.Validate()
	if whole != nil {
		return []string{fmt.Sprintf("%s: %v: its entries are not checked and may be misread", path, whole)}
	}
	var out []string
	for _, err := range entries {
		out = append(out, fmt.Sprintf("%s: %v", path, err))
	}
	return out
}

func machineName(p *profile.Profile) string {
	name := strings.Join(strings.Fields(p.CPU.Brand), " ")
	for _, junk := range []string{"(R)", "(TM)", " Processor", " CPU"} {
		name = strings.ReplaceAll(name, junk, "")
	}
	if i := strings.Index(name, " @ "); i > 0 {
		name = name[:i]
	}
	if name == "" {
		name = p.Fingerprint
	}
	if p.CPU.Mask != "" {
		name += " [" + p.CPU.Mask + "]"
	}
	return name
}

// readMachines reads every path and makes the names unique (by
// fingerprint, then by position).
func readMachines(paths []string) ([]*machine, error) {
	var ms []*machine
	for _, p := range paths {
		m, err := readMachine(p)
		if err != nil {
			return nil, err
		}
		ms = append(ms, m)
	}
	uniq := func() bool {
		seen := map[string]bool{}
		for _, m := range ms {
			if seen[m.Name] {
				return false
			}
			seen[m.Name] = true
		}
		return true
	}
	if !uniq() {
		for _, m := range ms {
			m.Name += " " + m.P.Fingerprint
		}
	}
	if !uniq() {
		for i, m := range ms {
			m.Name = fmt.Sprintf("%s #%d", m.Name, i+1)
		}
	}
	return ms, nil
}

// roofFraction is reports.RoofFraction (the one definition of % of roof).
func roofFraction(c *roofline.Ceilings, e *profile.Entry) float64 { return reports.RoofFraction(c, e) }

func fmtPct(f float64) string {
	if math.IsNaN(f) {
		return "—"
	}
	return fmt.Sprintf("%.0f%%", 100*f)
}

// ceilingRows lists a machine's ceilings: compute per ceiling and thread
// count, then read plateaus per level and thread count.
func ceilingRows(c *roofline.Ceilings) [][]string {
	var out [][]string
	threads := append([]int(nil), c.Threads...)
	sort.Ints(threads)
	for _, t := range threads {
		for _, cc := range c.ComputeAt(t) {
			out = append(out, []string{"compute", cc.Name, cc.ISA, fmt.Sprint(t), fmt.Sprintf("%.1f %s", cc.GFLOPS, cc.Unit())})
		}
	}
	for _, s := range c.Sweeps {
		if s.Kind != roofline.KindRead {
			continue
		}
		for _, p := range s.Plateaus {
			out = append(out, []string{"bandwidth", "read " + p.Level, "", fmt.Sprint(s.Threads), fmt.Sprintf("%.1f GB/s", p.GBs)})
		}
	}
	return out
}
