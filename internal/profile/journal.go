package profile

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
)

// A Journal makes an interrupted run resumable: each finished entry is
// appended as one JSON line and synced before the next starts. A run killed
// at any moment leaves at worst a torn last line, which is ignored. The
// journal also records the profile's identity, the ktune build and the
// measuring settings; one from another schema, machine, build or setting
// is discarded. A finished run removes it.
type Journal struct {
	path string
	f    *os.File
}

type journalHead struct {
	Schema      int    `json:"journal_schema"`
	Fingerprint string `json:"fingerprint"`
	Model       string `json:"model"`
	Classes     string `json:"classes"`
	// the build and the settings that measured the entries: a resumed run
	// of another build, or with other measuring settings, starts afresh
	// rather than stamp old measurements with its own version
	Ktune    string `json:"ktune_version"`
	Settings string `json:"settings"`
}

// JournalPath is where the run writing profile FileName(fingerprint) into
// dir keeps its journal.
func JournalPath(dir, fingerprint string) string {
	return filepath.Join(dir, "."+FileName(fingerprint)+".journal")
}

// OpenJournal reads what an earlier run of the same identity measured and
// opens the journal for appending; settings names the measuring options.
func OpenJournal(path string, p *Profile, settings string) (*Journal, map[string]Entry, error) {
	head := journalHead{SchemaVersion, p.Fingerprint, p.Model, fmt.Sprint(p.Classes), p.KtuneVersion, settings}
	done := map[string]Entry{}
	if f, err := os.Open(path); err == nil {
		sc := bufio.NewScanner(f)
		sc.Buffer(make([]byte, 1<<20), 64<<20)
		first := true
		ok := false
		for sc.Scan() {
			if first {
				var h journalHead
				ok = json.Unmarshal(sc.Bytes(), &h) == nil && h == head
				first = false
				if !ok {
					break
				}
				continue
			}
			var e Entry
			if json.Unmarshal(sc.Bytes(), &e) == nil && e.Op != "" && e.usable() == nil {
				done[e.Key()] = e
			}
		}
		f.Close()
		if !ok {
			done = map[string]Entry{}
		}
	}
	// rewrite the journal with the intact records only (drops a torn line)
	tmp := path + ".new"
	f, err := os.Create(tmp)
	if err != nil {
		return nil, nil, fmt.Errorf("tuner: journal %s: %v", path, err)
	}
	j := &Journal{path: path, f: f}
	if err := j.write(head); err != nil {
		return nil, nil, err
	}
	for _, e := range done {
		if err := j.write(e); err != nil {
			return nil, nil, err
		}
	}
	if err := f.Sync(); err != nil {
		return nil, nil, err
	}
	if err := os.Rename(tmp, path); err != nil {
		return nil, nil, fmt.Errorf("tuner: journal %s: %v", path, err)
	}
	return j, done, nil
}

func (j *Journal) write(v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	if _, err := j.f.Write(append(b, '\n')); err != nil {
		return fmt.Errorf("tuner: journal %s: %v", j.path, err)
	}
	return nil
}

// Path is the journal's file.
func (j *Journal) Path() string { return j.path }

// Add appends a finished entry and syncs it.
func (j *Journal) Add(e Entry) error {
	if err := j.write(e); err != nil {
		return err
	}
	return j.f.Sync()
}

// Close closes the journal, leaving it for a later run to resume.
func (j *Journal) Close() {
	if j.f != nil {
		j.f.Close()
		j.f = nil
	}
}

// Remove closes and deletes the journal (the run finished).
func (j *Journal) Remove() {
	j.Close()
	os.Remove(j.path)
}
