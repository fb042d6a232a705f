// Test helpers: a small tokenizer the tests train and write themselves.

package tokenizer

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// trainCorpus is the text the small test vocabulary is trained on.
const trainCorpus = `The quick brown fox jumps over the lazy dog. It's the dog's day, isn't it?
I'm sure they'll say we've done what we'd planned: 12345 apples, 678 pears.
Hello world! Hello, hello, HELLO. The the the and and and of of of in in in.
中文字符测试，中文分词。日本語のテキストです。Ünïcödé façade naïve café 👋🏽 emojis 😀😀.
    indented code = (x + 1) * y;   // comment
	tab	separated	values
`

// specialNames mirrors where Kimi puts its named special tokens, as offsets from the first
// special id (163584 in the real vocabulary): [BOS] 163584, [EOS] 163585, <|im_end|> 163586,
// ..., [PAD] 163839. The rest are "<|reserved_token_ID|>".
var specialNames = map[int]string{
	0: "[BOS]", 1: "[EOS]", 2: "<|im_end|>", 3: "<|im_user|>", 4: "<|im_assistant|>",
	6: "<|start_header_id|>", 7: "<|end_header_id|>", 9: "[EOT]", 10: "<|im_system|>",
	17: "<|im_middle|>", 254: "[UNK]", 255: "[PAD]",
}

// testTemplate is a chat template in the shape of Kimi-K2's (abridged), with a default system
// prompt the loader should find.
const testTemplate = `{%- for message in messages -%}{%- if loop.first and messages[0]['role'] != 'system' -%}<|im_system|>system<|im_middle|>You are a test assistant.<|im_end|>{%- endif -%}{%- if message['role'] == 'user' -%}<|im_user|>{%- elif message['role'] == 'assistant' -%}<|im_assistant|>{%- else -%}<|im_system|>{%- endif -%}{{ message.get('name') or message['role'] }}<|im_middle|>{{ message['content'] }}<|im_end|>{%- endfor -%}{%- if add_generation_prompt -%}<|im_assistant|>assistant<|im_middle|>{%- endif -%}`

// trainVocab builds a byte-level BPE vocabulary: the 256 single bytes (in a scrambled rank
// order, so rank != byte value) and then up to merges tokens learned greedily from corpus,
// most frequent adjacent pair first (ties broken by the bytes), within pre-tokenized pieces.
func trainVocab(t testing.TB, corpus string, merges int) [][]byte {
	t.Helper()
	vocab := make([][]byte, 256)
	for b := 0; b < 256; b++ {
		vocab[(b*7+3)%256] = []byte{byte(b)}
	}
	sp, err := newSplitter(kimiPattern)
	if err != nil {
		t.Fatal(err)
	}
	var words [][][]byte
	sp.split(corpus, func(s, e int) {
		var w [][]byte
		for _, c := range []byte(corpus[s:e]) {
			w = append(w, []byte{c})
		}
		words = append(words, w)
	})
	have := map[string]bool{}
	for _, v := range vocab {
		have[string(v)] = true
	}
	for len(vocab) < 256+merges {
		counts := map[string]int{}
		for _, w := range words {
			for i := 0; i+1 < len(w); i++ {
				counts[string(w[i])+"\x00"+string(w[i+1])]++ // \x00 is absent from corpus
			}
		}
		best, bestN := "", 0
		for k, n := range counts {
			if n > bestN || (n == bestN && k < best) {
				best, bestN = k, n
			}
		}
		if bestN < 2 {
			break
		}
		parts := bytes.SplitN([]byte(best), []byte{0}, 2)
		merged := append(slices.Clone(parts[0]), parts[1]...)
		if !have[string(merged)] {
			vocab = append(vocab, merged)
			have[string(merged)] = true
		}
		for wi, w := range words {
			var out [][]byte
			for i := 0; i < len(w); i++ {
				if i+1 < len(w) && bytes.Equal(w[i], parts[0]) && bytes.Equal(w[i+1], parts[1]) {
					out = append(out, merged)
					i++
				} else {
					out = append(out, w[i])
				}
			}
			words[wi] = out
		}
	}
	return vocab
}

// writeModel writes vocab as a tiktoken.model file.
func writeModel(t testing.TB, dir string, vocab [][]byte) {
	t.Helper()
	if err := os.WriteFile(filepath.Join(dir, ModelFile), modelBytes(vocab), 0o644); err != nil {
		t.Fatal(err)
	}
}

// modelBytes is vocab as the contents of a tiktoken.model file.
func modelBytes(vocab [][]byte) []byte {
	var b bytes.Buffer
	for r, tok := range vocab {
		fmt.Fprintf(&b, "%s %d\n", base64.StdEncoding.EncodeToString(tok), r)
	}
	return b.Bytes()
}

// writeConfig writes a tokenizer_config.json in Kimi's shape for a vocabulary of n ranks.
func writeConfig(t testing.TB, dir string, n int, template string) {
	t.Helper()
	if err := os.WriteFile(filepath.Join(dir, ConfigFile), configBytes(t, n, template), 0o644); err != nil {
		t.Fatal(err)
	}
}

// configBytes is writeConfig's tokenizer_config.json.
func configBytes(t testing.TB, n int, template string) []byte {
	t.Helper()
	dec := map[string]any{}
	for off, name := range specialNames {
		dec[strconv.Itoa(n+off)] = map[string]any{"content": name, "special": true, "lstrip": false}
	}
	cfg := map[string]any{
		"added_tokens_decoder": dec,
		"bos_token":            "[BOS]",
		"eos_token":            map[string]any{"content": "[EOS]", "special": true},
		"pad_token":            "[PAD]",
		"unk_token":            "[UNK]",
		"tokenizer_class":      "TikTokenTokenizer",
	}
	if template != "" {
		cfg["chat_template"] = template
	}
	raw, err := json.MarshalIndent(cfg, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	return raw
}

var testVocab [][]byte

// newTestTokenizer writes a trained test tokenizer into a temp dir and loads it with Load.
func newTestTokenizer(t testing.TB) *Tokenizer {
	t.Helper()
	if testVocab == nil {
		testVocab = trainVocab(t, strings.Repeat(trainCorpus, 2), 300) // twice: every pair occurs twice
	}
	dir := t.TempDir()
	writeModel(t, dir, testVocab)
	writeConfig(t, dir, len(testVocab), testTemplate)
	tok, err := Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	return tok
}
