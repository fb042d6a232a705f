// Package golden gives tests access to the Kimi Linear golden data: reference
// inputs and outputs stored as safetensors files whose "__metadata__" has
// "format" = "kimi-linear-golden/..." and a "kind".
//
// The golden folder is $KTUNE_GOLDEN when set, else ../shared/golden next to
// the folder holding the module's go.mod. Files are found by their metadata
// kind, never by name, so any folder in the same format works.
package golden

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/ktune/ktune/internal/safetensors"
)

// The kinds of golden file (metadata "kind").
const (
	KDARecurrent = "kda_recurrent"
	KDAChunk     = "kda_chunk"
	KDALayer     = "kda_layer"
	MLA          = "mla"
	MoE          = "moe"
	TinyModel    = "tiny_model"
)

// Kinds lists every kind of golden file.
var Kinds = []string{KDARecurrent, KDAChunk, KDALayer, MLA, MoE, TinyModel}

// EnvVar is the environment variable that overrides the golden folder.
const EnvVar = "KTUNE_GOLDEN"

// FormatPrefix starts the "format" metadata of every golden file.
const FormatPrefix = "kimi-linear-golden/"

// modulePath is the module whose go.mod anchors the default golden folder.
const modulePath = "github.com/ktune/ktune"

// Dir returns the golden folder: $KTUNE_GOLDEN if set, else ../shared/golden
// relative to the folder of the go.mod of module github.com/ktune/ktune,
// found by walking up from the working directory. It fails if the folder does
// not exist, naming the path it tried.
func Dir() (string, error) {
	if env := os.Getenv(EnvVar); env != "" {
		dir, err := filepath.Abs(env)
		if err != nil {
			return "", fmt.Errorf("golden: %s=%q: %v", EnvVar, env, err)
		}
		if err := checkDir(dir); err != nil {
			return "", fmt.Errorf("golden: folder %s (from %s) %v", dir, EnvVar, err)
		}
		return dir, nil
	}
	wd, err := os.Getwd()
	if err != nil {
		return "", fmt.Errorf("golden: cannot get the working directory (%v); set %s to the golden folder", err, EnvVar)
	}
	root, ok := moduleRoot(wd)
	if !ok {
		return "", fmt.Errorf("golden: no go.mod of module %s in %s or above it; set %s to the golden folder", modulePath, wd, EnvVar)
	}
	dir := filepath.Join(filepath.Dir(root), "shared", "golden")
	if err := checkDir(dir); err != nil {
		return "", fmt.Errorf("golden: folder %s %v; set %s to the golden folder", dir, err, EnvVar)
	}
	return dir, nil
}

func checkDir(dir string) error {
	st, err := os.Stat(dir)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return errors.New("does not exist")
	case err != nil:
		return fmt.Errorf("cannot be read: %v", err)
	case !st.IsDir():
		return errors.New("is not a folder")
	}
	return nil
}

// moduleRoot walks up from dir to the first folder whose go.mod declares
// modulePath.
func moduleRoot(dir string) (string, bool) {
	for {
		if goModule(filepath.Join(dir, "go.mod")) == modulePath {
			return dir, true
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", false
		}
		dir = parent
	}
}

// goModule returns the module path declared in the go.mod file at path, or "".
func goModule(path string) string {
	f, err := os.Open(path)
	if err != nil {
		return ""
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		if i := strings.Index(line, "//"); i >= 0 {
			line = line[:i]
		}
		rest, ok := strings.CutPrefix(strings.TrimSpace(line), "module")
		if !ok || (rest != "" && rest[0] != ' ' && rest[0] != '\t' && rest[0] != '"') {
			continue
		}
		rest = strings.TrimSpace(rest)
		if s, err := strconv.Unquote(rest); err == nil {
			return s
		}
		return rest
	}
	return ""
}

// File is an open golden file.
type File struct {
	*safetensors.File
	// Kind and Case are the "kind" and "case" metadata ("case" may be empty).
	Kind, Case string
	// Shape is the "shape" metadata (sizes such as B, T, H), or nil.
	Shape map[string]int
	// Config is the "config" metadata (the relevant HF config values), or nil.
	Config json.RawMessage
}

// Dir returns the folder holding the file. The tiny model's checkpoint lives
// there, beside its golden file.
func (f *File) Dir() string { return filepath.Dir(f.Path) }

// Name returns the case name, or the file's base name without its extension
// when the file has no "case" metadata.
func (f *File) Name() string {
	if f.Case != "" {
		return f.Case
	}
	return strings.TrimSuffix(filepath.Base(f.Path), ".safetensors")
}

// MetaFloat returns the metadata value for key parsed as a float64.
func (f *File) MetaFloat(key string) (float64, bool) {
	s, ok := f.Metadata()[key]
	if !ok {
		return 0, false
	}
	v, err := strconv.ParseFloat(strings.TrimSpace(s), 64)
	return v, err == nil
}

