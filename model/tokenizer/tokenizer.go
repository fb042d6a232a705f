// Package tokenizer is Kimi's tokenizer: tiktoken-style byte-level BPE with Kimi's
// pre-tokenization regex, special tokens from tokenizer_config.json and Kimi's chat format.
//
// A model folder holds
//
//	tiktoken.model           one "base64(token bytes) rank" pair a line; ranks are the ids 0..n-1
//	tokenizer_config.json    added_tokens_decoder (id -> content of special tokens), bos_token,
//	                         eos_token, pad_token, unk_token, chat_template
//
// FromGGUF (gguf.go) builds the same Tokenizer from the tokenizer.ggml.* metadata that
// llama.cpp's converter writes into a GGUF file.
//
// What it does, following tokenization_kimi.py (TikTokenTokenizer) and tiktoken:
//   - Special ids are n .. n+257 (n = number of BPE ranks; 256 reserved plus 2), named from
//     added_tokens_decoder or "<|reserved_token_ID|>" when unnamed. Entries of
//     added_tokens_decoder outside that range are ignored, as upstream does.
//   - Encode first cuts the text into runs of at most 25,000 whitespace or non-whitespace
//     characters (in 400,000-character blocks), as Kimi's encode does to keep tiktoken's
//     quadratic merge in check; then, with allowSpecial, splits out special-token text
//     (leftmost, longest); then pre-tokenizes each stretch with kimiPattern and BPE-encodes
//     each piece. Without allowSpecial, special-token text is encoded as ordinary text.
//   - No BOS is added: Kimi's tokenizer does not add one, and the chat template does not emit it.
//   - Decode concatenates token bytes. It returns the bytes as they are, which may be invalid
//     UTF-8 mid-stream; NewDecoder gives whole runes for streaming.
//
// Not verified here (the real 160K-token files could not be fetched in the sandbox): that the
// real tiktoken.model loads and reproduces HF's ids for real text; the exact chat_template of
// Kimi-Linear's tokenizer_config.json (see chat.go); Unicode-table differences between Go's
// tables (and regexp2's) and the Rust regex crate tiktoken uses, for very new code points.
package tokenizer

