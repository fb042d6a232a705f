package cpu

import (
	"encoding/json"
	"github.com/ktune/ktune/internal/testexec"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"strconv"
	"strings"
	"testing"
)

func TestMain(m *testing.M) {
	i := Get()
	println("cpu:", i.Brand, "fingerprint:", i.Fingerprint(), "effective:", i.Effective.String())
	os.Exit(m.Run())
}

func TestFeatureNamesRoundTrip(t *testing.T) {
	for _, f := range AllFeatures() {
		g, err := ParseFeature(strings.ToUpper(f.String()))
		if err != nil || g != f {
			t.Errorf("ParseFeature(%q) = %v, %v", f, g, err)
		}
	}
	if _, err := ParseFeature("avx1024"); err == nil {
		t.Error("unknown feature accepted")
	}
	s, err := ParseSet("avx512f, avx_vnni,,amx_tile")
	if err != nil || s != NewSet(AVX512F, AVXVNNI, AMXTile) {
		t.Errorf("ParseSet = %v, %v", s, err)
	}
	b, _ := json.Marshal(s)
	var back Set
	if err := json.Unmarshal(b, &back); err != nil || back != s {
		t.Errorf("JSON round trip %s -> %v, %v", b, back, err)
	}
}

func TestLevelsNest(t *testing.T) {
	prev := Set(0)
	for _, name := range []string{"generic", "avx2", "avx512", "avx512_vnni", "avx512_bf16", "amx"} {
		s, err := Level(name)
		if err != nil {
			t.Fatal(err)
		}
		if !s.HasAll(prev) {
			t.Errorf("level %s does not contain the level below it", name)
		}
		prev = s
	}
	if s, _ := Level("avx2"); s.Has(AVXVNNI) || s.Has(AVX512F) {
		t.Error("avx2 level must exclude avx_vnni and avx512f")
	}
	if _, err := Level("avx9000"); err == nil {
		t.Error("unknown level accepted")
	}
}

func TestDisableRestores(t *testing.T) {
	before, g0 := Effective(), Generation()
	restore := Disable(AVX512F, AVX2)
	if Has(AVX512F) || Has(AVX2) {
		t.Fatal("Disable did not remove the features")
	}
	if Generation() == g0 {
		t.Error("generation did not move")
	}
	inner := Disable(FMA)
	if Has(FMA) {
		t.Error("nested Disable failed")
	}
	restore() // out of order: FMA stays off until inner is restored
	if Has(FMA) {
		t.Error("restoring the outer mask re-enabled an inner one")
	}
	inner()
	if Effective() != before {
		t.Errorf("effective %v after restore, want %v", Effective(), before)
	}
	if got := Get().Masked; got != 0 && Get().Mask == "" {
		t.Errorf("masked %v without a mask description", got)
	}
}

func TestFingerprintCoversEffectiveSet(t *testing.T) {
	a := Fingerprint()
	hw := Get().Effective
	if hw == 0 {
		t.Skip("no features to mask on this machine")
	}
	restore := Disable(hw.Features()[0])
	defer restore()
	if b := Fingerprint(); a == b {
		t.Errorf("fingerprint %s did not change with a mask", a)
	}
}

func TestInfoSane(t *testing.T) {
	i := Get()
	if i.LogicalCores < 1 || i.PhysicalCores < 1 || len(i.NUMA) < 1 {
		t.Errorf("cores %d/%d, %d NUMA nodes", i.PhysicalCores, i.LogicalCores, len(i.NUMA))
	}
	if !i.Hardware.HasAll(i.Effective) {
		t.Errorf("effective %v not within hardware %v", i.Effective, i.Hardware)
	}
	if i.Effective.Intersect(AMX) != 0 && !i.AMXPermission {
		t.Error("AMX effective without the OS permission")
	}
	for _, c := range []int64{i.Cache.L1D, i.Cache.L2, i.Cache.L3} {
		if c == 0 {
			t.Error("cache size 0: unknown must be -1")
		}
	}
}

// TestSVELength compares the detected SVE vector length with
// KTUNE_EXPECT_SVE_BITS (set by CI when it runs under qemu with a chosen
// vector length).
func TestSVELength(t *testing.T) {
	want := os.Getenv("KTUNE_EXPECT_SVE_BITS")
	if want == "" {
		t.Skip("KTUNE_EXPECT_SVE_BITS not set")
	}
	if got := strconv.Itoa(Get().SVEBits); got != want {
		t.Errorf("SVE vector length %s bits, want %s", got, want)
	}
}

