package cpu

import (
	"testing"
	"testing/fstest"
)

// TestCgroupMemAvailable: a container's memory limit, v2 and v1, less its
// usage plus the reclaimable page cache; the tightest ancestor wins; no
// limit (v2 "max", v1's huge number) or no cgroup file gives none.
func TestCgroupMemAvailable(t *testing.T) {
	const mib = 1 << 20
	file := func(s string) *fstest.MapFile { return &fstest.MapFile{Data: []byte(s + "\n")} }
	for _, c := range []struct {
		name  string
		fs    fstest.MapFS
		want  int64
		limit bool
	}{
		{"v2", fstest.MapFS{
			"proc/self/cgroup":                 file("0::/ctr"),
			"sys/fs/cgroup/ctr/memory.max":     file("1073741824"),
			"sys/fs/cgroup/ctr/memory.current": file("629145600"),
			"sys/fs/cgroup/ctr/memory.stat":    file("anon 400000000\nfile 229145600\ninactive_file 104857600\nactive_file 1"),
			"sys/fs/cgroup/memory.max":         file("max"),
			"sys/fs/cgroup/memory.current":     file("999999999999"),
		}, 1024*mib - 600*mib + 100*mib, true},
		{"v2 parent tighter", fstest.MapFS{
			"proc/self/cgroup":                 file("0::/a/b"),
			"sys/fs/cgroup/a/b/memory.max":     file("8589934592"),
			"sys/fs/cgroup/a/b/memory.current": file("0"),
			"sys/fs/cgroup/a/memory.max":       file("2147483648"),
			"sys/fs/cgroup/a/memory.current":   file("1073741824"),
		}, 1024 * mib, true},
		{"v2 over its limit", fstest.MapFS{
			"proc/self/cgroup":               file("0::/c"),
			"sys/fs/cgroup/c/memory.max":     file("1048576"),
			"sys/fs/cgroup/c/memory.current": file("2097152"),
		}, 0, true},
		{"v1", fstest.MapFS{
			"proc/self/cgroup": file("9:cpu,cpuacct:/\n4:memory:/docker/x\n0::/"),
			"sys/fs/cgroup/memory/docker/x/memory.limit_in_bytes": file("4294967296"),
			"sys/fs/cgroup/memory/docker/x/memory.usage_in_bytes": file("3221225472"),
			"sys/fs/cgroup/memory/docker/x/memory.stat":           file("cache 1\ntotal_inactive_file 536870912"),
			"sys/fs/cgroup/memory/memory.limit_in_bytes":          file("9223372036854771712"),
			"sys/fs/cgroup/memory/memory.usage_in_bytes":          file("1"),
		}, 1536 * mib, true},
		{"v1 unlimited", fstest.MapFS{
			"proc/self/cgroup": file("4:memory:/process_api/y"),
			"sys/fs/cgroup/memory/process_api/y/memory.limit_in_bytes": file("9223372036854771712"),
			"sys/fs/cgroup/memory/process_api/y/memory.usage_in_bytes": file("13267480576"),
		}, 0, false},
		{"v2 max", fstest.MapFS{
			"proc/self/cgroup":               file("0::/u"),
			"sys/fs/cgroup/u/memory.max":     file("max"),
			"sys/fs/cgroup/u/memory.current": file("5"),
		}, 0, false},
		{"no cgroup file", fstest.MapFS{}, 0, false},
	} {
		got, ok := cgroupMemAvailable(&Source{FS: c.fs})
		if ok != c.limit || got != c.want {
			t.Errorf("%s: %d MiB (limited %v), want %d MiB (limited %v)", c.name, got/mib, ok, c.want/mib, c.limit)
		}
	}
}
