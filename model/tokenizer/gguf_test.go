package tokenizer

import (
	"bytes"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/ktune/ktune/internal/gguf"
	"github.com/ktune/ktune/internal/golden"
)

// converterMerges computes tokenizer.ggml.merges from ranks as llama.cpp's converter does
// (KimiLinearModel.set_vocab with QwenModel.bpe): for each multi-byte token, in rank order, BPE
// its bytes using only the ranks below its own; when that leaves two parts, "a b" is a merge.
func converterMerges(vocab [][]byte) []string {
	ranks := make(map[string]int, len(vocab))
	for r, tok := range vocab {
		ranks[string(tok)] = r
	}
	var merges []string
	for rank, tok := range vocab {
		if len(tok) == 1 {
			continue
		}
		parts := make([]string, len(tok))
		for i, c := range tok {
			parts[i] = string([]byte{c})
		}
		for {
			at, best := -1, 0
			for i := 0; i+1 < len(parts); i++ {
				if r, ok := ranks[parts[i]+parts[i+1]]; ok && (at < 0 || r < best) {
					at, best = i, r
				}
			}
			if at < 0 || best >= rank {
				break
			}
			parts = slices.Replace(parts, at, at+2, parts[at]+parts[at+1])
		}
		if len(parts) == 2 {
			merges = append(merges, byteLevelEncode([]byte(parts[0]))+" "+byteLevelEncode([]byte(parts[1])))
		}
	}
	return merges
}

// converterKVs is the tokenizer metadata llama.cpp's converter writes for a Kimi tokenizer of
// BPE ranks vocab with the named specials of helpers_test.go: listLen tokens (Kimi's vocab_size
// is n+256), the ranks as byte-level text, the special ids n..n+257 as CONTROL, ids past those
// as "[PADi]" UNUSED; bos [BOS], eos [EOS], pad [PAD], unk [UNK]; and the chat template. merges
// false leaves out tokenizer.ggml.merges.
func converterKVs(vocab [][]byte, listLen int, merges bool, template string) []gguf.KV {
	n := len(vocab)
	tokens := make([]string, listLen)
	types := make([]int32, listLen)
	for id := range tokens {
		switch {
		case id < n:
			tokens[id], types[id] = byteLevelEncode(vocab[id]), ggufNormal
		case id < n+numReserved:
			tokens[id], types[id] = "<|reserved_token_"+strconv.Itoa(id)+"|>", ggufControl
			if name, ok := specialNames[id-n]; ok {
				tokens[id] = name
			}
		default:
			tokens[id], types[id] = "[PAD"+strconv.Itoa(id)+"]", ggufUnused
		}
	}
	kvs := []gguf.KV{
		{Key: "general.architecture", Value: gguf.MustValue("kimi-linear")},
		{Key: KeyGGUFModel, Value: gguf.MustValue("gpt2")},
		{Key: KeyGGUFPre, Value: gguf.MustValue("kimi-k2")},
		{Key: KeyGGUFTokens, Value: gguf.MustValue(tokens)},
		{Key: KeyGGUFTokenType, Value: gguf.MustValue(types)},
	}
	if merges {
		kvs = append(kvs, gguf.KV{Key: KeyGGUFMerges, Value: gguf.MustValue(converterMerges(vocab))})
	}
	kvs = append(kvs,
		gguf.KV{Key: KeyGGUFBOS, Value: gguf.MustValue(uint32(n + 0))},
		gguf.KV{Key: KeyGGUFEOS, Value: gguf.MustValue(uint32(n + 1))},
		gguf.KV{Key: KeyGGUFUnk, Value: gguf.MustValue(uint32(n + 254))},
		gguf.KV{Key: KeyGGUFPad, Value: gguf.MustValue(uint32(n + 255))},
		gguf.KV{Key: KeyGGUFAddBOS, Value: gguf.MustValue(false)},
	)
	if template != "" {
		kvs = append(kvs, gguf.KV{Key: KeyGGUFChatTemplate, Value: gguf.MustValue(template)})
	}
	return kvs
}