import (
	"bufio"
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// File names inside a model folder.
const (
	ModelFile  = "tiktoken.model"
	ConfigFile = "tokenizer_config.json"
)

// numReserved is the number of special-token ids after the BPE ranks (Kimi: 256 + 2).
const numReserved = 256 + 2

// Kimi's pre-encode splitting (tokenization_kimi.py): blocks of maxBlock characters, and runs
// of at most maxRun consecutive whitespace or non-whitespace characters.
const (
	maxBlock = 400_000
	maxRun   = 25_000
)

// maxSpecialLen bounds a special token's text (Kimi's longest is 25 bytes): finding them costs
// up to this many steps per byte of text, and a model file chooses them.
const maxSpecialLen = 128

// Tokenizer encodes and decodes Kimi token ids. It is safe for concurrent use.
type Tokenizer struct {
	ranks   map[string]int32 // token bytes -> id, for the BPE ranks
	vocab   [][]byte         // id -> token bytes, for the BPE ranks
	special map[string]int32 // special token text -> id
	spText  map[int32]string // id -> special token text
	spOrder []string         // special token texts, longest first
	spMatch specialMatcher   // finds them in one pass
	split   *splitter

	bos, eos, pad, unk int32 // -1 when absent
	eosSet             []int32
	chat               chatFormat
}

// tokenizerConfig is the part of tokenizer_config.json that is read.
type tokenizerConfig struct {
	AddedTokensDecoder map[string]struct {
		Content string `json:"content"`
		Special bool   `json:"special"`
	} `json:"added_tokens_decoder"`
	BOS          tokenName       `json:"bos_token"`
	EOS          tokenName       `json:"eos_token"`
	PAD          tokenName       `json:"pad_token"`
	UNK          tokenName       `json:"unk_token"`
	ChatTemplate json.RawMessage `json:"chat_template"`
}

// tokenName is a token given either as a string or as an AddedToken object {"content": ...}.
type tokenName string

func (n *tokenName) UnmarshalJSON(b []byte) error {
	if string(b) == "null" {
		*n = ""
		return nil
	}
	var s string
	if err := json.Unmarshal(b, &s); err == nil {
		*n = tokenName(s)
		return nil
	}
	var obj struct {
		Content string `json:"content"`
	}
	if err := json.Unmarshal(b, &obj); err != nil {
		return fmt.Errorf("token name is neither a string nor {\"content\": ...}: %s", b)
	}
	*n = tokenName(obj.Content)
	return nil
}

// Load reads tiktoken.model and tokenizer_config.json from dir.
func Load(dir string) (*Tokenizer, error) {
	mpath := filepath.Join(dir, ModelFile)
	f, err := os.Open(mpath)
	if err != nil {
		return nil, fmt.Errorf("tokenizer: %w", err)
	}
	defer f.Close()
	cpath := filepath.Join(dir, ConfigFile)
	raw, err := os.ReadFile(cpath)
	if err != nil {
		return nil, fmt.Errorf("tokenizer: %w", err)
	}
	return parse(f, mpath, raw, cpath)
}

// parse is Load on the contents of the two files (their paths for messages).
func parse(model io.Reader, mpath string, config []byte, cpath string) (*Tokenizer, error) {
	vocab, err := readRanks(model, mpath)
	if err != nil {
		return nil, err
	}
	var cfg tokenizerConfig
	if err := json.Unmarshal(config, &cfg); err != nil {
		return nil, fmt.Errorf("tokenizer: %s: %w", cpath, err)
	}
	t, err := build(vocab, &cfg)
	if err != nil {
		return nil, fmt.Errorf("tokenizer: %s: %w", cpath, err)
	}
	return t, nil
}

// readRanks parses a tiktoken.model file (read from r; path for messages) into id -> token
// bytes. It requires ranks 0..n-1, each once, distinct tokens, and every single byte present
// (else BPE could not finish). A rank is checked against the number of lines before it sizes
// anything: memory stays proportional to the file.
func readRanks(r io.Reader, path string) ([][]byte, error) {
	type entry struct {
		tok  []byte
		rank int
		line int
	}
	var entries []entry
	seen := make(map[string]int)
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64*1024), 16*1024*1024)
	line := 0
	for sc.Scan() {
		line++
		text := strings.TrimSpace(sc.Text())
		if text == "" {
			continue
		}
		fields := strings.Fields(text)
		if len(fields) != 2 {
			return nil, fmt.Errorf("tokenizer: %s:%d: want \"base64token rank\", got %q", path, line, cut(text))
		}
		tok, err := base64.StdEncoding.DecodeString(fields[0])
		if err != nil {
			return nil, fmt.Errorf("tokenizer: %s:%d: bad base64 token: %w", path, line, err)
		}
		if len(tok) == 0 {
			return nil, fmt.Errorf("tokenizer: %s:%d: empty token", path, line)
		}
		rank, err := strconv.ParseInt(fields[1], 10, 32)
		if err != nil || rank < 0 {
			return nil, fmt.Errorf("tokenizer: %s:%d: bad rank %q", path, line, cut(fields[1]))
		}
		if prev, dup := seen[string(tok)]; dup {
			return nil, fmt.Errorf("tokenizer: %s:%d: token %q repeats line %d", path, line, cut(string(tok)), prev)
		}
		seen[string(tok)] = line
		entries = append(entries, entry{tok, int(rank), line})
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("tokenizer: %s: %w", path, err)
	}
	if len(entries) == 0 {
		return nil, fmt.Errorf("tokenizer: %s: no tokens", path)
	}
	vocab := make([][]byte, len(entries))
	for _, e := range entries {
		if e.rank >= len(vocab) {
			return nil, fmt.Errorf("tokenizer: %s:%d: rank %d is past the file's %d tokens (ranks must be 0..%d)", path, e.line, e.rank, len(vocab), len(vocab)-1)
		}
		if vocab[e.rank] != nil {
			return nil, fmt.Errorf("tokenizer: %s:%d: rank %d given twice", path, e.line, e.rank)
		}
		vocab[e.rank] = e.tok
	}
	for b := 0; b < 256; b++ {
		if _, ok := seen[string([]byte{byte(b)})]; !ok {
			return nil, fmt.Errorf("tokenizer: %s: byte 0x%02x has no token (byte-level BPE needs all 256)", path, b)
		}
	}
	return vocab, nil
}

// cut shortens text quoted in a message to its first 64 bytes.
func cut(s string) string {
	if len(s) > 64 {
		return s[:64] + "…"
	}
	return s
}

