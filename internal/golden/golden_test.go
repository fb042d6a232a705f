package golden

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"

	"github.com/ktune/ktune/internal/safetensors"
)

func TestFindEveryKind(t *testing.T) {
	dir, err := Dir()
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("golden folder: %s", dir)
	for _, kind := range Kinds {
		files := Load(t, kind)
		for _, f := range files {
			if f.Kind != kind || !strings.HasPrefix(f.Metadata()["format"], FormatPrefix) {
				t.Errorf("%s: kind %q format %q", f.Path, f.Kind, f.Metadata()["format"])
			}
			t.Logf("%s: %s (%s), shape %v", kind, f.Name(), filepath.Base(f.Path), f.Shape)
		}
		for i := 1; i < len(files); i++ {
			if files[i-1].Path >= files[i].Path {
				t.Errorf("%s: files not sorted by path", kind)
			}
		}
	}
}

func TestDefaultGoldenContents(t *testing.T) {
	for _, f := range Load(t, KDARecurrent) {
		if f.Case == "" || f.Shape["K"] == 0 {
			t.Errorf("%s: case %q shape %v", f.Path, f.Case, f.Shape)
		}
		scale := f.F32(t, "scale")
		if len(scale) != 1 || math.Abs(float64(scale[0])-1/math.Sqrt(float64(f.Shape["K"]))) > 1e-6 {
			t.Errorf("%s: scale %v for K=%d", f.Name(), scale, f.Shape["K"])
		}
		if v, ok := f.MetaFloat("scale"); !ok || math.Abs(v-float64(scale[0])) > 1e-6 {
			t.Errorf("%s: MetaFloat(scale) = %v, %v", f.Name(), v, ok)
		}
		if _, ok := f.MetaFloat("no such key"); ok {
			t.Error("MetaFloat of a missing key succeeded")
		}
		dims := f.Dims(t, "o")
		want := []int{f.Shape["B"], f.Shape["T"], f.Shape["H"], f.Shape["V"]}
		if fmt.Sprint(dims) != fmt.Sprint(want) {
			t.Errorf("%s: o has shape %v, want %v", f.Name(), dims, want)
		}
	}
	for _, f := range Load(t, MoE) {
		if len(f.Config) == 0 || len(f.I64(t, "topk_ids")) == 0 {
			t.Errorf("%s: no config or topk_ids", f.Name())
		}
	}
	for _, f := range Load(t, TinyModel) {
		if f.Name() == "" {
			t.Errorf("%s: empty Name()", f.Path)
		}
		c, err := safetensors.OpenCheckpoint(f.Dir())
		if err != nil {
			t.Fatal(err)
		}
		c.Close()
		if _, err := os.Stat(filepath.Join(f.Dir(), "config.json")); err != nil {
			t.Errorf("no config.json beside %s: %v", f.Path, err)
		}
	}
}

// writeGolden writes a synthetic golden file.
func writeGolden(t *testing.T, path, kind, name string, extra map[string]string) {
	t.Helper()
	meta := map[string]string{"format": FormatPrefix + "1", "kind": kind}
	for k, v := range extra {
		meta[k] = v
	}
	err := safetensors.Write(path, meta, []safetensors.WriteTensor{
		{Name: name, DType: safetensors.F32, Shape: []int64{2, 2}, Data: safetensors.F32Bytes([]float32{1, 2, 3, 4})},
		{Name: "ids", DType: safetensors.I64, Shape: []int64{3}, Data: safetensors.I64Bytes([]int64{7, 8, 9})},
	})
	if err != nil {
		t.Fatal(err)
	}
}

