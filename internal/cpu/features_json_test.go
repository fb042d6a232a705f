package cpu

import (
	"encoding/json"
	"testing"
)

// TestSetJSON: a Set is written as its feature names and read back the
// same; an unknown name is refused.
func TestSetJSON(t *testing.T) {
	s := NewSet(AVX2, AVX512F, AVX512VNNI)
	b, err := json.Marshal(s)
	if err != nil {
		t.Fatal(err)
	}
	if got := string(b); got != `["avx2","avx512_vnni","avx512f"]` {
		t.Errorf("marshalled %s", got)
	}
	var back Set
	if err := json.Unmarshal(b, &back); err != nil || back != s {
		t.Errorf("read back %v (%v), want %v", back, err, s)
	}
	if err := json.Unmarshal([]byte(`["avx2","warp_drive"]`), &back); err == nil {
		t.Error("an unknown feature name was read")
	}
	if b, _ := json.Marshal(Set(0)); string(b) != "[]" {
		t.Errorf("the empty set marshalled as %s", b)
	}
}
