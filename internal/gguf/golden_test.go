package gguf

import (
	"bufio"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/ktune/ktune/internal/golden"
)

// goldenGGUFs returns every *.gguf file under the golden folder.
func goldenGGUFs(t testing.TB) (dir string, paths []string) {
	t.Helper()
	dir, err := golden.Dir()
	if err != nil {
		t.Fatal(err)
	}
	err = filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() && strings.HasSuffix(path, ".gguf") {
			paths = append(paths, path)
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(paths) == 0 {
		t.Fatalf("no *.gguf files under %s", dir)
	}
	return dir, paths
}

// readmeTypeCounts reads the "| file | tensor types |" table of the README.md
// beside a GGUF folder's files: file name -> type name -> count. Missing
// README or table: an empty map.
func readmeTypeCounts(t *testing.T, dir string) map[string]map[string]int {
	out := map[string]map[string]int{}
	f, err := os.Open(filepath.Join(dir, "README.md"))
	if err != nil {
		return out
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		cells := strings.Split(sc.Text(), "|")
		if len(cells) != 4 || !strings.HasSuffix(strings.TrimSpace(cells[1]), ".gguf") {
			continue
		}
		counts := map[string]int{}
		for _, item := range strings.Split(cells[2], ",") {
			n, typ, ok := strings.Cut(strings.TrimSpace(item), " ")
			// the type is the first word: a remark may follow it
			// ("11 mxfp4 (the routed experts)")
			typ, _, _ = strings.Cut(strings.TrimSpace(typ), " ")
			c, err := strconv.Atoi(n)
			if !ok || err != nil {
				t.Logf("%s/README.md: cannot read %q; row not compared", dir, item)
				counts = nil
				break
			}
			counts[typ] = c
		}
		if counts != nil {
			out[strings.TrimSpace(cells[1])] = counts
		}
	}
	return out
}

// TestGoldenFiles opens every *.gguf file of the golden folder, checks the
// invariants every file must meet, and compares the per-type tensor counts
// with the README table of its folder for the files it lists.
func TestGoldenFiles(t *testing.T) {
	dir, paths := goldenGGUFs(t)
	compared := 0
	for _, path := range paths {
		rel, _ := filepath.Rel(dir, path)
		t.Run(rel, func(t *testing.T) {
			f, err := Open(path)
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			checkFile(t, f)
			if a, err := f.Metadata.String("general.architecture"); err != nil || a != "kimi-linear" {
				t.Errorf("general.architecture = %q, %v; want kimi-linear", a, err)
			}
			counts := map[string]int{}
			for _, ti := range f.Tensors {
				counts[ti.Type.String()]++
			}
			want, ok := readmeTypeCounts(t, filepath.Dir(path))[filepath.Base(path)]
			if !ok {
				t.Logf("%d tensors %v (not listed in a README table)", len(f.Tensors), counts)
				return
			}
			compared++
			if !maps.Equal(counts, want) {
				t.Errorf("tensor types %v; README lists %v", counts, want)
			}
		})
	}
	t.Logf("%d files, %d compared with a README table", len(paths), compared)
}

// checkFile checks what every valid File must satisfy: the data of each
// tensor lies in its part, has the size its type and dims give, is aligned,
// and no two tensors overlap.
func checkFile(t *testing.T, f *File) {
	t.Helper()
	if f.Version != 3 {
		t.Errorf("version %d", f.Version)
	}
	type span struct{ part, lo, hi uint64 }
	var spans []span
	for _, ti := range f.Tensors {
		size, err := ti.Type.ByteSize(ti.Dims)
		if err != nil || size != ti.Size {
			t.Errorf("%s: size %d, ByteSize %d, %v", ti.Name, ti.Size, size, err)
		}
		b, err := f.TensorData(ti.Name)
		if err != nil {
			t.Fatal(err)
		}
		if uint64(len(b)) != ti.Size {
			t.Errorf("%s: %d bytes of data, want %d", ti.Name, len(b), ti.Size)
		}
		p := f.parts[ti.Part]
		if ti.FileOffset+ti.Size > uint64(len(p.data)) || ti.FileOffset%p.alignment != 0 || ti.Offset%p.alignment != 0 {
			t.Errorf("%s: [%d, +%d) in a %d-byte file, alignment %d", ti.Name, ti.FileOffset, ti.Size, len(p.data), p.alignment)
		}
		if got, ok := f.Tensor(ti.Name); !ok || got.Name != ti.Name {
			t.Errorf("Tensor(%q) = %v, %v", ti.Name, got, ok)
		}
		if ti.Size > 0 {
			spans = append(spans, span{uint64(ti.Part), ti.FileOffset, ti.FileOffset + ti.Size})
		}
	}
	slices.SortFunc(spans, func(a, b span) int {
		if a.part != b.part {
			return int(a.part) - int(b.part)
		}
		return int(a.lo) - int(b.lo)
	})
	for i := 1; i < len(spans); i++ {
		if spans[i].part == spans[i-1].part && spans[i].lo < spans[i-1].hi {
			t.Errorf("overlap: %v %v", spans[i-1], spans[i])
		}
	}
}

// TestGoldenF32Listing logs the F32 file's metadata and tensors (run with -v):
// a map for the sessions that build the kimi-linear mapping on this package.
func TestGoldenF32Listing(t *testing.T) {
	_, paths := goldenGGUFs(t)
	for _, path := range paths {
		if !strings.HasSuffix(path, "-F32.gguf") {
			continue
		}
		f, err := Open(path)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		t.Logf("%s: version %d, alignment %d, %d metadata keys, %d tensors", path, f.Version, f.Alignment, f.Metadata.Len(), len(f.Tensors))
		for _, k := range f.Metadata.Keys() {
			v, _ := f.Metadata.Get(k)
			t.Logf("  %-45s %-7s %s", k, v.Type, v)
		}
		for _, ti := range f.Tensors {
			t.Logf("  %-40s %-5s %v", ti.Name, ti.Type, ti.Dims)
		}
		if _, err := f.Metadata.Uint("general.architecture"); err == nil || !strings.Contains(err.Error(), "is a string") {
			t.Errorf("Uint on a string key: %v", err)
		}
		if _, err := f.Metadata.String("no.such.key"); err == nil || !strings.Contains(err.Error(), "no such metadata key") {
			t.Errorf("String on a missing key: %v", err)
		}
		return
	}
	t.Skip("no *-F32.gguf file in the golden folder")
}
