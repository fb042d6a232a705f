// Generated text: whole UTF-8 characters out, stop strings cut off.

package serve

import (
	"fmt"
	"strings"

	"github.com/ktune/ktune/model/tokenizer"
)

// textStream turns generated ids into text to send: whole characters only
// (a character cut between tokens waits for its rest), special tokens
// skipped, and, with stop strings, text that might begin one held back
// until it is known not to (so no part of a stop string is ever sent).
type textStream struct {
	tok   *tokenizer.Tokenizer // nil: no text
	dec   *tokenizer.Decoder
	stops []string
	held  string // text not sent yet: a possible start of a stop string
	done  bool   // a stop string was found
}

func newTextStream(tok *tokenizer.Tokenizer, stops []string) *textStream {
	t := &textStream{tok: tok, stops: stops}
	if tok != nil {
		t.dec = tok.NewDecoder()
	}
	return t
}

// add takes the next id and returns the text now safe to send, and
// whether a stop string ended the text (the text returned ends before it).
func (t *textStream) add(id int32) (string, bool) {
	if t.tok == nil || t.done {
		return "", t.done
	}
	if t.tok.IsSpecial(id) {
		return "", false
	}
	return t.push(t.dec.Add(id))
}

func (t *textStream) push(piece string) (string, bool) {
	if len(t.stops) == 0 {
		return piece, false
	}
	t.held += piece
	cut := -1
	for _, s := range t.stops {
		if i := strings.Index(t.held, s); i >= 0 && (cut < 0 || i < cut) {
			cut = i
		}
	}
	if cut >= 0 {
		out := t.held[:cut]
		t.held, t.done = "", true
		return out, true
	}
	keep := 0 // the longest end of held that begins a stop string
	for _, s := range t.stops {
		for k := min(len(s)-1, len(t.held)); k > keep; k-- {
			if strings.HasSuffix(t.held, s[:k]) {
				keep = k
				break
			}
		}
	}
	out := t.held[:len(t.held)-keep]
	t.held = t.held[len(t.held)-keep:]
	return out, false
}

// flush returns the text held back, at the end of the sequence.
func (t *textStream) flush() string {
	if t.tok == nil || t.done {
		return ""
	}
	out, _ := t.push(t.dec.Flush())
	out += t.held
	t.held = ""
	return out
}

// tokenText is a token's text for log-probabilities: its bytes (a special
// token's name), or "[id]" without a tokenizer.
func tokenText(tok *tokenizer.Tokenizer, id int32) (string, []byte) {
	if tok != nil {
		if b, ok := tok.Token(id); ok {
			return string(b), b
		}
	}
	s := fmt.Sprintf("[%d]", id)
	return s, []byte(s)
}

// tokenLogprob is a sampled token's log-probability and its best
// alternatives.
type tokenLogprob struct {
	id      int32
	logprob float64
	top     []tokenLogprob
}

// usage is OpenAI's usage object.
type usage struct {
	PromptTokens        int            `json:"prompt_tokens"`
	CompletionTokens    int            `json:"completion_tokens"`
	TotalTokens         int            `json:"total_tokens"`
	PromptTokensDetails *promptDetails `json:"prompt_tokens_details,omitempty"`
}

type promptDetails struct {
	CachedTokens int `json:"cached_tokens"`
}
