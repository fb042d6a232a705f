//go:build !((amd64 || arm64) && gc && !purego)

package vmath

func expAsm(dst, src []float32) int { return 0 }

// clampKernel is never called without assembly kernels.
func clampKernel(dst, src []float32) { panic("vmath: no exp kernel in this build") }

func dotAsm(a, b []float32) (float32, int)                         { return 0, 0 }
func axpyAsm(alpha float32, x, y []float32) int                    { return 0 }
func scaleAsm(alpha float32, x []float32) int                      { return 0 }
func scaleMulAsm(dst []float32, alpha float32, a, b []float32) int { return 0 }
func mulAddAsm(dst, a, b []float32) int                            { return 0 }

func softplusAsm(dst, src []float32, scale float32) int { return 0 }

func actAsm(mode int, dst, src, u []float32) int { return 0 }
