package model

import (
	"math"
	"os"
	"path/filepath"
	"testing"

	"github.com/ktune/ktune/internal/arch"
)

// tinyConfigLayers is the golden tiny model's config cut to its first
// layers (layer 0 dense, the last MLA, KDA between), as SyntheticConfig
// cuts the 48B one.
func tinyConfigLayers(t *testing.T, cfg *arch.Config, layers int) *arch.Config {
	t.Helper()
	c := *cfg
	c.LinearAttn.KDALayers, c.LinearAttn.FullAttnLayers = nil, nil
	c.NumHiddenLayers = layers
	for l := 1; l <= layers; l++ { // 1-based, as config.json numbers them
		if l == layers && layers > 1 {
			c.LinearAttn.FullAttnLayers = append(c.LinearAttn.FullAttnLayers, l)
		} else {
			c.LinearAttn.KDALayers = append(c.LinearAttn.KDALayers, l)
		}
	}
	if err := c.Validate(); err != nil {
		t.Fatal(err)
	}
	return &c
}

// sameLayout compares two layouts but their file sizes.
func sameLayout(t *testing.T, what string, got, want *GGUFLayout) {
	t.Helper()
	g, w := *got, *want
	g.Cfg, w.Cfg, g.FileBytes, w.FileBytes = nil, nil, 0, 0
	if math.IsNaN(g.RelErr) && math.IsNaN(w.RelErr) {
		g.RelErr, w.RelErr = 0, 0
	}
	if g != w {
		t.Errorf("%s:\n got %+v\nwant %+v", what, g, w)
	}
}

// TestGGUFLayoutEngine: a golden GGUF file's layout is what the engine
// does with it: loaded mapped, its heap and mapped bytes are Heap and
// Data, and its decode weight bytes (less the embedding row) TokenBytes;
// loaded with the copy, the copy is Copied; and the layout equals the one
// computed for the file's type without a file.
func TestGGUFLayoutEngine(t *testing.T) {
	paths, cfg := goldenGGUFs(t)
	computed, err := GGUFTypeLayouts(cfg)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range paths {
		t.Run(filepath.Base(p), func(t *testing.T) {
			l, err := OpenGGUFLayout(p)
			if err != nil {
				t.Fatal(err)
			}
			st, err := os.Stat(p)
			if err != nil {
				t.Fatal(err)
			}
			if l.FileBytes != st.Size() {
				t.Errorf("FileBytes %d, the file has %d", l.FileBytes, st.Size())
			}
			m := mustLoadGGUF(t, p, LoadOptions{Files: Files{Weights: WeightsMap, NoVerify: true}})
			mem := m.Memory()
			if mem.WeightsHeap != l.Heap || mem.WeightsMapped != l.Data {
				t.Errorf("engine heap %d, mapped %d; layout Heap %d, Data %d", mem.WeightsHeap, mem.WeightsMapped, l.Heap, l.Data)
			}
			if got := m.DecodeWeightBytes() - m.DecodeWeightBytesByOp()[OpEmbed]; got != l.TokenBytes() {
				t.Errorf("engine decode bytes %d (less the embedding row); TokenBytes %d (hot %d, heap %d, routed %d)",
					got, l.TokenBytes(), l.Hot, l.HeapPerToken, l.Routed)
			}
			mc := mustLoadGGUF(t, p, LoadOptions{Memory: Memory{AvailableMemory: -1}, Files: Files{Weights: WeightsCopy, NoVerify: true}})
			if mc.WeightsCopied() != l.Copied() {
				t.Errorf("engine copied %d; Copied %d", mc.WeightsCopied(), l.Copied())
			}
			if l.Embedding == 0 || l.Hot == 0 || l.Experts == 0 || l.MoELayers != cfg.NumMoELayers() || l.TopK != cfg.NumExpertsPerToken {
				t.Errorf("layout %+v", l)
			}
			for i, ft := range GGUFFileTypes {
				if ft.ID == l.FileType {
					sameLayout(t, "computed "+ft.Name, computed[i], l)
				}
			}
		})
	}
}

// TestGGUFTypeLayoutsWritten: the layouts computed without a file have the
// size of, and equal the layout read back from, the file SynthGGUF writes,
// for every file type, on the tiny config and its 2-layer cut.
func TestGGUFTypeLayoutsWritten(t *testing.T) {
	_, tiny := goldenGGUFs(t)
	for _, cfg := range []*arch.Config{tiny, tinyConfigLayers(t, tiny, 2)} {
		ls, err := GGUFTypeLayouts(cfg)
		if err != nil {
			t.Fatal(err)
		}
		if len(ls) != len(GGUFFileTypes) {
			t.Fatalf("%d layouts for %d file types", len(ls), len(GGUFFileTypes))
		}
		dir := t.TempDir()
		for i, ft := range GGUFFileTypes {
			s, err := NewSynthGGUF(cfg, ft, 7)
			if err != nil {
				t.Fatal(err)
			}
			path := filepath.Join(dir, ft.Name+".gguf")
			if err := s.WriteFile(path, 1, nil); err != nil {
				t.Fatal(err)
			}
			st, err := os.Stat(path)
			if err != nil {
				t.Fatal(err)
			}
			what := ft.Name + " " + cfg.Source
			if ls[i].FileBytes != st.Size() || ls[i].FileType != ft.ID {
				t.Errorf("%s: computed %d bytes, type %d; written %d bytes, type %d", what, ls[i].FileBytes, ls[i].FileType, st.Size(), ft.ID)
			}
			back, err := OpenGGUFLayout(path)
			if err != nil {
				t.Fatal(err)
			}
			sameLayout(t, what, ls[i], back)
			if back.FileBytes != st.Size() {
				t.Errorf("%s: read back %d bytes, the file has %d", what, back.FileBytes, st.Size())
			}
		}
	}
}