// setKV replaces key's value in kvs (appending it when absent); a nil value deletes the key.
func setKV(kvs []gguf.KV, key string, v any) []gguf.KV {
	kvs = slices.Clone(kvs)
	i := slices.IndexFunc(kvs, func(kv gguf.KV) bool { return kv.Key == key })
	switch {
	case v == nil && i >= 0:
		return slices.Delete(kvs, i, i+1)
	case v == nil:
		return kvs
	case i >= 0:
		kvs[i].Value = gguf.MustValue(v)
		return kvs
	}
	return append(kvs, gguf.KV{Key: key, Value: gguf.MustValue(v)})
}

// getKV returns a copy of key's array value in kvs ([]string or []int32).
func getKV[T any](t *testing.T, kvs []gguf.KV, key string) []T {
	for _, kv := range kvs {
		if kv.Key == key {
			a, _ := kv.Value.AsArray()
			return slices.Clone(a.Data().([]T))
		}
	}
	t.Fatalf("no %s", key)
	return nil
}

// writeGGUF writes kvs as a GGUF file (no tensors) in dir and opens it.
func writeGGUF(t testing.TB, dir string, kvs []gguf.KV) (*gguf.File, string) {
	t.Helper()
	path := filepath.Join(dir, "tok.gguf")
	var b bytes.Buffer
	if err := gguf.Write(&b, kvs, nil); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	f, err := gguf.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	return f, path
}

func loadGGUF(t testing.TB, kvs []gguf.KV) (*Tokenizer, string, error) {
	t.Helper()
	f, path := writeGGUF(t, t.TempDir(), kvs)
	tok, err := FromGGUF(f.Metadata, path)
	return tok, path, err
}

func TestByteLevelTable(t *testing.T) {
	for b, want := range map[byte]rune{' ': 'Ġ', '\n': 'Ċ', '\t': 'ĉ', 0: 'Ā', 'a': 'a', '!': '!', 0x7f: 'ġ', 0xa0: 'ł', 0xad: 'Ń', 0xff: 'ÿ'} {
		if got := byteToRune[b]; got != want {
			t.Errorf("bytes_to_unicode[0x%02x] = %q, want %q", b, got, want)
		}
	}
	all := make([]byte, 256)
	for i := range all {
		all[i] = byte(i)
	}
	if got, ok := byteLevelDecode(byteLevelEncode(all)); !ok || !bytes.Equal(got, all) {
		t.Errorf("decode(encode(0..255)) = %v, %v", got, ok)
	}
	for _, s := range []string{"a b", "€", "\x00", "\xff", "Ġ\u0144"} { // U+0144 is past the 324
		if _, ok := byteLevelDecode(s); ok {
			t.Errorf("byteLevelDecode(%q) accepted", s)
		}
	}
}

// ggufCorpus is text on which the GGUF and folder tokenizers must agree.
func ggufCorpus(n int) []string {
	return append(slices.Clone(roundTripInputs),
		"", " ", "  ", "\n", "\t\t  \n\n \r\n\r\n   x", strings.Repeat(" ", 33)+"end",
		"1234567890 12 3456 ٣٤٥ ⅷ 1.5e-3 0x1F",
		"👋🏽 👨‍👩‍👧‍👦 🏳️‍🌈 😀😀😀", "日本語のテキストです。中文分词，한국어 텍스트",
		"e\u0301 A\u030a ﬁ Ǆ ß ΣΑΣ", "It's I'M they'll WE'VE you'D",
		"<|im_user|>user<|im_middle|>Hi<|im_end|><|im_assistant|>",
		"[BOS][EOS][PAD][UNK]<|im_end|<|im_end|>|>",
		"<|reserved_token_"+strconv.Itoa(n+5)+"|> <|reserved_token_"+strconv.Itoa(n+256)+"|><|reserved_token_"+strconv.Itoa(n+257)+"|>",
		"\xff\xfe\x00\x01 bytes",
	)
}

