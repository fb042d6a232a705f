package tokenizer

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"
)

// refBPE is a deliberately plain reference of tiktoken's merge rule: the whole piece if it is a
// token, else merge the lowest-ranked adjacent pair (leftmost on ties) until none is a token.
func refBPE(ranks map[string]int32, piece []byte) []int32 {
	if id, ok := ranks[string(piece)]; ok {
		return []int32{id}
	}
	parts := []string{}
	for _, c := range piece {
		parts = append(parts, string([]byte{c}))
	}
	for {
		best, at := int32(-1), -1
		for i := 0; i+1 < len(parts); i++ {
			if r, ok := ranks[parts[i]+parts[i+1]]; ok && (at < 0 || r < best) {
				best, at = r, i
			}
		}
		if at < 0 {
			break
		}
		parts = slices.Replace(parts, at, at+2, parts[at]+parts[at+1])
	}
	ids := make([]int32, len(parts))
	for i, p := range parts {
		ids[i] = ranks[p]
	}
	return ids
}

func TestBPEMergeOrder(t *testing.T) {
	// "abcd": ranks make "bc" merge before "ab" and "cd"; then "bcd" beats "abc".
	vocab := make([][]byte, 256)
	for b := range 256 {
		vocab[b] = []byte{byte(b)}
	}
	for _, s := range []string{"bc", "ab", "cd", "bcd", "abc", "xx", "xxx"} {
		vocab = append(vocab, []byte(s))
	}
	tok, err := build(vocab, &tokenizerConfig{})
	if err != nil {
		t.Fatal(err)
	}
	id := func(s string) int32 { return tok.ranks[s] }
	for _, c := range []struct {
		in   string
		want []int32
	}{
		{"abcd", []int32{'a', id("bcd")}},
		{"abce", []int32{id("abc"), 'e'}}, // a|bc|e, then "abc" is a token: neighbours re-ranked
		{"abxe", []int32{id("ab"), 'x', 'e'}},
		{"abc", []int32{id("abc")}},             // a whole-piece token wins outright
		{"xxxx", []int32{id("xx"), id("xx")}},   // xx|x|x -> xx|xx; "xxxx" is no token
		{"xxxxx", []int32{id("xx"), id("xxx")}}, // xx|x|x|x -> xx|xx|x (xx beats xxx) -> xx|xxx
		{"zz", []int32{'z', 'z'}},               // no merges at all
		{"", nil},
	} {
		got := tok.bpe(nil, []byte(c.in))
		if !slices.Equal(got, c.want) {
			t.Errorf("bpe(%q) = %v, want %v", c.in, got, c.want)
		}
		if ref := refBPE(tok.ranks, []byte(c.in)); c.in != "" && !slices.Equal(got, ref) {
			t.Errorf("bpe(%q) = %v, reference %v", c.in, got, ref)
		}
	}
}

// TestBPEAgainstReference compares the merge loop with refBPE on random rank tables and
// random byte strings over a small alphabet (so merges actually happen).
func TestBPEAgainstReference(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	alpha := []byte("abcde\xc3\xa9")
	for trial := range 50 {
		vocab := make([][]byte, 256)
		for b := range 256 {
			vocab[(b*trial*2+b+trial)%256] = []byte{byte(b)} // odd multiplier: a permutation
		}
		seen := map[string]bool{}
		for _, v := range vocab {
			seen[string(v)] = true
		}
		for len(vocab) < 256+60 {
			n := 2 + rng.IntN(4)
			w := make([]byte, n)
			for i := range w {
				w[i] = alpha[rng.IntN(len(alpha))]
			}
			if !seen[string(w)] {
				seen[string(w)] = true
				vocab = append(vocab, w)
			}
		}
		tok, err := build(vocab, &tokenizerConfig{})
		if err != nil {
			t.Fatal(err)
		}
		for range 40 {
			w := make([]byte, 1+rng.IntN(24))
			for i := range w {
				w[i] = alpha[rng.IntN(len(alpha))]
			}
			got, want := tok.bpe(nil, w), refBPE(tok.ranks, w)
			if !slices.Equal(got, want) {
				t.Fatalf("trial %d: bpe(%q) = %v, reference %v", trial, w, got, want)
			}
		}
	}
}