// TestGGUFFit48B: on the 48B file types, the recommendation's quality and
// size never fall as the budget grows, every type runs from RAM from its
// MinBudget on and not below, the paged estimate improves with the
// budget, and a budget below the hot matrices and the states runs nothing
// from RAM but still runs paged.
func TestGGUFFit48B(t *testing.T) {
	ls, err := GGUFTypeLayouts(arch.Kimi48B())
	if err != nil {
		t.Fatal(err)
	}
	order := GGUFQualityOrder(ls)
	rank := make([]int, len(ls))
	for r, i := range order {
		rank[i] = r
	}
	for r := 1; r < len(order); r++ {
		a, b := ls[order[r-1]], ls[order[r]]
		if a.RelErr != 0 && b.RelErr != 0 && a.BitsPerWeight() < b.BitsPerWeight() {
			t.Errorf("order: %d bits before %d", a.FileType, b.FileType)
		}
	}
	if GGUFFileTypeName(ls[order[0]].FileType) != "BF16" {
		t.Errorf("best %s, want BF16 (lossless, half F32's size)", GGUFFileTypeName(ls[order[0]].FileType))
	}
	opt := FitOptions{}
	prevBest, prev := -1, make([]GGUFFit, len(ls))
	for b := int64(1 << 30); b <= 256<<30; b += 1 << 29 {
		fits := make([]GGUFFit, len(ls))
		for i, l := range ls {
			if fits[i], err = l.Fit(b, opt); err != nil {
				t.Fatal(err)
			}
			f := fits[i]
			if f.Resident != (b >= f.MinBudget) {
				t.Errorf("%s at %d: resident %v, MinBudget %d", GGUFFileTypeName(l.FileType), b, f.Resident, f.MinBudget)
			}
			if p := prev[i]; p.Budget > 0 && (f.DiskPerToken > p.DiskPerToken || f.ExpertShare < p.ExpertShare || p.Resident && !f.Resident || p.Runs && !f.Runs) {
				t.Errorf("%s: %d → %d bytes: %+v then %+v", GGUFFileTypeName(l.FileType), p.Budget, b, p, f)
			}
			if f.Runs && !f.Resident && f.DiskPerToken <= 0 && f.ExpertShare < 1 {
				t.Errorf("%s at %d paged with nothing from disk: %+v", GGUFFileTypeName(l.FileType), b, f)
			}
		}
		best := BestGGUF(ls, fits)
		if prevBest >= 0 && (best < 0 || rank[best] > rank[prevBest]) {
			t.Errorf("at %d bytes the best is %d, at less it was %d", b, best, prevBest)
		}
		if best >= 0 {
			for i := range ls {
				if fits[i].InRAM() && rank[i] < rank[best] {
					t.Errorf("at %d bytes %d runs from RAM and ranks above the best %d", b, i, best)
				}
			}
		}
		prevBest, prev = best, fits
	}
	if prevBest < 0 || GGUFFileTypeName(ls[prevBest].FileType) != "BF16" {
		t.Errorf("at 256 GiB the best is %d, want BF16", prevBest)
	}
	// below every type's hot matrices and states: paged, hot set on disk
	var q2 *GGUFLayout
	for i, ft := range GGUFFileTypes {
		if ft.Name == "Q2_K" {
			q2 = ls[i]
		}
	}
	f, _ := q2.Fit(1<<30, opt)
	hotAndStates := q2.Hot + q2.Heap + f.KDAState + f.MLACache + f.Reserve
	if hotAndStates <= 1<<30 {
		t.Fatalf("1 GiB holds Q2_K's hot set and states (%d)", hotAndStates)
	}
	if f.Resident || !f.Runs || f.HotFits || f.ExpertShare != 0 || f.DiskPerToken < q2.Routed {
		t.Errorf("Q2_K in 1 GiB: %+v", f)
	}
	// far too small: the states alone exceed it
	f, _ = q2.Fit(1<<30, FitOptions{Context: 1 << 20, Seqs: 8})
	if f.Runs || f.Resident {
		t.Errorf("Q2_K in 1 GiB with 8 × 1M tokens: %+v", f)
	}
}

// TestGGUFFileTypeName: the names of general.file_type.
func TestGGUFFileTypeName(t *testing.T) {
	for _, ft := range GGUFFileTypes {
		if got := GGUFFileTypeName(ft.ID); got != ft.Name {
			t.Errorf("%d: %q, want %q", ft.ID, got, ft.Name)
		}
	}
	for id, want := range map[uint32]string{14: "Q4_K_S", 4: "file type 4", 1024: "file type 1024"} {
		if got := GGUFFileTypeName(id); got != want {
			t.Errorf("%d: %q, want %q", id, got, want)
		}
	}
}
