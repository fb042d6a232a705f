//go:build amd64 && gc && !purego

// Exact checks of the AVX-VNNI kernels' test twins and of avx2_int8 at more
// thread counts, on any AVX2 machine.
package gemm

import (
	"fmt"
	"math/rand/v2"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/ktune/ktune/internal/cpu"
	"github.com/ktune/ktune/internal/kernel"
	"github.com/ktune/ktune/internal/quant"
)

// avxvnniTwinY is avxvnniY with each kernel replaced by its test twin
// (the same code with vpmaddubsw+vpmaddwd+vpaddd for each vpdpbusd; none
// for Q8, whose u8 weights would saturate vpmaddubsw).
var avxvnniTwinY = [numKinds][]vnniKernel{
	nil,
	{nil, avxvnniTwinQ4_1x16, avxvnniTwinQ4_2x16, avxvnniTwinQ4_3x16, avxvnniTwinQ4_4x16},
	{nil, avxvnniTwinQ4M_1x16, avxvnniTwinQ4M_2x16, avxvnniTwinQ4M_3x16, avxvnniTwinQ4M_4x16},
	{nil, avxvnniTwinQ3_1x16, avxvnniTwinQ3_2x16, avxvnniTwinQ3_3x16, avxvnniTwinQ3_4x16},
	{nil, avxvnniTwinQ6_1x16, avxvnniTwinQ6_2x16, avxvnniTwinQ6_3x16, avxvnniTwinQ6_4x16},
	{nil, avxvnniTwinQ2_1x16, avxvnniTwinQ2_2x16, avxvnniTwinQ2_3x16, avxvnniTwinQ2_4x16},
	{nil, avxvnniTwinQ5_1x16, avxvnniTwinQ5_2x16, avxvnniTwinQ5_3x16, avxvnniTwinQ5_4x16},
	{nil, avxvnniTwinQ3K_1x16, avxvnniTwinQ3K_2x16, avxvnniTwinQ3K_3x16, avxvnniTwinQ3K_4x16},
	{nil, avxvnniTwinQ4K_1x16, avxvnniTwinQ4K_2x16, avxvnniTwinQ4K_3x16, avxvnniTwinQ4K_4x16},
	{nil, avxvnniTwinQ5K_1x16, avxvnniTwinQ5K_2x16, avxvnniTwinQ5K_3x16, avxvnniTwinQ5K_4x16},
	{nil, avxvnniTwinQ6K_1x16, avxvnniTwinQ6K_2x16, avxvnniTwinQ6K_3x16, avxvnniTwinQ6K_4x16},
}

// TestAVXVNNITwinsExact runs the avx_vnni driver over the twins of its
// Q4, Q4-with-min, Q3, Q6, Q2 and Q5 kernels (every configuration of avx_vnni's
// parameters, 1, 2, 3 and 7 threads) on TestInt8PanelsExact's integer
// data and requires the exact dot products. The twins share every
// instruction of the AVX-VNNI kernels but the dot product, so this checks
// the kernels' weight decoding, tiling and flushes where AVX-VNNI itself
// is missing; the vpdpbusd encoding is checked in _asm/internal/x86. The
// twins of the K kernels (Q3K…Q6K) are checked against the model of their
// arithmetic (checkKPanels).
func TestAVXVNNITwinsExact(t *testing.T) {
	if !cpu.HasAll(cpu.NewSet(cpu.AVX2, cpu.FMA)) {
		t.Skip("needs AVX2 and FMA (and F16C)")
	}
	v, err := kernel.Lookup(OpGEMV + "/avx_vnni")
	if err != nil {
		t.Fatal(err)
	}
	im := &impl{act: actInt8, panels: vnniPanels(&avxvnniTwinY), grain: 4, prep: vnniPrep}
	cfgs := configs(v)
	cfgs = append(cfgs, v.DefaultConfig(nil, 3), v.DefaultConfig(nil, 7))
	checkIntPanels(t, im, cfgs, []kernel.DType{kernel.Q4, kernel.Q3, kernel.Q6, kernel.Q2, kernel.Q5})
	checkKPanels(t, im, cfgs, 23)
}

