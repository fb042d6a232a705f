package krun

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/ktune/ktune/cli"
	"github.com/ktune/ktune/cli/clitest"
	"github.com/ktune/ktune/internal/arch"
	"github.com/ktune/ktune/internal/half"
	"github.com/ktune/ktune/internal/testexec"
	"github.com/ktune/ktune/model"
	"github.com/ktune/ktune/model/kfile"
)

// ---- probe inputs: copies of the golden tiny model, then broken

// copyTiny copies the golden tiny checkpoint (config.json and
// model.safetensors) into dir/name and returns that folder.
func copyTiny(t testing.TB, src, dir, name string) string {
	t.Helper()
	out := filepath.Join(dir, name)
	for _, f := range []string{"config.json", "model.safetensors"} {
		b, err := os.ReadFile(filepath.Join(src, f))
		if err != nil {
			t.Fatal(err)
		}
		clitest.WriteFile(t, out, f, string(b))
	}
	return out
}

// setValue writes v into value idx of a tensor of a safetensors file (F32,
// BF16 or F16).
func setValue(t testing.TB, path, tensor string, idx int, v float32) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	n := binary.LittleEndian.Uint64(b)
	var hdr map[string]json.RawMessage
	if err := json.Unmarshal(b[8:8+n], &hdr); err != nil {
		t.Fatal(err)
	}
	var info struct {
		DType   string  `json:"dtype"`
		Offsets []int64 `json:"data_offsets"`
	}
	if err := json.Unmarshal(hdr[tensor], &info); err != nil {
		t.Fatalf("%s: %v", tensor, err)
	}
	at := 8 + int64(n) + info.Offsets[0]
	switch info.DType {
	case "F32":
		binary.LittleEndian.PutUint32(b[at+4*int64(idx):], math.Float32bits(v))
	case "BF16":
		binary.LittleEndian.PutUint16(b[at+2*int64(idx):], half.F32ToBF16(v))
	case "F16":
		binary.LittleEndian.PutUint16(b[at+2*int64(idx):], half.F32ToF16(v))
	default:
		t.Fatalf("%s: dtype %s", tensor, info.DType)
	}
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

// editJSON rewrites a config.json through edit.
func editJSON(t testing.TB, path string, edit func(m map[string]any)) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	edit(m)
	b, _ = json.MarshalIndent(m, "", "  ")
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

// convertTo writes src converted in preset to dir/name.
func convertTo(t testing.TB, src, dir, name, preset string) string {
	t.Helper()
	opt, err := presetOptions(preset)
	if err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, name)
	if err := model.ConvertFile(src, out, opt, map[string]string{"preset": preset}, nil); err != nil {
		t.Fatal(err)
	}
	return out
}

// patchKT edits a .kt file's bytes through edit (given the parsed header),
// then rewrites the tensors' checksums that changed and the header's own,
// so that only the edit is wrong.
func patchKT(t testing.TB, path string, edit func(h *kfile.Header, b []byte) []byte) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	h, err := kfile.ParseHeader(path, b, int64(len(b)))
	if err != nil {
		t.Fatal(err)
	}
	b = edit(h, b)
	c, tl := binary.LittleEndian.Uint64(b[16:]), binary.LittleEndian.Uint64(b[24:])
	end := kfile.PrefixLen + int(c) + int(tl)
	for _, ts := range h.Table.Tensors {
		got := fmt.Sprintf("%08x", kfile.Checksum(b[ts.Offset:ts.Offset+ts.Size]))
		if got != ts.CRC32C {
			old := []byte(`"crc32c":"` + ts.CRC32C + `"`)
			if bytes.Count(b[:end], old) != 1 {
				t.Fatalf("checksum %s of %s not unique in the table", ts.CRC32C, ts.Name)
			}
			copy(b[bytes.Index(b[:end], old):], `"crc32c":"`+got+`"`)
		}
	}
	binary.LittleEndian.PutUint32(b[12:], kfile.Checksum(b[16:end]))
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

// setKTValue writes an f32 value into value idx of a raw F32 tensor of a .kt.
func setKTValue(name string, idx int, v float32) func(h *kfile.Header, b []byte) []byte {
	return func(h *kfile.Header, b []byte) []byte {
		ts, _ := h.Lookup(name, kfile.LayoutRaw)
		binary.LittleEndian.PutUint32(b[ts.Offset+4*int64(idx):], math.Float32bits(v))
		return b
	}
}

// replaceInHeader replaces old by new (same length) once in the header.
func replaceInHeader(t testing.TB, old, new string) func(h *kfile.Header, b []byte) []byte {
	return func(h *kfile.Header, b []byte) []byte {
		end := h.DataStart
		i := bytes.Index(b[:end], []byte(old))
		if i < 0 || len(old) != len(new) {
			t.Fatalf("%q not in the header (or %q of another length)", old, new)
		}
		copy(b[i:], new)
		return b
	}
}

// missingModel checks that stderr is the one error for a model path name
// (in the probe's folder) that does not exist, the same from every
// command: "kfile: PATH: no such file or directory".
func missingModel(name string) func(t testing.TB, dir, stdout, stderr string) {
	return func(t testing.TB, dir, stdout, stderr string) {
		if want := "Error: kfile: " + filepath.Join(dir, name) + ": no such file or directory\n"; stderr != want {
			t.Errorf("stderr %q, want %q", stderr, want)
		}
	}
}