func TestParseCPUList(t *testing.T) {
	got, err := ParseCPUList("0-3,8,10-11")
	if err != nil || !reflect.DeepEqual(got, []int{0, 1, 2, 3, 8, 10, 11}) {
		t.Errorf("got %v, %v", got, err)
	}
	for _, bad := range []string{"a", "3-1", "1-", "-"} {
		if _, err := ParseCPUList(bad); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}

// TestReadNUMAFake reads a fake sysfs tree with two nodes.
func TestReadNUMAFake(t *testing.T) {
	root := t.TempDir()
	write := func(rel, s string) {
		p := filepath.Join(root, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("sys/devices/system/node/node0/cpulist", "0-3,8-11\n")
	write("sys/devices/system/node/node0/meminfo", "Node 0 MemTotal:       16384 kB\nNode 0 MemFree:  100 kB\n")
	write("sys/devices/system/node/node1/cpulist", "4-7,12-15\n")
	write("sys/devices/system/node/node1/meminfo", "Node 1 MemTotal:       32768 kB\n")
	write("sys/devices/system/node/possible", "0-1\n")
	nodes, err := readNUMA(&Source{FS: os.DirFS(root)})
	if err != nil {
		t.Fatal(err)
	}
	want := []Node{
		{ID: 0, CPUs: []int{0, 1, 2, 3, 8, 9, 10, 11}, MemBytes: 16384 << 10},
		{ID: 1, CPUs: []int{4, 5, 6, 7, 12, 13, 14, 15}, MemBytes: 32768 << 10},
	}
	if !reflect.DeepEqual(nodes, want) {
		t.Errorf("got %+v\nwant %+v", nodes, want)
	}
	if nodes, err := readNUMA(&Source{FS: os.DirFS(t.TempDir())}); err != nil || nodes != nil {
		t.Errorf("missing node dir: %v, %v", nodes, err)
	}
}

// TestEnvMasks runs this test binary again with the masking variables set.
func TestEnvMasks(t *testing.T) {
	if os.Getenv("KTUNE_CPU_CHILD") == "1" {
		b, _ := json.Marshal(Get())
		os.Stdout.Write(append(append([]byte("INFO:"), b...), '\n'))
		return
	}
	run := func(env ...string) *Info {
		cmd := testexec.Self("-test.run=^TestEnvMasks$")
		cmd.Env = append(os.Environ(), append(env, "KTUNE_CPU_CHILD=1")...)
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("%v: %v\n%s", env, err, out)
		}
		_, js, ok := strings.Cut(string(out), "INFO:")
		if !ok {
			t.Fatalf("no info in %s", out)
		}
		js, _, _ = strings.Cut(js, "\n")
		var i Info
		if err := json.Unmarshal([]byte(js), &i); err != nil {
			t.Fatalf("%v: %s", err, js)
		}
		return &i
	}
	if runtime.GOARCH == "arm64" {
		i := run("KTUNE_MAX_ISA=dotprod")
		if i.Effective.Minus(NewSet(ASIMD, ASIMDDP)) != 0 || (i.Hardware.Has(SVE) && !i.Masked.Has(SVE)) {
			t.Errorf("KTUNE_MAX_ISA=dotprod: effective %v, masked %v", i.Effective, i.Masked)
		}
	}
	if runtime.GOARCH == "amd64" {
		i := run("KTUNE_MAX_ISA=avx2")
		if i.Effective.Minus(NewSet(AVX2, FMA)) != 0 {
			t.Errorf("KTUNE_MAX_ISA=avx2 left %v", i.Effective)
		}
		if i.Hardware.Has(AVX512F) && !i.Masked.Has(AVX512F) {
			t.Errorf("avx512f not listed as masked: %v", i.Masked)
		}
	}
	// another architecture's level is a mistake, not "mask everything"
	other := map[string]string{"amd64": "neon", "arm64": "avx2"}[runtime.GOARCH]
	if other != "" {
		i := run("KTUNE_MAX_ISA=" + other)
		if !strings.Contains(strings.Join(i.Warnings, ";"), "is not a level of "+runtime.GOARCH) || i.Effective != i.Hardware.Minus(AMX) && i.Effective != i.Hardware {
			t.Errorf("KTUNE_MAX_ISA=%s: warnings %v, effective %v", other, i.Warnings, i.Effective)
		}
	}
	i := run("KTUNE_DISABLE=avx2,fma")
	if i.Effective.Has(AVX2) || i.Effective.Has(FMA) {
		t.Errorf("KTUNE_DISABLE left %v", i.Effective)
	}
	i = run("KTUNE_MAX_ISA=bogus")
	if len(i.Warnings) == 0 || !strings.Contains(strings.Join(i.Warnings, ";"), "bogus") {
		t.Errorf("no warning for a bad level: %v", i.Warnings)
	}
}
