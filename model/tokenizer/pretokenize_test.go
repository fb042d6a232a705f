package tokenizer

import (
	"slices"
	"strings"
	"testing"
)

// TestSplitKimi checks pre-tokenization against splits derived by hand from the pattern's
// semantics (leftmost-first alternation, greedy with backtracking); the reasoning for the less
// obvious ones is in the comments.
func TestSplitKimi(t *testing.T) {
	sp, err := newSplitter(kimiPattern)
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		in   string
		want []string
	}{
		{"", nil},
		{"Hello world", []string{"Hello", " world"}},
		// Contractions attach to the word, in any case (?i:...).
		{"I'm don't THEY'RE we'LL", []string{"I'm", " don't", " THEY'RE", " we'LL"}},
		// All-caps word: alternative 2 needs a lower-case letter and fails; 3 takes it.
		{"DON'T", []string{"DON'T"}},
		{"its'", []string{"its", "'"}},
		// Case changes: [upper]*[lower]+ is greedy, so an upper-case run stays with the
		// lower-case letters that follow it; a lower->upper change cuts.
		{"HeLLo camelCase HTTPServer ABC", []string{"He", "LLo", " camel", "Case", " HTTPServer", " ABC"}},
		// Numbers in groups of at most three; a space before a digit is its own piece (no
		// alternative takes " 1": 5 excludes \p{N}, and \s+(?!\S) backtracks to nothing).
		{"12345 1234567", []string{"123", "45", " ", "123", "456", "7"}},
		{"abc123def", []string{"abc", "123", "def"}},
		{"١٢٣٤", []string{"١٢٣", "٤"}}, // Arabic-Indic digits are \p{N}
		// Han runs are their own pieces and never join letters or a leading space; kana are
		// \p{Lo} but not Han, so they form words.
		{"中文字符abc", []string{"中文字符", "abc"}},
		{"abc中文", []string{"abc", "中文"}},
		{"日本語のテキスト", []string{"日本語", "のテキスト"}},
		{" 中文", []string{" ", "中文"}},
		// Whitespace: a run before a word gives its last char to the word.
		{"a  b", []string{"a", " ", " b"}},
		{"  hello\n\n  x  ", []string{" ", " hello", "\n\n", " ", " x", "  "}},
		{"a \n b", []string{"a", " \n", " b"}},
		{"a\r\nb", []string{"a", "\r\n", "b"}},
		{"\t\tx", []string{"\t", "\tx"}},
		{"a   ", []string{"a", "   "}},
		// Punctuation: an optional leading space, and trailing newlines join it.
		{"foo!!!\n\nbar", []string{"foo", "!!!\n\n", "bar"}},
		{"x = (y+1);", []string{"x", " =", " (", "y", "+", "1", ");"}},
		{"$hello", []string{"$hello"}}, // one non-letter may lead a word
		// Combining marks belong to words; emoji and modifiers are symbols.
		{"e\u0301te\u0301", []string{"e\u0301te\u0301"}},
		{"hi 👋🏽!", []string{"hi", " 👋🏽!"}},
		// Invalid UTF-8: the byte is seen as U+FFFD (a symbol), so it leads the word after it,
		// and the piece keeps the original byte.
		{"a\xffb", []string{"a", "\xffb"}},
	}
	for _, c := range cases {
		var got []string
		sp.split(c.in, func(s, e int) { got = append(got, c.in[s:e]) })
		if !slices.Equal(got, c.want) {
			t.Errorf("split(%q)\n got %q\nwant %q", c.in, got, c.want)
		}
	}
}

func TestSplitCoversInput(t *testing.T) {
	sp, err := newSplitter(kimiPattern)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{trainCorpus, "\x00\x01\xc3", "\u2028\u00a0x\u3000y", strings.Repeat("ab ", 100)} {
		var b strings.Builder
		sp.split(s, func(st, e int) {
			if e <= st {
				t.Errorf("empty piece at %d", st)
			}
			b.WriteString(s[st:e])
		})
		if b.String() != s {
			t.Errorf("pieces of %q do not concatenate back", s)
		}
	}
}

func TestSplitRuns(t *testing.T) {
	// Derived by stepping through tokenization_kimi.py's _split_whitespaces_or_nonwhitespaces.
	got := splitRuns("aaaaa  bb", 2)
	want := []string{"aa", "aa", "a  bb"}
	if !slices.Equal(got, want) {
		t.Errorf("splitRuns = %q, want %q", got, want)
	}
	if got := splitRuns("   ", 2); !slices.Equal(got, []string{"  ", " "}) {
		t.Errorf("splitRuns spaces = %q", got)
	}
	if got := chunkRunes("ab中文x", 2); !slices.Equal(got, []string{"ab", "中文", "x"}) {
		t.Errorf("chunkRunes = %q", got)
	}
}

// TestRunCap: a run of more than 25,000 characters of one kind (the
// reference tokenizer's cap, tokenization_kimi.py) is encoded as its first
// 25,000 and the rest, and a run of exactly 25,000 as one.
func TestRunCap(t *testing.T) {
	tok := newTestTokenizer(t)
	const limit = 25_000
	// "the" repeated after 0, 1 or 2 x: its BPE merges "he", so for one of
	// the three a cut one character early or late splits an "he"
	for _, lead := range []string{"", "x", "xx"} {
		text := lead + strings.Repeat("the", limit)
		run := func(n int) string { return text[:n] }
		for _, n := range []int{limit - 1, limit, limit + 1, limit + 7} {
			got := tok.Encode(run(n), false)
			want := tok.encodeOrdinary(nil, run(min(n, limit)))
			if n > limit {
				want = tok.encodeOrdinary(want, text[limit:n])
			}
			if !slices.Equal(got, want) {
				t.Errorf("a run of %d (lead %q): not cut at %d", n, lead, limit)
			}
		}
	}
}
