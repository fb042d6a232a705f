// The tokenizer from a GGUF file's metadata, as llama.cpp's converter writes Kimi's.

package tokenizer

import (
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/ktune/ktune/internal/gguf"
)

// GGUF metadata keys of the tokenizer (llama.cpp's names).
const (
	KeyGGUFModel        = "tokenizer.ggml.model"
	KeyGGUFPre          = "tokenizer.ggml.pre"
	KeyGGUFTokens       = "tokenizer.ggml.tokens"
	KeyGGUFTokenType    = "tokenizer.ggml.token_type"
	KeyGGUFMerges       = "tokenizer.ggml.merges"
	KeyGGUFBOS          = "tokenizer.ggml.bos_token_id"
	KeyGGUFEOS          = "tokenizer.ggml.eos_token_id"
	KeyGGUFPad          = "tokenizer.ggml.padding_token_id"
	KeyGGUFUnk          = "tokenizer.ggml.unknown_token_id"
	KeyGGUFEOT          = "tokenizer.ggml.eot_token_id"
	KeyGGUFAddBOS       = "tokenizer.ggml.add_bos_token"
	KeyGGUFChatTemplate = "tokenizer.chat_template"
)

// GGUF token types (llama.cpp's llama_token_type / gguf.TokenType).
const (
	ggufNormal      = 1
	ggufUnknown     = 2
	ggufControl     = 3
	ggufUserDefined = 4
	ggufUnused      = 5
	ggufByte        = 6
)

var ggufTypeNames = map[int64]string{ggufNormal: "NORMAL", ggufUnknown: "UNKNOWN",
	ggufControl: "CONTROL", ggufUserDefined: "USER_DEFINED", ggufUnused: "UNUSED", ggufByte: "BYTE"}

// ggufPreTokenizers are the values of tokenizer.ggml.pre whose regex is kimiPattern. Only
// "kimi-k2" is: llama.cpp's other pre-tokenizers (gpt-4o, llama3, qwen2, deepseek-v3, ...) use
// other regexes, which this package does not implement.
var ggufPreTokenizers = map[string]bool{"kimi-k2": true}