// TestAVX2Int8Threads adds to TestInt8PanelsExact (every configuration of
// each int8act variant at 1 and 2 threads) avx2_int8 at 3 and 7 threads,
// the exact dot products on the same kind of integer data.
func TestAVX2Int8Threads(t *testing.T) {
	v, err := kernel.Lookup(OpGEMV + "/avx2_int8")
	if err != nil {
		t.Fatal(err)
	}
	if !v.Available() {
		t.Skip("needs AVX2 and FMA (and F16C)")
	}
	im := implOf(v)
	cfgs := []kernel.Config{v.DefaultConfig(nil, 3), v.DefaultConfig(nil, 7)}
	checkIntPanels(t, im, cfgs, []kernel.DType{kernel.Q8, kernel.Q4, kernel.Q3, kernel.Q6, kernel.Q2, kernel.Q5})
	checkKPanels(t, im, cfgs, 25)
}

// checkIntPanels runs im (an int8act panel driver) under each
// configuration on integer activations (random, and all 127 or all −128
// against weights at their extremes) and integer weights of each format
// (Q4 also with a min) at exactShapes, overwriting and accumulating, and
// requires the exact scaled dot products.
func checkIntPanels(t *testing.T, im *impl, cfgs []kernel.Config, dts []kernel.DType) {
	t.Helper()
	r := rand.New(rand.NewPCG(21, 22))
	for _, dt := range dts {
		for _, hasMin := range []bool{false, true} {
			if hasMin && dt != kernel.Q4 {
				continue
			}
			for si, sh := range exactShapes {
				if !sampled(si) {
					continue
				}
				m, n, k := sh[0], sh[1], sh[2]
				for _, extreme := range []int8{0, 127, -128} {
					mx := newIntMatrix(t, r, dt, n, k, hasMin, extreme != 0)
					kp := mx.w.Kp
					g := kp / quant.GroupK
					xq := make([]int8, m*kp)
					xi := make([][]int32, m)
					xsum := make([]int32, m*g)
					for i := 0; i < m; i++ {
						xi[i] = make([]int32, kp)
						for j := 0; j < k; j++ {
							x := int8(r.IntN(256) - 128)
							if extreme != 0 {
								x = extreme
							}
							xq[i*kp+j], xi[i][j] = x, int32(x)
							xsum[i*g+j/quant.GroupK] += int32(x)
						}
					}
					xs := make([]float32, m*g)
					for i := range xs {
						xs[i] = float32(1 + r.IntN(2))
					}
					what := fmt.Sprintf("%s min=%v x=%d m=%d n=%d k=%d", dt, hasMin, extreme, m, n, k)
					for _, cfg := range cfgs {
						for _, acc := range []bool{false, true} {
							y := make([]float32, m*n)
							for i := range y {
								y[i] = float32(i % 7)
							}
							a := &args{m: m, n: n, k: k, kp: kp, w: mx.w, y: y, ldy: n, acc: acc,
								xq: xq, xs: xs, xsum: xsum, ws: &workspace{}}
							im.run(a, cfg)
							for i := 0; i < m; i++ {
								for c := 0; c < n; c++ {
									want := mx.dotScaled(c, xi[i], xs[i*g:(i+1)*g])
									if acc {
										want += float64((i*n + c) % 7)
									}
									if got := float64(y[i*n+c]); got != want {
										t.Fatalf("%s %v acc=%v: y[%d,%d] = %v, want %v", what, cfg, acc, i, c, got, want)
									}
								}
							}
						}
					}
				}
			}
		}
	}
}