// Find opens every *.safetensors file under Dir(), recursively, and returns
// the golden files of the given kind sorted by path. The caller must close
// them. Files that are not golden files, or of another kind, are closed; a
// file that cannot be opened or has malformed golden metadata is an error.
func Find(kind string) ([]*File, error) {
	dir, err := Dir()
	if err != nil {
		return nil, err
	}
	var found []*File
	closeAll := func() {
		for _, f := range found {
			f.Close()
		}
	}
	err = filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() || !strings.HasSuffix(d.Name(), ".safetensors") {
			return nil
		}
		sf, err := safetensors.Open(path)
		if err != nil {
			return err
		}
		md := sf.Metadata()
		if !strings.HasPrefix(md["format"], FormatPrefix) || md["kind"] != kind {
			sf.Close()
			return nil
		}
		f, err := newFile(sf)
		if err != nil {
			sf.Close()
			return err
		}
		found = append(found, f)
		return nil
	})
	if err != nil {
		closeAll()
		return nil, fmt.Errorf("golden: %w", err)
	}
	slices.SortFunc(found, func(a, b *File) int { return strings.Compare(a.Path, b.Path) })
	return found, nil
}

func newFile(sf *safetensors.File) (*File, error) {
	md := sf.Metadata()
	f := &File{File: sf, Kind: md["kind"], Case: md["case"]}
	if s, ok := md["shape"]; ok {
		if err := json.Unmarshal([]byte(s), &f.Shape); err != nil {
			return nil, fmt.Errorf("%s: metadata \"shape\" is not a JSON object of integers: %v", sf.Path, err)
		}
	}
	if s, ok := md["config"]; ok {
		if !json.Valid([]byte(s)) {
			return nil, fmt.Errorf("%s: metadata \"config\" is not valid JSON", sf.Path)
		}
		f.Config = json.RawMessage(s)
	}
	return f, nil
}

// Load returns the golden files of the given kind, closed automatically when
// the test ends. It fails the test if the golden folder is missing or holds
// no file of that kind: missing golden data is a failure, never a skip.
func Load(t testing.TB, kind string) []*File {
	t.Helper()
	files, err := Find(kind)
	if err != nil {
		t.Fatalf("%v", err)
		return nil
	}
	t.Cleanup(func() {
		for _, f := range files {
			f.Close()
		}
	})
	if len(files) == 0 {
		dir, _ := Dir()
		t.Fatalf("golden: no golden files of kind %q in %s (set %s to another golden folder)", kind, dir, EnvVar)
		return nil
	}
	return files
}

// F32 returns the float tensor called name as []float32, failing the test if
// it is missing or not a float tensor.
func (f *File) F32(t testing.TB, name string) []float32 {
	t.Helper()
	v, err := f.Float32(name)
	if err != nil {
		t.Fatalf("golden %s: %v", f.Name(), err)
	}
	return v
}

// I64 returns the integer tensor called name as []int64, failing the test if
// it is missing or not an integer tensor.
func (f *File) I64(t testing.TB, name string) []int64 {
	t.Helper()
	v, err := f.Int64(name)
	if err != nil {
		t.Fatalf("golden %s: %v", f.Name(), err)
	}
	return v
}

// Dims returns the shape of the tensor called name, failing the test if it
// is missing.
func (f *File) Dims(t testing.TB, name string) []int {
	t.Helper()
	info, ok := f.Info(name)
	if !ok {
		t.Fatalf("golden %s: %s: no tensor %q", f.Name(), f.Path, name)
		return nil
	}
	dims := make([]int, len(info.Shape))
	for i, d := range info.Shape {
		dims[i] = int(d)
	}
	return dims
}

// MaxAbsDiff returns the largest |got[i]-want[i]| and its index (-1 for empty
// slices). It returns an error, with the offending index, when the lengths
// differ or when got or want holds a NaN or an infinity.
func MaxAbsDiff(got, want []float32) (maxDiff float64, at int, err error) {
	if len(got) != len(want) {
		return math.Inf(1), -1, fmt.Errorf("length mismatch: got %d values, want %d", len(got), len(want))
	}
	at = -1
	for i := range got {
		g, w := float64(got[i]), float64(want[i])
		if math.IsNaN(g) || math.IsInf(g, 0) {
			return math.NaN(), i, fmt.Errorf("got[%d] = %v (want %v)", i, g, w)
		}
		if math.IsNaN(w) || math.IsInf(w, 0) {
			return math.NaN(), i, fmt.Errorf("want[%d] = %v is not finite", i, w)
		}
		if d := math.Abs(g - w); d > maxDiff || at < 0 {
			maxDiff, at = d, i
		}
	}
	return maxDiff, at, nil
}

// Check compares got with want: it logs "label: max|diff| = X at i (tol Y)"
// and reports an error if the difference exceeds tol, or if the slices differ
// in length or got holds a NaN or an infinity.
func Check(t testing.TB, label string, got, want []float32, tol float64) bool {
	t.Helper()
	d, at, err := MaxAbsDiff(got, want)
	if err != nil {
		t.Errorf("%s: %v", label, err)
		return false
	}
	t.Logf("%s: max|diff| = %.3g at %d (tol %.3g)", label, d, at, tol)
	if d > tol || math.IsNaN(d) {
		t.Errorf("%s: max|diff| = %.3g at %d exceeds tol %.3g (got %v, want %v)", label, d, at, tol, got[at], want[at])
		return false
	}
	return true
}
