// Byte-pair encoding of one pre-tokenized piece, tiktoken's rule.

package tokenizer

import "math"

// bpe appends the token ids of piece to dst. tiktoken's rule: a piece that is itself a token is
// that token; otherwise start from single bytes and repeatedly merge the adjacent pair whose
// concatenation has the lowest rank (the leftmost such pair on a tie) until no adjacent pair
// concatenates to a token. Every single byte has a rank (Load checks it), so the result always
// maps to ids. Cost is O(n·merges) for an n-byte piece, as in tiktoken; Kimi caps runs at
// maxRun characters before this point, which bounds the worst case.
func (t *Tokenizer) bpe(dst []int32, piece []byte) []int32 {
	if id, ok := t.ranks[string(piece)]; ok {
		return append(dst, id)
	}
	if len(piece) == 1 { // unreachable after Load's check; kept for safety
		return dst
	}
	// start[i] is where part i begins; part i is piece[start[i]:start[i+1]].
	// rank[i] is the rank of part i merged with part i+1 (math.MaxInt32 when not a token).
	start := make([]int, len(piece)+1)
	for i := range start {
		start[i] = i
	}
	rank := make([]int32, len(piece)) // one per part; the last is always MaxInt32
	pairRank := func(i int) int32 {   // rank of parts i and i+1 joined
		if i+2 >= len(start) {
			return math.MaxInt32
		}
		if r, ok := t.ranks[string(piece[start[i]:start[i+2]])]; ok {
			return r
		}
		return math.MaxInt32
	}
	for i := range rank {
		rank[i] = pairRank(i)
	}
	for len(rank) > 1 {
		best, bi := int32(math.MaxInt32), -1
		for i, r := range rank[:len(rank)-1] {
			if r < best {
				best, bi = r, i
			}
		}
		if bi < 0 {
			break
		}
		// Join parts bi and bi+1: drop boundary bi+1.
		start = append(start[:bi+1], start[bi+2:]...)
		rank = append(rank[:bi+1], rank[bi+2:]...)
		rank[bi] = pairRank(bi)
		if bi > 0 {
			rank[bi-1] = pairRank(bi - 1)
		}
	}
	for i := 0; i+1 < len(start); i++ {
		dst = append(dst, t.ranks[string(piece[start[i]:start[i+1]])])
	}
	return dst
}