// TestAVXVNNITwinsMatch: each twin in gemm_avx2int8_amd64.s is its AVX-VNNI
// kernel instruction for instruction once every vpmaddubsw b, w, b;
// vpmaddwd ones, b, b; vpaddd b, acc, acc of the twin and every BYTE-encoded
// {vex} vpdpbusd acc, w, b of the kernel are read as one dot(acc, w, b),
// so TestAVXVNNITwinsExact checks all of the kernels but that instruction
// (whose encoding _asm/internal/x86 checks against GNU as).
func TestAVXVNNITwinsMatch(t *testing.T) {
	funcs := map[string][]string{}
	for _, f := range []string{"gemm_avxvnni_amd64.s", "gemm_avx2int8_amd64.s"} {
		src, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		var cur string
		for _, l := range strings.Split(string(src), "\n") {
			l = strings.Join(strings.Fields(l), " ")
			if name, ok := strings.CutPrefix(l, "TEXT ·"); ok {
				cur = name[:strings.Index(name, "(")]
			} else if strings.HasPrefix(l, "DATA ") || strings.HasPrefix(l, "GLOBL ") {
				cur = ""
			}
			if cur != "" && l != "" {
				funcs[cur] = append(funcs[cur], l)
			}
		}
	}
	vex := regexp.MustCompile(`// \{vex\} vpdpbusd ymm(\d+), ymm(\d+), ymm(\d+)$`)
	mad := regexp.MustCompile(`^VPMADDUBSW Y(\d+), Y(\d+), Y(\d+)$`)
	add := regexp.MustCompile(`^VPADDD Y(\d+), Y(\d+), Y(\d+)$`)
	canon := func(lines []string) []string {
		var out []string
		for i := 0; i < len(lines); i++ {
			l := strings.ReplaceAll(lines[i], "avxvnniTwin", "avxvnni")
			if m := vex.FindStringSubmatch(l); m != nil {
				out = append(out, fmt.Sprintf("dot(Y%s, Y%s, Y%s)", m[1], m[2], m[3]))
				continue
			}
			if m := mad.FindStringSubmatch(l); m != nil && i+2 < len(lines) && m[1] == m[3] &&
				lines[i+1] == fmt.Sprintf("VPMADDWD ones16<>+0(SB), Y%s, Y%s", m[1], m[1]) {
				if a := add.FindStringSubmatch(lines[i+2]); a != nil && a[1] == m[1] && a[2] == a[3] {
					out = append(out, fmt.Sprintf("dot(Y%s, Y%s, Y%s)", a[2], m[2], m[1]))
					i += 2
					continue
				}
			}
			out = append(out, l)
		}
		return out
	}
	n := 0
	for name, lines := range funcs {
		kern, ok := strings.CutPrefix(name, "avxvnniTwin")
		if !ok {
			continue
		}
		want, ok := funcs["avxvnni"+kern]
		if !ok {
			t.Errorf("%s: no avxvnni%s", name, kern)
			continue
		}
		got, w := canon(lines), canon(want)
		if !slices.Equal(got, w) {
			t.Errorf("%s differs from avxvnni%s beyond the dot products", name, kern)
		}
		if c := strings.Count(strings.Join(w, "\n"), "dot("); c == 0 {
			t.Errorf("avxvnni%s: no dot product found", kern)
		}
		n++
	}
	if n != 40 {
		t.Errorf("%d twins, want 40 (Q4, Q4M, Q3, Q6, Q2, Q5, Q3K, Q4K, Q5K, Q6K × 1…4 rows)", n)
	}
}

// BenchmarkAVX2Q5Panels times the avx2 Q5 panel kernels against their
// test twins (vpmaddubsw, vpmaddwd and vpaddd per k-quad: the avx2 Q5
// kernels before they summed half a group in int16) on weights that stay in
// L2 (128×2304, 203 KB), so it measures the kernels' compute, not DRAM (the
// avx2 kernels also prefetch the panel after the 8 of each call, which the
// twins do not):
//
//	go test ./kernels/gemm -run '^$' -bench AVX2Q5Panels -count 5
func BenchmarkAVX2Q5Panels(b *testing.B) {
	if !cpu.HasAll(cpu.NewSet(cpu.AVX2, cpu.FMA)) {
		b.Skip("needs AVX2 and FMA (and F16C)")
	}
	const n, k = 128, 2304
	r := rand.New(rand.NewPCG(5, 6))
	w, err := quant.Random(r, kernel.Q5, n, k, false, 0.02)
	if err != nil {
		b.Fatal(err)
	}
	ng := w.Kp / quant.GroupK
	for m := 1; m <= 4; m++ {
		xq := make([]int8, m*w.Kp)
		for i := range xq {
			xq[i] = int8(r.IntN(256) - 128)
		}
		aux := make([]int32, m*ng)
		xs := make([]float32, m*ng)
		for i := range xs {
			xs[i] = 0.01
		}
		y := make([]float32, m*n)
		for _, kern := range []struct {
			name string
			fn   vnniKernel
		}{{"twin", avxvnniTwinY[kindQ5][m]}, {"avx2i8", avx2i8Y[kindQ5][m]}} {
			b.Run(fmt.Sprintf("kernel=%s/m=%d", kern.name, m), func(b *testing.B) {
				b.SetBytes(int64(len(w.Data)))
				for b.Loop() {
					kern.fn(&w.Data[0], w.Np/quant.PanelRows, ng, &xq[0], w.Kp, &aux[0], 4*m, &xs[0], &y[0], n, false)
				}
			})
		}
	}
}
