package model

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ktune/ktune/internal/kernel"
	"github.com/ktune/ktune/internal/mapfile"
	"github.com/ktune/ktune/model/kfile"
)

// convertTiny converts the golden tiny model (each golden folder) into a
// model file under opt and returns its path and the checkpoint folder.
func convertTiny(t *testing.T, dir string, opt LoadOptions) string {
	t.Helper()
	out := filepath.Join(t.TempDir(), "tiny.kt")
	calls := 0
	if err := ConvertFile(dir, out, opt, map[string]string{"preset": "test"}, func(done, total int, name string) { calls++ }); err != nil {
		t.Fatal(err)
	}
	if calls == 0 {
		t.Error("no progress reported")
	}
	return out
}

// TestFileRoundTrip: a converted model gives the HF-loaded model's logits
// bit for bit (prefill, all positions, and decode), for f32 and q8 and a
// mix, with its weights read in place (WeightsMap) or copied into memory
// (WeightsCopy).
func TestFileRoundTrip(t *testing.T) {
	for _, c := range loadTiny(t) {
		for _, opt := range []LoadOptions{{}, {Formats: Formats{DType: kernel.Q8}}, {Formats: Formats{DType: kernel.Q8, ExpertDType: kernel.Q4, GateDType: kernel.BF16}}, {Formats: Formats{DType: kernel.Q8, ExpertDType: kernel.Q2}}, {Formats: Formats{DType: kernel.Q8, ExpertDType: kernel.Q5}}, {Formats: Formats{DType: kernel.Q6K, ExpertDType: kernel.Q3K, HeadDType: kernel.Q4K}}} {
			name := string(opt.DType) + "/" + string(opt.ExpertDType)
			t.Run(c.f.Name()+"/"+name, func(t *testing.T) {
				path := convertTiny(t, c.f.Dir(), opt)
				want := mustLoad(t, c.f.Dir(), opt)
				a := runGolden(t, want, c, 0)
				for _, mode := range []WeightsMode{WeightsMap, WeightsCopy} {
					got, err := LoadFile(path, LoadOptions{Files: Files{Weights: mode}})
					if err != nil {
						t.Fatal(err)
					}
					defer got.Close()
					if g, w := got.Options().ExpertDType, want.Options().ExpertDType; g != w {
						t.Errorf("file's expert dtype %s, want %s", g, w)
					}
					b := runGolden(t, got, c, 0)
					same := func(label string, x, y []float32) {
						for i := range x {
							if math.Float32bits(x[i]) != math.Float32bits(y[i]) {
								t.Fatalf("--load %s: %s[%d]: file %v, checkpoint %v (want bit-identical)", mode, label, i, y[i], x[i])
							}
						}
					}
					same("logits", a.logits, b.logits)
					same("decode", a.decode, b.decode)
					mem := got.Memory()
					switch mode {
					case WeightsMap:
						if mem.WeightsMapped == 0 || mem.WeightsHeap >= want.Memory().WeightsHeap || got.WeightsCopied() != 0 {
							t.Errorf("file model: %v; checkpoint model: %v (want the weights mapped)", mem, want.Memory())
						}
					case WeightsCopy:
						if mapfile.Supported && got.WeightsCopied() == 0 || mem.WeightsHeap < got.WeightsCopied() {
							t.Errorf("--load copy: %v, %d bytes copied (want the packed matrices copied)", mem, got.WeightsCopied())
						}
					}
					t.Log(mode, mem)
				}
			})
		}
	}
}

// TestFileDTypeConflict: asking a file for another format is an error.
func TestFileDTypeConflict(t *testing.T) {
	path := convertTiny(t, tinyDir(t), LoadOptions{Formats: Formats{DType: kernel.Q8}})
	_, err := LoadFile(path, LoadOptions{Formats: Formats{ExpertDType: kernel.Q4}})
	if err == nil || !strings.Contains(err.Error(), "convert the checkpoint again") {
		t.Fatalf("err = %v", err)
	}
}

// wantFileError loads path and checks the error names the file and each part.
func wantFileError(t *testing.T, path string, parts ...string) {
	t.Helper()
	m, err := LoadFile(path, LoadOptions{})
	if err == nil {
		m.Close()
		t.Fatalf("LoadFile succeeded; want an error mentioning %q", parts)
	}
	for _, p := range append([]string{path}, parts...) {
		if !strings.Contains(err.Error(), p) {
			t.Errorf("error %q does not mention %q", err, p)
		}
	}
	t.Log(err)
}

