// Streaming decode: whole runes out as tokens arrive.

package tokenizer

import "unicode/utf8"

// Decoder turns a stream of ids into text, holding back the bytes of a UTF-8 sequence that a
// token boundary cut until the rest arrives. The concatenation of everything Add and Flush
// return equals Decode of all the ids, byte for byte; bytes that can never complete a rune
// (invalid UTF-8) are passed through as they are, not replaced.
type Decoder struct {
	t       *Tokenizer
	pending []byte
}

// NewDecoder returns a streaming decoder.
func (t *Tokenizer) NewDecoder() *Decoder { return &Decoder{t: t} }

// Add appends id's bytes and returns the text that is now complete ("" while a character is
// still cut).
func (d *Decoder) Add(id int32) string {
	d.pending = append(d.pending, d.t.tokenOrReplacement(id)...)
	n := completePrefix(d.pending)
	out := string(d.pending[:n])
	d.pending = append(d.pending[:0], d.pending[n:]...)
	return out
}

// Flush returns whatever is held back (an unfinished sequence at the end of the stream).
func (d *Decoder) Flush() string {
	out := string(d.pending)
	d.pending = d.pending[:0]
	return out
}

// completePrefix returns the length of the longest prefix of b that does not end inside a
// UTF-8 sequence that could still be completed: only a trailing, valid-so-far, incomplete
// sequence (at most 3 bytes) is held back.
func completePrefix(b []byte) int {
	// Find the start of the last sequence: step back over at most 3 continuation bytes.
	i := len(b) - 1
	for ; i >= 0 && i >= len(b)-4; i-- {
		if !isContinuation(b[i]) {
			break
		}
	}
	if i < 0 || i < len(b)-4 {
		return len(b) // only continuation bytes at the end: nothing to wait for
	}
	tail := b[i:]
	if utf8.FullRune(tail) {
		return len(b) // complete, or invalid in a way more bytes cannot fix
	}
	return i // a valid start whose continuation has not arrived yet
}

func isContinuation(c byte) bool { return c&0xC0 == 0x80 }