var roundTripInputs = []string{
	"",
	"Hello world",
	trainCorpus,
	"The quick brown fox <|im_end|> [EOS] <|reserved_token_5|>",
	"中文字符测试，😀 e\u0301 \u0000\u007f\u2028",
	"\xff\xfe invalid \xc3 utf8 \xed\xa0\x80",
	strings.Repeat(" ", 70) + strings.Repeat("x", 70),
}

func TestRoundTrip(t *testing.T) {
	tok := newTestTokenizer(t)
	for _, s := range roundTripInputs {
		for _, allow := range []bool{false, true} {
			ids := tok.Encode(s, allow)
			if got := tok.Decode(ids); got != s {
				t.Errorf("Decode(Encode(%q, %v)) = %q", s, allow, got)
			}
		}
	}
	// A trained vocabulary compresses its own corpus.
	t.Logf("vocabulary: %d ranks; corpus: %d bytes, %d tokens", len(testVocab), len(trainCorpus), len(tok.Encode(trainCorpus, false)))
	if n := len(tok.Encode(trainCorpus, false)); n >= len(trainCorpus)/3 {
		t.Errorf("corpus of %d bytes took %d tokens; merges are not applied", len(trainCorpus), n)
	}
}

func TestEncodeIsPiecewiseBPE(t *testing.T) {
	// Encode(text) is the concatenation of refBPE over the pre-tokenized pieces.
	tok := newTestTokenizer(t)
	for _, s := range roundTripInputs {
		var want []int32
		tok.split.split(s, func(a, b int) { want = append(want, refBPE(tok.ranks, []byte(s[a:b]))...) })
		if got := tok.Encode(s, false); !slices.Equal(got, want) {
			t.Errorf("Encode(%q) = %v, piecewise reference %v", s, got, want)
		}
	}
}

func FuzzRoundTrip(f *testing.F) {
	for _, s := range roundTripInputs {
		f.Add(s, false)
		f.Add(s, true)
	}
	tok := newTestTokenizer(f)
	f.Fuzz(func(t *testing.T, s string, allow bool) {
		ids := tok.Encode(s, allow)
		if got := tok.Decode(ids); got != s {
			t.Fatalf("Decode(Encode(%q)) = %q", s, got)
		}
		if !allow {
			for _, id := range ids {
				if tok.IsSpecial(id) {
					t.Fatalf("special id %d in Encode(%q, false)", id, s)
				}
			}
		}
		// Streaming decode gives the same bytes.
		d := tok.NewDecoder()
		var b strings.Builder
		for _, id := range ids {
			b.WriteString(d.Add(id))
		}
		b.WriteString(d.Flush())
		if b.String() != s {
			t.Fatalf("streamed %q, want %q", b.String(), s)
		}
	})
}

func TestSpecials(t *testing.T) {
	tok := newTestTokenizer(t)
	n := int32(len(testVocab))
	imEnd, ok := tok.Special("<|im_end|>")
	if !ok || imEnd != n+2 {
		t.Fatalf("Special(<|im_end|>) = %d, %v; want %d", imEnd, ok, n+2)
	}
	if id, ok := tok.Special("<|reserved_token_" + strconv.Itoa(int(n+5)) + "|>"); !ok || id != n+5 {
		t.Errorf("unnamed special: %d %v", id, ok)
	}
	if _, ok := tok.Special("<|nope|>"); ok {
		t.Error("unknown special found")
	}
	if tok.VocabSize() != int(n)+256+2 {
		t.Errorf("VocabSize = %d", tok.VocabSize())
	}
	if bos, ok := tok.BOS(); !ok || bos != n {
		t.Errorf("BOS = %d %v", bos, ok)
	}
	if got, want := tok.EOS(), []int32{n + 1, n + 2, n + 9}; !slices.Equal(got, want) {
		t.Errorf("EOS = %v, want %v ([EOS], <|im_end|>, [EOT])", got, want)
	}

	text := "a<|im_end|>b<|im_user|><|im_end|>"
	got := tok.Encode(text, true)
	want := slices.Concat(tok.Encode("a", false), []int32{imEnd}, tok.Encode("b", false), []int32{n + 3, imEnd})
	if !slices.Equal(got, want) {
		t.Errorf("Encode(%q, true) = %v, want %v", text, got, want)
	}
	plain := tok.Encode(text, false)
	for _, id := range plain {
		if tok.IsSpecial(id) {
			t.Errorf("Encode(%q, false) has special id %d", text, id)
		}
	}
	if tok.Decode(plain) != text || tok.Decode(got) != text {
		t.Error("special text does not decode back")
	}
	// Out-of-vocabulary ids decode as U+FFFD.
	if s := tok.Decode([]int32{-1, int32(tok.VocabSize())}); s != "\uFFFD\uFFFD" {
		t.Errorf("Decode(bad ids) = %q", s)
	}
}

