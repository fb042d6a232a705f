package all_test

import (
	"runtime"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/ktune/ktune/internal/kernel"
)

// expectedVariants lists, per architecture, every variant this build must
// register (by op): a variant that stops being registered — a build tag, a
// renamed file, an init that no longer runs — fails here, where otherwise
// nothing would select it and nothing would notice. -tags purego and other
// architectures register the portable variants only. A new variant is
// added here in the same change.
var expectedVariants = map[string]map[string][]string{
	"portable": {
		"gemm.gateup":  {"generic", "gguf_generic", "generic_int8", "gguf_generic_int8", "reference"},
		"gemm.gemm":    {"generic", "gguf_generic", "generic_int8", "gguf_generic_int8", "reference"},
		"gemm.gemv":    {"generic", "gguf_generic", "generic_int8", "gguf_generic_int8", "reference"},
		"kda.decode":   {"generic", "reference"},
		"kda.prefill":  {"generic_chunk", "generic", "reference"},
		"mla.decode":   {"generic", "reference"},
		"mla.prefill":  {"gemm", "generic", "absorbed", "reference"},
		"moe.block":    {"generic", "gguf_generic", "generic_int8", "gguf_generic_int8", "reference"},
		"norm.rmsnorm": {"generic", "reference"},
	},
	"amd64": {
		"gemm.gateup":  {"amx_int8", "avx512_vnni", "gguf_avx512_vnni", "avx_vnni", "avx512", "gguf_avx512", "avx512_bf16", "avx2_int8", "gguf_avx2", "avx2", "generic", "gguf_generic", "generic_int8", "gguf_generic_int8", "reference"},
		"gemm.gemm":    {"amx_int8", "avx512_vnni", "gguf_avx512_vnni", "avx_vnni", "avx512", "gguf_avx512", "avx512_bf16", "avx2_int8", "gguf_avx2", "avx2", "generic", "gguf_generic", "generic_int8", "gguf_generic_int8", "reference"},
		"gemm.gemv":    {"amx_int8", "avx512_vnni", "gguf_avx512_vnni", "avx_vnni", "avx512", "gguf_avx512", "avx512_bf16", "avx2_int8", "gguf_avx2", "avx2", "generic", "gguf_generic", "generic_int8", "gguf_generic_int8", "reference"},
		"kda.decode":   {"avx512", "avx2", "generic", "reference"},
		"kda.prefill":  {"avx512_chunk", "avx512", "avx2", "generic_chunk", "generic", "reference"},
		"mla.decode":   {"avx512", "avx512_bf16", "avx2", "generic", "reference"},
		"mla.prefill":  {"gemm_int8", "gemm", "generic", "absorbed", "absorbed_int8", "reference"},
		"moe.block":    {"amx_int8", "avx512_vnni", "gguf_avx512_vnni", "avx_vnni", "avx512", "gguf_avx512", "avx512_bf16", "avx2_int8", "gguf_avx2", "avx2", "generic", "gguf_generic", "generic_int8", "gguf_generic_int8", "reference"},
		"norm.rmsnorm": {"avx512", "avx2", "generic", "reference"},
	},
	"arm64": {
		"gemm.gateup":  {"sve_dotprod", "neon_dotprod", "sve", "sve_bf16", "neon_bf16", "neon", "generic", "gguf_generic", "generic_int8", "gguf_generic_int8", "reference"},
		"gemm.gemm":    {"sve_dotprod", "neon_dotprod", "sve", "sve_bf16", "neon_bf16", "neon", "generic", "gguf_generic", "generic_int8", "gguf_generic_int8", "reference"},
		"gemm.gemv":    {"sve_dotprod", "neon_dotprod", "sve", "sve_bf16", "neon_bf16", "neon", "generic", "gguf_generic", "generic_int8", "gguf_generic_int8", "reference"},
		"kda.decode":   {"sve", "neon", "generic", "reference"},
		"kda.prefill":  {"sve", "neon", "sve_chunk", "neon_chunk", "generic_chunk", "generic", "reference"},
		"mla.decode":   {"sve", "neon_bf16", "neon", "generic", "reference"},
		"mla.prefill":  {"gemm", "generic", "absorbed", "reference"},
		"moe.block":    {"sve_dotprod", "neon_dotprod", "sve", "sve_bf16", "neon_bf16", "neon", "generic", "gguf_generic", "generic_int8", "gguf_generic_int8", "reference"},
		"norm.rmsnorm": {"generic", "reference"},
	},
}

func TestExpectedVariants(t *testing.T) {
	arch := runtime.GOARCH
	if purego {
		arch = "portable"
	}
	want, ok := expectedVariants[arch]
	if !ok {
		want = expectedVariants["portable"]
	}
	got := map[string][]string{}
	for _, o := range kernel.Ops() {
		if strings.HasPrefix(o.Name, "tunetest.") {
			continue
		}
		for _, v := range kernel.Variants(o.Name) {
			got[o.Name] = append(got[o.Name], v.Name)
		}
	}
	for op, names := range want {
		for _, n := range names {
			if !slices.Contains(got[op], n) {
				t.Errorf("%s/%s is not registered on %s", op, n, arch)
			}
		}
	}
	for op, names := range got {
		for _, n := range names {
			if !slices.Contains(want[op], n) {
				t.Errorf("%s/%s is registered but not in expectedVariants[%q]: add it", op, n, arch)
			}
		}
	}
	var ops []string
	for op := range want {
		ops = append(ops, op)
	}
	sort.Strings(ops)
	for _, op := range ops {
		if _, ok := got[op]; !ok {
			t.Errorf("op %s is not registered on %s", op, arch)
		}
	}
}