// sameTokenizer checks that got (from a GGUF file) and want (from a folder) are the same
// tokenizer: the same tables, and the same ids, text and chat rendering for ggufCorpus.
func sameTokenizer(t *testing.T, got, want *Tokenizer) {
	t.Helper()
	type view struct {
		Ranks              map[string]int32
		Vocab              [][]byte
		Special            map[string]int32
		SpText             map[int32]string
		SpOrder            []string
		BOS, EOS, PAD, UNK int32
		EOSSet             []int32
		Chat               chatFormat
	}
	v := func(t *Tokenizer) view {
		return view{t.ranks, t.vocab, t.special, t.spText, t.spOrder, t.bos, t.eos, t.pad, t.unk, t.eosSet, t.chat}
	}
	if g, w := v(got), v(want); !reflect.DeepEqual(g, w) {
		t.Errorf("tables differ:\nGGUF   bos %d eos %d pad %d unk %d eosSet %v chat %+v, %d ranks, %d specials\nfolder bos %d eos %d pad %d unk %d eosSet %v chat %+v, %d ranks, %d specials",
			g.BOS, g.EOS, g.PAD, g.UNK, g.EOSSet, g.Chat, len(g.Vocab), len(g.Special),
			w.BOS, w.EOS, w.PAD, w.UNK, w.EOSSet, w.Chat, len(w.Vocab), len(w.Special))
	}
	if got.VocabSize() != want.VocabSize() {
		t.Errorf("VocabSize %d, folder %d", got.VocabSize(), want.VocabSize())
	}
	for id := int32(-1); id <= int32(want.VocabSize()); id++ {
		gb, gok := got.Token(id)
		wb, wok := want.Token(id)
		if gok != wok || !bytes.Equal(gb, wb) || got.IsSpecial(id) != want.IsSpecial(id) {
			t.Fatalf("Token(%d) = %q %v, folder %q %v", id, gb, gok, wb, wok)
		}
	}
	for _, s := range ggufCorpus(len(want.vocab)) {
		for _, allow := range []bool{false, true} {
			g, w := got.Encode(s, allow), want.Encode(s, allow)
			if !slices.Equal(g, w) {
				t.Errorf("Encode(%q, %v) = %v, folder %v", s, allow, g, w)
			}
			if d := got.Decode(g); d != s || d != want.Decode(w) {
				t.Errorf("Decode(Encode(%q, %v)) = %q, folder %q", s, allow, d, want.Decode(w))
			}
		}
	}
	if a, b := got.DefaultSystemPrompt(), want.DefaultSystemPrompt(); a != b {
		t.Errorf("DefaultSystemPrompt %q, folder %q", a, b)
	}
	if a, b := got.ChatTemplate(), want.ChatTemplate(); a != b {
		t.Errorf("ChatTemplate %q, folder %q", a, b)
	}
	for _, msgs := range [][]Message{
		{{Role: "user", Content: "Hi 👋"}},
		{{Role: "system", Content: "Be brief."}, {Role: "user", Content: "2+2?"}, {Role: "assistant", Content: "4"}},
		{{Role: "user", Name: "alice", Content: "q"}, {Role: "tool", Name: "search", ToolCallID: "functions.search:0", Content: "r"}},
	} {
		for _, gen := range []bool{false, true} {
			a, b := got.ApplyChat(msgs, gen), want.ApplyChat(msgs, gen)
			if a != b {
				t.Errorf("ApplyChat = %q, folder %q", a, b)
			}
			if g, w := got.Encode(a, true), want.Encode(b, true); !slices.Equal(g, w) {
				t.Errorf("chat ids %v, folder %v", g, w)
			}
		}
	}
	for _, name := range []string{"[BOS]", "[EOS]", "<|im_end|>", "[PAD]", "<|reserved_token_" + strconv.Itoa(len(want.vocab)+257) + "|>"} {
		g, gok := got.Special(name)
		w, wok := want.Special(name)
		if g != w || gok != wok {
			t.Errorf("Special(%q) = %d %v, folder %d %v", name, g, gok, w, wok)
		}
	}
	gb, gok := got.BOS()
	wb, wok := want.BOS()
	if gb != wb || gok != wok || !slices.Equal(got.EOS(), want.EOS()) {
		t.Errorf("BOS %d %v EOS %v; folder BOS %d %v EOS %v", gb, gok, got.EOS(), wb, wok, want.EOS())
	}
}