func TestStreamingDecoder(t *testing.T) {
	tok := newTestTokenizer(t)
	// Byte tokens that cut "é" (c3 a9) and "😀" (f0 9f 98 80) in the middle.
	b := func(c byte) int32 { return tok.ranks[string([]byte{c})] }
	d := tok.NewDecoder()
	steps := []struct {
		id   int32
		want string
	}{
		{b('x'), "x"},
		{b(0xc3), ""},
		{b(0xa9), "é"},
		{b(0xf0), ""},
		{b(0x9f), ""},
		{b(0x98), ""},
		{b(0x80), "😀"},
		{b(0xff), "\xff"}, // can never complete: passed through at once
		{b(0xe4), ""},
		{b('y'), "\xe4y"}, // the cut sequence turned out invalid: passed through
		{b(0xe4), ""},
	}
	for i, s := range steps {
		if got := d.Add(s.id); got != s.want {
			t.Errorf("step %d: Add = %q, want %q", i, got, s.want)
		}
	}
	if got := d.Flush(); got != "\xe4" {
		t.Errorf("Flush = %q", got)
	}
	// On valid text, every Add returns valid UTF-8.
	rng := rand.New(rand.NewPCG(3, 4))
	for range 200 {
		var sb strings.Builder
		for range 1 + rng.IntN(10) {
			sb.WriteRune([]rune("aé中😀 \n")[rng.IntN(6)])
		}
		ids := tok.Encode(sb.String(), false)
		d := tok.NewDecoder()
		var out strings.Builder
		for _, id := range ids {
			s := d.Add(id)
			if !utf8.ValidString(s) {
				t.Fatalf("Add returned invalid UTF-8 %q while decoding %q", s, sb.String())
			}
			out.WriteString(s)
		}
		if d.Flush() != "" || out.String() != sb.String() {
			t.Fatalf("streamed %q, want %q", out.String(), sb.String())
		}
	}
}

func TestLoadErrors(t *testing.T) {
	good := trainVocab(t, "ab ab ab", 2)
	cases := []struct {
		name, model, config, wantSub string
	}{
		{"no model", "-", "{}", ModelFile},
		{"no config", "", "-", ConfigFile},
		{"bad line", "YQ== 0 extra\n", "{}", ModelFile + ":1"},
		{"bad base64", "!!! 0\n", "{}", "base64"},
		{"bad rank", "YQ== x\n", "{}", "bad rank"},
		{"missing byte", "YQ== 0\n", "{}", "byte 0x00 has no token"},
		{"rank gap", "YQ== 1\n", "{}", ModelFile + ":1: rank 1 is past the file's 1 tokens"},
		{"rank twice", "YQ== 0\nYg== 0\n", "{}", ModelFile + ":2: rank 0 given twice"},
		// A rank sized the vocabulary before it was checked: 2³¹−1 allocated 48 GiB.
		{"huge rank", "YQ== 2147483647\n", "{}", "rank 2147483647 is past the file's 1 tokens"},
		{"bad json", "", "{", ConfigFile},
		{"eos not special", "", `{"eos_token": "nope"}`, "eos_token \"nope\""},
		{"bad template", "", `{"chat_template": 3}`, "chat_template"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			switch c.model {
			case "-":
			case "":
				writeModel(t, dir, good)
			default:
				os.WriteFile(filepath.Join(dir, ModelFile), []byte(c.model), 0o644)
			}
			if c.config != "-" {
				os.WriteFile(filepath.Join(dir, ConfigFile), []byte(c.config), 0o644)
			}
			_, err := Load(dir)
			if err == nil || !strings.Contains(err.Error(), c.wantSub) {
				t.Errorf("Load error = %v, want it to mention %q", err, c.wantSub)
			}
		})
	}
}

func BenchmarkEncode(b *testing.B) {
	tok := newTestTokenizer(b)
	text := strings.Repeat(trainCorpus, 20)
	b.SetBytes(int64(len(text)))
	for b.Loop() {
		tok.Encode(text, true)
	}
}

