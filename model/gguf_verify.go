// Checking a GGUF file's tensor data once, and remembering that it was.

package model

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"time"

	"github.com/ktune/ktune/internal/atomicfile"
	"github.com/ktune/ktune/internal/gguf"
	"github.com/ktune/ktune/internal/mapfile"
	"github.com/ktune/ktune/internal/quant"
)

// VerifyEnv names a folder for VerifyGGUFOnce's records instead of
// the ktune folder under the user cache directory; "off" keeps none (every
// load verifies).
const VerifyEnv = "KTUNE_VERIFIED_DIR"

// verifyChunk is the most bytes one read of VerifyGGUF takes.
const verifyChunk = 8 << 20

// VerifyGGUF checks every tensor of f as the kernels will read it: each
// quantized block's f16 scales (and mins) finite and an mxfp4 exponent in
// range, every f32, f16 and bf16 value finite (quant.CheckGGML), so that
// a damaged file is refused by name rather than giving NaN logits. It
// reads the whole file once, on up to min(threads, 4) goroutines, with
// direct I/O where the OS has it (Linux O_DIRECT): the file's pages are
// neither pulled into the page cache nor push out the ones there (a file
// larger than RAM would otherwise evict its own cached weights); where it
// has not, through the page cache. Errors name the file, the tensor and the
// block; they are InputErrors.
func VerifyGGUF(f *gguf.File, threads int) error {
	type job struct {
		part int
		t    gguf.TensorInfo
	}
	var jobs []job
	for _, t := range f.Tensors {
		if t.Size > 0 {
			jobs = append(jobs, job{t.Part, t})
		}
	}
	// the largest tensors first, so that the workers finish together
	slices.SortStableFunc(jobs, func(a, b job) int { return int(b.t.Size>>20) - int(a.t.Size>>20) })
	workers := min(max(threads, 1), 4, len(jobs))
	var (
		mu    sync.Mutex
		first error
		next  int
		wg    sync.WaitGroup
	)
	fail := func(err error) {
		mu.Lock()
		if first == nil {
			first = err
		}
		mu.Unlock()
	}
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			buf, release, err := mapfile.Anon(verifyChunk + 2*directAlign) // page-aligned for direct I/O
			if err != nil {
				fail(fmt.Errorf("model: verifying %s: %v", f.Path, err))
				return
			}
			if release != nil {
				defer release(buf)
			}
			files := map[int]*verifyReader{}
			defer func() {
				for _, r := range files {
					r.Close()
				}
			}()
			for {
				mu.Lock()
				i, stop := next, first != nil
				next++
				mu.Unlock()
				if stop || i >= len(jobs) {
					return
				}
				j := jobs[i]
				r := files[j.part]
				if r == nil {
					if r, err = openVerifyReader(f.Parts[j.part]); err != nil {
						fail(fmt.Errorf("model: verifying %s: %v", f.Parts[j.part], err))
						return
					}
					files[j.part] = r
				}
				if err := verifyTensor(r, j.t, buf); err != nil {
					fail(inputErr(fmt.Errorf("model: %s: GGUF tensor %q (%s): %w", f.Parts[j.part], j.t.Name, j.t.Type, err)))
					return
				}
			}
		}()
	}
	wg.Wait()
	return first
}

// verifyTensor checks one tensor, in chunks of whole blocks.
func verifyTensor(r *verifyReader, t gguf.TensorInfo, buf []byte) error {
	bb := int64(t.Type.BlockBytes())
	if bb <= 0 {
		return fmt.Errorf("unknown type")
	}
	step := verifyChunk / bb * bb
	for off := int64(0); off < int64(t.Size); off += step {
		n := min(step, int64(t.Size)-off)
		b, err := r.ReadAt(buf, int64(t.FileOffset)+off, n)
		if err != nil {
			return err
		}
		if err := quant.CheckGGML(t.Type, b); err != nil {
			return fmt.Errorf("at byte %d of its data: %w", off, err)
		}
	}
	return nil
}

// verifyReader reads a file for VerifyGGUF: by direct I/O (aligned
// offsets and lengths into an aligned buffer) where opened so.
type verifyReader struct {
	f      *os.File
	direct bool
}

func (r *verifyReader) Close() error { return r.f.Close() }

// ReadAt returns n bytes at off, read into buf (verifyChunk + 2·directAlign
// bytes, page-aligned).
func (r *verifyReader) ReadAt(buf []byte, off, n int64) ([]byte, error) {
	if !r.direct {
		got, err := r.f.ReadAt(buf[:n], off)
		if int64(got) == n {
			return buf[:n], nil
		}
		if err == nil || errors.Is(err, io.EOF) {
			err = io.ErrUnexpectedEOF
		}
		return nil, err
	}
	lo := off / directAlign * directAlign
	hi := (off + n + directAlign - 1) / directAlign * directAlign
	got, err := r.f.ReadAt(buf[:hi-lo], lo)
	if int64(got) < off+n-lo { // the file's end may cut the last aligned block short
		if err == nil || errors.Is(err, io.EOF) {
			err = io.ErrUnexpectedEOF
		}
		return nil, err
	}
	return buf[off-lo : off-lo+n], nil
}