// TestKrunProbes runs krun against bad inputs: each must fail at once with
// its exit code and one clear line, change no input and leave no file.
func TestKrunProbes(t *testing.T) {
	tiny := tinyDir(t)
	ckpt := func(t testing.TB, dir string) { copyTiny(t, tiny, dir, "m") }
	ktBytes, err := os.ReadFile(convertTo(t, tiny, t.TempDir(), "m.kt", "q8")) // converted once, copied per probe
	if err != nil {
		t.Fatal(err)
	}
	ktCopy := func(t testing.TB, dir string) string { return clitest.WriteFile(t, dir, "m.kt", string(ktBytes)) }
	kt := func(t testing.TB, dir string) { ktCopy(t, dir) }
	ktWith := func(edit func(t testing.TB) func(h *kfile.Header, b []byte) []byte) func(t testing.TB, dir string) {
		return func(t testing.TB, dir string) { patchKT(t, ktCopy(t, dir), edit(t)) }
	}
	ckptWith := func(tensor string, idx int, v float32) func(t testing.TB, dir string) {
		return func(t testing.TB, dir string) {
			setValue(t, filepath.Join(copyTiny(t, tiny, dir, "m"), "model.safetensors"), tensor, idx, v)
		}
	}
	cfgWith := func(edit func(m map[string]any)) func(t testing.TB, dir string) {
		return func(t testing.TB, dir string) {
			editJSON(t, filepath.Join(copyTiny(t, tiny, dir, "m"), "config.json"), edit)
		}
	}
	stEdit := func(old, new string) func(t testing.TB, dir string) { // same length, once, in model.safetensors
		return func(t testing.TB, dir string) {
			p := filepath.Join(copyTiny(t, tiny, dir, "m"), "model.safetensors")
			b, _ := os.ReadFile(p)
			if i := bytes.Index(b, []byte(old)); i < 0 || len(old) != len(new) {
				t.Fatalf("%q not in %s", old, p)
			} else {
				copy(b[i:], new)
			}
			os.WriteFile(p, b, 0o644)
		}
	}
	profile := func(content string) func(t testing.TB, dir string) {
		return func(t testing.TB, dir string) {
			kt(t, dir)
			t.Setenv("KTUNE_PROFILE", clitest.WriteFile(t, dir, "profile.json", content))
		}
	}
	usesDefaults := func(t testing.TB, dir, stdout, stderr string) {
		if !strings.Contains(stderr, "krun: warning:") || !strings.Contains(stderr, "using defaults") || strings.Count(stdout, ",") != 1 {
			t.Errorf("want a warning, the defaults and 2 ids: stdout %q stderr %q", stdout, stderr)
		}
	}
	nan, inf := float32(math.NaN()), float32(math.Inf(1))
	gen := func(args ...string) []string { return append([]string{"generate", "{dir}/m.kt", "-n", "2"}, args...) }
	tinyCfg, err := peekConfig(tiny) // no constant of the golden folder in an expectation
	if err != nil {
		t.Fatal(err)
	}
	maxLen, vocab := tinyCfg.ModelMaxLength, tinyCfg.VocabSize
	long := strings.TrimSuffix(strings.Repeat("1,", maxLen+1), ",")
	fast := 10 * time.Second                                   // a hang guard; "before measuring" is ceilingRuns
	ids := func(lines string) func(t testing.TB, dir string) { // the checkpoint and a prompts file
		return func(t testing.TB, dir string) { ckpt(t, dir); clitest.WriteFile(t, dir, "p", lines) }
	}
	calib := func(args ...string) []string {
		return append([]string{"calibrate", "{dir}/m", "--prompts", "{dir}/p", "--ids", "-o", "{dir}/o.imatrix"}, args...)
	}
	conv := func(args ...string) []string {
		return append([]string{"convert", "{dir}/m", "-o", "{dir}/o.kt"}, args...)
	}
	synth := func(args ...string) []string {
		return append([]string{"convert", "--synthetic", "-o", "{dir}/o.kt"}, args...)
	}
	diskHas := func(free int64) func(t testing.TB, dir string) { // the output's filesystem has free bytes
		return func(t testing.TB, dir string) {
			old := diskFree
			diskFree = func(string) (int64, error) { return free, nil }
			t.Cleanup(func() { diskFree = old })
		}
	}
	calibrated := tinyImatrix(t, tiny)
	imWith := func(edit func(im *model.Imatrix)) func(t testing.TB, dir string) { // the checkpoint and an edited imatrix
		return func(t testing.TB, dir string) {
			ckpt(t, dir)
			im := *calibrated
			im.Entries = map[string]*model.ImatrixEntry{}
			for n, e := range calibrated.Entries {
				c := *e
				im.Entries[n] = &c
			}
			edit(&im)
			if err := model.WriteImatrix(filepath.Join(dir, "x.imatrix"), &im); err != nil {
				t.Fatal(err)
			}
		}
	}
	probes := []clitest.Probe{
		// ---- convert: the output path (rows 5, 7), checked before any work
		{Name: "convert/no-out", Setup: ckpt, Args: []string{"convert", "{dir}/m"}, Code: 2, Err: "-o OUT.kt is required"},
		{Name: "convert/onto-safetensors", Setup: ckpt, Args: []string{"convert", "{dir}/m", "-o", "{dir}/m/model.safetensors"}, Code: 2, Err: "would destroy the checkpoint"},
		{Name: "convert/onto-config", Setup: ckpt, Args: []string{"convert", "{dir}/m", "-o", "{dir}/m/config.json"}, Code: 2, Err: "is the input file"},
		{Name: "convert/onto-link-to-input", Setup: func(t testing.TB, dir string) {
			ckpt(t, dir)
			if err := os.Symlink(filepath.Join(dir, "m", "model.safetensors"), filepath.Join(dir, "link.kt")); err != nil {
				t.Skip(err)
			}
		}, Args: []string{"convert", "{dir}/m", "-o", "{dir}/link.kt"}, Code: 2, Err: "would destroy the checkpoint"},
		{Name: "convert/out-is-folder", Setup: func(t testing.TB, dir string) { ckpt(t, dir); os.Mkdir(filepath.Join(dir, "out"), 0o755) },
			Args: []string{"convert", "{dir}/m", "-o", "{dir}/out"}, Code: 2, Err: "is a folder", Timeout: fast},
		{Name: "convert/out-under-a-file", Setup: func(t testing.TB, dir string) { ckpt(t, dir); clitest.WriteFile(t, dir, "f", "x") },
			Args: []string{"convert", "{dir}/m", "-o", "{dir}/f/o.kt"}, Code: 2, Err: "not a directory"},
		{Name: "convert/out-folder-missing", Setup: ckpt, Args: []string{"convert", "{dir}/m", "-o", "{dir}/new/dirs/o.kt"}, Code: 2, Err: "new/dirs does not exist"},
		{Name: "convert/missing-folder", Args: []string{"convert", "{dir}/none", "-o", "{dir}/o.kt"}, Code: 2, Err: "no such file"},
		{Name: "convert/file-not-folder", Setup: kt, Args: []string{"convert", "{dir}/m.kt", "-o", "{dir}/o.kt"}, Code: 2, Err: "not a checkpoint folder"},
		{Name: "convert/bad-preset", Setup: ckpt, Args: []string{"convert", "{dir}/m", "-o", "{dir}/o.kt", "--preset", "q7"}, Code: 2, Err: "unknown preset"},
		{Name: "convert/bad-experts", Setup: ckpt, Args: []string{"convert", "{dir}/m", "-o", "{dir}/o.kt", "--experts", "q7"}, Code: 2, Err: "--experts"},
		// ---- convert: the checkpoint (config fields, tensors; row 8)
		{Name: "convert/no-config", Setup: func(t testing.TB, dir string) { ckpt(t, dir); os.Remove(filepath.Join(dir, "m", "config.json")) },
			Args: []string{"convert", "{dir}/m", "-o", "{dir}/o.kt"}, Code: 2, Err: "config.json"},
		{Name: "convert/config-not-json", Setup: func(t testing.TB, dir string) { ckpt(t, dir); clitest.WriteFile(t, dir, "m/config.json", "{ nope") },
			Args: []string{"convert", "{dir}/m", "-o", "{dir}/o.kt"}, Code: 2, Err: "config.json"},
		{Name: "convert/config-no-hidden-size", Setup: cfgWith(func(m map[string]any) { delete(m, "hidden_size") }),
			Args: []string{"convert", "{dir}/m", "-o", "{dir}/o.kt"}, Code: 2, Err: "hidden_size"},
		{Name: "convert/config-many-problems", Setup: func(t testing.TB, dir string) {
			ckpt(t, dir)
			clitest.WriteFile(t, dir, "m/config.json", `{"model_type": "kimi_linear", "vocab_size": 512}`)
		}, Args: []string{"convert", "{dir}/m", "-o", "{dir}/o.kt"}, Code: 2, Err: "hidden_size: missing, null or 0; must be a positive integer; "},
		{Name: "convert/config-wrong-vocab", Setup: cfgWith(func(m map[string]any) { m["vocab_size"] = 1000 }),
			Args: []string{"convert", "{dir}/m", "-o", "{dir}/o.kt"}, Code: 2, Err: "does not match"},
		{Name: "convert/config-kda-layers", Setup: cfgWith(func(m map[string]any) { m["linear_attn_config"].(map[string]any)["kda_layers"] = []int{9, 2, 3} }),
			Args: []string{"convert", "{dir}/m", "-o", "{dir}/o.kt"}, Code: 2,
			Check: func(t testing.TB, dir, stdout, stderr string) {
				if n := strings.Count(stderr, "config.json"); n != 1 || !strings.Contains(stderr, "config.json: linear_attn_config.kda_layers: [9] out of range 1..4; linear_attn_config: layers [1]") {
					t.Errorf("want config.json named once, then both problems: %s", stderr)
				}
			}},
		{Name: "convert/config-string-layers", Setup: cfgWith(func(m map[string]any) { m["num_hidden_layers"] = "four" }),
			Args: []string{"convert", "{dir}/m", "-o", "{dir}/o.kt"}, Code: 2, Err: "num_hidden_layers"},
		{Name: "convert/truncated-safetensors", Setup: func(t testing.TB, dir string) {
			p := filepath.Join(copyTiny(t, tiny, dir, "m"), "model.safetensors")
			b, _ := os.ReadFile(p)
			os.WriteFile(p, b[:len(b)/2], 0o644)
		}, Args: []string{"convert", "{dir}/m", "-o", "{dir}/o.kt"}, Code: 2, Err: "model.safetensors"},
		{Name: "convert/tensor-unknown-dtype", Setup: stEdit(`"model.norm.weight":{"dtype":"BF16"`, `"model.norm.weight":{"dtype":"I16" `),
			Args: []string{"convert", "{dir}/m", "-o", "{dir}/o.kt"}, Code: 2, Err: `tensor "model.norm.weight": unknown dtype "I16"`},
		{Name: "convert/header-not-json", Setup: func(t testing.TB, dir string) {
			p := filepath.Join(copyTiny(t, tiny, dir, "m"), "model.safetensors")
			b, _ := os.ReadFile(p)
			b[8] = 'x' // the header's opening brace
			os.WriteFile(p, b, 0o644)
		},
			Args: []string{"convert", "{dir}/m", "-o", "{dir}/o.kt"}, Code: 2, Err: "header is not valid JSON"},
		{Name: "convert/renamed-tensor", Setup: stEdit(`"model.norm.weight"`, `"model.norm.weighz"`),
			Args: []string{"convert", "{dir}/m", "-o", "{dir}/o.kt"}, Code: 2, Err: "1 missing tensors: model.norm.weight; 1 extra tensors the config does not use: model.norm.weighz"},
		{Name: "convert/missing-shard", Setup: func(t testing.TB, dir string) {
			ckpt(t, dir)
			clitest.WriteFile(t, dir, "m/model.safetensors.index.json", `{"metadata":{},"weight_map":{"model.norm.weight":"model-00002-of-00002.safetensors"}}`)
		}, Args: []string{"convert", "{dir}/m", "-o", "{dir}/o.kt"}, Code: 2, Err: `shard "model-00002-of-00002.safetensors" listed in the index is missing`},
		{Name: "convert/empty-safetensors", Setup: func(t testing.TB, dir string) { ckpt(t, dir); clitest.WriteFile(t, dir, "m/model.safetensors", "") },
			Args: []string{"convert", "{dir}/m", "-o", "{dir}/o.kt"}, Code: 2, Err: "file is 0 bytes"},
		{Name: "convert/no-safetensors", Setup: func(t testing.TB, dir string) { ckpt(t, dir); os.Remove(filepath.Join(dir, "m", "model.safetensors")) },
			Args: []string{"convert", "{dir}/m", "-o", "{dir}/o.kt"}, Code: 2, Err: "no model.safetensors.index.json, model.safetensors or other *.safetensors file"},
		{Name: "convert/nan-A_log", Setup: ckptWith("model.layers.0.self_attn.A_log", 1, nan),
			Args: []string{"convert", "{dir}/m", "-o", "{dir}/o.kt"}, Code: 2, Err: `model.safetensors: tensor "model.layers.0.self_attn.A_log": value NaN at index 1 is not finite`},
		{Name: "convert/inf-final-norm", Setup: ckptWith("model.norm.weight", 7, inf),
			Args: []string{"convert", "{dir}/m", "-o", "{dir}/o.kt"}, Code: 2, Err: `tensor "model.norm.weight": value +Inf at index 7`},
		{Name: "convert/nan-embedding", Setup: ckptWith("model.embed_tokens.weight", 300, nan),
			Args: []string{"convert", "{dir}/m", "-o", "{dir}/o.kt"}, Code: 2, Err: `tensor "model.embed_tokens.weight": value NaN at row 1, column 44`},
		{Name: "convert/nan-expert-q4", Setup: ckptWith("model.layers.1.block_sparse_moe.experts.3.w2.weight", 5, nan),
			Args: []string{"convert", "{dir}/m", "-o", "{dir}/o.kt", "--preset", "q4"}, Code: 2, Err: `experts.3.w2.weight": weight NaN at row 0, column 5 is not finite`},
		{Name: "convert/overflow-q8-scale", Setup: ckptWith("model.layers.0.mlp.down_proj.weight", 3, 1e10),
			Args: []string{"convert", "{dir}/m", "-o", "{dir}/o.kt"}, Code: 2, Err: `down_proj.weight": row 0, columns 0..31: weights too large for q8`},
		{Name: "convert/stale-temp-removed", Setup: func(t testing.TB, dir string) { ckpt(t, dir); clitest.WriteFile(t, dir, ".o.kt.tmp-12345", "partial") },
			Args: []string{"convert", "{dir}/m", "-o", "{dir}/o.kt"}, Code: 0, Err: "removed " /* row 6 */, Creates: []string{"o.kt", ".o.kt.tmp-12345"},
			Check: func(t testing.TB, dir, stdout, stderr string) {
				if _, err := os.Stat(filepath.Join(dir, ".o.kt.tmp-12345")); err == nil || !strings.Contains(stderr, "interrupted convert") {
					t.Errorf("stale temporary file kept, or no message: %q", stderr)
				}
			}},
		{Name: "convert/ok", Setup: ckpt, Args: []string{"convert", "{dir}/m", "-o", "{dir}/o.kt"}, Code: 0, Creates: []string{"o.kt"},
			Check: func(t testing.TB, dir, stdout, stderr string) {
				if stderr != "" || !strings.Contains(stdout, "wrote") {
					t.Errorf("a short conversion prints its result only: stdout %q stderr %q", stdout, stderr)
				}
			}},
		// ---- convert --synthetic: the input, the output and the disk's room, checked before writing
		{Name: "convert/synthetic-with-model", Setup: ckpt, Args: synth("{dir}/m"), Code: 2, Err: "--synthetic writes random weights; give no MODEL"},
		{Name: "convert/synthetic-layers-0", Args: synth("--layers", "0"), Code: 2, Err: "--layers 0; a synthetic model has 1 to 27 layers"},
		{Name: "convert/synthetic-layers-28", Args: synth("--layers", "28"), Code: 2, Err: "1 to 27 layers"},
		{Name: "convert/synthetic-layers-not-int", Args: synth("--layers", "x"), Code: 2, Err: "--layers"},
		{Name: "convert/synthetic-seed-negative", Args: synth("--seed", "-1"), Code: 2, Err: "--seed"},
		{Name: "convert/seed-without-synthetic", Setup: ckpt, Args: conv("--seed", "3"), Code: 2, Err: "--seed is for --synthetic"},
		{Name: "convert/layers-without-synthetic", Setup: ckpt, Args: conv("--layers", "3"), Code: 2, Err: "--layers is for --synthetic"},
		{Name: "convert/no-model", Args: []string{"convert", "-o", "{dir}/o.kt"}, Code: 2, Err: "give a checkpoint folder or GGUF file to convert, or --synthetic"},
		{Name: "convert/synthetic-search", Args: synth("--search"), Code: 2, Err: "--search is for a checkpoint's weights"},
		{Name: "convert/synthetic-imatrix", Args: synth("--imatrix", "{dir}/x.imatrix"), Code: 2, Err: "--imatrix is for a checkpoint's weights"},
		{Name: "convert/synthetic-bad-preset", Args: synth("--preset", "q7"), Code: 2, Err: "unknown preset"},
		{Name: "convert/synthetic-out-is-folder", Setup: func(t testing.TB, dir string) { os.Mkdir(filepath.Join(dir, "o.kt"), 0o755) },
			Args: synth(), Code: 2, Err: "is a folder", Timeout: fast},
		{Name: "convert/synthetic-out-under-a-file", Setup: func(t testing.TB, dir string) { clitest.WriteFile(t, dir, "f", "x") },
			Args: []string{"convert", "--synthetic", "-o", "{dir}/f/o.kt"}, Code: 2, Err: "not a directory"},
		{Name: "convert/synthetic-fit-too-small", Args: synth("--fit", "8G"), Code: 2, Err: "give at least"},
		{Name: "convert/synthetic-no-room", Setup: diskHas(1 << 30), Args: synth("--preset", "q4"), Code: 2, Timeout: fast,
			Err: "the synthetic file needs 27.2 GiB (29230"},
		{Name: "convert/synthetic-ok", Setup: func(t testing.TB, dir string) { tinySynth(t) }, Args: synth("--preset", "q3", "--layers", "2"), Code: 0, Creates: []string{"o.kt"},
			Check: func(t testing.TB, dir, stdout, stderr string) {
				if stderr != "" || !strings.Contains(stdout, "wrote") || !strings.Contains(stdout, "synthetic") {
					t.Errorf("stdout %q stderr %q", stdout, stderr)
				}
				if _, err := model.LoadFile(filepath.Join(dir, "o.kt"), model.LoadOptions{}); err != nil {
					t.Error(err)
				}
			}},
		{Name: "generate/synthetic-no-tokenizer", Setup: func(t testing.TB, dir string) {
			tinySynth(t)
			if code := Main([]string{"convert", "--synthetic", "-o", filepath.Join(dir, "s.kt")}, io.Discard, io.Discard); code != 0 {
				t.Fatalf("convert --synthetic: exit %d", code)
			}
		}, Args: []string{"generate", "{dir}/s.kt", "--prompt", "hello"}, Code: 2, Err: "is a synthetic model (krun convert --synthetic: random weights, no tokenizer); give the prompt as --ids"},
		// ---- generate: flags (row 11), prompt (row 12), the model (row 8)
		{Name: "generate/temp-negative", Setup: kt, Args: gen("--ids", "1", "--temp", "-1"), Code: 2, Err: "--temp -1 out of range"},
		{Name: "generate/top-p-above-1", Setup: kt, Args: gen("--ids", "1", "--top-p", "2"), Code: 2, Err: "--top-p 2 out of range"},
		{Name: "generate/top-p-negative", Setup: kt, Args: gen("--ids", "1", "--top-p", "-1"), Code: 2, Err: "--top-p -1 out of range"},
		{Name: "generate/repeat-penalty-0", Setup: kt, Args: gen("--ids", "1", "--repeat-penalty", "0"), Code: 2, Err: "--repeat-penalty 0 out of range"},
		{Name: "generate/min-p-2", Setup: kt, Args: gen("--ids", "1", "--min-p", "2"), Code: 2, Err: "--min-p 2 out of range"},
		{Name: "generate/top-k-negative", Setup: kt, Args: gen("--ids", "1", "--top-k", "-3"), Code: 2, Err: "--top-k -3 out of range"},
		{Name: "generate/temp-nan", Setup: kt, Args: gen("--ids", "1", "--temp", "NaN"), Code: 2, Err: "--temp NaN out of range"},
		{Name: "generate/temp-not-a-number", Setup: kt, Args: gen("--ids", "1", "--temp", "hot"), Code: 2, Err: "--temp"},
		{Name: "generate/ids-not-numbers", Setup: kt, Args: gen("--ids", "1,x"), Code: 2, Err: `"x" is not a token id`},
		{Name: "generate/ids-outside-vocab", Setup: kt, Args: gen("--ids", "1,99999"), Code: 2, Err: "outside"},
		{Name: "generate/ids-empty", Setup: kt, Args: gen("--ids", ","), Code: 2, Err: "no token ids"},
		{Name: "generate/prompt-too-long", Setup: kt, Args: gen("--ids", long), Code: 2, Err: fmt.Sprintf("the prompt is %d tokens, longer than the model's maximum length %d", maxLen+1, maxLen)},
		{Name: "generate/prompt-past-tokenizer-limit", Setup: func(t testing.TB, dir string) {
			kt(t, dir)
			clitest.WriteFile(t, dir, "tokenizer_config.json", `{"model_max_length": 3}`)
		}, Args: gen("--ids", "1,2,3,4"), Code: 2, Err: "the prompt is 4 tokens, longer than the model's maximum length 3 (model_max_length in"},
		{Name: "generate/two-prompts", Setup: kt, Args: gen("--ids", "1", "--prompt", "x"), Code: 2, Err: "exactly one of"},
		{Name: "generate/n-0", Setup: kt, Args: []string{"generate", "{dir}/m.kt", "--ids", "1", "-n", "0"}, Code: 2, Err: "-n 0"},
		{Name: "generate/threads-negative", Setup: kt, Args: gen("--ids", "1", "-t", "-2"), Code: 2, Err: "-t -2"},
		{Name: "generate/bad-cache-dtype", Setup: kt, Args: gen("--ids", "1", "--cache-dtype", "f16"), Code: 2, Err: "--cache-dtype"},
		{Name: "generate/bad-dtype", Setup: ckpt, Args: []string{"generate", "{dir}/m", "--ids", "1", "--dtype", "q7"}, Code: 2, Err: "unknown preset"},
		{Name: "generate/no-tokenizer", Setup: kt, Args: gen("--prompt", "hello"), Code: 2, Err: "--tokenizer"},
		{Name: "generate/missing-model", Args: gen("--ids", "1"), Code: 2, Check: missingModel("m.kt")},
		{Name: "generate/unknown-flag", Setup: kt, Args: gen("--ids", "1", "--bogus"), Code: 2, Err: "unknown flag: --bogus"},
		{Name: "generate/nan-norm-in-kt", Setup: ktWith(func(testing.TB) func(*kfile.Header, []byte) []byte { return setKTValue("model.norm.weight", 2, nan) }),
			Args: gen("--ids", "1"), Code: 2, Err: `m.kt: tensor "model.norm.weight": value NaN at index 2`},
		{Name: "generate/nan-norm-in-kt-no-verify", Setup: ktWith(func(testing.TB) func(*kfile.Header, []byte) []byte { return setKTValue("model.norm.weight", 2, nan) }),
			Args: gen("--ids", "1", "--no-verify"), Code: 2, Err: `tensor "model.norm.weight": value NaN at index 2`},
		{Name: "generate/nan-A_log-folder", Setup: ckptWith("model.layers.2.self_attn.A_log", 0, nan),
			Args: []string{"generate", "{dir}/m", "--ids", "1", "-n", "2"}, Code: 2, Err: `model.safetensors: tensor "model.layers.2.self_attn.A_log": value NaN`},
		{Name: "generate/kt-checksum", Setup: func(t testing.TB, dir string) {
			p := ktCopy(t, dir)
			b, _ := os.ReadFile(p)
			b[len(b)-100] ^= 0xff
			os.WriteFile(p, b, 0o644)
		}, Args: gen("--ids", "1"), Code: 2, Err: "checksum mismatch"},
		{Name: "generate/kt-truncated", Setup: func(t testing.TB, dir string) {
			p := ktCopy(t, dir)
			b, _ := os.ReadFile(p)
			os.WriteFile(p, b[:len(b)/3], 0o644)
		}, Args: gen("--ids", "1"), Code: 2, Err: "truncated"},
		{Name: "generate/not-a-kt", Setup: ckpt, Args: []string{"generate", "{dir}/m/model.safetensors", "--ids", "1"}, Code: 2, Err: "looks like a safetensors file"},
		// ---- a bad tuning profile: a warning, the defaults, a normal run
		{Name: "generate/profile-corrupt-json", Setup: profile(`{"schema": 99`), Args: gen("--ids", "1,2"), Code: 0, Err: "not a ktune profile (corrupt JSON?)", Check: usesDefaults},
		{Name: "generate/profile-no-fingerprint", Setup: profile(`{"schema": 1, "entries": [{"op": "gemm.gemv", "variant": "avx1024"}]}`), Args: gen("--ids", "1,2"), Code: 0, Err: "no schema or fingerprint", Check: usesDefaults},
		{Name: "generate/profile-missing", Setup: func(t testing.TB, dir string) { kt(t, dir); t.Setenv("KTUNE_PROFILE", filepath.Join(dir, "none.json")) },
			Args: gen("--ids", "1,2"), Code: 0, Err: "no such file", Check: usesDefaults},
		{Name: "generate/profile-flag-missing", Setup: kt, Args: gen("--ids", "1,2", "--profile", "{dir}/absent.json"), Code: 0, Err: "absent.json: no such file", Check: usesDefaults},
		// ---- info --verify: the checks of loading (row 9)
		{Name: "info/verify-missing-tensor", Setup: ktWith(func(t testing.TB) func(*kfile.Header, []byte) []byte {
			return replaceInHeader(t, `"model.norm.weight"`, `"model.norm.weighx"`)
		}), Args: []string{"info", "{dir}/m.kt", "--verify"}, Code: 2, Err: `tensor "model.norm.weight": missing from the file`},
		{Name: "info/verify-meta-dtype", Setup: ktWith(func(t testing.TB) func(*kfile.Header, []byte) []byte {
			return replaceInHeader(t, `"dtype.experts":"q8"`, `"dtype.experts":"q4"`)
		}), Args: []string{"info", "{dir}/m.kt", "--verify"}, Code: 2, Err: "stored as q8, but the header's formats say q4"},
		// ---- info without --verify: the header, the tensor table and the small raw tensors
		{Name: "info/missing-tensor", Setup: ktWith(func(t testing.TB) func(*kfile.Header, []byte) []byte {
			return replaceInHeader(t, `"model.norm.weight"`, `"model.norm.weighx"`)
		}), Args: []string{"info", "{dir}/m.kt"}, Code: 2, Err: `tensor "model.norm.weight": missing from the file`},
		{Name: "info/meta-dtype", Setup: ktWith(func(t testing.TB) func(*kfile.Header, []byte) []byte {
			return replaceInHeader(t, `"dtype.experts":"q8"`, `"dtype.experts":"q4"`)
		}), Args: []string{"info", "{dir}/m.kt"}, Code: 2, Err: "stored as q8, but the header's formats say q4"},
		{Name: "info/meta-dtype-unknown", Setup: ktWith(func(t testing.TB) func(*kfile.Header, []byte) []byte {
			return replaceInHeader(t, `"dtype.experts":"q8"`, `"dtype.experts":"zz"`)
		}), Args: []string{"info", "{dir}/m.kt"}, Code: 2, Err: `m.kt: the header's meta entry "dtype.experts" is "zz", not a weight format (f32, bf16,`},
		{Name: "info/meta-dtype-empty", Setup: ktWith(func(t testing.TB) func(*kfile.Header, []byte) []byte {
			return replaceInHeader(t, `"dtype.experts":"q8"`, `"dtype.experts":""  `)
		}), Args: []string{"info", "{dir}/m.kt"}, Code: 2, Err: `the header's meta entry "dtype.experts" is "", not a weight format`},
		{Name: "info/meta-not-a-string", Setup: ktWith(func(t testing.TB) func(*kfile.Header, []byte) []byte {
			return replaceInHeader(t, `"dtype":"q8"`, `"dtype":5   `)
		}), Args: []string{"info", "{dir}/m.kt"}, Code: 2, Err: `m.kt: corrupt tensor table: meta entry "dtype" is 5; every meta value must be a JSON string`},
		{Name: "info/config-kda-layers", Setup: ktWith(func(t testing.TB) func(*kfile.Header, []byte) []byte {
			return replaceInHeader(t, "\"kda_layers\": [\n      1,", "\"kda_layers\": [\n      9,")
		}), Args: []string{"info", "{dir}/m.kt"}, Code: 2,
			Err: "m.kt (stored config.json): linear_attn_config.kda_layers: [9] out of range 1..4; linear_attn_config: layers [1] (1-based) are in neither",
			Check: func(t testing.TB, dir, stdout, stderr string) {
				if n := strings.Count(stderr, "(stored config.json)"); n != 1 {
					t.Errorf("the stored config named %d times: %s", n, stderr)
				}
			}},
		{Name: "info/nan-raw", Setup: ktWith(func(testing.TB) func(*kfile.Header, []byte) []byte {
			return setKTValue("model.layers.3.self_attn.kv_a_layernorm.weight", 0, inf)
		}), Args: []string{"info", "{dir}/m.kt"}, Code: 2, Err: `kv_a_layernorm.weight": value +Inf at index 0`},
		{Name: "info/verify-nan", Setup: ktWith(func(testing.TB) func(*kfile.Header, []byte) []byte {
			return setKTValue("model.layers.3.self_attn.kv_a_layernorm.weight", 0, inf)
		}), Args: []string{"info", "{dir}/m.kt", "--verify"}, Code: 2, Err: `kv_a_layernorm.weight": value +Inf at index 0`},
		{Name: "info/verify-ok", Setup: kt, Args: []string{"info", "{dir}/m.kt", "--verify"}, Code: 0,
			Check: func(t testing.TB, dir, stdout, stderr string) {
				if !strings.Contains(stdout, "verified") {
					t.Errorf("no verification line: %s", stdout)
				}
			}},
		{Name: "info/verify-trailing-bytes", Setup: func(t testing.TB, dir string) { clitest.WriteFile(t, dir, "m.kt", string(ktBytes)+"xxxxxxx") },
			Args: []string{"info", "{dir}/m.kt", "--verify"}, Code: 2, Err: "m.kt: 7 extra bytes after the last tensor"},
		{Name: "generate/kt-trailing-bytes", Setup: func(t testing.TB, dir string) { clitest.WriteFile(t, dir, "m.kt", string(ktBytes)+"\x00") },
			Args: gen("--ids", "1"), Code: 2, Err: "m.kt: 1 extra bytes after the last tensor"},
		{Name: "info/missing-model", Args: []string{"info", "{dir}/none.kt"}, Code: 2, Check: missingModel("none.kt")},
		{Name: "info/folder", Setup: ckpt, Args: []string{"info", "{dir}/m"}, Code: 2, Err: "is a folder"},
		{Name: "info/bad-format", Setup: kt, Args: []string{"info", "{dir}/m.kt", "-o", "xml"}, Code: 2, Err: `-o "xml"`},
		{Name: "info/threads-0", Setup: kt, Args: []string{"info", "{dir}/m.kt", "--verify", "--threads", "0"}, Code: 2, Err: "--threads 0"},
		{Name: "info/bad-magic", Setup: func(t testing.TB, dir string) { clitest.WriteFile(t, dir, "m.kt", strings.Repeat("x", 100)) },
			Args: []string{"info", "{dir}/m.kt"}, Code: 2, Err: "not a ktune model file"},
		// ---- bench: arguments and the model before measuring (rows 13, 14)
		{Name: "bench/layers-0", Args: []string{"bench", "--synthetic", "--layers", "0"}, Code: 2, Err: "--layers 0", Timeout: fast},
		{Name: "bench/layers-28", Args: []string{"bench", "--synthetic", "--layers", "28"}, Code: 2, Err: "1 to 27 layers", Timeout: fast},
		{Name: "bench/corrupt-kt", Setup: func(t testing.TB, dir string) {
			p := ktCopy(t, dir)
			b, _ := os.ReadFile(p)
			b[len(b)-100] ^= 0xff
			os.WriteFile(p, b, 0o644)
		}, Args: []string{"bench", "{dir}/m.kt", "-t", "1"}, Code: 2, Err: "checksum mismatch", Timeout: fast},
		{Name: "bench/meta-mismatch-kt", Setup: ktWith(func(t testing.TB) func(*kfile.Header, []byte) []byte {
			return replaceInHeader(t, `"dtype.head":"q8"`, `"dtype.head":"q4"`)
		}), Args: []string{"bench", "{dir}/m.kt", "-t", "1"}, Code: 2, Err: "lm_head.weight", Timeout: fast},
		{Name: "bench/nan-folder", Setup: ckptWith("model.norm.weight", 0, nan), Args: []string{"bench", "{dir}/m", "-t", "1", "--dtype", "f32"}, Code: 2, Err: "model.norm.weight", Timeout: fast},
		{Name: "bench/bad-config-folder", Setup: cfgWith(func(m map[string]any) { m["num_experts_per_token"] = 99 }),
			Args: []string{"bench", "{dir}/m", "-t", "1"}, Code: 2, Err: "num_experts_per_token", Timeout: fast},
		{Name: "bench/synthetic-too-big", Setup: func(t testing.TB, dir string) {
			old := availableMemory
			availableMemory = func() int64 { return 16 << 30 }
			t.Cleanup(func() { availableMemory = old })
		}, Args: []string{"bench", "--synthetic", "--layers", "27", "--dtype", "q4"}, Code: 2, Timeout: fast,
			Err: "preset q4 [routed experts q4; attention, dense MLP, shared expert, lm_head q8]",
			Check: func(t testing.TB, dir, stdout, stderr string) {
				if !strings.Contains(stderr, "presets that fit: q2 (15.6 GiB); in q4, --layers 16 or fewer fit") || strings.Contains(stderr, "(q8, q4)") {
					t.Errorf("refusal does not name what fits: %s", stderr)
				}
			}},
		{Name: "bench/synthetic-no-preset-fits", Setup: func(t testing.TB, dir string) {
			old := availableMemory
			availableMemory = func() int64 { return 12 << 30 }
			t.Cleanup(func() { availableMemory = old })
		}, Args: []string{"bench", "--synthetic", "--layers", "27", "--dtype", "q4"}, Code: 2, Timeout: fast, Err: "no preset fits; in q4, --layers"},
		{Name: "bench/synthetic-other-preset-fits", Setup: func(t testing.TB, dir string) {
			old := availableMemory
			availableMemory = func() int64 { return 20 << 30 }
			t.Cleanup(func() { availableMemory = old })
		}, Args: []string{"bench", "--synthetic", "--layers", "20", "--dtype", "q8"}, Code: 2, Timeout: fast, Err: "presets that fit: q4 ("},
		{Name: "bench/model-and-synthetic", Setup: kt, Args: []string{"bench", "{dir}/m.kt", "--synthetic"}, Code: 2, Err: "not both"},
		{Name: "bench/synthetic-load", Args: []string{"bench", "--synthetic", "--load", "copy"}, Code: 2, Timeout: fast,
			Err: "bench: --load is for a model file; --synthetic builds random weights in memory and loads no file"},
		{Name: "bench/synthetic-load-auto", Args: []string{"bench", "--synthetic", "--load=auto"}, Code: 2, Err: "--load is for a model file", Timeout: fast},
		{Name: "bench/synthetic-no-verify", Args: []string{"bench", "--synthetic", "--no-verify"}, Code: 2, Err: "--no-verify is for a model file", Timeout: fast},
		{Name: "bench/synthetic-gguf-repack", Args: []string{"bench", "--synthetic", "--gguf-repack", "exact"}, Code: 2, Err: "--gguf-repack is for a model file", Timeout: fast},
		{Name: "bench/bad-format", Args: []string{"bench", "--synthetic", "-o", "xml"}, Code: 2, Err: `-o "xml"`},
		{Name: "bench/reps-0", Args: []string{"bench", "--synthetic", "-r", "0"}, Code: 2, Err: "-r 0"},
		{Name: "bench/bad-prompt-list", Args: []string{"bench", "--synthetic", "-p", "64,x"}, Code: 2, Err: `"x" is not a count`, Timeout: fast},
		{Name: "bench/empty-prompt-list", Args: []string{"bench", "--synthetic", "-p", ""}, Code: 2, Err: `give at least one count`, Timeout: fast},
		{Name: "bench/bad-threads", Args: []string{"bench", "--synthetic", "-t", "0"}, Code: 2, Err: "bad thread count", Timeout: fast},
		{Name: "bench/bad-dtype", Args: []string{"bench", "--synthetic", "--dtype", "q4,q9"}, Code: 2, Err: "unknown preset", Timeout: fast},
		{Name: "bench/missing-model", Args: []string{"bench", "{dir}/none.kt"}, Code: 2, Timeout: fast, Check: missingModel("none.kt")},
		{Name: "bench/cpuprofile-unwritable", Setup: func(t testing.TB, dir string) { clitest.WriteFile(t, dir, "f", "x") },
			Args: []string{"bench", "--synthetic", "--cpuprofile", "{dir}/f/p.pprof"}, Code: 2, Err: "not writable", Timeout: fast},
		// ---- calibrate: flags, the prompts file, the output, before loading
		{Name: "calibrate/no-prompts", Setup: ckpt, Args: []string{"calibrate", "{dir}/m", "-o", "{dir}/o.imatrix"}, Code: 2, Err: "--prompts FILE is required"},
		{Name: "calibrate/no-out", Setup: ckpt, Args: []string{"calibrate", "{dir}/m", "--prompts", "{dir}/p"}, Code: 2, Err: "-o OUT is required"},
		{Name: "calibrate/ctx-0", Setup: ids("1,2"), Args: calib("--ctx", "0"), Code: 2, Err: "--ctx 0"},
		{Name: "calibrate/bad-dtype", Setup: ids("1,2"), Args: calib("--dtype", "q7"), Code: 2, Err: "unknown preset"},
		{Name: "calibrate/threads-negative", Setup: ids("1,2"), Args: calib("-t", "-2"), Code: 2, Err: "-t -2"},
		{Name: "calibrate/prompts-missing", Setup: ckpt, Args: calib(), Code: 2, Err: "no such file"},
		{Name: "calibrate/prompts-folder", Setup: func(t testing.TB, dir string) { ckpt(t, dir); os.Mkdir(filepath.Join(dir, "p"), 0o755) },
			Args: calib(), Code: 2, Err: "is a folder; give a file of prompts"},
		{Name: "calibrate/prompts-empty", Setup: ids("\n  \n"), Args: calib(), Code: 2, Err: "holds no prompts"},
		{Name: "calibrate/prompts-bad-id", Setup: ids("1,2\n3,x\n"), Args: calib(), Code: 2, Err: `p line 2: "x" is not a token id`},
		{Name: "calibrate/prompts-outside-vocab", Setup: ids(fmt.Sprintf("1,2\n3,%d\n", vocab)), Args: calib(), Code: 2, Err: fmt.Sprintf("prompt 2, token 1 is id %d, outside", vocab)},
		{Name: "calibrate/no-tokenizer", Setup: ids("hello world"), Args: []string{"calibrate", "{dir}/m", "--prompts", "{dir}/p", "-o", "{dir}/o.imatrix"}, Code: 2, Err: "--tokenizer DIR, or token ids with --ids"},
		{Name: "calibrate/out-is-folder", Setup: func(t testing.TB, dir string) { ids("1,2")(t, dir); os.Mkdir(filepath.Join(dir, "o.imatrix"), 0o755) },
			Args: calib(), Code: 2, Err: "is a folder"},
		{Name: "calibrate/out-is-prompts", Setup: ids("1,2"), Args: []string{"calibrate", "{dir}/m", "--prompts", "{dir}/p", "--ids", "-o", "{dir}/p"}, Code: 2, Err: "is the input"},
		{Name: "calibrate/out-folder-missing", Setup: ids("1,2"), Args: []string{"calibrate", "{dir}/m", "--prompts", "{dir}/p", "--ids", "-o", "{dir}/none/o.imatrix"}, Code: 2, Err: "does not exist"},
		{Name: "calibrate/missing-model", Setup: func(t testing.TB, dir string) { clitest.WriteFile(t, dir, "p", "1,2") },
			Args: calib(), Code: 2, Check: missingModel("m")},
		{Name: "calibrate/ok", Setup: ids("1,2,3,4,5,6\n\n7,8,9\n"), Args: calib("--ctx", "4", "-t", "1"), Code: 0, Creates: []string{"o.imatrix"},
			Check: func(t testing.TB, dir, stdout, stderr string) {
				for _, w := range []string{"on 2 prompts, 7 tokens (1 cut to --ctx 4)", "covered ", "experts never routed", "wrote "} {
					if !strings.Contains(stdout, w) {
						t.Errorf("stdout %q lacks %q", stdout, w)
					}
				}
				if _, err := model.ReadImatrix(filepath.Join(dir, "o.imatrix")); err != nil {
					t.Error(err)
				}
			}},
		// ---- convert --imatrix: the file, its model, what it weighs
		{Name: "convert/imatrix-missing", Setup: ckpt, Args: conv("--imatrix", "{dir}/none.imatrix"), Code: 2, Err: "none.imatrix: no such file"},
		{Name: "convert/imatrix-not-one", Setup: func(t testing.TB, dir string) { ckpt(t, dir); clitest.WriteFile(t, dir, "x.imatrix", "hello") },
			Args: conv("--imatrix", "{dir}/x.imatrix"), Code: 2, Err: "x.imatrix: not a readable imatrix file"},
		{Name: "convert/imatrix-a-model", Setup: ckpt, Args: conv("--imatrix", "{dir}/m/model.safetensors"), Code: 2, Err: "a safetensors file but not an imatrix"},
		{Name: "convert/imatrix-other-model", Setup: imWith(func(im *model.Imatrix) {
			im.Digest, im.Config = "0123456789abcdef", "hidden_size=2304, num_hidden_layers=27"
		}),
			Args: conv("--imatrix", "{dir}/x.imatrix"), Code: 2, Err: "x.imatrix was gathered on another model (x.imatrix: hidden_size=2304, num_hidden_layers=27; "},
		{Name: "convert/imatrix-shape", Setup: imWith(func(im *model.Imatrix) { im.Entries["lm_head.weight"].Sum = make([]float64, 7) }),
			Args: conv("--imatrix", "{dir}/x.imatrix"), Code: 2, Err: `x.imatrix: tensor "lm_head.weight" has 7 input channels; in `},
		{Name: "convert/imatrix-f32", Setup: imWith(func(*model.Imatrix) {}), Args: conv("--imatrix", "{dir}/x.imatrix", "--preset", "f32"), Code: 2, Err: "preset f32 quantizes no matrix to q8, q6, q5, q4 or q3"},
		{Name: "convert/imatrix-partial", Setup: imWith(func(im *model.Imatrix) { delete(im.Entries, "model.layers.3.self_attn.o_proj.weight") }),
			Args: conv("--imatrix", "{dir}/x.imatrix", "--preset", "q4"), Code: 0, Creates: []string{"o.kt"},
			Check: func(t testing.TB, dir, stdout, stderr string) {
				if !strings.Contains(stdout, "absent from it get the unweighted search (model.layers.3.self_attn.o_proj.weight, ") {
					t.Errorf("no fallback line: %q", stdout)
				}
			}},
		// ---- the command line
		{Name: "root/unknown-command", Args: []string{"frobnicate"}, Code: 2, Err: "unknown command"},
		{Name: "root/bad-max-isa", Args: []string{"info", "x.kt", "--max-isa", "avx9000"}, Code: 2, Err: "avx9000"},
		{Name: "root/info-two-args", Args: []string{"info", "a", "b"}, Code: 2, Err: "accepts 1 arg"},
	}
	if runtime.GOOS == "windows" {
		probes = probes[:0:0] // symlinks, signals and paths differ; the probes are written for Unix
	}
	// no probe may get as far as measuring (bench's read ceiling), and a
	// slow conversion (-race, an emulator) stays quiet
	oldQuiet := quietFor
	quietFor = time.Hour
	defer func() { quietFor = oldQuiet }()
	measured := ceilingRuns.Load()
	for i := range probes {
		if probes[i].Args[0] != "bench" {
			continue
		}
		check := probes[i].Check
		probes[i].Check = func(t testing.TB, dir, stdout, stderr string) {
			if n := ceilingRuns.Load(); n != measured {
				t.Errorf("the read ceiling was measured (%d runs) before the refusal", n-measured)
				measured = n
			}
			if check != nil {
				check(t, dir, stdout, stderr)
			}
		}
	}
	clitest.Run(t, Main, probes)
}

