package reports

import (
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"sort"
	"strconv"
	"strings"

	"golang.org/x/perf/benchfmt"
	"golang.org/x/perf/benchunit"
)

// BenchFile is one input in the Go benchmark format
// (https://golang.org/design/14313-benchmark-format), read with benchfmt:
// ktune's own output or plain `go test -bench` output. Values are kept
// per (file configuration, full benchmark name, tidied unit), in tidied
// units (ns/op becomes sec/op, MB/s becomes B/s).
type BenchFile struct {
	Name     string                   // file name, for messages and table headers
	Units    benchfmt.UnitMetadataMap // "Unit ... better=higher" lines
	Warnings []error                  // lines benchfmt could not parse (non-fatal)

	configs map[string]map[string]string // configuration id -> key -> value
	entries map[benchKey]*benchEntry
	order   []benchKey
}

type benchKey struct{ config, name, unit string }

type benchEntry struct {
	values []float64
}

// ReadBenchFile reads a benchmark file from disk.
func ReadBenchFile(path string) (*BenchFile, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("reading benchmarks: %w", err)
	}
	defer f.Close()
	return ParseBench(f, path)
}

// ParseBench reads Go benchmark format from r. name labels the input in
// messages. A file without a single benchmark result is an error (which
// catches passing a profile, a log or a binary by mistake), and so is a
// value no benchmark measures (NaN, ±Inf, a negative or zero time or
// rate), named by file and line; lines that benchfmt rejects are kept as
// Warnings.
func ParseBench(r io.Reader, name string) (*BenchFile, error) {
	bf := &BenchFile{
		Name:    name,
		configs: map[string]map[string]string{},
		entries: map[benchKey]*benchEntry{},
	}
	rd := benchfmt.NewReader(r, name)
	results := 0
	for rd.Scan() {
		switch rec := rd.Result().(type) {
		case *benchfmt.SyntaxError:
			bf.Warnings = append(bf.Warnings, rec)
		case *benchfmt.Result:
			results++
			cfg := bf.configID(rec)
			full := rec.Name.String()
			for _, v := range rec.Values {
				orig, origUnit := v.Value, v.Unit
				if v.OrigUnit != "" {
					orig, origUnit = v.OrigValue, v.OrigUnit
				}
				// benchfmt leaves 0 and ±Inf ns/op in ns/op (x·1e-9 == x);
				// tidy every value so a unit has one name
				val, unit := benchunit.Tidy(orig, origUnit)
				if err := checkValue(val, unit); err != nil {
					file, line := rec.Pos()
					return nil, fmt.Errorf("%s:%d: Benchmark%s: %s %s: %v", file, line, full, strconv.FormatFloat(orig, 'g', -1, 64), origUnit, err)
				}
				k := benchKey{cfg, full, unit}
				e := bf.entries[k]
				if e == nil {
					e = &benchEntry{}
					bf.entries[k] = e
					bf.order = append(bf.order, k)
				}
				e.values = append(e.values, val)
			}
		}
	}
	if err := rd.Err(); err != nil {
		return nil, fmt.Errorf("reading benchmarks: %w", err)
	}
	bf.Units = rd.Units()
	if results == 0 {
		msg := fmt.Sprintf("%s: no benchmark results (expected Go benchmark format: lines such as \"BenchmarkX-8  1000  1234 ns/op\")", name)
		if len(bf.Warnings) > 0 {
			msg += "; first problem: " + bf.Warnings[0].Error()
		}
		return nil, errors.New(msg)
	}
	return bf, nil
}

// checkValue refuses what no benchmark measures and the statistics cannot
// take (NaN makes the Mann–Whitney test loop, ±Inf and 0 make every
// change infinite): a value that is not finite, a negative time, cost or
// rate (any unit whose better direction is known), and a zero time or rate.
// Zero bytes or allocations per op, and any value of a unit of unknown
// direction, pass.
func checkValue(v float64, unit string) error {
	switch {
	case math.IsNaN(v):
		return errors.New("not a number")
	case math.IsInf(v, 0):
		return errors.New("infinite")
	case v < 0 && Better(unit) != 0:
		return errors.New("negative")
	case v == 0 && (unit == "sec/op" || strings.HasSuffix(unit, "/s")):
		return errors.New("zero (no time or rate measures 0)")
	}
	return nil
}

// configID names the file configuration of a result ("key: value" lines
// above it), order-independently.
func (bf *BenchFile) configID(r *benchfmt.Result) string {
	var kv []string
	m := map[string]string{}
	for _, c := range r.Config {
		if !c.File {
			continue
		}
		m[c.Key] = string(c.Value)
		kv = append(kv, c.Key+"="+string(c.Value))
	}
	sort.Strings(kv)
	id := strings.Join(kv, "\x00")
	if _, ok := bf.configs[id]; !ok {
		bf.configs[id] = m
	}
	return id
}

// Benchmarks lists the distinct benchmark names, in file order.
func (bf *BenchFile) Benchmarks() []string {
	seen := map[string]bool{}
	var out []string
	for _, k := range bf.order {
		if !seen[k.name] {
			seen[k.name] = true
			out = append(out, k.name)
		}
	}
	return out
}

// UnitNames lists the distinct (tidied) units, in file order.
func (bf *BenchFile) UnitNames() []string {
	seen := map[string]bool{}
	var out []string
	for _, k := range bf.order {
		if !seen[k.unit] {
			seen[k.unit] = true
			out = append(out, k.unit)
		}
	}
	return out
}

// Values returns the samples of a benchmark in a unit (tidied, e.g.
// "sec/op"), over all configurations.
func (bf *BenchFile) Values(name, unit string) []float64 {
	var out []float64
	for _, k := range bf.order {
		if k.name == name && k.unit == unit {
			out = append(out, bf.entries[k].values...)
		}
	}
	return out
}

// configValues returns, for each configuration key, the set of values the
// file's results carry (a key missing from a result counts as "").
func (bf *BenchFile) configValues() map[string]map[string]bool {
	keys := map[string]bool{}
	for _, m := range bf.configs {
		for k := range m {
			keys[k] = true
		}
	}
	out := map[string]map[string]bool{}
	for k := range keys {
		out[k] = map[string]bool{}
		for _, m := range bf.configs {
			out[k][m[k]] = true
		}
	}
	return out
}

// Better reports whether higher (+1) or lower (-1) values of a tidied unit
// are better, or 0 when unknown. It reads the files' unit metadata
// ("Unit GFLOP/s better=higher"; the key is matched case-insensitively,
// since ktune's own benchmarks once wrote "Better="), then benchfmt's
// built-in defaults (sec/op, B/s, B/op, allocs/op), then a rule of thumb:
// a rate ("…/s", e.g. GFLOP/s, tokens/s) is better higher, a cost per
// operation ("…/op") is better lower.
func Better(unit string, metas ...benchfmt.UnitMetadataMap) int {
	for _, m := range metas {
		for k, md := range m {
			if k.Unit != unit || !strings.EqualFold(k.Key, "better") {
				continue
			}
			switch strings.ToLower(md.Value) {
			case "higher":
				return 1
			case "lower":
				return -1
			}
		}
	}
	if b := (benchfmt.UnitMetadataMap{}).GetBetter(unit); b != 0 {
		return b
	}
	switch {
	case strings.HasSuffix(unit, "/s"):
		return 1
	case strings.HasSuffix(unit, "/op"):
		return -1
	}
	return 0
}