// TestFromGGUFMatchesFolder writes one small trained vocabulary both as a Hugging Face folder
// and as GGUF files in the converter's shape, and checks that FromGGUF and Load agree.
func TestFromGGUFMatchesFolder(t *testing.T) {
	folder := newTestTokenizer(t)
	n := len(testVocab)
	if m := converterMerges(testVocab); len(m) < 100 {
		t.Fatalf("only %d merges from %d ranks", len(m), n)
	}
	for _, c := range []struct {
		name    string
		listLen int
		merges  bool
	}{
		{"converter: vocab_size n+256, merges", n + 256, true},
		{"no merges", n + 256, false},
		{"list of n+258", n + numReserved, true},
		{"padded past the specials with UNUSED", n + 300, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			tok, _, err := loadGGUF(t, converterKVs(testVocab, c.listLen, c.merges, testTemplate))
			if err != nil {
				t.Fatal(err)
			}
			sameTokenizer(t, tok, folder)
		})
	}

	// Fewer named specials, an UNUSED filler among the special ids, no chat template and no
	// pad/unk: the folder names the same tokens and has no template either.
	t.Run("sparse specials, no template", func(t *testing.T) {
		kvs := converterKVs(testVocab, n+256, true, "")
		kvs = setKV(kvs, KeyGGUFPad, nil)
		kvs = setKV(kvs, KeyGGUFUnk, nil)
		tokens, types := getKV[string](t, kvs, KeyGGUFTokens), getKV[int32](t, kvs, KeyGGUFTokenType)
		tokens[n+200], types[n+200] = "[PAD"+strconv.Itoa(n+200)+"]", ggufUnused
		tokens[n+254], tokens[n+255] = "<|reserved_token_"+strconv.Itoa(n+254)+"|>", "<|reserved_token_"+strconv.Itoa(n+255)+"|>"
		kvs = setKV(setKV(kvs, KeyGGUFTokens, tokens), KeyGGUFTokenType, types)
		tok, _, err := loadGGUF(t, kvs)
		if err != nil {
			t.Fatal(err)
		}
		dir := t.TempDir()
		writeModel(t, dir, testVocab)
		writeConfig(t, dir, n, "")
		raw, _ := os.ReadFile(filepath.Join(dir, ConfigFile))
		raw = bytes.ReplaceAll(raw, []byte(`"[PAD]"`), []byte(`null`))
		raw = bytes.ReplaceAll(raw, []byte(`"[UNK]"`), []byte(`null`))
		raw = bytes.ReplaceAll(raw, []byte(`"content": "[PAD]"`), []byte(`"content": ""`))
		raw = bytes.ReplaceAll(raw, []byte(`"content": "[UNK]"`), []byte(`"content": ""`))
		if err := os.WriteFile(filepath.Join(dir, ConfigFile), raw, 0o644); err != nil {
			t.Fatal(err)
		}
		want, err := Load(dir)
		if err != nil {
			t.Fatal(err)
		}
		sameTokenizer(t, tok, want)
		if _, ok := tok.Special("[PAD]"); ok {
			t.Error("[PAD] is a special token")
		}
	})

	t.Run("eot joins the stop set", func(t *testing.T) {
		kvs := setKV(converterKVs(testVocab, n+256, true, testTemplate), KeyGGUFEOT, int32(n+100))
		tok, _, err := loadGGUF(t, kvs)
		if err != nil {
			t.Fatal(err)
		}
		if want := append(folder.EOS(), int32(n+100)); !slices.Equal(tok.EOS(), want) {
			t.Errorf("EOS() = %v, want %v", tok.EOS(), want)
		}
	})
}

