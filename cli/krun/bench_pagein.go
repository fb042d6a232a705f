package krun

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
