//go:build ignore

// gen writes the Linux machine fixtures that were built from documented
// formats (not captured on the machine itself): probe.json and the fs/
// mirror of the /sys and /proc files ktune's detection reads, from each
// machine's facts as written below. It never writes expected.json: those
// are written by hand from the same documented facts, so that a parser bug
// cannot leak into the expected values.
//
//	go run internal/cpu/testdata/machines/gen.go
//
// (from the repository root). It rewrites only the machines listed here;
// amd-epyc-kvm-2vcpu was captured for real and is left alone. It imports
// nothing of ktune on purpose.
package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
)

// probe mirrors the JSON of cpu.Source (probe.json).
type probe struct {
	GOOS     string            `json:"goos"`
	GOARCH   string            `json:"goarch"`
	CPUID    cpuid             `json:"cpuid"`
	Affinity []int             `json:"affinity,omitempty"`
	Env      map[string]string `json:"env,omitempty"`
	Note     string            `json:"note,omitempty"`
}

type cpuid struct {
	Vendor         string   `json:"vendor"`
	Brand          string   `json:"brand"`
	Family         int      `json:"family"`
	Model          int      `json:"model"`
	Stepping       int      `json:"stepping"`
	Hypervisor     string   `json:"hypervisor,omitempty"`
	PhysicalCores  int      `json:"physical_cores"`
	LogicalCores   int      `json:"logical_cores"`
	ThreadsPerCore int      `json:"threads_per_core"`
	CacheLine      int      `json:"cache_line"`
	Cache          cache4   `json:"cache"`
	Hz             int64    `json:"hz"`
	Features       []string `json:"features"`
	SVEBits        int      `json:"sve_bits,omitempty"`
	AMXPermission  bool     `json:"amx_permission,omitempty"`
}

type cache4 struct {
	L1D int64 `json:"l1d"`
	L1I int64 `json:"l1i"`
	L2  int64 `json:"l2"`
	L3  int64 `json:"l3"`
}

// cacheIdx is one /sys/devices/system/cpu/cpuN/cache/indexM folder.
type cacheIdx struct {
	level  int
	typ    string // Data, Instruction, Unified
	size   string // as sysfs writes it: "48K", "2048K"
	shared []int
}

type node struct {
	id    int
	cpus  []int
	memKB int64
}

type machine struct {
	dir    string
	probe  probe
	online []int
	pkg    func(c int) int
	die    func(c int) int // nil: no die_id file (arm64)
	sibs   func(c int) []int
	// oldTopology: a kernel before 5.2, with thread_siblings_list but no
	// core_cpus_list (and no die_id: leave die nil)
	oldTopology bool
	// capacity is cpu_capacity (nil: no such file)
	capacity func(c int) int
	caches   func(c int) []cacheIdx
	nodes    []node
	cpuinfo  string
	memKB    int64
	cgroup   string            // /proc/self/cgroup
	files    map[string]string // any other file, by absolute path
}

func rng(a, b int) []int {
	var out []int
	for c := a; c <= b; c++ {
		out = append(out, c)
	}
	return out
}

func cat(ls ...[]int) []int {
	var out []int
	for _, l := range ls {
		out = append(out, l...)
	}
	sort.Ints(out)
	return out
}

// list writes CPUs in the kernel's list format.
func list(cs []int) string {
	s := append([]int(nil), cs...)
	sort.Ints(s)
	var parts []string
	for i := 0; i < len(s); {
		j := i
		for j+1 < len(s) && s[j+1] == s[j]+1 {
			j++
		}
		if j == i {
			parts = append(parts, strconv.Itoa(s[i]))
		} else {
			parts = append(parts, fmt.Sprintf("%d-%d", s[i], s[j]))
		}
		i = j + 1
	}
	return strings.Join(parts, ",")
}

func (m *machine) write(root string) error {
	dir := filepath.Join(root, m.dir)
	if err := os.RemoveAll(filepath.Join(dir, "fs")); err != nil {
		return err
	}
	put := func(p, s string) {
		full := filepath.Join(dir, "fs", filepath.FromSlash(strings.TrimPrefix(p, "/")))
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			panic(err)
		}
		if err := os.WriteFile(full, []byte(s+"\n"), 0o644); err != nil {
			panic(err)
		}
	}
	const sc = "/sys/devices/system/cpu"
	put(sc+"/online", list(m.online))
	put(sc+"/possible", list(m.online))
	for _, c := range m.online {
		base := fmt.Sprintf("%s/cpu%d", sc, c)
		put(base+"/topology/physical_package_id", strconv.Itoa(m.pkg(c)))
		if m.die != nil {
			put(base+"/topology/die_id", strconv.Itoa(m.die(c)))
		}
		s := m.sibs(c)
		if !m.oldTopology {
			put(base+"/topology/core_cpus_list", list(s))
		}
		put(base+"/topology/thread_siblings_list", list(s))
		if m.capacity != nil {
			put(base+"/cpu_capacity", strconv.Itoa(m.capacity(c)))
		}
		for i, ci := range m.caches(c) {
			idx := fmt.Sprintf("%s/cache/index%d", base, i)
			put(idx+"/level", strconv.Itoa(ci.level))
			put(idx+"/type", ci.typ)
			put(idx+"/size", ci.size)
			put(idx+"/shared_cpu_list", list(ci.shared))
		}
	}
	for _, n := range m.nodes {
		nd := fmt.Sprintf("/sys/devices/system/node/node%d", n.id)
		put(nd+"/cpulist", list(n.cpus))
		put(nd+"/meminfo", fmt.Sprintf("Node %d MemTotal:       %d kB\nNode %d MemFree:        %d kB", n.id, n.memKB, n.id, n.memKB*9/10))
	}
	put("/proc/cpuinfo", strings.TrimRight(m.cpuinfo, "\n")+"\n")
	put("/proc/meminfo", fmt.Sprintf("MemTotal:       %d kB\nMemFree:        %d kB\nMemAvailable:   %d kB", m.memKB, m.memKB*9/10, m.memKB*9/10))
	if m.cgroup != "" {
		put("/proc/self/cgroup", m.cgroup)
	}
	for p, s := range m.files {
		put(p, s)
	}
	b, err := json.MarshalIndent(m.probe, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, "probe.json"), append(b, '\n'), 0o644)
}

