package cli

import (
	"encoding/json"
	"errors"
	"io"
	"os/exec"
	"strings"
	"testing"
)

// The floors of the house (docs/layout.md): a package imports ktune
// packages on its own floor or below, never above.
var floors = []struct {
	floor    int
	prefixes []string
}{
	{0, []string{"internal/"}},
	{1, []string{"kernels/"}},
	{2, []string{"model", "tuner", "roofline", "reports"}},
	{3, []string{"cli", "cmd/", "deploy/"}},
}

const module = "github.com/ktune/ktune/"

// floorOf returns the floor of a ktune package path (relative to the
// module), -1 for one no floor names.
func floorOf(rel string) int {
	for _, f := range floors {
		for _, p := range f.prefixes {
			if rel == strings.TrimSuffix(p, "/") || strings.HasPrefix(rel, strings.TrimSuffix(p, "/")+"/") {
				return f.floor
			}
		}
	}
	return -1
}

type listed struct {
	ImportPath string
	Imports    []string
	Deps       []string
}

// goList runs go list -json on the patterns from the module root.
func goList(t *testing.T, deps bool, patterns ...string) []listed {
	t.Helper()
	args := []string{"list", "-json=ImportPath,Imports,Deps"}
	if deps {
		args = append(args, "-deps")
	}
	cmd := exec.Command("go", append(args, patterns...)...)
	cmd.Dir = ".."
	out, err := cmd.Output()
	if err != nil {
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			t.Fatalf("go list: %v\n%s", err, ee.Stderr)
		}
		t.Skipf("go list: %v", err) // no go command (a test binary run alone)
	}
	var pkgs []listed
	dec := json.NewDecoder(strings.NewReader(string(out)))
	for {
		var p listed
		if err := dec.Decode(&p); err == io.EOF {
			break
		} else if err != nil {
			t.Fatal(err)
		}
		pkgs = append(pkgs, p)
	}
	return pkgs
}

// checkFloors returns one line per import that goes up a floor, and per
// package no floor names.
func checkFloors(pkgs []listed) []string {
	var bad []string
	for _, p := range pkgs {
		rel, ok := strings.CutPrefix(p.ImportPath, module)
		if !ok {
			continue
		}
		f := floorOf(rel)
		if f < 0 {
			bad = append(bad, rel+": on no floor (add it to floors and docs/layout.md)")
			continue
		}
		for _, imp := range p.Imports {
			if irel, ok := strings.CutPrefix(imp, module); ok && floorOf(irel) > f {
				bad = append(bad, rel+" imports "+irel+", a floor above it")
			}
		}
	}
	return bad
}

// TestFloors: no package imports one on a floor above its own (the
// production code; tests may drive a command, as model's accuracy test
// runs krun), and the programs link neither the testing package nor, for
// krun, the plotting library.
func TestFloors(t *testing.T) {
	for _, b := range checkFloors(goList(t, false, "./...")) {
		t.Error(b)
	}
	for _, p := range goList(t, true, "./cmd/...") {
		if p.ImportPath == "testing" {
			t.Errorf("a program links the testing package")
		}
	}
	for _, p := range goList(t, true, "./cmd/krun") {
		if strings.HasPrefix(p.ImportPath, "gonum.org/v1/plot") {
			t.Errorf("krun links %s", p.ImportPath)
			break
		}
	}
}

// TestFloorsCatchesUpwardImports: the check fails an import from a lower
// floor to a higher one and a package on no floor.
func TestFloorsCatchesUpwardImports(t *testing.T) {
	pkgs := []listed{
		{ImportPath: module + "internal/pool", Imports: []string{module + "internal/cpu", "sync"}},
		{ImportPath: module + "kernels/gemm", Imports: []string{module + "internal/pool"}},
		{ImportPath: module + "cli/krun", Imports: []string{module + "model", module + "cli"}},
	}
	if bad := checkFloors(pkgs); len(bad) != 0 {
		t.Fatalf("a sound house fails: %v", bad)
	}
	for _, up := range []listed{
		{ImportPath: module + "internal/quant", Imports: []string{module + "kernels/gemm"}},
		{ImportPath: module + "kernels/moe", Imports: []string{module + "model"}},
		{ImportPath: module + "internal/x", Imports: []string{module + "cli/krun"}},
		{ImportPath: module + "attic", Imports: nil},
	} {
		if bad := checkFloors([]listed{up}); len(bad) != 1 {
			t.Errorf("%s importing %v: %d findings, want 1", up.ImportPath, up.Imports, len(bad))
		}
	}
}
