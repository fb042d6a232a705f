package cpu

// Source: everything detection reads of a machine, live or captured.

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"
)

// A Source is what detection reads of a machine: the CPUID answers (a
// hint: VMs lie about core counts and caches), and the operating system's
// own description: files under /proc and /sys and the affinity mask on
// Linux, sysctl values on macOS, GetLogicalProcessorInformationEx on
// Windows. Live detection reads the running system (LiveSource); `ktune
// detect --capture DIR` writes what it read into a folder (WriteCapture),
// and LoadCapture reads such a folder back, so that detection runs
// unchanged on a machine we do not have. DetectFrom turns a Source into an
// Info and is pure: the same Source gives the same Info on any host.
type Source struct {
	GOOS   string `json:"goos"`
	GOARCH string `json:"goarch"`
	// CPUID is what the processor reports of itself.
	CPUID CPUIDFacts `json:"cpuid"`
	// Affinity lists the logical CPUs the process may run on
	// (sched_getaffinity on Linux, the process affinity mask on Windows);
	// nil when the OS has no such call.
	Affinity []int `json:"affinity,omitempty"`
	// Env holds the environment variables detection honours (GOMAXPROCS).
	Env map[string]string `json:"env,omitempty"`
	// MemBytes is the physical memory where no file says it (Windows:
	// GlobalMemoryStatusEx); 0 unknown.
	MemBytes int64 `json:"mem_bytes,omitempty"`
	// Note says where a captured machine came from (real hardware, or a
	// fixture built from documented formats).
	Note string `json:"note,omitempty"`
	// Captured is when and by which ktune a capture was written.
	Captured string `json:"captured,omitempty"`

	// FS holds the OS's files, rooted at "/" (names without the leading
	// slash); nil reads nothing. Live, it records what detection reads.
	FS fs.FS `json:"-"`
	// Sysctl holds macOS sysctl values by name (sysctl.txt in a capture,
	// in `sysctl name...` output form: "name: value" lines).
	Sysctl map[string]string `json:"-"`
	// GLPI is Windows' GetLogicalProcessorInformationEx(RelationAll)
	// buffer (glpi.bin in a capture).
	GLPI []byte `json:"-"`
}

// CPUIDFacts are the processor's answers about itself, as klauspost/cpuid
// (and, for what CPUID lacks, the kernel: SVE length, SME, the AMX
// permission) gives them. Core counts and cache sizes here are hints only.
type CPUIDFacts struct {
	Vendor         string `json:"vendor"`
	Brand          string `json:"brand"`
	Family         int    `json:"family"`
	Model          int    `json:"model"`
	Stepping       int    `json:"stepping"`
	Hypervisor     string `json:"hypervisor,omitempty"`
	PhysicalCores  int    `json:"physical_cores"`
	LogicalCores   int    `json:"logical_cores"`
	ThreadsPerCore int    `json:"threads_per_core"`
	CacheLine      int    `json:"cache_line"`
	Cache          Cache  `json:"cache"`
	Hz             int64  `json:"hz"`
	// Features are the hardware features (our /proc/cpuinfo spellings).
	Features      []string `json:"features"`
	SVEBits       int      `json:"sve_bits,omitempty"`
	AMXPermission bool     `json:"amx_permission,omitempty"`
}

// Hardware parses Features (unknown names are ignored: a capture from a
// newer ktune may name more).
func (c *CPUIDFacts) Hardware() Set {
	var s Set
	for _, n := range c.Features {
		if f, err := ParseFeature(n); err == nil {
			s |= NewSet(f)
		}
	}
	return s
}

// readFile returns a file of the source's OS tree, trimmed ("" and false
// when absent or unreadable).
func (s *Source) readFile(name string) (string, bool) {
	if s.FS == nil {
		return "", false
	}
	b, err := fs.ReadFile(s.FS, strings.TrimPrefix(name, "/"))
	if err != nil {
		return "", false
	}
	return strings.TrimSpace(string(b)), true
}

// readInt reads a file holding one integer.
func (s *Source) readInt(name string) (int64, bool) {
	v, ok := s.readFile(name)
	if !ok {
		return 0, false
	}
	n, err := strconv.ParseInt(v, 10, 64)
	return n, err == nil
}

// readDir lists a folder of the source's OS tree (nil when absent).
func (s *Source) readDir(name string) []string {
	if s.FS == nil {
		return nil
	}
	es, err := fs.ReadDir(s.FS, strings.TrimPrefix(name, "/"))
	if err != nil {
		return nil
	}
	out := make([]string, 0, len(es))
	for _, e := range es {
		out = append(out, e.Name())
	}
	return out
}

// ---- the recording file system of live detection ------------------------

// recordFS reads the live root and remembers every file it returned, so a
// capture holds exactly what detection read.
type recordFS struct {
	root  fs.FS
	mu    sync.Mutex
	files map[string][]byte
	dirs  map[string]bool
}

func newRecordFS(root fs.FS) *recordFS {
	return &recordFS{root: root, files: map[string][]byte{}, dirs: map[string]bool{}}
}