// build assembles a Tokenizer from BPE ranks and a parsed config.
func build(vocab [][]byte, cfg *tokenizerConfig) (*Tokenizer, error) {
	sp, err := kimiSplitter()
	if err != nil {
		return nil, err
	}
	t := &Tokenizer{
		ranks:   make(map[string]int32, len(vocab)),
		vocab:   vocab,
		special: make(map[string]int32, numReserved),
		spText:  make(map[int32]string, numReserved),
		split:   sp,
	}
	for id, tok := range vocab {
		t.ranks[string(tok)] = int32(id)
	}
	n := len(vocab)
	for id := n; id < n+numReserved; id++ {
		name := fmt.Sprintf("<|reserved_token_%d|>", id)
		if e, ok := cfg.AddedTokensDecoder[strconv.Itoa(id)]; ok && e.Content != "" {
			name = e.Content
		}
		if len(name) > maxSpecialLen {
			return nil, fmt.Errorf("special token %d is %d bytes long (%q); the longest accepted is %d", id, len(name), cut(name), maxSpecialLen)
		}
		if prev, dup := t.special[name]; dup {
			return nil, fmt.Errorf("special token %q has two ids, %d and %d", name, prev, id)
		}
		t.special[name] = int32(id)
		t.spText[int32(id)] = name
		t.spOrder = append(t.spOrder, name)
	}
	slices.SortStableFunc(t.spOrder, func(a, b string) int { return len(b) - len(a) })
	t.spMatch = newSpecialMatcher(t.spOrder)

	look := func(field string, name tokenName) (int32, error) {
		if name == "" {
			return -1, nil
		}
		id, ok := t.special[string(name)]
		if !ok {
			return -1, fmt.Errorf("%s %q is not a special token (ids %d..%d)", field, name, n, n+numReserved-1)
		}
		return id, nil
	}
	if t.bos, err = look("bos_token", cfg.BOS); err != nil {
		return nil, err
	}
	if t.eos, err = look("eos_token", cfg.EOS); err != nil {
		return nil, err
	}
	if t.pad, err = look("pad_token", cfg.PAD); err != nil {
		return nil, err
	}
	if t.unk, err = look("unk_token", cfg.UNK); err != nil {
		return nil, err
	}
	// Generation stops at eos_token and at the end of an assistant turn. Kimi's config.json
	// gives eos_token_id = <|im_end|>, while tokenizer_config.json names [EOS]; both stop.
	for _, id := range []int32{t.eos, t.special["<|im_end|>"], t.special["[EOT]"]} {
		if _, ok := t.spText[id]; ok && !slices.Contains(t.eosSet, id) {
			t.eosSet = append(t.eosSet, id)
		}
	}
	if t.chat, err = parseChatTemplate(cfg.ChatTemplate); err != nil {
		return nil, err
	}
	return t, nil
}

// VocabSize is the number of ids: BPE ranks plus special tokens.
func (t *Tokenizer) VocabSize() int { return len(t.vocab) + numReserved }

// Special returns the id of a special token by its text, e.g. "<|im_end|>" or "[BOS]".
func (t *Tokenizer) Special(name string) (int32, bool) {
	id, ok := t.special[name]
	return id, ok
}

// IsSpecial reports whether id is a special token.
func (t *Tokenizer) IsSpecial(id int32) bool {
	_, ok := t.spText[id]
	return ok
}

// BOS returns bos_token's id, or false when the config names none.
func (t *Tokenizer) BOS() (int32, bool) { return t.bos, t.bos >= 0 }

// EOS returns the ids at which generation stops: eos_token, "<|im_end|>" and "[EOT]", those of
// them that exist, in that order.
func (t *Tokenizer) EOS() []int32 { return slices.Clone(t.eosSet) }

// Encode returns the token ids of text. With allowSpecial, the text of a special token (such as
// "<|im_end|>") becomes that token; otherwise it is encoded as ordinary text. Any byte string is
// accepted; invalid UTF-8 bytes pre-tokenize as U+FFFD would but are encoded as themselves.
func (t *Tokenizer) Encode(text string, allowSpecial bool) []int32 {
	ids := make([]int32, 0, len(text)/3+1)
	for _, block := range chunkRunes(text, maxBlock) {
		for _, run := range splitRuns(block, maxRun) {
			if allowSpecial {
				ids = t.encodeWithSpecials(ids, run)
			} else {
				ids = t.encodeOrdinary(ids, run)
			}
		}
	}
	return ids
}

func (t *Tokenizer) encodeWithSpecials(ids []int32, s string) []int32 {
	for s != "" {
		at, name := t.findSpecial(s)
		if at < 0 {
			return t.encodeOrdinary(ids, s)
		}
		ids = t.encodeOrdinary(ids, s[:at])
		ids = append(ids, t.special[name])
		s = s[at+len(name):]
	}
	return ids
}

// findSpecial returns the byte offset and text of the leftmost special token in s (the longest
// one at that offset), or -1.
func (t *Tokenizer) findSpecial(s string) (int, string) { return t.spMatch.find(s) }