// corrupt copies the converted file, applies edit to its bytes, and
// returns the new path.
func corrupt(t *testing.T, src string, edit func(b []byte) []byte) string {
	t.Helper()
	b, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(t.TempDir(), "bad.kt")
	if err := os.WriteFile(p, edit(b), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// rewriteHeader edits the header (config, table) of a file and writes a
// consistent header checksum, so that only the later checks can object.
func rewriteHeader(t *testing.T, b []byte, edit func(cfg map[string]any, tab *kfile.Table)) []byte {
	t.Helper()
	h, err := kfile.ParseHeader("x", b, int64(len(b)))
	if err != nil {
		t.Fatal(err)
	}
	var cfg map[string]any
	if err := json.Unmarshal(h.Config, &cfg); err != nil {
		t.Fatal(err)
	}
	edit(cfg, &h.Table)
	cj, _ := json.Marshal(cfg)
	tj, _ := json.Marshal(&h.Table)
	if int64(kfile.PrefixLen+len(cj)+len(tj)) > h.Table.Tensors[0].Offset {
		t.Fatal("edited header does not fit before the data")
	}
	out := bytes.Clone(b)
	binary.LittleEndian.PutUint64(out[16:], uint64(len(cj)))
	binary.LittleEndian.PutUint64(out[24:], uint64(len(tj)))
	copy(out[kfile.PrefixLen:], cj)
	copy(out[kfile.PrefixLen+len(cj):], tj)
	end := kfile.PrefixLen + len(cj) + len(tj)
	binary.LittleEndian.PutUint32(out[12:], kfile.Checksum(out[16:end]))
	return out
}

// TestFileCorrupt: each kind of damage is one clear error naming the file.
func TestFileCorrupt(t *testing.T) {
	good := convertTiny(t, tinyDir(t), LoadOptions{Formats: Formats{DType: kernel.Q8}})
	st, _ := os.Stat(good)
	t.Run("bad magic", func(t *testing.T) {
		wantFileError(t, corrupt(t, good, func(b []byte) []byte { b[0] = 'X'; return b }), "bad magic")
	})
	t.Run("version", func(t *testing.T) {
		wantFileError(t, corrupt(t, good, func(b []byte) []byte { b[8] = 9; return b }), "format version 9")
	})
	t.Run("header checksum", func(t *testing.T) {
		wantFileError(t, corrupt(t, good, func(b []byte) []byte { b[kfile.PrefixLen+3] ^= 1; return b }), "header checksum mismatch")
	})
	t.Run("truncated header", func(t *testing.T) {
		wantFileError(t, corrupt(t, good, func(b []byte) []byte { return b[:100] }), "truncated")
	})
	t.Run("truncated prefix", func(t *testing.T) {
		wantFileError(t, corrupt(t, good, func(b []byte) []byte { return b[:20] }), "truncated")
	})
	t.Run("truncated data", func(t *testing.T) {
		wantFileError(t, corrupt(t, good, func(b []byte) []byte { return b[:st.Size()-1000] }), "outside the data section", "truncated")
	})
	t.Run("tensor checksum", func(t *testing.T) {
		wantFileError(t, corrupt(t, good, func(b []byte) []byte { b[len(b)-7] ^= 0x40; return b }), "checksum mismatch", "lm_head.weight")
	})
	t.Run("table out of range", func(t *testing.T) {
		wantFileError(t, corrupt(t, good, func(b []byte) []byte {
			return rewriteHeader(t, b, func(_ map[string]any, tab *kfile.Table) { tab.Tensors[3].Offset += 1 << 40 })
		}), "outside the data section")
	})
	t.Run("table overlap", func(t *testing.T) {
		wantFileError(t, corrupt(t, good, func(b []byte) []byte {
			return rewriteHeader(t, b, func(_ map[string]any, tab *kfile.Table) { tab.Tensors[3].Offset = tab.Tensors[2].Offset })
		}), "overlaps")
	})
	t.Run("config mismatch", func(t *testing.T) {
		wantFileError(t, corrupt(t, good, func(b []byte) []byte {
			return rewriteHeader(t, b, func(cfg map[string]any, _ *kfile.Table) { cfg["vocab_size"] = 1000 })
		}), "config/tensor mismatch", "model.embed_tokens.weight")
	})
	t.Run("missing tensor", func(t *testing.T) {
		wantFileError(t, corrupt(t, good, func(b []byte) []byte {
			return rewriteHeader(t, b, func(_ map[string]any, tab *kfile.Table) { tab.Tensors[5].Name += ".renamed" })
		}), "missing from the file")
	})
	t.Run("not a file", func(t *testing.T) {
		wantFileError(t, t.TempDir(), "folder")
	})
	// the checksums can be skipped (they read the whole file): then a
	// flipped weight bit loads
	bad := corrupt(t, good, func(b []byte) []byte { b[len(b)-7] ^= 0x40; return b })
	m, err := LoadFile(bad, LoadOptions{Files: Files{NoVerify: true}})
	if err != nil {
		t.Fatalf("NoVerify: %v", err)
	}
	m.Close()
}
