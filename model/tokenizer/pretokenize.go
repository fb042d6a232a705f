// Pre-tokenization: the regex that cuts text into pieces before BPE.

package tokenizer

import (
	"fmt"
	"sync"
	"unicode/utf8"

	"github.com/dlclark/regexp2/v2"
)

// kimiPattern is Kimi's pre-tokenization regex (tokenization_kimi.py, pat_str), written for
// regexp2. The upstream pattern is for tiktoken's Rust engine (fancy-regex) and uses class
// intersection, `[A&&[^\p{Han}]]`; regexp2 has .NET's class subtraction instead, `[A-[\p{Han}]]`,
// which denotes the same set. Nothing else is changed. The eight alternatives, in order:
//
//	[\p{Han}]+                                   runs of Han ideographs
//	[^\r\n\p{L}\p{N}]?[Lu Lt Lm Lo M -Han]*[Ll Lm Lo M -Han]+ ('s|'t|'re|'ve|'m|'ll|'d)?
//	                                             a word ending in lower case, with an optional
//	                                             leading non-letter and contraction (any case)
//	[^\r\n\p{L}\p{N}]?[Lu Lt Lm Lo M -Han]+[Ll Lm Lo M -Han]* (contraction)?
//	                                             a word starting with upper case
//	\p{N}{1,3}                                   numbers in groups of at most 3 digits
//	 ?[^\s\p{L}\p{N}]+[\r\n]*                    punctuation/symbols, optional leading space
//	\s*[\r\n]+                                   whitespace ending in newlines
//	\s+(?!\S)                                    whitespace not followed by a non-space
//	\s+                                          any other whitespace
//
// Leftmost-first alternation with backtracking, as in fancy-regex, so `\s+(?!\S)` gives back
// the last space of a run that precedes a word (which then takes it as its leading char).
const kimiPattern = `[\p{Han}]+` +
	`|[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}-[\p{Han}]]*[\p{Ll}\p{Lm}\p{Lo}\p{M}-[\p{Han}]]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?` +
	`|[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}-[\p{Han}]]+[\p{Ll}\p{Lm}\p{Lo}\p{M}-[\p{Han}]]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?` +
	`|\p{N}{1,3}` +
	`| ?[^\s\p{L}\p{N}]+[\r\n]*` +
	`|\s*[\r\n]+` +
	`|\s+(?!\S)` +
	`|\s+`

// splitter cuts text with a compiled pre-tokenization regex.
type splitter struct {
	re *regexp2.Regexp
}

// kimiSplitter is Kimi's pattern compiled once: every tokenizer shares it
// (a compiled regexp2 pattern is safe for concurrent use).
var kimiSplitter = sync.OnceValues(func() (*splitter, error) { return newSplitter(kimiPattern) })

func newSplitter(pattern string) (*splitter, error) {
	re, err := regexp2.Compile(pattern, regexp2.None)
	if err != nil {
		return nil, fmt.Errorf("tokenizer: compiling the pre-tokenization pattern: %w", err)
	}
	return &splitter{re: re}, nil
}

// split calls yield with the byte ranges [start, end) of the pieces of s, in order; together
// they cover s exactly. The regex sees s as runes, each invalid UTF-8 byte becoming one U+FFFD
// (a symbol), but the ranges are byte offsets into s, so invalid bytes survive to BPE unchanged.
// tiktoken drops text that no alternative matches; Kimi's pattern matches every code point, and
// should a gap ever appear it is passed on as its own piece rather than lost.
func (sp *splitter) split(s string, yield func(start, end int)) {
	if s == "" {
		return
	}
	runes := make([]rune, 0, len(s))
	offs := make([]int, 0, len(s)+1) // offs[i] = byte offset of rune i; offs[len] = len(s)
	for i := 0; i < len(s); {
		r, w := utf8.DecodeRuneInString(s[i:])
		runes = append(runes, r)
		offs = append(offs, i)
		i += w
	}
	offs = append(offs, len(s))

	pos := 0 // rune index covered so far
	// An error (a match timeout, none is set, or the backtracking stack limit) stops the scan
	// early; the rest of s is then passed on below as one piece rather than lost.
	_ = sp.re.FindRunesMatches(runes, 0, func(m regexp2.MatchView) bool {
		idx, n, ok := m.GroupRange(0)
		if !ok || n == 0 {
			return true
		}
		if idx > pos {
			yield(offs[pos], offs[idx])
		}
		yield(offs[idx], offs[idx+n])
		pos = idx + n
		return true
	})
	if pos < len(runes) {
		yield(offs[pos], len(s))
	}
}