// TestExitCodesDocumented: every krun command's help states the exit codes.
func TestExitCodesDocumented(t *testing.T) {
	clitest.ExitCodesDocumented(t, NewCmdRoot(&cli.Factory{}))
}

// TestConvertSignal: SIGTERM (and SIGINT) during convert removes the
// temporary file, leaves no output and exits 128+signal; after SIGKILL the
// next convert removes it (row 6). The conversion runs in a child process
// that pauses after its first tensor. convert --synthetic (at the tiny
// model's widths) does the same.
func TestConvertSignal(t *testing.T) {
	input := func(dir string) []string { return []string{filepath.Join(dir, "m")} }
	if tiny := os.Getenv("KRUN_CONVERT_SYNTH"); tiny != "" {
		cfg, err := arch.Load(tiny)
		if err != nil {
			t.Fatal(err)
		}
		synthConfig = func(int) (*arch.Config, error) { return cfg, nil }
		input = func(string) []string { return []string{"--synthetic"} }
	}
	if dir := os.Getenv("KRUN_CONVERT_CHILD"); dir != "" {
		convertHook = func(done, total int) {
			if done == 1 {
				fmt.Println("ready")
				time.Sleep(time.Minute)
			}
		}
		os.Exit(Main(append([]string{"convert", "-o", filepath.Join(dir, "o.kt")}, input(dir)...), os.Stdout, os.Stderr))
	}
	if runtime.GOOS == "windows" {
		t.Skip("no SIGTERM")
	}
	tiny := tinyDir(t)
	for _, c := range []struct {
		name  string
		synth bool
		sig   syscall.Signal
	}{{"", false, syscall.SIGTERM}, {"", false, syscall.SIGINT}, {"", false, syscall.SIGKILL}, {"synthetic/", true, syscall.SIGTERM}, {"synthetic/", true, syscall.SIGKILL}} {
		sig := c.sig
		t.Run(c.name+sig.String(), func(t *testing.T) {
			dir := t.TempDir()
			copyTiny(t, tiny, dir, "m")
			before := clitest.Snapshot(t, dir)
			cmd := testexec.Self("-test.run=^TestConvertSignal$")
			cmd.Env = append(os.Environ(), "KRUN_CONVERT_CHILD="+dir, "KTUNE_PROFILE=off")
			args := []string{"convert", filepath.Join(dir, "m"), "-o", filepath.Join(dir, "o.kt")}
			if c.synth {
				cmd.Env = append(cmd.Env, "KRUN_CONVERT_SYNTH="+tiny)
				args = []string{"convert", "--synthetic", "-o", filepath.Join(dir, "o.kt")}
				tinySynth(t)
			}
			var stderr bytes.Buffer
			cmd.Stderr = &stderr
			stdout, _ := cmd.StdoutPipe()
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			defer cmd.Process.Kill()
			r := bufio.NewReader(stdout)
			for said := ""; ; { // convert --synthetic says what it writes first
				line, err := r.ReadString('\n')
				if said += line; line == "ready\n" {
					break
				} else if err != nil {
					t.Fatalf("child said %q; stderr %s", said, stderr.String())
				}
			}
			// the temporary file exists now
			if ents, _ := filepath.Glob(filepath.Join(dir, ".o.kt.tmp-*")); len(ents) != 1 {
				t.Fatalf("temporary files %v, want one while converting", ents)
			}
			cmd.Process.Signal(sig)
			io.Copy(io.Discard, r)
			err := cmd.Wait()
			if sig == syscall.SIGKILL {
				// nothing runs on SIGKILL: the next convert of the same
				// output removes the temporary file, and says so
				var out, errb bytes.Buffer
				code := Main(args, &out, &errb)
				if code != 0 || !strings.Contains(errb.String(), "a temporary file left by an interrupted convert") {
					t.Errorf("convert after SIGKILL: exit %d, stderr %q", code, errb.String())
				}
				d := clitest.Diff(before, clitest.Snapshot(t, dir))
				if len(d) != 1 || d[0].Path != "o.kt" {
					t.Errorf("after the next convert: %v, want o.kt created only", d)
				}
				return
			}
			if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 128+int(sig) {
				t.Errorf("exit %v, want status %d", err, 128+int(sig))
			}
			if !strings.Contains(stderr.String(), "convert interrupted") {
				t.Errorf("stderr %q", stderr.String())
			}
			if d := clitest.Diff(before, clitest.Snapshot(t, dir)); len(d) != 0 {
				t.Errorf("left behind: %v", d)
			}
		})
	}
}