func (r *recordFS) Open(name string) (fs.File, error) { return r.root.Open(name) }

func (r *recordFS) ReadFile(name string) ([]byte, error) {
	b, err := fs.ReadFile(r.root, name)
	if err == nil {
		r.mu.Lock()
		r.files[name] = append([]byte(nil), b...)
		r.mu.Unlock()
	}
	return b, err
}

func (r *recordFS) ReadDir(name string) ([]fs.DirEntry, error) {
	es, err := fs.ReadDir(r.root, name)
	if err == nil {
		r.mu.Lock()
		r.dirs[name] = true
		r.mu.Unlock()
	}
	return es, err
}

// ---- captures ----------------------------------------------------------------

// Capture file names inside a capture folder.
const (
	captureProbe  = "probe.json"
	captureFS     = "fs"
	captureSysctl = "sysctl.txt"
	captureGLPI   = "glpi.bin"
)

// WriteCapture writes what detection read of this machine into dir (which
// must not exist or be empty): probe.json (CPUID answers, affinity,
// environment), fs/ (the /proc and /sys files read), sysctl.txt (macOS)
// and glpi.bin (Windows). The folder is built beside dir and renamed into
// place, so an interrupted capture leaves nothing half-written.
func WriteCapture(dir string) error {
	initState()
	mu.Lock()
	src := live
	mu.Unlock()
	if src == nil {
		return errors.New("cpu: no live detection to capture")
	}
	return writeCapture(dir, src)
}

func writeCapture(dir string, src *Source) error {
	if dir == "" {
		return errors.New("no folder given")
	}
	if st, err := os.Lstat(dir); err == nil && st.Mode()&fs.ModeSymlink != 0 {
		return fmt.Errorf("%s: a symbolic link; give a new folder", dir)
	}
	if es, err := os.ReadDir(dir); err == nil && len(es) > 0 {
		return fmt.Errorf("%s: exists and is not empty", dir)
	} else if err != nil && !os.IsNotExist(err) {
		return fmt.Errorf("%s: %v", dir, err)
	}
	parent := filepath.Dir(filepath.Clean(dir))
	if err := os.MkdirAll(parent, 0o755); err != nil {
		return err
	}
	tmp, err := os.MkdirTemp(parent, "."+filepath.Base(dir)+".tmp-")
	if err != nil {
		return err
	}
	ok := false
	defer func() {
		if !ok {
			os.RemoveAll(tmp)
		}
	}()
	meta := *src
	if meta.Captured == "" {
		meta.Captured = time.Now().UTC().Format(time.RFC3339)
	}
	b, err := json.MarshalIndent(&meta, "", "  ")
	if err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(tmp, captureProbe), append(b, '\n'), 0o644); err != nil {
		return err
	}
	if rec, isRec := src.FS.(*recordFS); isRec {
		rec.mu.Lock()
		files := make(map[string][]byte, len(rec.files))
		for k, v := range rec.files {
			files[k] = v
		}
		dirs := make([]string, 0, len(rec.dirs))
		for d := range rec.dirs {
			dirs = append(dirs, d)
		}
		rec.mu.Unlock()
		for _, d := range dirs {
			if err := os.MkdirAll(filepath.Join(tmp, captureFS, filepath.FromSlash(d)), 0o755); err != nil {
				return err
			}
		}
		for name, data := range files {
			p := filepath.Join(tmp, captureFS, filepath.FromSlash(name))
			if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
				return err
			}
			if err := os.WriteFile(p, data, 0o644); err != nil {
				return err
			}
		}
	}
	if len(src.Sysctl) > 0 {
		if err := os.WriteFile(filepath.Join(tmp, captureSysctl), []byte(FormatSysctl(src.Sysctl)), 0o644); err != nil {
			return err
		}
	}
	if len(src.GLPI) > 0 {
		if err := os.WriteFile(filepath.Join(tmp, captureGLPI), src.GLPI, 0o644); err != nil {
			return err
		}
	}
	os.Remove(dir) // an empty folder given as the destination
	if err := os.Rename(tmp, dir); err != nil {
		return err
	}
	ok = true
	return nil
}