// TestFromGGUFRefuses checks that each bad input gives an error naming the file and the key.
func TestFromGGUFRefuses(t *testing.T) {
	n := len(trainVocab(t, strings.Repeat(trainCorpus, 2), 300))
	if testVocab == nil {
		newTestTokenizer(t)
	}
	good := converterKVs(testVocab, n+256, true, testTemplate)
	tokens := func(edit func(tok []string, ty []int32)) []gguf.KV {
		tok, ty := getKV[string](t, good, KeyGGUFTokens), getKV[int32](t, good, KeyGGUFTokenType)
		edit(tok, ty)
		return setKV(setKV(good, KeyGGUFTokens, tok), KeyGGUFTokenType, ty)
	}
	byteA := slices.IndexFunc(testVocab, func(b []byte) bool { return string(b) == "A" })
	multi := slices.IndexFunc(testVocab, func(b []byte) bool { return len(b) > 2 })
	for _, c := range []struct {
		name, key, want string
		kvs             []gguf.KV
	}{
		{"model llama", KeyGGUFModel, `is "llama"; only "gpt2"`, setKV(good, KeyGGUFModel, "llama")},
		{"model missing", KeyGGUFModel, "missing", setKV(good, KeyGGUFModel, nil)},
		{"model not a string", KeyGGUFModel, "not a string", setKV(good, KeyGGUFModel, int32(2))},
		{"pre gpt-4o", KeyGGUFPre, `is "gpt-4o"; only "kimi-k2"`, setKV(good, KeyGGUFPre, "gpt-4o")},
		{"pre missing", KeyGGUFPre, "missing", setKV(good, KeyGGUFPre, nil)},
		{"tokens missing", KeyGGUFTokens, "missing", setKV(good, KeyGGUFTokens, nil)},
		{"tokens not strings", KeyGGUFTokens, "array of int32, not of string", setKV(good, KeyGGUFTokens, make([]int32, n+256))},
		{"tokens a string", KeyGGUFTokens, "not an array of strings", setKV(good, KeyGGUFTokens, "abc")},
		{"tokens empty", KeyGGUFTokens, "is empty", setKV(setKV(good, KeyGGUFTokens, []string{}), KeyGGUFTokenType, []int32{})},
		{"token_type missing", KeyGGUFTokenType, "missing", setKV(good, KeyGGUFTokenType, nil)},
		{"token_type short", KeyGGUFTokenType, "has 10 entries but tokenizer.ggml.tokens has", setKV(good, KeyGGUFTokenType, make([]int32, 10))},
		{"token_type floats", KeyGGUFTokenType, "array of float32, not of integers", setKV(good, KeyGGUFTokenType, make([]float32, n+256))},
		{"token_type 7", KeyGGUFTokenType, "token 3 has type 7", tokens(func(_ []string, ty []int32) { ty[3] = 7 })},
		{"BYTE token", KeyGGUFTokenType, "type BYTE", tokens(func(_ []string, ty []int32) { ty[3] = ggufByte })},
		{"NORMAL after CONTROL", KeyGGUFTokenType, "NORMAL token " + strconv.Itoa(n+5) + ` ("<|reserved_token_`, tokens(func(_ []string, ty []int32) { ty[n+5] = ggufNormal })},
		{"no NORMAL tokens", KeyGGUFTokenType, "no NORMAL", tokens(func(_ []string, ty []int32) {
			for i := range ty {
				ty[i] = ggufControl
			}
		})},
		{"not byte-level (space)", KeyGGUFTokens, `NORMAL token 300 ("a b") is not byte-level`, tokens(func(tok []string, _ []int32) { tok[300] = "a b" })},
		{"not byte-level (€)", KeyGGUFTokens, "is not byte-level", tokens(func(tok []string, _ []int32) { tok[301] = "x€" })},
		{"empty NORMAL token", KeyGGUFTokens, "NORMAL token 302 is empty", tokens(func(tok []string, _ []int32) { tok[302] = "" })},
		{"duplicate NORMAL", KeyGGUFTokens, "token " + strconv.Itoa(multi+1) + " (", tokens(func(tok []string, _ []int32) { tok[multi+1] = tok[multi] })},
		{"duplicate special", KeyGGUFTokens, `special token "[EOS]" has two ids`, tokens(func(tok []string, _ []int32) { tok[n+30] = "[EOS]" })},
		{"missing byte", KeyGGUFTokens, "byte 0x41 (\"A\") has no NORMAL token", tokens(func(tok []string, _ []int32) { tok[byteA] = "ĀĀĀĀĀĀĀĀĀ" })},
		{"CONTROL past the specials", KeyGGUFTokens, "token " + strconv.Itoa(n+259) + ` (CONTROL "[EXTRA]") lies past the tokenizer's ids`, setKV(setKV(good,
			KeyGGUFTokens, append(getKV[string](t, good, KeyGGUFTokens), "a", "b", "c", "[EXTRA]")),
			KeyGGUFTokenType, append(getKV[int32](t, good, KeyGGUFTokenType), ggufUnused, ggufUnused, ggufUnused, ggufControl))},
		{"merges not strings", KeyGGUFMerges, "not of string", setKV(good, KeyGGUFMerges, []int32{1})},
		{"merge without space", KeyGGUFMerges, `entry 1 ("Ġthe") is not two tokens`, setKV(good, KeyGGUFMerges, []string{converterMerges(testVocab)[0], "Ġthe"})},
		{"merge of two spaces", KeyGGUFMerges, "entry 0", setKV(good, KeyGGUFMerges, []string{"a  b"})},
		{"merge not byte-level", KeyGGUFMerges, "not byte-level", setKV(good, KeyGGUFMerges, []string{"€ a"})},
		{"merge of unknown tokens", KeyGGUFMerges, "is not a NORMAL token", setKV(good, KeyGGUFMerges, []string{"zq qz"})},
		{"bos out of range", KeyGGUFBOS, "id 1048576 is out of range: the tokenizer's ids are 0.." + strconv.Itoa(n+numReserved-1), setKV(good, KeyGGUFBOS, uint32(1<<20))},
		{"eos negative", KeyGGUFEOS, "id -1 is out of range", setKV(good, KeyGGUFEOS, int32(-1))},
		{"eos a NORMAL token", KeyGGUFEOS, "id 5 is NORMAL token", setKV(good, KeyGGUFEOS, uint32(5))},
		{"pad a string", KeyGGUFPad, "not an integer", setKV(good, KeyGGUFPad, "[PAD]")},
		{"eot out of range", KeyGGUFEOT, "out of range", setKV(good, KeyGGUFEOT, uint64(1<<40))},
		{"add_bos_token an int", KeyGGUFAddBOS, "not a bool", setKV(good, KeyGGUFAddBOS, uint8(1))},
		{"chat_template an array", KeyGGUFChatTemplate, "not a string", setKV(good, KeyGGUFChatTemplate, []string{"x"})},
	} {
		t.Run(c.name, func(t *testing.T) {
			tok, path, err := loadGGUF(t, c.kvs)
			if err == nil {
				t.Fatalf("loaded (%d ids)", tok.VocabSize())
			}
			msg := err.Error()
			for _, part := range []string{"tokenizer: " + path + ": ", `metadata "` + c.key + `": `, c.want} {
				if !strings.Contains(msg, part) {
					t.Errorf("error %q lacks %q", msg, part)
				}
			}
		})
	}
	if _, err := FromGGUF(nil, "x.gguf"); err == nil || !strings.Contains(err.Error(), "x.gguf") {
		t.Errorf("FromGGUF(nil) = %v", err)
	}
}