// VerifyGGUFOnce is VerifyGGUF remembered: once a file has passed, a
// record of its identity (the absolute path, size, modification and change
// times, and device and inode where the OS has them) is kept in a folder
// under the user cache directory ($KTUNE_VERIFIED_DIR to choose another,
// "off" to keep none), and a later load of the same file, unchanged, skips
// the read. A file replaced, rewritten or touched since is verified again.
// Where no record can be written the file is verified at every load.
func VerifyGGUFOnce(f *gguf.File, threads int) error {
	dir := verifiedDir()
	var recs []verifiedRecord
	for _, p := range f.Parts {
		rec, err := identify(p)
		if err != nil {
			return inputErr(fmt.Errorf("model: %s: %v", p, err))
		}
		recs = append(recs, rec)
	}
	key := recordPath(dir, recs[0].Path)
	if dir != "" && sameRecords(key, recs) {
		return nil
	}
	if err := VerifyGGUF(f, threads); err != nil {
		return err
	}
	if dir != "" {
		if b, err := json.MarshalIndent(recs, "", "  "); err == nil && os.MkdirAll(dir, 0o755) == nil {
			_ = atomicfile.WriteBytes(key, b)
			pruneRecords(dir)
		}
	}
	return nil
}

// pruneRecords removes the records of files that no longer exist (a
// record is a few hundred bytes; a folder of them stays small).
func pruneRecords(dir string) {
	ents, err := os.ReadDir(dir)
	if err != nil || len(ents) > 10000 {
		return
	}
	for _, e := range ents {
		if filepath.Ext(e.Name()) != ".json" {
			continue
		}
		p := filepath.Join(dir, e.Name())
		b, err := os.ReadFile(p)
		var recs []verifiedRecord
		if err != nil || len(b) > 1<<20 || json.Unmarshal(b, &recs) != nil || len(recs) == 0 {
			continue // not ours to judge
		}
		if _, err := os.Stat(recs[0].Path); errors.Is(err, os.ErrNotExist) {
			os.Remove(p)
		}
	}
}

// verifiedRecord is one verified file's identity.
type verifiedRecord struct {
	Path     string    `json:"path"`
	Size     int64     `json:"size"`
	ModNanos int64     `json:"mtime_ns"`
	Change   int64     `json:"ctime_ns,omitempty"`
	Dev      uint64    `json:"dev,omitempty"`
	Inode    uint64    `json:"inode,omitempty"`
	Verified time.Time `json:"verified"`
}

// same reports whether two records describe the same file, unchanged.
func (r verifiedRecord) same(o verifiedRecord) bool {
	return r.Path == o.Path && r.Size == o.Size && r.ModNanos == o.ModNanos && r.Change == o.Change &&
		r.Dev == o.Dev && r.Inode == o.Inode
}

// identify stats path.
func identify(path string) (verifiedRecord, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return verifiedRecord{}, err
	}
	fi, err := os.Stat(abs)
	if err != nil {
		return verifiedRecord{}, err
	}
	r := verifiedRecord{Path: abs, Size: fi.Size(), ModNanos: fi.ModTime().UnixNano(), Verified: time.Now().UTC()}
	r.Change, r.Dev, r.Inode = statIdentity(abs)
	return r, nil
}

// verifiedDir is where the records are kept ("" for none).
func verifiedDir() string {
	if d, ok := os.LookupEnv(VerifyEnv); ok {
		if d == "off" {
			return ""
		}
		return d
	}
	d, err := os.UserCacheDir()
	if err != nil {
		return ""
	}
	return filepath.Join(d, "ktune", "verified")
}

// recordPath names the record of the file at abs path.
func recordPath(dir, abs string) string {
	h := sha256.Sum256([]byte(abs))
	return filepath.Join(dir, hex.EncodeToString(h[:12])+".json")
}

// sameRecords reports whether the record at key holds recs' identities.
func sameRecords(key string, recs []verifiedRecord) bool {
	b, err := os.ReadFile(key)
	if err != nil || len(b) > 1<<20 {
		return false
	}
	var old []verifiedRecord
	if json.Unmarshal(b, &old) != nil || len(old) != len(recs) {
		return false
	}
	for i := range recs {
		if !old[i].same(recs[i]) {
			return false
		}
	}
	return true
}