// naiveFindSpecial is the specification of findSpecial: each name searched for in turn,
// the leftmost match kept, the longest at that offset.
func naiveFindSpecial(names []string, s string) (int, string) {
	best, bestName := -1, ""
	for _, name := range names {
		i := strings.Index(s, name)
		if i >= 0 && (best < 0 || i < best || i == best && len(name) > len(bestName)) {
			best, bestName = i, name
		}
	}
	return best, bestName
}

// TestFindSpecial: the one-pass matcher finds what searching for every name finds (leftmost,
// longest there) on texts built of special tokens, their fragments, names that are prefixes
// of others, and ordinary bytes; and Encode splits a text full of special tokens into them.
func TestFindSpecial(t *testing.T) {
	tok := newTestTokenizer(t)
	names := append(slices.Clone(tok.spOrder), "<|im", "<|im_end|>x") // a prefix and an extension
	m := newSpecialMatcher(names)
	frags := []string{"<|", "|>", "<|im_end|>", "<|im_user|>", "im_end", "[EOT]", "[", "EOT", "<", "|", "x", "é", "<|im", "<|reserved_token_"}
	r := rand.New(rand.NewPCG(7, 7))
	for i := range 20000 {
		var b strings.Builder
		for range r.IntN(12) {
			b.WriteString(frags[r.IntN(len(frags))])
		}
		s := b.String()
		gi, gn := m.find(s)
		wi, wn := naiveFindSpecial(names, s)
		if gi != wi || gn != wn {
			t.Fatalf("case %d: find(%q) = %d %q, want %d %q", i, s, gi, gn, wi, wn)
		}
	}
	imEnd, _ := tok.Special("<|im_end|>")
	ids := tok.Encode(strings.Repeat("<|im_end|>", 1000), true)
	if len(ids) != 1000 || slices.IndexFunc(ids, func(id int32) bool { return id != imEnd }) >= 0 {
		t.Errorf("1000 × <|im_end|>: %d ids, not all %d", len(ids), imEnd)
	}
}

// BenchmarkEncodeSpecials: texts of special tokens alone, 1 KB to 8 MB: time per byte is
// flat (one pass), where searching for each name after each match was quadratic (a 100 KB
// text of "<|im_end|>" took 25 s).
func BenchmarkEncodeSpecials(b *testing.B) {
	tok := newTestTokenizer(b)
	for _, kb := range []int{1, 64, 1024, 8192} {
		text := strings.Repeat("<|im_end|>", kb*1024/10)
		b.Run(fmt.Sprintf("%dKB", kb), func(b *testing.B) {
			b.SetBytes(int64(len(text)))
			for b.Loop() {
				tok.Encode(text, true)
			}
		})
	}
}

// TestLongSpecialName: a special token's text comes from the model's files; finding one costs
// up to its length in steps per byte of text, so a name longer than maxSpecialLen is refused
// (a 1 MB name of "x" took 180 s to encode 2 MB of "x"), and one of that length works.
func TestLongSpecialName(t *testing.T) {
	vocab := trainVocab(t, strings.Repeat(trainCorpus, 2), 40)
	id := len(vocab) + 7
	config := func(name string) []byte {
		return []byte(fmt.Sprintf(`{"added_tokens_decoder": {"%d": {"content": %q}}}`, id, name))
	}
	_, err := parse(bytes.NewReader(modelBytes(vocab)), ModelFile, config(strings.Repeat("x", 1<<20)), ConfigFile)
	if want := fmt.Sprintf("%s: special token %d is %d bytes long", ConfigFile, id, 1<<20); err == nil || !strings.Contains(err.Error(), want) {
		t.Fatalf("1 MB special token: %v, want %q", err, want)
	}
	long := strings.Repeat("x", maxSpecialLen)
	tok, err := parse(bytes.NewReader(modelBytes(vocab)), ModelFile, config(long), ConfigFile)
	if err != nil {
		t.Fatal(err)
	}
	text := "a" + long + "b" + long[1:]
	ids := tok.Encode(text, true)
	if n := len(slices.DeleteFunc(slices.Clone(ids), func(x int32) bool { return x != int32(id) })); n != 1 {
		t.Errorf("the long special id %d %d times in the %d ids, want once", id, n, len(ids))
	}
	if got := tok.Decode(ids); got != text {
		t.Errorf("round trip gave %q", got)
	}
}
