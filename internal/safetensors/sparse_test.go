package safetensors

import (
	"encoding/binary"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"testing"

	"github.com/ktune/ktune/internal/mapfile"
)

// TestOffsetsBeyond4GiB places a tensor 5 GiB into a sparse file, so that its
// offsets do not fit in 32 bits.
func TestOffsetsBeyond4GiB(t *testing.T) {
	if strconv.IntSize < 64 {
		t.Skip("needs a 64-bit platform")
	}
	if !mapfile.Supported {
		t.Skip("this platform reads files into memory instead of mapping them")
	}
	const far int64 = 5<<30 + 24 // data offset of the far tensor
	small := F32Bytes([]float32{1, 2, 3})
	big := F32Bytes([]float32{4, 5, 6, 7})
	hdr := `{"__metadata__":{"k":"v"},` +
		`"small":{"dtype":"F32","shape":[3],"data_offsets":[0,12]},` +
		`"far":{"dtype":"F32","shape":[2,2],"data_offsets":[` + strconv.FormatInt(far, 10) + `,` + strconv.FormatInt(far+16, 10) + `]}}`
	for len(hdr)%8 != 0 {
		hdr += " "
	}
	dataStart := int64(8 + len(hdr))
	size := dataStart + far + 16

	path := filepath.Join(t.TempDir(), "sparse.safetensors")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	var lenBuf [8]byte
	binary.LittleEndian.PutUint64(lenBuf[:], uint64(len(hdr)))
	_, err = f.Write(append(append(lenBuf[:], hdr...), small...))
	if err == nil {
		err = f.Close()
	}
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(path, size); err != nil {
		t.Skipf("the filesystem refuses a %d-byte sparse file: %v", size, err)
	}
	f, err = os.OpenFile(path, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteAt(big, dataStart+far); err != nil {
		f.Close()
		t.Skipf("cannot write at offset %d: %v", dataStart+far, err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}

	sf, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer sf.Close()
	info, ok := sf.Info("far")
	if !ok || info.Begin != dataStart+far || info.End != size || info.Begin <= 1<<32 {
		t.Fatalf("Info(far) = %+v, %v", info, ok)
	}
	if v, err := sf.Float32("far"); err != nil || !slices.Equal(v, []float32{4, 5, 6, 7}) {
		t.Errorf("Float32(far) = %v, %v", v, err)
	}
	if v, err := sf.Float32("small"); err != nil || !slices.Equal(v, []float32{1, 2, 3}) {
		t.Errorf("Float32(small) = %v, %v", v, err)
	}

	// One byte short and the far tensor no longer fits.
	sf.Close()
	if err := os.Truncate(path, size-1); err != nil {
		t.Fatal(err)
	}
	_, err = Open(path)
	wantError(t, err, path, `tensor "far"`, "exceed the data section")
}