// x86info writes /proc/cpuinfo of an x86 machine: one block per CPU with
// the fields Linux prints (flags abbreviated to the ones that matter).
func x86info(cpus []int, vendor string, family, model, stepping int, name string, mhz string, cacheKB int, flags string, pkg func(int) int, coreID func(int) int, siblings, cores int) string {
	var b strings.Builder
	for _, c := range cpus {
		fmt.Fprintf(&b, "processor\t: %d\nvendor_id\t: %s\ncpu family\t: %d\nmodel\t\t: %d\nmodel name\t: %s\nstepping\t: %d\n", c, vendor, family, model, name, stepping)
		fmt.Fprintf(&b, "cpu MHz\t\t: %s\ncache size\t: %d KB\nphysical id\t: %d\nsiblings\t: %d\ncore id\t\t: %d\ncpu cores\t: %d\n", mhz, cacheKB, pkg(c), siblings, coreID(c), cores)
		fmt.Fprintf(&b, "fpu\t\t: yes\nflags\t\t: %s\nclflush size\t: 64\ncache_alignment\t: 64\n\n", flags)
	}
	return b.String()
}

// arminfo writes /proc/cpuinfo of an arm64 machine.
func arminfo(cpus []int, bogo, features string, variant func(int) string, part func(int) string, rev func(int) int) string {
	var b strings.Builder
	for _, c := range cpus {
		fmt.Fprintf(&b, "processor\t: %d\nBogoMIPS\t: %s\nFeatures\t: %s\nCPU implementer\t: 0x41\nCPU architecture: 8\nCPU variant\t: %s\nCPU part\t: %s\nCPU revision\t: %d\n\n", c, bogo, features, variant(c), part(c), rev(c))
	}
	return b.String()
}

