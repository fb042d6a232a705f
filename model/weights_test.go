package model

import (
	"math"
	"strings"
	"testing"

	"github.com/ktune/ktune/internal/kernel"
	"github.com/ktune/ktune/internal/mapfile"
)

func TestParseWeightsMode(t *testing.T) {
	for in, want := range map[string]WeightsMode{"auto": WeightsAuto, "": WeightsAuto, "MAP": WeightsMap, "copy": WeightsCopy, "Copy": WeightsCopy} {
		if got, err := ParseWeightsMode(in); err != nil || got != want {
			t.Errorf("ParseWeightsMode(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	for _, bad := range []string{"heap", "mmap", "copy ", "1"} {
		if _, err := ParseWeightsMode(bad); err == nil {
			t.Errorf("ParseWeightsMode(%q): no error", bad)
		}
	}
}

// TestWeightsPlacement: where the copy fits beside the memory check's
// budget (with a tenth to spare) auto copies, where it does not auto maps
// and copy refuses, naming the sizes and --load map; a copied model runs
// on the copy (a byte changed in it changes the logits) and gives the
// mapped model's logits bit for bit otherwise.
func TestWeightsPlacement(t *testing.T) {
	if !mapfile.Supported {
		t.Skip("files are read into memory here, not mapped: nothing to copy")
	}
	path := convertTiny(t, tinyDir(t), LoadOptions{Formats: Formats{DType: kernel.Q8, ExpertDType: kernel.Q4K}})
	mapped, err := LoadFile(path, LoadOptions{Files: Files{Weights: WeightsMap}})
	if err != nil {
		t.Fatal(err)
	}
	defer mapped.Close()
	mem := mapped.Memory()
	ids := []int32{3, 1, 4, 1, 5, 9, 2, 6}
	logits := func(m *Model) []float32 {
		t.Helper()
		st := m.NewState(0)
		defer st.Close()
		out, err := m.PrefillWith(st, ids, PrefillOptions{AllLogits: true})
		if err != nil {
			t.Fatal(err)
		}
		return out
	}
	want := logits(mapped)

	// the packed matrices are most of the mapped bytes: half of them does
	// not fit beside the budget, twice them does
	tight := mem.Budgeted + mem.WeightsMapped/2
	roomy := mem.Budgeted + 2*mem.WeightsMapped + (1 << 20)
	for _, c := range []struct {
		mode   WeightsMode
		avail  int64
		copied bool
		errSub string
	}{
		{WeightsAuto, tight, false, ""},
		{WeightsAuto, roomy, true, ""},
		{WeightsAuto, -1, false, ""}, // unknown: map
		{WeightsCopy, tight, false, "--load map"},
		{WeightsCopy, roomy, true, ""},
		{WeightsMap, roomy, false, ""},
	} {
		m, err := LoadFile(path, LoadOptions{Memory: Memory{AvailableMemory: c.avail}, Files: Files{Weights: c.mode}})
		if c.errSub != "" {
			if err == nil || !strings.Contains(err.Error(), c.errSub) || !strings.Contains(err.Error(), path) {
				t.Errorf("%q with %d available: err %v, want one naming %s and %q", c.mode, c.avail, err, path, c.errSub)
			}
			if m != nil {
				m.Close()
			}
			continue
		}
		if err != nil {
			t.Fatalf("%q with %d available: %v", c.mode, c.avail, err)
		}
		if got := m.WeightsCopied() > 0; got != c.copied {
			t.Errorf("%q with %d available: copied %v, want %v (%v)", c.mode, c.avail, got, c.copied, m.Memory())
		}
		got := logits(m)
		for i := range want {
			if math.Float32bits(got[i]) != math.Float32bits(want[i]) {
				t.Fatalf("%q: logit %d = %v, mapped %v", c.mode, i, got[i], want[i])
			}
		}
		if c.copied {
			// the model reads the copy: a byte of lm_head's changes the logits
			m.LMHead.Data[len(m.LMHead.Data)/2] ^= 0x11
			changed := false
			for i, v := range logits(m) {
				changed = changed || math.Float32bits(v) != math.Float32bits(want[i])
			}
			if !changed {
				t.Errorf("%q: a changed byte of the copied lm_head left every logit as it was", c.mode)
			}
			if mapped.LMHead.Data[len(m.LMHead.Data)/2] == m.LMHead.Data[len(m.LMHead.Data)/2] {
				t.Errorf("%q: the change reached the mapping", c.mode)
			}
			if r := m.Memory(); r.WeightsHeap < m.WeightsCopied() || r.WeightsMapped >= mem.WeightsMapped {
				t.Errorf("%q: memory report %v after copying %d bytes (mapped: %v)", c.mode, r, m.WeightsCopied(), mem)
			}
		}
		if err := m.Close(); err != nil {
			t.Errorf("%q: Close: %v", c.mode, err)
		}
	}
}
