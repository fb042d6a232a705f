package cpu

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// copyFixture copies a machine folder into a temporary one to corrupt.
func copyFixture(t *testing.T, name string) string {
	t.Helper()
	dst := filepath.Join(t.TempDir(), name)
	if out, err := exec.Command("cp", "-r", filepath.Join("testdata", "machines", name), dst).CombinedOutput(); err != nil {
		t.Skipf("cp: %v %s", err, out)
	}
	return dst
}

func writeFile(t *testing.T, dir, rel, data string) {
	t.Helper()
	p := filepath.Join(dir, filepath.FromSlash(rel))
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	os.Remove(p)
	if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestCaptureRefusesWhatItNeverHolds: links (to /dev/zero, or this host's
// own /proc), FIFOs, trailing text and absurd CPUID counts are refused with
// the file named, before any read can hang or reach this host.
func TestCaptureRefusesWhatItNeverHolds(t *testing.T) {
	for _, tc := range []struct {
		name, want string
		edit       func(dir string) error
	}{
		{"link to /dev/zero", "fs/proc/cpuinfo: a symbolic link", func(d string) error {
			p := filepath.Join(d, "fs/proc/cpuinfo")
			os.Remove(p)
			return os.Symlink("/dev/zero", p)
		}},
		{"link to the host", "fs/sys/devices/system/cpu/online: a symbolic link", func(d string) error {
			p := filepath.Join(d, "fs/sys/devices/system/cpu/online")
			os.Remove(p)
			return os.Symlink("/sys/devices/system/cpu/online", p)
		}},
		{"fifo", "fs/sys/devices/system/cpu/online: not a regular file", func(d string) error {
			p := filepath.Join(d, "fs/sys/devices/system/cpu/online")
			os.Remove(p)
			return mkfifo(p)
		}},
		{"trailing text", "text after the JSON", func(d string) error {
			f, err := os.OpenFile(filepath.Join(d, "probe.json"), os.O_APPEND|os.O_WRONLY, 0)
			if err != nil {
				return err
			}
			defer f.Close()
			_, err = f.WriteString(`{"goos": "linux"}`)
			return err
		}},
		{"huge cpuid count", "logical_cores 2000000000 out of range", func(d string) error {
			b, _ := os.ReadFile(filepath.Join(d, "probe.json"))
			return os.WriteFile(filepath.Join(d, "probe.json"), []byte(strings.Replace(string(b), `"logical_cores": 2`, `"logical_cores": 2000000000`, 1)), 0o644)
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d := copyFixture(t, "amd-epyc-kvm-2vcpu")
			if err := tc.edit(d); err != nil {
				t.Skip(err)
			}
			_, err := LoadCapture(d)
			if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), d) {
				t.Errorf("got %v, want an error naming %s and %q", err, d, tc.want)
			}
		})
	}
}

// TestCaptureGarbageDetectsSanely: corrupt values inside a capture give a
// sensible machine (never 0 usable CPUs or more than are online) and a
// warning where detection dropped something.
func TestCaptureGarbageDetectsSanely(t *testing.T) {
	for _, tc := range []struct {
		name, fixture string
		edit          func(dir string)
		usable        int
		warn          string
		check         func(t *testing.T, i *Info)
	}{
		{"huge quota", "container-4-of-64", func(d string) {
			writeFile(t, d, "fs/sys/fs/cgroup/cpu.max", "9223372036854775807 1\n")
		}, 64, "", nil},
		{"deep cgroup", "container-4-of-64", func(d string) {
			writeFile(t, d, "fs/proc/self/cgroup", "0::"+strings.Repeat("/a", 20000)+"\n")
		}, 64, "", nil},
		{"garbage capacity", "amd-epyc-kvm-2vcpu", func(d string) {
			writeFile(t, d, "fs/sys/devices/system/cpu/cpu0/cpu_capacity", "abc\n")
		}, 2, "no valid cpu_capacity", func(t *testing.T, i *Info) {
			if i.Topology.Hybrid() {
				t.Errorf("one garbage cpu_capacity made classes: %+v", i.Topology.Classes)
			}
		}},
		{"absurd cache size", "amd-epyc-kvm-2vcpu", func(d string) {
			writeFile(t, d, "fs/sys/devices/system/cpu/cpu0/cache/index3/size", "999999999999G\n")
		}, 2, "is not a cache size", nil},
		{"duplicate online", "amd-epyc-kvm-2vcpu", func(d string) {
			writeFile(t, d, "fs/sys/devices/system/cpu/online", "0,0,0,1\n")
		}, 2, "", func(t *testing.T, i *Info) {
			if len(i.Topology.Online) != 2 {
				t.Errorf("online %v", i.Topology.Online)
			}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d := copyFixture(t, tc.fixture)
			tc.edit(d)
			src, err := LoadCapture(d)
			if err != nil {
				t.Fatal(err)
			}
			i := Describe(src)
			if i.Usable != tc.usable {
				t.Errorf("usable %d, want %d", i.Usable, tc.usable)
			}
			if tc.warn != "" && !strings.Contains(strings.Join(i.Warnings, "; "), tc.warn) {
				t.Errorf("warnings %q lack %q", i.Warnings, tc.warn)
			}
			if tc.check != nil {
				tc.check(t, i)
			}
		})
	}
}

// TestFallbackAffinityOutsideCPUs: with no OS topology (an OS detection
// does not read) and a mask naming no CPU CPUID counts, detection keeps
// every CPU and says so, instead of reporting none.
func TestFallbackAffinityOutsideCPUs(t *testing.T) {
	src := &Source{GOOS: "freebsd", GOARCH: "amd64", CPUID: CPUIDFacts{LogicalCores: 2}, Affinity: []int{5}}
	i := DetectFrom(src)
	if i.Usable != 2 || i.LogicalCores != 2 || len(i.Topology.DefaultThreads()) != 2 || i.Topology.DefaultThreads()[0] != 1 {
		t.Errorf("usable %d logical %d threads %v", i.Usable, i.LogicalCores, i.Topology.DefaultThreads())
	}
	if !strings.Contains(strings.Join(i.Warnings, "; "), "names none of CPUID's 2 CPUs") {
		t.Errorf("warnings %q", i.Warnings)
	}
}