const (
	flagsZen5   = "fpu vme de pse tsc msr pae mce cx8 apic sep mtrr pge mca cmov pat pse36 clflush mmx fxsr sse sse2 ht syscall nx mmxext fxsr_opt pdpe1gb rdtscp lm rep_good nopl cpuid extd_apicid tsc_known_freq pni pclmulqdq ssse3 fma cx16 sse4_1 sse4_2 x2apic movbe popcnt aes xsave avx f16c rdrand hypervisor lahf_lm cmp_legacy abm sse4a misalignsse 3dnowprefetch bmi1 avx2 smep bmi2 erms invpcid avx512f avx512dq rdseed adx smap avx512ifma clflushopt clwb avx512cd sha_ni avx512bw avx512vl xsaveopt xsavec xgetbv1 xsaves avx_vnni avx512_bf16 umip avx512vbmi avx512_vbmi2 gfni vaes vpclmulqdq avx512_vnni avx512_bitalg avx512_vpopcntdq rdpid movdiri movdir64b avx512_vp2intersect"
	flagsRPL    = "fpu vme de pse tsc msr pae mce cx8 apic sep mtrr pge mca cmov pat pse36 clflush dts acpi mmx fxsr sse sse2 ss ht tm pbe syscall nx pdpe1gb rdtscp lm constant_tsc art arch_perfmon pebs bts rep_good nopl xtopology nonstop_tsc cpuid aperfmperf tsc_known_freq pni pclmulqdq dtes64 monitor ds_cpl vmx smx est tm2 ssse3 sdbg fma cx16 xtpr pdcm pcid sse4_1 sse4_2 x2apic movbe popcnt tsc_deadline_timer aes xsave avx f16c rdrand lahf_lm abm 3dnowprefetch cpuid_fault epb ssbd ibrs ibpb stibp ibrs_enhanced tpr_shadow flexpriority ept vpid ept_ad fsgsbase tsc_adjust bmi1 avx2 smep bmi2 erms invpcid rdseed adx smap clflushopt clwb intel_pt sha_ni xsaveopt xsavec xgetbv1 xsaves split_lock_detect avx_vnni dtherm ida arat pln pts hwp hwp_notify hwp_act_window hwp_epp hwp_pkg_req hfi vnmi umip pku ospke waitpkg gfni vaes vpclmulqdq rdpid movdiri movdir64b fsrm md_clear serialize arch_lbr ibt flush_l1d arch_capabilities"
	flagsSPR    = "fpu vme de pse tsc msr pae mce cx8 apic sep mtrr pge mca cmov pat pse36 clflush dts acpi mmx fxsr sse sse2 ss ht tm pbe syscall nx pdpe1gb rdtscp lm constant_tsc art arch_perfmon pebs bts rep_good nopl xtopology nonstop_tsc cpuid aperfmperf tsc_known_freq pni pclmulqdq dtes64 monitor ds_cpl vmx smx est tm2 ssse3 sdbg fma cx16 xtpr pdcm pcid dca sse4_1 sse4_2 x2apic movbe popcnt tsc_deadline_timer aes xsave avx f16c rdrand lahf_lm abm 3dnowprefetch cpuid_fault epb cat_l3 cat_l2 cdp_l3 ssbd mba ibrs ibpb stibp ibrs_enhanced fsgsbase tsc_adjust bmi1 avx2 smep bmi2 erms invpcid cqm rdt_a avx512f avx512dq rdseed adx smap avx512ifma clflushopt clwb intel_pt avx512cd sha_ni avx512bw avx512vl xsaveopt xsavec xgetbv1 xsaves cqm_llc cqm_occup_llc cqm_mbm_total cqm_mbm_local split_lock_detect avx_vnni avx512_bf16 wbnoinvd dtherm ida arat pln pts hfi avx512vbmi umip pku ospke waitpkg avx512_vbmi2 gfni vaes vpclmulqdq avx512_vnni avx512_bitalg tme avx512_vpopcntdq la57 rdpid bus_lock_detect cldemote movdiri movdir64b enqcmd fsrm md_clear serialize tsxldtrk pconfig arch_lbr ibt amx_bf16 avx512_fp16 amx_tile amx_int8 flush_l1d arch_capabilities"
	flagsGenoa  = "fpu vme de pse tsc msr pae mce cx8 apic sep mtrr pge mca cmov pat pse36 clflush mmx fxsr sse sse2 ht syscall nx mmxext fxsr_opt pdpe1gb rdtscp lm constant_tsc rep_good amd_lbr_v2 nopl nonstop_tsc cpuid extd_apicid aperfmperf rapl pni pclmulqdq monitor ssse3 fma cx16 pcid sse4_1 sse4_2 x2apic movbe popcnt aes xsave avx f16c rdrand lahf_lm cmp_legacy svm extapic cr8_legacy abm sse4a misalignsse 3dnowprefetch osvw ibs skinit wdt tce topoext perfctr_core perfctr_nb bpext perfctr_llc mwaitx cpb cat_l3 cdp_l3 invpcid_single hw_pstate ssbd mba perfmon_v2 ibrs ibpb stibp ibrs_enhanced vmmcall fsgsbase bmi1 avx2 smep bmi2 erms invpcid cqm rdt_a avx512f avx512dq rdseed adx smap avx512ifma clflushopt clwb avx512cd sha_ni avx512bw avx512vl xsaveopt xsavec xgetbv1 xsaves cqm_llc cqm_occup_llc cqm_mbm_total cqm_mbm_local avx512_bf16 clzero irperf xsaveerptr rdpru wbnoinvd amd_ppin cppc arat npt lbrv svm_lock nrip_save tsc_scale vmcb_clean flushbyasid decodeassists pausefilter pfthreshold avic v_vmsave_vmload vgif x2avic v_spec_ctrl vnmi avx512vbmi umip pku ospke avx512_vbmi2 gfni vaes vpclmulqdq avx512_vnni avx512_bitalg avx512_vpopcntdq la57 rdpid overflow_recov succor smca fsrm flush_l1d"
	flagsICX    = "fpu vme de pse tsc msr pae mce cx8 apic sep mtrr pge mca cmov pat pse36 clflush mmx fxsr sse sse2 ss ht syscall nx pdpe1gb rdtscp lm constant_tsc arch_perfmon rep_good nopl xtopology nonstop_tsc cpuid aperfmperf tsc_known_freq pni pclmulqdq monitor ssse3 fma cx16 pcid sse4_1 sse4_2 x2apic movbe popcnt tsc_deadline_timer aes xsave avx f16c rdrand hypervisor lahf_lm abm 3dnowprefetch invpcid_single ssbd ibrs ibpb stibp ibrs_enhanced fsgsbase tsc_adjust bmi1 avx2 smep bmi2 erms invpcid avx512f avx512dq rdseed adx smap avx512ifma clflushopt clwb avx512cd sha_ni avx512bw avx512vl xsaveopt xsavec xgetbv1 xsaves wbnoinvd ida arat avx512vbmi pku ospke avx512_vbmi2 gfni vaes vpclmulqdq avx512_vnni avx512_bitalg tme avx512_vpopcntdq rdpid md_clear flush_l1d arch_capabilities"
	flagsZen3   = "fpu vme de pse tsc msr pae mce cx8 apic sep mtrr pge mca cmov pat pse36 clflush mmx fxsr sse sse2 ht syscall nx mmxext fxsr_opt pdpe1gb rdtscp lm constant_tsc rep_good nopl nonstop_tsc cpuid extd_apicid aperfmperf rapl pni pclmulqdq monitor ssse3 fma cx16 sse4_1 sse4_2 movbe popcnt aes xsave avx f16c rdrand lahf_lm cmp_legacy svm extapic cr8_legacy abm sse4a misalignsse 3dnowprefetch osvw ibs skinit wdt tce topoext perfctr_core perfctr_nb bpext perfctr_llc mwaitx cpb cat_l3 cdp_l3 hw_pstate ssbd mba ibrs ibpb stibp vmmcall fsgsbase bmi1 avx2 smep bmi2 erms invpcid cqm rdt_a rdseed adx smap clflushopt clwb sha_ni xsaveopt xsavec xgetbv1 xsaves cqm_llc cqm_occup_llc cqm_mbm_total cqm_mbm_local clzero irperf xsaveerptr rdpru wbnoinvd arat npt lbrv svm_lock nrip_save tsc_scale vmcb_clean flushbyasid decodeassists pausefilter pfthreshold avic v_vmsave_vmload vgif v_spec_ctrl umip pku ospke vaes vpclmulqdq rdpid overflow_recov succor smca fsrm"
	featuresV1  = "fp asimd evtstrm aes pmull sha1 sha2 crc32 atomics fphp asimdhp cpuid asimdrdm jscvt fcma lrcpc dcpop sha3 sm3 sm4 asimddp sha512 sve asimdfhm dit uscat ilrcpc flagm ssbs paca pacg dcpodp svei8mm svebf16 i8mm bf16 dgh rng"
	featuresRK  = "fp asimd evtstrm aes pmull sha1 sha2 crc32 atomics fphp asimdhp cpuid asimdrdm lrcpc dcpop asimddp"
	noteBuilt   = "Built by hand (internal/cpu/testdata/machines/gen.go) from documented formats, NOT captured on this machine; only amd-epyc-kvm-2vcpu is a real capture. "
	sysfsDocs   = "Formats: https://www.kernel.org/doc/Documentation/ABI/stable/sysfs-devices-system-cpu, https://docs.kernel.org/admin-guide/cputopology.html, https://www.kernel.org/doc/Documentation/ABI/testing/sysfs-devices-system-cpu (cache/indexN, cpu_capacity). "
	cgroup2Docs = "cgroup v2 cpu.max: https://docs.kernel.org/admin-guide/cgroup-v2.html. "
	cgroup1Docs = "cgroup v1 CFS bandwidth (cpu.cfs_quota_us / cpu.cfs_period_us): https://docs.kernel.org/scheduler/sched-bwc.html. "
)

func one(c int) []int { return []int{c} }
func zero(int) int    { return 0 }

// x86 caches of one core, L3 shared by l3.
func x86caches(l1d, l1i, l2 string, core []int, l3 string, l3cpus []int) []cacheIdx {
	cs := []cacheIdx{
		{1, "Data", l1d, core},
		{1, "Instruction", l1i, core},
		{2, "Unified", l2, core},
	}
	if l3 != "" {
		cs = append(cs, cacheIdx{3, "Unified", l3, l3cpus})
	}
	return cs
}

