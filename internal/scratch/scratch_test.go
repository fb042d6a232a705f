package scratch

import "testing"

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
