package scratch

import (
	"runtime"
	"testing"
)

func TestGetPut(t *testing.T) {
	for _, n := range []int{1, 2, 3, 1000, 1024, 1025} {
		b := Get(n)
		if len(b) != n || cap(b) < n || cap(b)&(cap(b)-1) != 0 {
			t.Fatalf("Get(%d): len %d cap %d", n, len(b), cap(b))
		}
		for i := range b {
			b[i] = 7
		}
		Put(b)
		z := Zeroed(n)
		for i, v := range z {
			if v != 0 {
				t.Fatalf("Zeroed(%d)[%d] = %v", n, i, v)
			}
		}
		Put(z)
	}
	if Get(0) != nil {
		t.Fatal("Get(0) not nil")
	}
	Put(nil, make([]float32, 3)) // ignored
}

func TestNoAllocSteadyState(t *testing.T) {
	Put(Get(5000))
	if a := testing.AllocsPerRun(100, func() { Put(Get(5000)) }); a > 0 {
		t.Fatalf("%v allocations per Get/Put", a)
	}
}

// TestKeptAcrossGC: a buffer given back is lent again after garbage
// collections (a sync.Pool drops its items within two): warm memory, not
// fresh pages that fault on first touch.
func TestKeptAcrossGC(t *testing.T) {
	b := Get(100000)
	Put(b)
	runtime.GC()
	runtime.GC()
	runtime.GC()
	c := Get(100000)
	defer Put(c)
	if &c[0] != &b[0] {
		t.Fatal("Get after garbage collections made a new buffer instead of lending the kept one")
	}
	var k Keep[*int]
	p := new(int)
	k.Put(p)
	runtime.GC()
	runtime.GC()
	if q, ok := k.Get(); !ok || q != p {
		t.Fatal("Keep lost its item across garbage collections")
	}
	if _, ok := k.Get(); ok {
		t.Fatal("Keep lent an item twice")
	}
	if q := k.GetOr(func() *int { return p }); q != p {
		t.Fatal("GetOr on an empty Keep did not make a new item")
	}
	for range keepPerClass + 5 {
		k.Put(new(int))
	}
	if len(k.items) != keepPerClass {
		t.Fatalf("Keep holds %d items; at most %d", len(k.items), keepPerClass)
	}
}
