package mapfile

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unsafe"
)

// mappingRss is the resident kB of the mapping starting at b's first byte
// (/proc/self/smaps).
func mappingRss(t *testing.T, b []byte) int {
	t.Helper()
	f, err := os.Open("/proc/self/smaps")
	if err != nil {
		t.Skip(err)
	}
	defer f.Close()
	start := fmt.Sprintf("%x-", uintptr(unsafe.Pointer(unsafe.SliceData(b))))
	sc := bufio.NewScanner(f)
	found := false
	for sc.Scan() {
		line := sc.Text()
		switch {
		case strings.HasPrefix(line, start):
			found = true
		case found && strings.HasPrefix(line, "Rss:"):
			var kb int
			fmt.Sscanf(strings.TrimPrefix(line, "Rss:"), "%d", &kb)
			return kb
		}
	}
	t.Fatalf("no mapping at %s in /proc/self/smaps", start)
	return 0
}

// TestDrop: Drop takes a mapped file's whole pages inside the slice out of
// the resident set (the partial pages at its ends stay), and the bytes
// read back unchanged afterwards. A Drop that does nothing, or one that
// rounds outward, fails.
func TestDrop(t *testing.T) {
	page := os.Getpagesize()
	size := 64 * page
	want := make([]byte, size)
	for i := range want {
		want[i] = byte(i * 7)
	}
	path := filepath.Join(t.TempDir(), "w")
	if err := os.WriteFile(path, want, 0o644); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	data, release, err := Map(f, int64(size))
	if err != nil {
		t.Fatal(err)
	}
	defer release(data)
	sum := 0
	for i := 0; i < size; i += page {
		sum += int(data[i])
	}
	if sum != len(data)/page*int(want[0]) {
		t.Fatalf("page sum %d", sum) // (and the reads stay)
	}
	if kb := mappingRss(t, data); kb*1024 < size {
		t.Fatalf("after reading every page: %d kB resident, want %d", kb, size/1024)
	}
	Drop(data[100 : size-100])
	if kb := mappingRss(t, data); kb*1024 != 2*page {
		t.Errorf("after Drop: %d kB resident, want the 2 partial pages (%d kB)", kb, 2*page/1024)
	}
	if string(data) != string(want) {
		t.Error("the bytes changed after Drop")
	}
	Drop(nil)
	Drop(data[10:20]) // inside one page: nothing whole to drop
}
