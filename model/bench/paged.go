// What the timed runs paged in, and the paged bound.

package bench

import "github.com/ktune/ktune/model"

// DiskBlock is the size of one read of the disk ceiling where the model
// says nothing better, and diskQueue how many reads are in flight: about
// what madvise read-ahead and faults' read-around submit (requests of up
// to max_sectors_kb, several queued).
const (
	DiskBlock = 4 << 20
	diskQueue = 8
)

// ioSample is the process's page-in counters at one moment: major page
// faults (getrusage ru_majflt: a page touched that was not in RAM and was
// read from disk; -1 where unknown) and bytes read from storage
// (/proc/self/io read_bytes: every read the process's threads submitted,
// faults' read-around and madvise read-ahead included; -1 where unknown).
type ioSample struct {
	MajFlt, ReadBytes int64
}

// ioDelta is what happened between two samples over timed runs: the
// faults, the bytes read, the seconds and the tokens.
type ioDelta struct {
	MajFlt, ReadBytes int64
	Secs              float64
	Tokens            int
}

// add adds the counters' change from a to b over secs and tokens.
func (d *ioDelta) add(a, b ioSample, secs float64, tokens int) {
	d.Secs += secs
	d.Tokens += tokens
	if a.MajFlt < 0 || b.MajFlt < 0 || d.MajFlt < 0 {
		d.MajFlt = -1
	} else {
		d.MajFlt += b.MajFlt - a.MajFlt
	}
	if a.ReadBytes < 0 || b.ReadBytes < 0 || d.ReadBytes < 0 {
		d.ReadBytes = -1
	} else {
		d.ReadBytes += b.ReadBytes - a.ReadBytes
	}
}

// paged fills row's page-in fields from the timed runs' counters d, with
// weight bytes per token bytesTok and the read ceiling (bytes/s); a row
// of a model file that read from storage gets the paged bound.
func (r *runner) paged(row *Row, d ioDelta, bytesTok int64, ceiling float64) {
	tok := float64(max(d.Tokens, 1))
	if d.MajFlt >= 0 {
		v := float64(d.MajFlt) / tok
		row.PageInsTok = &v
	}
	if d.ReadBytes >= 0 {
		v, g := float64(d.ReadBytes)/tok, float64(d.ReadBytes)/max(d.Secs, 1e-9)/1e9
		row.DiskBytesTok, row.DiskGBs = &v, &g
	}
	if d.ReadBytes <= 0 || r.o.Path == "" || row.Mean <= 0 || ceiling <= 0 {
		return
	}
	if r.measureDisk(); r.disk <= 0 {
		return
	}
	missing := min(float64(d.ReadBytes)/tok, float64(bytesTok))
	resident := float64(bytesTok) - missing
	row.DiskCeilingGBs = r.disk / 1e9
	row.PagedBoundFrac = (resident/ceiling + missing/r.disk) * row.Mean
}

// measureDisk measures the disk read ceiling on the model's path, the
// first time it is called, and reports it.
func (r *runner) measureDisk() {
	if r.disk != 0 {
		return
	}
	v, err := diskCeiling(r.o.Path, r.o.DiskCeilingBytes, r.diskBlock)
	r.disk = -1
	if err == nil {
		r.disk = v
	}
	if f := r.o.Report.DiskCeiling; f != nil {
		f(DiskCeiling{BytesPerSec: v, Err: err, Path: r.o.Path, Bytes: r.o.DiskCeilingBytes, Block: r.diskBlock, Queue: diskQueue})
	}
}

// cacheHit is the expert cache's hit fraction between two of its stats;
// nil without a cache or lookups.
func cacheHit(a, b model.ExpertCacheStats) *float64 {
	h, n := b.Hits-a.Hits, b.Hits-a.Hits+b.Misses-a.Misses
	if b.Slots == 0 || n <= 0 {
		return nil
	}
	f := float64(h) / float64(n)
	return &f
}