// FromGGUF builds the tokenizer from the metadata md of the GGUF file at path (path is used only
// in error messages). It gives the same Tokenizer as Load on the Hugging Face folder the file was
// converted from by llama.cpp's convert_hf_to_gguf.py (KimiLinearModel.set_vocab):
//
//   - tokenizer.ggml.model must be "gpt2" and tokenizer.ggml.pre "kimi-k2" (the only
//     pre-tokenization regex implemented here).
//   - tokenizer.ggml.tokens and tokenizer.ggml.token_type (same length) give, for each id, the
//     token text and type. The BPE ranks are the leading NORMAL tokens, ids 0..n-1 (the rank is
//     the id, as in tiktoken.model); their text is byte-level (each byte written as GPT-2's
//     bytes_to_unicode character) and is decoded back to bytes. No NORMAL token may follow a
//     non-NORMAL one, every single byte must be a token, and no two tokens may be equal.
//   - The special ids are n..n+257, as in Load. A CONTROL, USER_DEFINED or UNKNOWN token there
//     names its id (its text is the special text, not byte-level); an UNUSED one ("[PADi]", the
//     converter's filler) or an id past the end of the token list is "<|reserved_token_ID|>".
//     Kimi's vocab_size is n+256, so the converter's list normally ends two ids short of the
//     tokenizer's; a longer list may carry only UNUSED tokens past n+257, which are ignored.
//     BYTE tokens (SentencePiece's "<0xNN>") are refused.
//   - tokenizer.ggml.merges, when present, must be "a b" pairs of byte-level tokens whose join is
//     a token; BPE itself uses the ranks (tiktoken's rule), as Load does.
//   - bos, eos, padding, unknown and eot token ids, each optional, must be special ids; eot joins
//     EOS's stop set. add_bos_token, when present, must be a bool; its value is not used (Kimi's
//     tokenizer adds no BOS, and neither does Encode).
//   - tokenizer.chat_template, when present, is read as Load reads chat_template.
//
// Any other content of these keys is refused with an error naming the file and the key.
func FromGGUF(md *gguf.Metadata, path string) (*Tokenizer, error) {
	g := ggufReader{md: md, path: path}
	if md == nil {
		return nil, fmt.Errorf("tokenizer: %s: no GGUF metadata", path)
	}
	model, err := g.str(KeyGGUFModel)
	if err != nil {
		return nil, err
	}
	if model != "gpt2" {
		return nil, g.errorf(KeyGGUFModel, "is %q; only \"gpt2\" (byte-level BPE) is supported", model)
	}
	pre, err := g.str(KeyGGUFPre)
	if err != nil {
		return nil, err
	}
	if !ggufPreTokenizers[pre] {
		return nil, g.errorf(KeyGGUFPre, "is %q; only \"kimi-k2\" (Kimi's pre-tokenization regex) is supported", pre)
	}

	tokens, err := g.strs(KeyGGUFTokens)
	if err != nil {
		return nil, err
	}
	if len(tokens) == 0 {
		return nil, g.errorf(KeyGGUFTokens, "is empty")
	}
	types, err := g.ints(KeyGGUFTokenType)
	if err != nil {
		return nil, err
	}
	if len(types) != len(tokens) {
		return nil, g.errorf(KeyGGUFTokenType, "has %d entries but %s has %d", len(types), KeyGGUFTokens, len(tokens))
	}
	for id, ty := range types {
		if _, ok := ggufTypeNames[ty]; !ok {
			return nil, g.errorf(KeyGGUFTokenType, "token %d has type %d, not one of 1..6", id, ty)
		}
		if ty == ggufByte {
			return nil, g.errorf(KeyGGUFTokenType, "token %d (%q) has type BYTE, which a gpt2 (byte-level BPE) vocabulary does not use", id, tokens[id])
		}
	}

	// The BPE ranks: the leading NORMAL tokens, decoded from byte-level text.
	n := 0
	for n < len(types) && types[n] == ggufNormal {
		n++
	}
	vocab := make([][]byte, n)
	seen := make(map[string]int, n)
	for id := 0; id < n; id++ {
		b, ok := byteLevelDecode(tokens[id])
		if !ok {
			return nil, g.errorf(KeyGGUFTokens, "NORMAL token %d (%q) is not byte-level text (a character outside GPT-2's 256-entry bytes_to_unicode map)", id, tokens[id])
		}
		if len(b) == 0 {
			return nil, g.errorf(KeyGGUFTokens, "NORMAL token %d is empty", id)
		}
		if prev, dup := seen[string(b)]; dup {
			return nil, g.errorf(KeyGGUFTokens, "token %d (%q) repeats token %d", id, tokens[id], prev)
		}
		seen[string(b)] = id
		vocab[id] = b
	}
	for id := n; id < len(types); id++ {
		if types[id] == ggufNormal {
			return nil, g.errorf(KeyGGUFTokenType, "NORMAL token %d (%q) follows non-NORMAL token %d (%s); the BPE ranks must be ids 0..n-1",
				id, tokens[id], n, ggufTypeNames[types[n]])
		}
	}
	if n == 0 {
		return nil, g.errorf(KeyGGUFTokenType, "token 0 is %s; there are no NORMAL (BPE) tokens", ggufTypeNames[types[0]])
	}
	for b := 0; b < 256; b++ {
		if _, ok := seen[string([]byte{byte(b)})]; !ok {
			return nil, g.errorf(KeyGGUFTokens, "byte 0x%02x (%q) has no NORMAL token among the %d BPE tokens (byte-level BPE needs all 256)",
				b, string(byteToRune[b]), n)
		}
	}

	// The special ids n..n+numReserved-1, named as tokenizer_config.json's added_tokens_decoder
	// would name them.
	cfg := &tokenizerConfig{}
	cfg.AddedTokensDecoder = make(map[string]struct {
		Content string `json:"content"`
		Special bool   `json:"special"`
	})
	for id := n; id < len(tokens); id++ {
		if types[id] == ggufUnused {
			continue
		}
		if id >= n+numReserved {
			return nil, g.errorf(KeyGGUFTokens, "token %d (%s %q) lies past the tokenizer's ids 0..%d (%d BPE ranks and %d special ids); only UNUSED filler may follow",
				id, ggufTypeNames[types[id]], tokens[id], n+numReserved-1, n, numReserved)
		}
		e := cfg.AddedTokensDecoder[strconv.Itoa(id)]
		e.Content, e.Special = tokens[id], true
		cfg.AddedTokensDecoder[strconv.Itoa(id)] = e
	}

	if err := g.checkMerges(seen); err != nil {
		return nil, err
	}
	if g.md.Has(KeyGGUFAddBOS) {
		if v, _ := g.md.Get(KeyGGUFAddBOS); v.Type != gguf.ValueBool {
			return nil, g.errorf(KeyGGUFAddBOS, "is a %s (%s), not a bool", v.Type, v)
		}
	}
	if g.md.Has(KeyGGUFChatTemplate) {
		tmpl, err := g.str(KeyGGUFChatTemplate)
		if err != nil {
			return nil, err
		}
		if cfg.ChatTemplate, err = json.Marshal(tmpl); err != nil {
			return nil, g.errorf(KeyGGUFChatTemplate, "%v", err)
		}
	}

	t, err := build(vocab, cfg)
	if err != nil {
		return nil, g.errorf(KeyGGUFTokens, "%v", err)
	}
	// Ids of bos, eos, pad, unk and eot; build has left the first four -1.
	eot := int32(-1)
	for _, f := range []struct {
		key string
		dst *int32
	}{{KeyGGUFBOS, &t.bos}, {KeyGGUFEOS, &t.eos}, {KeyGGUFPad, &t.pad}, {KeyGGUFUnk, &t.unk}, {KeyGGUFEOT, &eot}} {
		if !g.md.Has(f.key) {
			continue
		}
		if *f.dst, err = g.specialID(t, f.key, tokens, types); err != nil {
			return nil, err
		}
	}
	// As build does for Load: generation stops at eos, <|im_end|> and [EOT]; then at the
	// file's eot when it is another id.
	t.eosSet = t.eosSet[:0]
	for _, id := range []int32{t.eos, t.special["<|im_end|>"], t.special["[EOT]"], eot} {
		if _, ok := t.spText[id]; ok && !slices.Contains(t.eosSet, id) {
			t.eosSet = append(t.eosSet, id)
		}
	}
	return t, nil
}