// specialMatcher finds special-token texts in time linear in the text: only at a byte that
// starts some name does it look further, down a trie of the names' bytes, as far as one still
// matches (at most the longest name's length). (Searching for each of the 258 names in turn,
// and again after every match, took time quadratic in a text full of special tokens; a set of
// every prefix took time quadratic in a name's length, which a model file chooses.)
type specialMatcher struct {
	first [256]bool  // bytes some name starts with
	nodes []trieNode // nodes[0] is the root
}

type trieNode struct {
	whole bool      // a name ends here
	kids  []trieKid // few: a linear scan beats a map
}

type trieKid struct {
	b    byte
	node int32
}

// child returns the node below n along byte b, or 0.
func (m *specialMatcher) child(n int32, b byte) int32 {
	for _, k := range m.nodes[n].kids {
		if k.b == b {
			return k.node
		}
	}
	return 0
}

func newSpecialMatcher(names []string) specialMatcher {
	m := specialMatcher{nodes: []trieNode{{}}}
	for _, n := range names {
		if n == "" {
			continue
		}
		m.first[n[0]] = true
		node := int32(0)
		for i := 0; i < len(n); i++ {
			next := m.child(node, n[i])
			if next == 0 {
				next = int32(len(m.nodes))
				m.nodes = append(m.nodes, trieNode{})
				m.nodes[node].kids = append(m.nodes[node].kids, trieKid{n[i], next})
			}
			node = next
		}
		m.nodes[node].whole = true
	}
	return m
}

// find returns the offset and text of the leftmost name in s, the longest one there; -1 if none.
func (m *specialMatcher) find(s string) (int, string) {
	for i := 0; i < len(s); i++ {
		if !m.first[s[i]] {
			continue
		}
		best, node := 0, int32(0)
		for j := i; j < len(s); j++ {
			if node = m.child(node, s[j]); node == 0 {
				break
			}
			if m.nodes[node].whole {
				best = j + 1 - i
			}
		}
		if best > 0 {
			return i, s[i : i+best]
		}
	}
	return -1, ""
}

func (t *Tokenizer) encodeOrdinary(ids []int32, s string) []int32 {
	b := []byte(s)
	t.split.split(s, func(start, end int) {
		ids = t.bpe(ids, b[start:end])
	})
	return ids
}

// Token returns the bytes of id: the BPE token's bytes, or a special token's text.
func (t *Tokenizer) Token(id int32) ([]byte, bool) {
	if id >= 0 && int(id) < len(t.vocab) {
		return t.vocab[id], true
	}
	if s, ok := t.spText[id]; ok {
		return []byte(s), true
	}
	return nil, false
}

// Decode returns the text of ids: the concatenated token bytes, special tokens as their text.
// An id outside the vocabulary decodes as U+FFFD. The result is exactly the bytes the tokens
// stand for, so it may be invalid UTF-8 where ids split a character.
func (t *Tokenizer) Decode(ids []int32) string {
	var buf bytes.Buffer
	for _, id := range ids {
		buf.Write(t.tokenOrReplacement(id))
	}
	return buf.String()
}

var replacement = []byte(string(utf8.RuneError))

func (t *Tokenizer) tokenOrReplacement(id int32) []byte {
	if b, ok := t.Token(id); ok {
		return b
	}
	return replacement
}

// chunkRunes cuts s into pieces of at most n runes (Python's text[i:i+n] on a str).
func chunkRunes(s string, n int) []string {
	if utf8.RuneCountInString(s) <= n {
		return []string{s}
	}
	var out []string
	count, start := 0, 0
	for i := range s {
		if count == n {
			out = append(out, s[start:i])
			start, count = i, 0
		}
		count++
	}
	return append(out, s[start:])
}

// splitRuns is Kimi's _split_whitespaces_or_nonwhitespaces: cut s so that no piece holds more
// than n consecutive whitespace or non-whitespace characters. Python's str.isspace is read as
// unicode.IsSpace (the same set for all but a few exotic separators).
func splitRuns(s string, n int) []string {
	if len(s) <= n { // bytes >= runes, so no run can be too long
		return []string{s}
	}
	var out []string
	runLen, start := 0, 0
	first := true
	var inSpace bool
	for i, r := range s {
		sp := unicode.IsSpace(r)
		if first {
			inSpace, first = sp, false
		}
		if sp != inSpace {
			runLen, inSpace = 1, sp
			continue
		}
		runLen++
		if runLen > n {
			out = append(out, s[start:i])
			start, runLen = i, 1
		}
	}
	return append(out, s[start:])
}
