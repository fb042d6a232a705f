package mapfile

import (
	"os"
	"path/filepath"
	"testing"
)

func TestMap(t *testing.T) {
	path := filepath.Join(t.TempDir(), "f")
	want := []byte("model bytes")
	if err := os.WriteFile(path, want, 0o644); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	data, release, err := Map(f, int64(len(want)))
	f.Close() // the mapping outlives the descriptor
	if err != nil {
		t.Fatal(err)
	}
	if string(data) != string(want) {
		t.Fatalf("mapped %q, want %q", data, want)
	}
	if Supported != (release != nil) {
		t.Errorf("Supported=%v but release set=%v", Supported, release != nil)
	}
	if release != nil {
		if err := release(data); err != nil {
			t.Fatal(err)
		}
	}
	if data, _, err := Map(f, 0); err != nil || len(data) != 0 {
		t.Errorf("empty: %q %v", data, err)
	}
}