// ggufReader reads tokenizer keys, with errors that name the file and the key.
type ggufReader struct {
	md   *gguf.Metadata
	path string
}

func (g *ggufReader) errorf(key, format string, args ...any) error {
	return fmt.Errorf("tokenizer: %s: metadata %q: %s", g.path, key, fmt.Sprintf(format, args...))
}

func (g *ggufReader) value(key string) (gguf.Value, error) {
	v, ok := g.md.Get(key)
	if !ok {
		return v, g.errorf(key, "missing (the file carries no tokenizer, or not llama.cpp's)")
	}
	return v, nil
}

func (g *ggufReader) str(key string) (string, error) {
	v, err := g.value(key)
	if err != nil {
		return "", err
	}
	s, ok := v.AsString()
	if !ok {
		return "", g.errorf(key, "is a %s (%s), not a string", v.Type, v)
	}
	return s, nil
}

func (g *ggufReader) strs(key string) ([]string, error) {
	v, err := g.value(key)
	if err != nil {
		return nil, err
	}
	a, ok := v.AsArray()
	if !ok {
		return nil, g.errorf(key, "is a %s (%s), not an array of strings", v.Type, v)
	}
	s, ok := a.Strings()
	if !ok {
		return nil, g.errorf(key, "is an array of %s, not of string", a.Elem)
	}
	return s, nil
}

func (g *ggufReader) ints(key string) ([]int64, error) {
	v, err := g.value(key)
	if err != nil {
		return nil, err
	}
	a, ok := v.AsArray()
	if !ok {
		return nil, g.errorf(key, "is a %s (%s), not an array of integers", v.Type, v)
	}
	x, ok := a.Ints()
	if !ok {
		return nil, g.errorf(key, "is an array of %s, not of integers", a.Elem)
	}
	return x, nil
}