// placeholderToken is the golden tiny model's placeholder vocabulary: "<t0>" ... "<tN>".
var placeholderToken = regexp.MustCompile(`^<t[0-9]+>$`)

// TestFromGGUFGolden reads the tokenizer of every GGUF file in the golden folder. The tiny
// model's files carry a placeholder vocabulary ("<t0>".."<t511>", all NORMAL, no merges): its
// text is valid byte-level, but with no single-byte tokens no text could be encoded, so FromGGUF
// refuses it, naming the file, tokenizer.ggml.tokens and the first missing byte. A golden file
// with a real vocabulary must load and round-trip text.
func TestFromGGUFGolden(t *testing.T) {
	dir, err := golden.Dir()
	if err != nil {
		t.Fatal(err)
	}
	var paths []string
	err = filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() && strings.HasSuffix(path, ".gguf") {
			paths = append(paths, path)
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(paths) == 0 {
		t.Skipf("no *.gguf files under %s", dir)
	}
	for _, path := range paths {
		rel, _ := filepath.Rel(dir, path)
		t.Run(rel, func(t *testing.T) {
			f, err := gguf.Open(path)
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			md := f.Metadata
			if !md.Has(KeyGGUFTokens) {
				t.Skip("no tokenizer in this file")
			}
			toks, err := md.Strings(KeyGGUFTokens)
			if err != nil {
				t.Fatal(err)
			}
			placeholder := !slices.ContainsFunc(toks, func(s string) bool { return !placeholderToken.MatchString(s) })
			tok, err := FromGGUF(md, path)
			if placeholder {
				if err == nil {
					t.Fatalf("placeholder vocabulary of %d tokens loaded", len(toks))
				}
				for _, part := range []string{path, `metadata "` + KeyGGUFTokens + `"`, `byte 0x00 ("Ā") has no NORMAL token`} {
					if !strings.Contains(err.Error(), part) {
						t.Errorf("error %q lacks %q", err, part)
					}
				}
				t.Logf("%d placeholder tokens: %v", len(toks), err)
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			for _, s := range ggufCorpus(len(tok.vocab)) {
				if got := tok.Decode(tok.Encode(s, true)); got != s {
					t.Errorf("Decode(Encode(%q)) = %q", s, got)
				}
			}
		})
	}
}
