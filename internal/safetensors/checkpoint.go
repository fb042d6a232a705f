package safetensors

import (
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// Standard file names of a Hugging Face checkpoint folder.
const (
	IndexFile  = "model.safetensors.index.json"
	SingleFile = "model.safetensors"
)

// Checkpoint is a Hugging Face checkpoint folder: either shards listed by a
// model.safetensors.index.json, or a single model.safetensors, or else the
// only *.safetensors file of the folder.
type Checkpoint struct {
	// Dir is the checkpoint folder.
	Dir string
	// Index is the path of the index file, or "" when the checkpoint is a
	// single file.
	Index string

	shards []*File          // sorted by path
	byName map[string]*File // tensor name -> shard holding it
	names  []string         // sorted
}

// OpenCheckpoint opens the checkpoint in dir. With an index, every shard it
// names must exist and hold the tensors the index assigns to it; only the
// tensors listed in the index are visible. The caller must Close the
// checkpoint.
func OpenCheckpoint(dir string) (*Checkpoint, error) {
	c := &Checkpoint{Dir: dir, byName: map[string]*File{}}
	var err error
	index := filepath.Join(dir, IndexFile)
	switch _, statErr := os.Stat(index); {
	case statErr == nil:
		err = c.openIndexed(index)
	case !errors.Is(statErr, fs.ErrNotExist):
		err = ioError(index, "cannot stat index", statErr)
	default:
		err = c.openSingle()
	}
	if err != nil {
		c.Close()
		return nil, err
	}
	slices.Sort(c.names)
	return c, nil
}

func (c *Checkpoint) openSingle() error {
	path := filepath.Join(c.Dir, SingleFile)
	if _, err := os.Stat(path); err != nil {
		if !errors.Is(err, fs.ErrNotExist) {
			return ioError(path, "cannot stat file", err)
		}
		matches, err := filepath.Glob(filepath.Join(c.Dir, "*.safetensors"))
		if err != nil {
			return ioError(c.Dir, "cannot list folder", err)
		}
		switch len(matches) {
		case 0:
			return errorf(c.Dir, "", "no %s, %s or other *.safetensors file in the folder", IndexFile, SingleFile)
		case 1:
			path = matches[0]
		default:
			for i, m := range matches {
				matches[i] = filepath.Base(m)
			}
			return errorf(c.Dir, "", "several *.safetensors files (%s) and no %s to tell which to use", strings.Join(matches, ", "), IndexFile)
		}
	}
	f, err := Open(path)
	if err != nil {
		return err
	}
	c.shards = []*File{f}
	for _, t := range f.Header.Tensors {
		c.byName[t.Name] = f
		c.names = append(c.names, t.Name)
	}
	return nil
}

func (c *Checkpoint) openIndexed(index string) error {
	c.Index = index
	raw, err := os.ReadFile(index)
	if err != nil {
		return ioError(index, "cannot read index", err)
	}
	var doc map[string]json.RawMessage
	if err := json.Unmarshal(raw, &doc); err != nil {
		return errorf(index, "", "index is not a valid JSON object: %v", err)
	}
	wm, ok := doc["weight_map"]
	if !ok {
		return errorf(index, "", `index has no "weight_map"`)
	}
	if k := jsonKind(wm); k != "object" {
		return errorf(index, "", `"weight_map" must be an object of strings, got %s`, k)
	}
	var weightMap map[string]json.RawMessage
	if err := json.Unmarshal(wm, &weightMap); err != nil {
		return errorf(index, "", `"weight_map": %v`, err)
	}

	byShard := map[string][]string{} // shard file name -> tensor names
	for name, v := range weightMap {
		var shard string
		if jsonKind(v) != "string" || json.Unmarshal(v, &shard) != nil {
			return errorf(index, name, `"weight_map" value must be a shard file name, got %s`, jsonKind(v))
		}
		if !filepath.IsLocal(shard) {
			return errorf(index, name, "shard %q is not a file inside the checkpoint folder", shard)
		}
		byShard[shard] = append(byShard[shard], name)
	}
	if len(byShard) == 0 {
		return errorf(index, "", `"weight_map" is empty`)
	}

	shardNames := make([]string, 0, len(byShard))
	for s := range byShard {
		shardNames = append(shardNames, s)
	}
	slices.Sort(shardNames)
	for _, shard := range shardNames {
		path := filepath.Join(c.Dir, shard)
		if _, err := os.Stat(path); errors.Is(err, fs.ErrNotExist) {
			return errorf(index, "", "shard %q listed in the index is missing (%s)", shard, path)
		}
		f, err := Open(path)
		if err != nil {
			return err
		}
		c.shards = append(c.shards, f)
		names := byShard[shard]
		slices.Sort(names)
		for _, name := range names {
			if _, ok := f.Info(name); !ok {
				return errorf(index, name, "listed in the index for shard %q but absent from %s", shard, path)
			}
			c.byName[name] = f
			c.names = append(c.names, name)
		}
	}
	return nil
}

// Close closes every shard.
func (c *Checkpoint) Close() error {
	var errs []error
	for _, f := range c.shards {
		errs = append(errs, f.Close())
	}
	return errors.Join(errs...)
}

// Shards returns the open shard files, sorted by path.
func (c *Checkpoint) Shards() []*File { return slices.Clone(c.shards) }

// Names returns every tensor name in sorted order.
func (c *Checkpoint) Names() []string { return slices.Clone(c.names) }

// Info returns the description of the tensor called name and the shard that
// holds it. TensorInfo's offsets are relative to that shard.
func (c *Checkpoint) Info(name string) (TensorInfo, *File, bool) {
	f, ok := c.byName[name]
	if !ok {
		return TensorInfo{}, nil, false
	}
	t, ok := f.Info(name)
	return t, f, ok
}

func (c *Checkpoint) shard(name string) (*File, error) {
	f, ok := c.byName[name]
	if !ok {
		return nil, errorf(c.Dir, name, "no such tensor in the checkpoint")
	}
	return f, nil
}

// Bytes returns the raw data of the tensor called name; see [File.Bytes].
func (c *Checkpoint) Bytes(name string) ([]byte, error) {
	f, err := c.shard(name)
	if err != nil {
		return nil, err
	}
	return f.Bytes(name)
}

// Float32 returns the float tensor called name as a new []float32.
func (c *Checkpoint) Float32(name string) ([]float32, error) {
	f, err := c.shard(name)
	if err != nil {
		return nil, err
	}
	return f.Float32(name)
}

// Float32Into converts the float tensor called name into dst; see
// [File.Float32Into].
func (c *Checkpoint) Float32Into(name string, dst []float32) error {
	f, err := c.shard(name)
	if err != nil {
		return err
	}
	return f.Float32Into(name, dst)
}

// Int64 returns the integer tensor called name as a new []int64.
func (c *Checkpoint) Int64(name string) ([]int64, error) {
	f, err := c.shard(name)
	if err != nil {
		return nil, err
	}
	return f.Int64(name)
}