// specialID reads a token id key and checks that it is one of t's special ids.
func (g *ggufReader) specialID(t *Tokenizer, key string, tokens []string, types []int64) (int32, error) {
	v, err := g.value(key)
	if err != nil {
		return -1, err
	}
	id, ok := v.AsInt()
	if !ok {
		return -1, g.errorf(key, "is a %s (%s), not an integer", v.Type, v)
	}
	if id < 0 || id >= int64(t.VocabSize()) {
		return -1, g.errorf(key, "id %d is out of range: the tokenizer's ids are 0..%d", id, t.VocabSize()-1)
	}
	if !t.IsSpecial(int32(id)) {
		return -1, g.errorf(key, "id %d is %s token %q, not a special token (ids %d..%d)",
			id, ggufTypeNames[types[id]], tokens[id], len(t.vocab), t.VocabSize()-1)
	}
	return int32(id), nil
}

// checkMerges checks tokenizer.ggml.merges, when present: each entry is "a b" with a, b and
// their join byte-level NORMAL tokens (ranks maps token bytes to id).
func (g *ggufReader) checkMerges(ranks map[string]int) error {
	if !g.md.Has(KeyGGUFMerges) {
		return nil
	}
	merges, err := g.strs(KeyGGUFMerges)
	if err != nil {
		return err
	}
	for i, m := range merges {
		a, b, ok := strings.Cut(m, " ")
		if !ok || a == "" || b == "" || strings.Contains(b, " ") {
			return g.errorf(KeyGGUFMerges, "entry %d (%q) is not two tokens separated by one space", i, m)
		}
		ab, okA := byteLevelDecode(a)
		bb, okB := byteLevelDecode(b)
		if !okA || !okB {
			return g.errorf(KeyGGUFMerges, "entry %d (%q) is not byte-level text", i, m)
		}
		for _, part := range [][]byte{ab, bb, append(ab[:len(ab):len(ab)], bb...)} {
			if _, ok := ranks[string(part)]; !ok {
				return g.errorf(KeyGGUFMerges, "entry %d (%q): %q is not a NORMAL token", i, m, byteLevelEncode(part))
			}
		}
	}
	return nil
}

// GPT-2's bytes_to_unicode: the printable bytes '!'..'~', '¡'..'¬' and '®'..'ÿ' stand for
// themselves; the other 68 bytes, in order, are U+0100, U+0101, ... (so ' ' is 'Ġ', '\n' 'Ċ').
var (
	byteToRune [256]rune
	runeToByte [256 + 68]int16 // -1 where a rune is no byte's
)

func init() {
	for i := range runeToByte {
		runeToByte[i] = -1
	}
	next := rune(256)
	for b := 0; b < 256; b++ {
		if ('!' <= b && b <= '~') || (0xa1 <= b && b <= 0xac) || (0xae <= b && b <= 0xff) {
			byteToRune[b] = rune(b)
		} else {
			byteToRune[b] = next
			next++
		}
		runeToByte[byteToRune[b]] = int16(b)
	}
}

// byteLevelDecode returns the bytes a byte-level token text stands for; false if s holds a
// character outside bytes_to_unicode's image (or invalid UTF-8).
func byteLevelDecode(s string) ([]byte, bool) {
	out := make([]byte, 0, len(s))
	for _, r := range s {
		if r < 0 || int(r) >= len(runeToByte) || runeToByte[r] < 0 {
			return nil, false // also utf8.RuneError, which is past the table
		}
		out = append(out, byte(runeToByte[r]))
	}
	return out, true
}

// byteLevelEncode writes bytes as byte-level text (QwenModel.token_bytes_to_string).
func byteLevelEncode(b []byte) string {
	var sb strings.Builder
	sb.Grow(2 * len(b))
	for _, c := range b {
		sb.WriteRune(byteToRune[c])
	}
	return sb.String()
}