// LoadCapture reads a folder written by WriteCapture (or built by hand in
// its format). Errors name the folder and the file.
func LoadCapture(dir string) (*Source, error) {
	st, err := os.Stat(dir)
	if err != nil {
		return nil, fmt.Errorf("capture %s: %v", dir, errors.Unwrap(err))
	}
	if !st.IsDir() {
		return nil, fmt.Errorf("capture %s: not a folder", dir)
	}
	b, err := os.ReadFile(filepath.Join(dir, captureProbe))
	if err != nil {
		return nil, fmt.Errorf("capture %s: no %s (%v)", dir, captureProbe, errors.Unwrap(err))
	}
	var src Source
	dec := json.NewDecoder(strings.NewReader(string(b)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&src); err != nil {
		return nil, fmt.Errorf("capture %s: %s: %v", dir, captureProbe, err)
	}
	if dec.More() {
		return nil, fmt.Errorf("capture %s: %s: text after the JSON object", dir, captureProbe)
	}
	if c := src.CPUID.LogicalCores; c < 0 || c > maxCPU+1 {
		return nil, fmt.Errorf("capture %s: %s: cpuid logical_cores %d out of range (0 to %d)", dir, captureProbe, c, maxCPU+1)
	}
	switch src.GOOS {
	case "linux", "darwin", "windows", "freebsd":
	default:
		return nil, fmt.Errorf("capture %s: %s: goos %q is not one detection knows (linux, darwin, windows)", dir, captureProbe, src.GOOS)
	}
	switch src.GOARCH {
	case "amd64", "arm64":
	default:
		return nil, fmt.Errorf("capture %s: %s: goarch %q is not amd64 or arm64", dir, captureProbe, src.GOARCH)
	}
	for _, c := range src.Affinity {
		if c < 0 || c > maxCPU {
			return nil, fmt.Errorf("capture %s: %s: affinity CPU %d out of range", dir, captureProbe, c)
		}
	}
	if fsDir := filepath.Join(dir, captureFS); isDir(fsDir) {
		if err := checkCaptureTree(fsDir); err != nil {
			return nil, fmt.Errorf("capture %s: %v", dir, err)
		}
		src.FS = os.DirFS(fsDir)
	}
	for _, name := range []string{captureSysctl, captureGLPI} {
		if st, err := os.Lstat(filepath.Join(dir, name)); err == nil && (!st.Mode().IsRegular() || st.Size() > maxCaptureFile) {
			return nil, fmt.Errorf("capture %s: %s: not a regular file of at most %d MiB", dir, name, maxCaptureFile>>20)
		}
	}
	if b, err := os.ReadFile(filepath.Join(dir, captureSysctl)); err == nil {
		if src.Sysctl, err = ParseSysctl(string(b)); err != nil {
			return nil, fmt.Errorf("capture %s: %s: %v", dir, captureSysctl, err)
		}
	}
	if b, err := os.ReadFile(filepath.Join(dir, captureGLPI)); err == nil {
		src.GLPI = b
	}
	return &src, nil
}

// Limits on a capture's fs/ tree: what WriteCapture writes is a few
// hundred small regular files (a 256-CPU machine's, about a megabyte).
const (
	maxCaptureFile  = 64 << 20
	maxCaptureTotal = 512 << 20
	maxCaptureFiles = 1 << 20
)

// checkCaptureTree refuses what a capture never holds and detection must
// not read: symbolic links (they could reach this host's own /proc, or
// /dev/zero), devices, FIFOs and sockets, oversized files.
func checkCaptureTree(root string) error {
	var total int64
	files := 0
	return filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(filepath.Dir(root), p)
		if d.IsDir() {
			return nil
		}
		if d.Type()&fs.ModeSymlink != 0 {
			return fmt.Errorf("%s: a symbolic link (a capture holds regular files only)", rel)
		}
		if !d.Type().IsRegular() {
			return fmt.Errorf("%s: not a regular file (%v)", rel, d.Type())
		}
		st, err := d.Info()
		if err != nil {
			return err
		}
		if st.Size() > maxCaptureFile {
			return fmt.Errorf("%s: %d bytes, more than a capture's file ever holds (%d MiB)", rel, st.Size(), maxCaptureFile>>20)
		}
		total += st.Size()
		files++
		if total > maxCaptureTotal || files > maxCaptureFiles {
			return fmt.Errorf("%s: more than %d MiB or %d files in all", filepath.Base(root), maxCaptureTotal>>20, maxCaptureFiles)
		}
		return nil
	})
}

func isDir(p string) bool {
	st, err := os.Stat(p)
	return err == nil && st.IsDir()
}

// maxCPU bounds CPU numbers read from any file (Linux's NR_CPUS limit is
// 8192); a larger number is a corrupt file, not a machine.
const maxCPU = 1 << 14

// ParseSysctl reads `sysctl name...` output: "name: value" lines (values
// may be empty; blank lines and "#" comments are skipped).
func ParseSysctl(text string) (map[string]string, error) {
	out := map[string]string{}
	sc := bufio.NewScanner(strings.NewReader(text))
	sc.Buffer(make([]byte, 0, 64<<10), 1<<20)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		k, v, ok := strings.Cut(line, ":")
		if !ok {
			// `sysctl -a` on some versions writes "name = value"
			if k, v, ok = strings.Cut(line, " = "); !ok {
				return nil, fmt.Errorf("line %d: %q is not \"name: value\"", n, line)
			}
		}
		out[strings.TrimSpace(k)] = strings.TrimSpace(v)
	}
	return out, sc.Err()
}

// FormatSysctl writes values in ParseSysctl's form, sorted by name.
func FormatSysctl(m map[string]string) string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var b strings.Builder
	for _, k := range keys {
		fmt.Fprintf(&b, "%s: %s\n", k, m[k])
	}
	return b.String()
}
