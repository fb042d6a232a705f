// Package all links every kernel family into a binary, so that their ops
// and variants are registered (the tuner and the CLIs see kernels only
// through the registry).
package all

import (
	_ "github.com/ktune/ktune/kernels/gemm" // gemm.gemv, gemm.gemm, gemm.gateup
	_ "github.com/ktune/ktune/kernels/kda"  // kda.decode, kda.prefill
	_ "github.com/ktune/ktune/kernels/mla"  // mla.decode, mla.prefill
	_ "github.com/ktune/ktune/kernels/moe"  // moe.block
	_ "github.com/ktune/ktune/kernels/norm" // norm.rmsnorm
)