func machines() []*machine {
	var ms []*machine

	// ---- 2. zen5-bhyve-2vcpu --------------------------------------------
	{
		cpus := rng(0, 1)
		ms = append(ms, &machine{
			dir: "zen5-bhyve-2vcpu",
			probe: probe{GOOS: "linux", GOARCH: "amd64", Affinity: cpus,
				Note: noteBuilt + "A 2-vCPU Linux guest under FreeBSD bhyve on an AMD Zen 5 host (Ryzen 9 9950X: family 26 = 0x1A, model 68 = 0x44). " +
					"bhyve passes CPUID leaf 1 / 0x80000008 through so that CPUID claims 254 logical and 254 physical cores per package while the guest has 2 vCPUs " +
					"(Linux, reading its ACPI MADT, brings up 2: online 0-1, nproc 2, affinity 0-1); both vCPUs land in package 0 because the APIC-ID split follows CPUID's 254-core package. " +
					"The guest sees no L3: sysfs has only index0-2 (L1d 48K, L1i 32K, L2 1024K per core) and CPUID's L3 size is unknown (klauspost/cpuid -1). " +
					"systemd session cgroup v2 with cpu.max \"max 100000\" (no limit) at every level. " +
					"Zen 5 caches: https://en.wikichip.org/wiki/amd/microarchitectures/zen_5 (48K L1d, 32K L1i, 1M L2). bhyve CPU topology: https://man.freebsd.org/bhyve/8. " +
					sysfsDocs + cgroup2Docs,
				CPUID: cpuid{Vendor: "AuthenticAMD", Brand: "AMD Ryzen 9 9950X 16-Core Processor", Family: 26, Model: 68, Stepping: 0, Hypervisor: "bhyve bhyve",
					PhysicalCores: 254, LogicalCores: 254, ThreadsPerCore: 1, CacheLine: 64,
					Cache:    cache4{L1D: 48 << 10, L1I: 32 << 10, L2: 1 << 20, L3: -1},
					Features: []string{"avx2", "avx512_bf16", "avx512_vnni", "avx512bw", "avx512dq", "avx512f", "avx512vl", "avx_vnni", "fma"}},
			},
			online:  cpus,
			pkg:     zero,
			die:     zero,
			sibs:    one,
			caches:  func(c int) []cacheIdx { return x86caches("48K", "32K", "1024K", one(c), "", nil) },
			nodes:   []node{{0, cpus, 8 << 20}},
			cpuinfo: x86info(cpus, "AuthenticAMD", 26, 68, 0, "AMD Ryzen 9 9950X 16-Core Processor", "4291.996", 1024, flagsZen5, zero, func(c int) int { return c }, 2, 2),
			memKB:   8 << 20,
			cgroup:  "0::/user.slice/user-1000.slice/session-3.scope",
			files: map[string]string{
				"/sys/fs/cgroup/user.slice/cpu.max":                                 "max 100000",
				"/sys/fs/cgroup/user.slice/user-1000.slice/cpu.max":                 "max 100000",
				"/sys/fs/cgroup/user.slice/user-1000.slice/session-3.scope/cpu.max": "max 100000",
			},
		})
	}

	// ---- 3. intel-hybrid-8p16e, and under taskset -c 16-31 ---------------
	for _, v := range []struct {
		dir, what string
		affinity  []int
	}{
		{"intel-hybrid-8p16e", "All 32 CPUs usable.", rng(0, 31)},
		{"intel-hybrid-taskset-ecores", "Run under taskset -c 16-31: only the 16 E-cores are usable.", rng(16, 31)},
	} {
		cpus := rng(0, 31)
		// CPUID answers for the core the probe runs on: a P-core (2
		// threads, 32 logical in the package hence "16 physical") or, under
		// taskset to the E-cores, an E-core (1 thread, its L1/L2)
		cpuidRPL := func(ecore bool) cpuid {
			c := cpuid{Vendor: "GenuineIntel", Brand: "13th Gen Intel(R) Core(TM) i9-13900K", Family: 6, Model: 183, Stepping: 1,
				PhysicalCores: 16, LogicalCores: 32, ThreadsPerCore: 2, CacheLine: 64,
				Cache:    cache4{L1D: 48 << 10, L1I: 32 << 10, L2: 2 << 20, L3: 36 << 20},
				Hz:       3000000000,
				Features: []string{"avx2", "avx_vnni", "fma"}}
			if ecore {
				c.PhysicalCores, c.ThreadsPerCore = 32, 1
				c.Cache = cache4{L1D: 32 << 10, L1I: 64 << 10, L2: 4 << 20, L3: 36 << 20}
			}
			return c
		}
		sibs := func(c int) []int {
			if c < 16 {
				return []int{c &^ 1, c | 1}
			}
			return one(c)
		}
		ms = append(ms, &machine{
			dir: v.dir,
			probe: probe{GOOS: "linux", GOARCH: "amd64", Affinity: v.affinity,
				Note: noteBuilt + v.what + " Intel Core i9-13900K desktop (Raptor Lake, family 6 model 183 = 0xB7, stepping 1): 8 P-cores with Hyper-Threading + 16 E-cores = 24 cores, 32 CPUs. " +
					"Linux numbers the P-core threads first with siblings adjacent (cpu0/cpu1 = P-core 0 ... cpu14/cpu15 = P-core 7), then the E-cores 16-31; " +
					"the hybrid PMUs list them: /sys/devices/cpu_core/cpus 0-15, /sys/devices/cpu_atom/cpus 16-31 (https://www.kernel.org/doc/html/latest/admin-guide/perf/ and tools/perf/Documentation/intel-hybrid.txt). " +
					"Caches: P L1d 48K, L1i 32K, L2 2048K per P-core; E L1d 32K, L1i 64K, L2 4096K shared by each cluster of 4 E-cores (16-19, 20-23, 24-27, 28-31); L3 36M shared by all " +
					"(https://www.intel.com/content/www/us/en/products/sku/230496/intel-core-i913900k-processor-36m-cache-up-to-5-80-ghz/specifications.html, https://askit.ro/solutii/review-intel-core-i9-13900k-processor). " +
					"No cpu_capacity files (classes must come from the PMU lists). CPUID (klauspost/cpuid) answers for the core it runs on: on a P-core 32 logical, 2 threads per core, hence 16 physical (a hint only); on an E-core 1 thread per core and the E-core caches. " +
					sysfsDocs,
				CPUID: cpuidRPL(v.affinity[0] >= 16),
			},
			online: cpus,
			pkg:    zero,
			die:    zero,
			sibs:   sibs,
			caches: func(c int) []cacheIdx {
				if c < 16 {
					return x86caches("48K", "32K", "2048K", sibs(c), "36864K", cpus)
				}
				cl := 16 + (c-16)/4*4
				return []cacheIdx{
					{1, "Data", "32K", one(c)},
					{1, "Instruction", "64K", one(c)},
					{2, "Unified", "4096K", rng(cl, cl+3)},
					{3, "Unified", "36864K", cpus},
				}
			},
			nodes: []node{{0, cpus, 65536000}},
			cpuinfo: x86info(cpus, "GenuineIntel", 6, 183, 1, "13th Gen Intel(R) Core(TM) i9-13900K", "3000.000", 36864, flagsRPL, zero, func(c int) int {
				if c < 16 {
					return c / 2 * 4 // P-core core ids 0,4,8,... as Linux prints them
				}
				return 32 + c - 16
			}, 32, 24),
			memKB:  65536000,
			cgroup: "0::/user.slice/user-1000.slice/session-2.scope",
			files: map[string]string{
				"/sys/devices/cpu_core/cpus": "0-15",
				"/sys/devices/cpu_atom/cpus": "16-31",
			},
		})
	}

	// ---- 4. xeon-2s-snc2 ------------------------------------------------
	{
		cpus := rng(0, 63)
		pkg := func(c int) int { return c % 32 / 16 }
		ms = append(ms, &machine{
			dir: "xeon-2s-snc2",
			probe: probe{GOOS: "linux", GOARCH: "amd64", Affinity: cpus,
				Note: noteBuilt + "Two-socket Intel Xeon Gold 6444Y (Sapphire Rapids, family 6 model 143 = 0x8F, stepping 8; 16 cores / 32 threads per socket) with sub-NUMA clustering SNC2: 4 NUMA nodes. " +
					"Linux numbers the first threads of socket 0 as 0-15 and of socket 1 as 16-31, then their siblings 32-47 (socket 0) and 48-63 (socket 1): cpuN and cpuN+32 share a core. " +
					"Nodes: node0 0-7,32-39; node1 8-15,40-47; node2 16-23,48-55; node3 24-31,56-63. L1d 48K, L1i 32K, L2 2048K per core, L3 45M per socket (shared_cpu_list 0-15,32-47 and 16-31,48-63: " +
					"with SNC the L3 is still listed per socket). CPUID describes one package: 32 logical, 2 per core, 16 physical. amx_permission true (Linux >= 5.16 grants it on request). " +
					"https://www.intel.com/content/www/us/en/products/sku/232376/intel-xeon-gold-6444y-processor-45m-cache-3-60-ghz/specifications.html, " +
					"SNC: https://www.intel.com/content/www/us/en/developer/articles/technical/fourth-generation-xeon-scalable-family-overview.html. " + sysfsDocs,
				CPUID: cpuid{Vendor: "GenuineIntel", Brand: "Intel(R) Xeon(R) Gold 6444Y", Family: 6, Model: 143, Stepping: 8,
					PhysicalCores: 16, LogicalCores: 32, ThreadsPerCore: 2, CacheLine: 64,
					Cache: cache4{L1D: 48 << 10, L1I: 32 << 10, L2: 2 << 20, L3: 45 << 20},
					Hz:    3600000000,
					Features: []string{"amx_bf16", "amx_int8", "amx_tile", "avx2", "avx512_bf16", "avx512_fp16", "avx512_vnni", "avx512bw", "avx512dq", "avx512f", "avx512vl",
						"avx_vnni", "fma"},
					AMXPermission: true},
			},
			online: cpus,
			pkg:    pkg,
			die:    zero,
			sibs:   func(c int) []int { return []int{c % 32, c%32 + 32} },
			caches: func(c int) []cacheIdx {
				core := []int{c % 32, c%32 + 32}
				l3 := cat(rng(0, 15), rng(32, 47))
				if pkg(c) == 1 {
					l3 = cat(rng(16, 31), rng(48, 63))
				}
				return x86caches("48K", "32K", "2048K", core, "46080K", l3)
			},
			nodes: []node{
				{0, cat(rng(0, 7), rng(32, 39)), 131072000},
				{1, cat(rng(8, 15), rng(40, 47)), 132096000},
				{2, cat(rng(16, 23), rng(48, 55)), 132096000},
				{3, cat(rng(24, 31), rng(56, 63)), 132096000},
			},
			cpuinfo: x86info(cpus, "GenuineIntel", 6, 143, 8, "Intel(R) Xeon(R) Gold 6444Y", "3600.000", 46080, flagsSPR, pkg, func(c int) int { return c % 16 }, 32, 16),
			memKB:   527360000,
			cgroup:  "0::/system.slice/ktune.service",
		})
	}

	// ---- 5. container-4-of-64 -------------------------------------------
	genoa := func(dir, cgroup string, files map[string]string, note string) *machine {
		cpus := rng(0, 63)
		return &machine{
			dir: dir,
			probe: probe{GOOS: "linux", GOARCH: "amd64", Affinity: cpus,
				Note: noteBuilt + note + " Host: one AMD EPYC 9354 (Genoa, family 25 model 17 = 0x11, stepping 1): 32 cores with SMT = 64 CPUs, NPS1 (one NUMA node). " +
					"Linux numbers the first threads 0-31 and their siblings 32-63 (cpuN and cpuN+32 share a core, as on EPYC servers). " +
					"8 CCDs of 4 cores, each CCD's L3 of 32M shared by its 8 CPUs (0-3,32-35; 4-7,36-39; ...): 256M in all; L1d 32K, L1i 32K, L2 1024K per core. " +
					"A container sees the host's /sys/devices/system/cpu and /proc/cpuinfo, its own /proc/self/cgroup and cgroup files. " +
					"https://www.amd.com/en/products/processors/server/epyc/4th-generation-9004-and-8004-series/amd-epyc-9354.html, https://en.wikichip.org/wiki/amd/microarchitectures/zen_4. " + sysfsDocs,
				CPUID: cpuid{Vendor: "AuthenticAMD", Brand: "AMD EPYC 9354 32-Core Processor", Family: 25, Model: 17, Stepping: 1,
					PhysicalCores: 32, LogicalCores: 64, ThreadsPerCore: 2, CacheLine: 64,
					Cache:    cache4{L1D: 32 << 10, L1I: 32 << 10, L2: 1 << 20, L3: 32 << 20},
					Features: []string{"avx2", "avx512_bf16", "avx512_vnni", "avx512bw", "avx512dq", "avx512f", "avx512vl", "fma"}},
			},
			online: cpus,
			pkg:    zero,
			die:    zero,
			sibs:   func(c int) []int { return []int{c % 32, c%32 + 32} },
			caches: func(c int) []cacheIdx {
				core := []int{c % 32, c%32 + 32}
				ccd := c % 32 / 4 * 4
				return x86caches("32K", "32K", "1024K", core, "32768K", cat(rng(ccd, ccd+3), rng(ccd+32, ccd+35)))
			},
			nodes:   []node{{0, cpus, 395978752}},
			cpuinfo: x86info(cpus, "AuthenticAMD", 25, 17, 1, "AMD EPYC 9354 32-Core Processor", "3249.998", 1024, flagsGenoa, zero, func(c int) int { return c % 32 }, 64, 32),
			memKB:   395978752,
			cgroup:  cgroup,
			files:   files,
		}
	}
	ms = append(ms, genoa("container-4-of-64", "0::/", map[string]string{"/sys/fs/cgroup/cpu.max": "400000 100000"},
		"A container (docker run --cpus=4, cgroup v2 with its own cgroup namespace: /proc/self/cgroup is \"0::/\" and its cgroup is the mount's root, /sys/fs/cgroup/cpu.max \"400000 100000\") "+
			"with no cpuset: the affinity is all 64 CPUs. "+cgroup2Docs+"Docker --cpus: https://docs.docker.com/engine/containers/resource_constraints/#cpu."))

	// ---- 5b. container-1.5cpu-v1 and systemd quotas on the same host ----
	icx8 := func(dir, cgroup string, files map[string]string, note string) *machine {
		cpus := rng(0, 7)
		sib := func(c int) []int { return []int{c % 4, c%4 + 4} }
		return &machine{
			dir: dir,
			probe: probe{GOOS: "linux", GOARCH: "amd64", Affinity: cpus,
				Note: noteBuilt + note + " Host: an AWS m6i.2xlarge (Intel Xeon Platinum 8375C, Ice Lake, family 6 model 106 = 0x6A, stepping 6), 8 vCPUs = 4 cores with Hyper-Threading, siblings cpuN and cpuN+4, " +
					"L1d 48K, L1i 32K, L2 1280K per core, L3 54M shared. " +
					"https://aws.amazon.com/ec2/instance-types/m6i/, https://docs.aws.amazon.com/AWSEC2/latest/UserGuide/cpu-options-supported-instances-values.html. " + sysfsDocs,
				CPUID: cpuid{Vendor: "GenuineIntel", Brand: "Intel(R) Xeon(R) Platinum 8375C CPU @ 2.90GHz", Family: 6, Model: 106, Stepping: 6, Hypervisor: "KVMKVMKVM",
					PhysicalCores: 4, LogicalCores: 8, ThreadsPerCore: 2, CacheLine: 64,
					Cache:    cache4{L1D: 48 << 10, L1I: 32 << 10, L2: 1280 << 10, L3: 54 << 20},
					Hz:       2900000000,
					Features: []string{"avx2", "avx512_vnni", "avx512bw", "avx512dq", "avx512f", "avx512vl", "fma"}},
			},
			online:  cpus,
			pkg:     zero,
			die:     zero,
			sibs:    sib,
			caches:  func(c int) []cacheIdx { return x86caches("48K", "32K", "1280K", sib(c), "55296K", cpus) },
			nodes:   []node{{0, cpus, 32086528}},
			cpuinfo: x86info(cpus, "GenuineIntel", 6, 106, 6, "Intel(R) Xeon(R) Platinum 8375C CPU @ 2.90GHz", "2899.968", 55296, flagsICX, zero, func(c int) int { return c % 4 }, 8, 4),
			memKB:   32086528,
			cgroup:  cgroup,
			files:   files,
		}
	}
	v1 := icx8("container-1.5cpu-v1", strings.Join([]string{
		"12:hugetlb:/docker/3f9a0c2b7d1e",
		"11:memory:/docker/3f9a0c2b7d1e",
		"10:pids:/docker/3f9a0c2b7d1e",
		"9:cpuset:/docker/3f9a0c2b7d1e",
		"8:net_cls,net_prio:/docker/3f9a0c2b7d1e",
		"7:perf_event:/docker/3f9a0c2b7d1e",
		"6:freezer:/docker/3f9a0c2b7d1e",
		"5:devices:/docker/3f9a0c2b7d1e",
		"4:cpu,cpuacct:/docker/3f9a0c2b7d1e",
		"3:blkio:/docker/3f9a0c2b7d1e",
		"2:rdma:/",
		"1:name=systemd:/docker/3f9a0c2b7d1e",
	}, "\n"), map[string]string{
		"/sys/fs/cgroup/cpu,cpuacct/cpu.cfs_quota_us":  "150000",
		"/sys/fs/cgroup/cpu,cpuacct/cpu.cfs_period_us": "100000",
	}, "A Docker container (docker run --cpus=1.5) on a cgroup v1 host without cgroup namespaces: /proc/self/cgroup names /docker/<id> in every hierarchy "+
		"(\"4:cpu,cpuacct:/docker/3f9a...\"), while the container's /sys/fs/cgroup/cpu,cpuacct is its own cgroup bind-mounted at the mount's root: "+
		"cpu.cfs_quota_us 150000, cpu.cfs_period_us 100000 (1.5 CPUs). "+cgroup1Docs+
		"The host runs an older kernel (4.14, as Amazon Linux 2 did) that predates die_id and core_cpus_list (Linux 5.2): "+
		"cores come from topology/thread_siblings_list alone.")
	v1.die, v1.oldTopology = nil, true
	ms = append(ms, v1)
	ms = append(ms, icx8("systemd-quota-0.5", "0::/batch.slice/ktune-run.service", map[string]string{
		"/sys/fs/cgroup/batch.slice/cpu.max":                   "max 100000",
		"/sys/fs/cgroup/batch.slice/ktune-run.service/cpu.max": "50000 100000",
	}, "Run on the host (no container) as a systemd unit with CPUQuota=50% (systemd-run --slice=batch -p CPUQuota=50%): cgroup v2, "+
		"/proc/self/cgroup \"0::/batch.slice/ktune-run.service\", the unit's cpu.max \"50000 100000\" (half a CPU), its slice's \"max 100000\". "+
		cgroup2Docs+"CPUQuota: https://www.freedesktop.org/software/systemd/man/latest/systemd.resource-control.html."))
	ms = append(ms, icx8("systemd-slice-quota-2", "0::/batch.slice/ktune-run.service", map[string]string{
		"/sys/fs/cgroup/batch.slice/cpu.max":                   "100000 50000",
		"/sys/fs/cgroup/batch.slice/ktune-run.service/cpu.max": "max 100000",
	}, "Run on the host as a systemd unit with no quota of its own (cpu.max \"max 100000\") inside a slice limited to 2 CPUs with a 50 ms period "+
		"(CPUQuota=200%, CPUQuotaPeriodSec=50ms: cpu.max \"100000 50000\"): the parent's limit binds the child. "+
		cgroup2Docs+"CPUQuota: https://www.freedesktop.org/software/systemd/man/latest/systemd.resource-control.html."))

	// ---- 6. taskset-3-of-16 ---------------------------------------------
	{
		cpus := rng(0, 15)
		sib := func(c int) []int { return []int{c &^ 1, c | 1} }
		ms = append(ms, &machine{
			dir: "taskset-3-of-16",
			probe: probe{GOOS: "linux", GOARCH: "amd64", Affinity: []int{2, 5, 9},
				Note: noteBuilt + "AMD Ryzen 7 5800X desktop (Zen 3, family 25 model 33 = 0x21, stepping 0): 8 cores, 16 CPUs, run under taskset -c 2,5,9. " +
					"On AM4 Ryzen desktops Linux numbers SMT siblings adjacently (thread_siblings_list 0-1, 2-3, ...; a real 16-CPU AMD dump showing this: https://github.com/OpenNebula/one/issues/3972); " +
					"some newer AMD mobile parts number them N and N+8 instead (https://github.com/mengmeet/PowerControl/issues/27): with either layout CPUs 2, 5 and 9 are on 3 different cores. " +
					"Here: 2 is core 1 (2-3), 5 core 2 (4-5), 9 core 4 (8-9). L1d 32K, L1i 32K, L2 512K per core, L3 32M shared by all 16 CPUs (one CCX). " +
					"https://www.amd.com/en/products/processors/desktops/ryzen/5000-series/amd-ryzen-7-5800x.html. " + sysfsDocs,
				CPUID: cpuid{Vendor: "AuthenticAMD", Brand: "AMD Ryzen 7 5800X 8-Core Processor", Family: 25, Model: 33, Stepping: 0,
					PhysicalCores: 8, LogicalCores: 16, ThreadsPerCore: 2, CacheLine: 64,
					Cache:    cache4{L1D: 32 << 10, L1I: 32 << 10, L2: 512 << 10, L3: 32 << 20},
					Features: []string{"avx2", "fma"}},
			},
			online:  cpus,
			pkg:     zero,
			die:     zero,
			sibs:    sib,
			caches:  func(c int) []cacheIdx { return x86caches("32K", "32K", "512K", sib(c), "32768K", cpus) },
			nodes:   []node{{0, cpus, 32780000}},
			cpuinfo: x86info(cpus, "AuthenticAMD", 25, 33, 0, "AMD Ryzen 7 5800X 8-Core Processor", "3800.000", 512, flagsZen3, zero, func(c int) int { return c / 2 }, 16, 8),
			memKB:   32780000,
			cgroup:  "0::/user.slice/user-1000.slice/session-4.scope",
		})
	}

	// ---- 7. graviton3-64 ------------------------------------------------
	{
		cpus := rng(0, 63)
		ms = append(ms, &machine{
			dir: "graviton3-64",
			probe: probe{GOOS: "linux", GOARCH: "arm64", Affinity: cpus,
				Note: noteBuilt + "AWS Graviton3 (c7g.16xlarge): 64 Arm Neoverse V1 cores, no SMT, one NUMA node; MIDR 0x411FD401 (implementer 0x41, variant 1, part 0xd40, revision 1), " +
					"which klauspost/cpuid reports as family 31 (0x1F, MIDR bits 23:16) and model 54273 (0xD401); its logical count on Linux arm64 is runtime.NumCPU(). " +
					"SVE vector length 256 bits; features asimd, asimddp, i8mm, bf16, sve (no sve2). /proc/cpuinfo per processor as on a c7g (https://github.com/archspec/archspec-json/pull/51, " +
					"with the i8mm/bf16 names newer kernels print). Caches: L1d 64K, L1i 64K, L2 1024K per core, L3 32M shared by all 64 " +
					"(https://en.wikichip.org/wiki/AWS_Graviton3). We list the L3 in sysfs (cache/index3, 32768K, shared_cpu_list 0-63) because the ACPI PPTT of Neoverse servers " +
					"describes the system-level cache (an Ampere Altra lscpu shows \"L3 cache: 32 MiB\": https://github.com/archspec/archspec-json/issues/41); this is NOT verified on a real c7g, " +
					"whose kernel may omit index3 — then ktune must report L3 unknown, as zen5-bhyve-2vcpu checks. cpu_capacity 1024 everywhere (uniform), no die_id file on arm64. " + sysfsDocs,
				CPUID: cpuid{Vendor: "Arm Limited", Family: 31, Model: 54273,
					PhysicalCores: 64, LogicalCores: 64, ThreadsPerCore: 1, CacheLine: 64,
					Cache:    cache4{L1D: -1, L1I: -1, L2: -1, L3: -1},
					Features: []string{"asimd", "asimddp", "bf16", "i8mm", "sve"}, SVEBits: 256},
			},
			online:   cpus,
			pkg:      zero,
			sibs:     one,
			capacity: func(int) int { return 1024 },
			caches: func(c int) []cacheIdx {
				return []cacheIdx{
					{1, "Data", "64K", one(c)},
					{1, "Instruction", "64K", one(c)},
					{2, "Unified", "1024K", one(c)},
					{3, "Unified", "32768K", cpus},
				}
			},
			nodes:   []node{{0, cpus, 129479040}},
			cpuinfo: arminfo(cpus, "2100.00", featuresV1, func(int) string { return "0x1" }, func(int) string { return "0xd40" }, func(int) int { return 1 }),
			memKB:   129479040,
			cgroup:  "0::/system.slice/ktune.service",
		})
	}

	// ---- 8. rk3588-big-little and variants ------------------------------
	rk := func(dir string, capacity, numa bool, affinity []int, what string) *machine {
		cpus := rng(0, 7)
		little := func(c int) bool { return c < 4 }
		// the MIDR klauspost/cpuid reads is the one of the CPU the probe
		// ran on: an A55 (r2p0, 0x412FD050) if it may run there, else an
		// A76 (r4p0, 0x414FD0B0)
		family, model, midrNote := 0x2F, 0xD050, "an A55, MIDR 0x412FD050: family 47, model 53328"
		if !little(affinity[0]) {
			family, model, midrNote = 0x4F, 0xD0B0, "an A76, MIDR 0x414FD0B0: family 79, model 53424"
		}
		m := &machine{
			dir: dir,
			probe: probe{GOOS: "linux", GOARCH: "arm64", Affinity: affinity,
				Note: noteBuilt + what + " Rockchip RK3588 board (e.g. Radxa Rock 5B): cpu0-3 Cortex-A55 (CPU part 0xd05, variant 0x2), cpu4-7 Cortex-A76 (CPU part 0xd0b, variant 0x4), " +
					"from Linux's arch/arm64/boot/dts/rockchip/rk3588-base.dtsi (https://github.com/torvalds/linux/blob/master/arch/arm64/boot/dts/rockchip/rk3588-base.dtsi): " +
					"capacity-dmips-mhz 530 (A55) and 1024 (A76); with the A55 at 1.8 GHz and the A76 at 2.304 GHz the kernel's cpu_capacity is 530*1800/(1024*2304)*1024 = 414 and 1024; " +
					"L1d/L1i 32K (A55) and 64K (A76), L2 128K (A55) and 512K (A76) per core, L3 3M shared by all 8. physical_package_id 0 for all (kernels >= 5.16 keep clusters in cluster_id). " +
					"klauspost/cpuid reads the MIDR of the CPU it runs on: here " + midrNote + ", and reports runtime.NumCPU() (the affinity count) as its logical count. " + sysfsDocs,
				CPUID: cpuid{Vendor: "Arm Limited", Family: family, Model: model,
					PhysicalCores: len(affinity), LogicalCores: len(affinity), ThreadsPerCore: 1, CacheLine: 64,
					Cache:    cache4{L1D: -1, L1I: -1, L2: -1, L3: -1},
					Features: []string{"asimd", "asimddp"}},
			},
			online: cpus,
			pkg:    zero,
			sibs:   one,
			caches: func(c int) []cacheIdx {
				l1, l2 := "64K", "512K"
				if little(c) {
					l1, l2 = "32K", "128K"
				}
				return []cacheIdx{
					{1, "Data", l1, one(c)},
					{1, "Instruction", l1, one(c)},
					{2, "Unified", l2, one(c)},
					{3, "Unified", "3072K", cpus},
				}
			},
			nodes: []node{{0, cpus, 16119912}},
			cpuinfo: arminfo(cpus, "48.00", featuresRK,
				func(c int) string { return map[bool]string{true: "0x2", false: "0x4"}[little(c)] },
				func(c int) string { return map[bool]string{true: "0xd05", false: "0xd0b"}[little(c)] },
				func(c int) int { return 0 }),
			memKB:  16119912,
			cgroup: "0::/user.slice/user-1000.slice/session-1.scope",
		}
		if !numa {
			m.nodes = nil
		}
		if capacity {
			m.capacity = func(c int) int {
				if little(c) {
					return 414
				}
				return 1024
			}
		}
		return m
	}
	ms = append(ms,
		rk("rk3588-big-little", true, true, rng(0, 7), "All 8 CPUs usable, cpu_capacity present."),
		rk("rk3588-no-capacity", false, false, rng(0, 7), "Variant without any cpu_capacity file (a kernel or sandbox that does not expose it): the classes must come from /proc/cpuinfo's CPU part. "+
			"Its kernel is also built without CONFIG_NUMA, as vendor board kernels often are, so there is no /sys/devices/system/node at all "+
			"(as on this Amlogic board: https://github.com/util-linux/util-linux/issues/1207): one node 0 holding all 8 CPUs and all memory."),
		rk("rk3588-taskset-big", true, true, rng(4, 7), "Variant run under taskset -c 4-7 (the four A76 only): the usable cores are uniform."),
	)
	return ms
}

func main() {
	root := filepath.Join("internal", "cpu", "testdata", "machines")
	if _, err := os.Stat(root); err != nil {
		fmt.Fprintln(os.Stderr, "run from the repository root:", err)
		os.Exit(1)
	}
	for _, m := range machines() {
		if err := os.MkdirAll(filepath.Join(root, m.dir), 0o755); err != nil {
			panic(err)
		}
		if err := m.write(root); err != nil {
			fmt.Fprintln(os.Stderr, m.dir+":", err)
			os.Exit(1)
		}
		fmt.Println("wrote", filepath.Join(root, m.dir))
	}
}