// TestMaxLength: the prompt limit is the smaller of config.json's and the
// tokenizer's model_max_length; HF's "no limit" (1e30) and absent values
// are ignored.
func TestMaxLength(t *testing.T) {
	dir := t.TempDir()
	cfg, err := peekConfig(tinyDir(t))
	if err != nil {
		t.Fatal(err)
	}
	L := cfg.ModelMaxLength // the golden config's (no constant of the golden folder here)
	for _, c := range []struct {
		tok  string // tokenizer_config.json ("": none)
		want int
	}{
		{"", L},
		{fmt.Sprintf(`{"model_max_length": %d}`, L/2), L / 2},
		{`{"model_max_length": 1000000000000000019884624838656}`, L},
		{fmt.Sprintf(`{"model_max_length": %d}`, 2*L), L},
		{`{"bos_token": "x"}`, L},
	} {
		os.Remove(filepath.Join(dir, "tokenizer_config.json"))
		if c.tok != "" {
			clitest.WriteFile(t, dir, "tokenizer_config.json", c.tok)
		}
		if got, from := maxLength(cfg, dir); got != c.want || !strings.Contains(from, "model_max_length") {
			t.Errorf("%s: %d (%s), want %d", c.tok, got, from, c.want)
		}
	}
}

// tinyImatrix calibrates the tiny model on two short prompts.
func tinyImatrix(t testing.TB, dir string) *model.Imatrix {
	t.Helper()
	m, err := model.Load(dir, model.LoadOptions{Runtime: model.Runtime{Threads: 1}})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	im, err := m.Calibrate([][]int32{{1, 2, 3, 4, 5, 6, 7, 8}, {9, 10, 11}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	im.Model = "m"
	return im
}