func TestEnvOverride(t *testing.T) {
	dir := t.TempDir()
	t.Setenv(EnvVar, dir)
	if got, err := Dir(); err != nil || got != dir {
		t.Fatalf("Dir() = %q, %v; want %q", got, err, dir)
	}

	// An empty folder: no files of any kind (Load would fail the test).
	for _, kind := range Kinds {
		files, err := Find(kind)
		if err != nil || len(files) != 0 {
			t.Fatalf("Find(%q) in an empty folder = %d files, %v", kind, len(files), err)
		}
	}
	if ok, msg := runTB(func(tb testing.TB) { Load(tb, MLA) }); ok || !strings.Contains(msg, `no golden files of kind "mla"`) || !strings.Contains(msg, dir) {
		t.Errorf("Load on an empty folder: ok=%v, %q", ok, msg)
	}

	// Other names, a nested folder, a non-golden file and a sharded tiny checkpoint.
	writeGolden(t, filepath.Join(dir, "zz_attention_case.safetensors"), MLA, "y", map[string]string{"case": "custom", "shape": `{"B": 3, "T": 5}`, "config": `{"hidden_size": 8}`, "tol": "2.5e-4"})
	sub := filepath.Join(dir, "nested", "tiny")
	if err := os.MkdirAll(sub, 0o755); err != nil {
		t.Fatal(err)
	}
	writeGolden(t, filepath.Join(sub, "reference.safetensors"), TinyModel, "logits", nil)
	writeGolden(t, filepath.Join(dir, "aa_other.safetensors"), MLA, "y", map[string]string{"format": "something-else/1"})
	w := func(name, tensor string) {
		err := safetensors.Write(filepath.Join(sub, name), map[string]string{"format": "pt"}, []safetensors.WriteTensor{
			{Name: tensor, DType: safetensors.BF16, Shape: []int64{2}, Data: safetensors.BF16Bytes([]float32{1, 2})},
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	w("model-00001-of-00002.safetensors", "model.embed_tokens.weight")
	w("model-00002-of-00002.safetensors", "lm_head.weight")
	index := `{"weight_map": {"model.embed_tokens.weight": "model-00001-of-00002.safetensors", "lm_head.weight": "model-00002-of-00002.safetensors"}}`
	if err := os.WriteFile(filepath.Join(sub, safetensors.IndexFile), []byte(index), 0o644); err != nil {
		t.Fatal(err)
	}

	mla := Load(t, MLA)
	if len(mla) != 1 {
		t.Fatalf("Load(MLA) = %d files, want 1", len(mla))
	}
	f := mla[0]
	if f.Name() != "custom" || f.Shape["B"] != 3 || f.Shape["T"] != 5 || string(f.Config) != `{"hidden_size": 8}` {
		t.Errorf("file %+v", f)
	}
	if v, ok := f.MetaFloat("tol"); !ok || v != 2.5e-4 {
		t.Errorf("MetaFloat(tol) = %v, %v", v, ok)
	}
	if got := f.F32(t, "y"); fmt.Sprint(got) != "[1 2 3 4]" {
		t.Errorf("F32(y) = %v", got)
	}
	if got := f.I64(t, "ids"); fmt.Sprint(got) != "[7 8 9]" {
		t.Errorf("I64(ids) = %v", got)
	}
	if got := f.Dims(t, "y"); fmt.Sprint(got) != "[2 2]" {
		t.Errorf("Dims(y) = %v", got)
	}

	tiny := Load(t, TinyModel)
	if len(tiny) != 1 || tiny[0].Dir() != sub || tiny[0].Name() != "reference" || tiny[0].Shape != nil || tiny[0].Config != nil {
		t.Fatalf("Load(TinyModel) = %+v", tiny)
	}
	c, err := safetensors.OpenCheckpoint(tiny[0].Dir())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if v, err := c.Float32("lm_head.weight"); err != nil || fmt.Sprint(v) != "[1 2]" {
		t.Errorf("lm_head.weight = %v, %v", v, err)
	}

	// Accessor failures fail the test and name the file and tensor.
	if ok, msg := runTB(func(tb testing.TB) { f.F32(tb, "missing") }); ok || !strings.Contains(msg, f.Path) || !strings.Contains(msg, `"missing"`) {
		t.Errorf("F32 of a missing tensor: ok=%v, %q", ok, msg)
	}
	if ok, msg := runTB(func(tb testing.TB) { f.I64(tb, "y") }); ok || !strings.Contains(msg, "not an integer type") {
		t.Errorf("I64 of a float tensor: ok=%v, %q", ok, msg)
	}
	if ok, _ := runTB(func(tb testing.TB) { f.Dims(tb, "missing") }); ok {
		t.Error("Dims of a missing tensor succeeded")
	}
}

func TestMalformedGoldenMetadata(t *testing.T) {
	dir := t.TempDir()
	t.Setenv(EnvVar, dir)
	writeGolden(t, filepath.Join(dir, "bad.safetensors"), MoE, "y", map[string]string{"shape": `{"N": "seven"}`})
	if _, err := Find(MoE); err == nil || !strings.Contains(err.Error(), "bad.safetensors") {
		t.Errorf("Find with malformed shape metadata: %v", err)
	}
	if err := os.WriteFile(filepath.Join(dir, "bad.safetensors"), []byte("junk"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := Find(MoE); err == nil || !strings.Contains(err.Error(), "bad.safetensors") {
		t.Errorf("Find with a corrupt file: %v", err)
	}
}

func TestDirMissing(t *testing.T) {
	missing := filepath.Join(t.TempDir(), "nope")
	t.Setenv(EnvVar, missing)
	_, err := Dir()
	if err == nil || !strings.Contains(err.Error(), missing) || !strings.Contains(err.Error(), EnvVar) {
		t.Errorf("Dir() with a missing %s folder: %v", EnvVar, err)
	}
	if _, err := Find(MLA); err == nil {
		t.Error("Find succeeded without a golden folder")
	}
	if ok, msg := runTB(func(tb testing.TB) { Load(tb, MLA) }); ok || !strings.Contains(msg, missing) {
		t.Errorf("Load without a golden folder: ok=%v, %q", ok, msg)
	}
}

func TestDirFromModuleRoot(t *testing.T) {
	// A clone anywhere, with shared/golden beside it, and a nested module
	// with another path that must be skipped.
	root := t.TempDir()
	clone := filepath.Join(root, "someclone")
	golden := filepath.Join(root, "shared", "golden")
	nested := filepath.Join(clone, "internal", "x", "testdata")
	for _, d := range []string{golden, nested} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	write := func(path, content string) {
		if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write(filepath.Join(clone, "go.mod"), "// comment\nmodule \"github.com/ktune/ktune\" // the module\n\ngo 1.26\n")
	write(filepath.Join(clone, "internal", "x", "go.mod"), "module example.com/other\n")
	t.Setenv(EnvVar, "")
	t.Chdir(nested)
	got, err := Dir()
	if err != nil {
		t.Fatal(err)
	}
	if !sameDir(t, got, golden) {
		t.Errorf("Dir() = %q, want %q", got, golden)
	}

	// Without the golden folder the error names the path tried.
	if err := os.Remove(golden); err != nil {
		t.Fatal(err)
	}
	_, err = Dir()
	if err == nil || !strings.Contains(err.Error(), filepath.Join("shared", "golden")) || !strings.Contains(err.Error(), EnvVar) {
		t.Errorf("Dir() without the golden folder: %v", err)
	}

	// Outside any clone of the module.
	t.Chdir(root)
	if _, err := Dir(); err == nil || !strings.Contains(err.Error(), "github.com/ktune/ktune") {
		t.Errorf("Dir() outside the module: %v", err)
	}
}

func sameDir(t *testing.T, a, b string) bool {
	t.Helper()
	sa, err1 := os.Stat(a)
	sb, err2 := os.Stat(b)
	return err1 == nil && err2 == nil && os.SameFile(sa, sb)
}

func TestGoModule(t *testing.T) {
	dir := t.TempDir()
	for content, want := range map[string]string{
		"module github.com/ktune/ktune\n":            "github.com/ktune/ktune",
		"module\tgithub.com/ktune/ktune // x\n":      "github.com/ktune/ktune",
		"module \"github.com/ktune/ktune\"\n":        "github.com/ktune/ktune",
		"// module github.com/ktune/ktune\nmodule a": "a",
		"modulex github.com/ktune/ktune\n":           "",
		"go 1.26\n":                                  "",
	} {
		path := filepath.Join(dir, "go.mod")
		if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		if got := goModule(path); got != want {
			t.Errorf("goModule(%q) = %q, want %q", content, got, want)
		}
	}
	if got := goModule(filepath.Join(dir, "missing")); got != "" {
		t.Errorf("goModule(missing) = %q", got)
	}
}

func TestMaxAbsDiff(t *testing.T) {
	nan, inf := float32(math.NaN()), float32(math.Inf(1))
	d, at, err := MaxAbsDiff([]float32{1, 2, 3.5}, []float32{1, 2.25, 3})
	if err != nil || d != 0.5 || at != 2 {
		t.Errorf("MaxAbsDiff = %v, %d, %v; want 0.5, 2, nil", d, at, err)
	}
	if d, at, err := MaxAbsDiff(nil, nil); err != nil || d != 0 || at != -1 {
		t.Errorf("MaxAbsDiff(empty) = %v, %d, %v", d, at, err)
	}
	for _, tc := range []struct {
		name      string
		got, want []float32
		at        int
	}{
		{"NaN in got", []float32{1, nan}, []float32{1, 1}, 1},
		{"Inf in got", []float32{inf, 1}, []float32{1, 1}, 0},
		{"-Inf in got", []float32{1, 1, -inf}, []float32{1, 1, 1}, 2},
		{"NaN in want", []float32{1, 1}, []float32{1, nan}, 1},
		{"length mismatch", []float32{1, 2}, []float32{1}, -1},
	} {
		if _, at, err := MaxAbsDiff(tc.got, tc.want); err == nil || at != tc.at {
			t.Errorf("%s: at %d, err %v; want an error at %d", tc.name, at, err, tc.at)
		}
	}
}

func TestCheck(t *testing.T) {
	nan := float32(math.NaN())
	for _, tc := range []struct {
		name      string
		got, want []float32
		tol       float64
		pass      bool
		msg       string
	}{
		{"within tol", []float32{1, 2}, []float32{1, 2.00001}, 1e-4, true, "lbl: max|diff| = "},
		{"over tol", []float32{1, 2}, []float32{1, 2.1}, 1e-4, false, "exceeds tol"},
		{"NaN", []float32{nan, 2}, []float32{1, 2}, 1e9, false, "got[0] = NaN"},
		{"length", []float32{1}, []float32{1, 2}, 1, false, "length mismatch"},
	} {
		ft := &fakeTB{}
		ok := Check(ft, "lbl", tc.got, tc.want, tc.tol)
		if ok != tc.pass || ft.failed != !tc.pass || !strings.Contains(ft.log.String(), tc.msg) {
			t.Errorf("%s: Check = %v, failed = %v, log %q", tc.name, ok, ft.failed, ft.log.String())
		}
	}
}

// fakeTB records failures. Fatalf ends the calling goroutine, as testing does.
type fakeTB struct {
	testing.TB
	mu       sync.Mutex
	failed   bool
	log      strings.Builder
	cleanups []func()
}

func (f *fakeTB) Helper() {}
func (f *fakeTB) Logf(format string, args ...any) {
	f.mu.Lock()
	defer f.mu.Unlock()
	fmt.Fprintf(&f.log, format+"\n", args...)
}
func (f *fakeTB) Errorf(format string, args ...any) {
	f.Logf(format, args...)
	f.mu.Lock()
	f.failed = true
	f.mu.Unlock()
}
func (f *fakeTB) Fatalf(format string, args ...any) {
	f.Errorf(format, args...)
	runtime.Goexit()
}
func (f *fakeTB) Cleanup(fn func()) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.cleanups = append(f.cleanups, fn)
}

// runTB runs fn with a fake testing.TB in its own goroutine and reports
// whether it passed, and what it logged.
func runTB(fn func(testing.TB)) (ok bool, log string) {
	ft := &fakeTB{}
	done := make(chan struct{})
	go func() {
		defer close(done)
		fn(ft)
	}()
	<-done
	for _, c := range ft.cleanups {
		c()
	}
	return !ft.failed, ft.log.String()
}
