package tokenizer

import (
	"bytes"
	"strings"
	"testing"

	"github.com/ktune/ktune/internal/gguf"
)

// fuzzText is what an accepted tokenizer must encode and decode back.
const fuzzText = "Hello, wörld! <|im_end|> 12345 \t\n 漢字 🙂"

// checkAccepted checks a tokenizer that a fuzzed input built: plain text
// round-trips, specials come back as their text, and a chat renders.
func checkAccepted(t *testing.T, tok *Tokenizer) {
	for _, allow := range []bool{false, true} {
		if got := tok.Decode(tok.Encode(fuzzText, allow)); got != fuzzText {
			t.Fatalf("Decode(Encode(%q, %v)) = %q", fuzzText, allow, got)
		}
	}
	msgs := []Message{{Role: "user", Content: fuzzText}}
	_ = tok.EncodeChat(msgs, true)
	_ = tok.ApplyChat(msgs, true)
}

// FuzzLoad fuzzes the two files of a Hugging Face folder's tokenizer
// (tiktoken.model and tokenizer_config.json, its chat template included):
// every input is refused with an error naming one of them or gives a
// tokenizer that works. Run it under a memory cap (ulimit -v): a rank of
// 2³¹−1 once sized the vocabulary before it was checked (48 GiB).
func FuzzLoad(f *testing.F) {
	vocab := trainVocab(f, strings.Repeat(trainCorpus, 2), 40)
	model := modelBytes(vocab)
	f.Add(model, configBytes(f, len(vocab), testTemplate))
	f.Add(model, configBytes(f, len(vocab), ""))
	f.Add(model, []byte(`{"chat_template":[{"name":"default","template":"{{ messages }}"}]}`))
	f.Add(append(bytes.Clone(model), "YWJj 2147483647\n"...), []byte(`{}`))
	f.Add([]byte("YQ== 0\n"), []byte(`{"eos_token":{"content":"[EOS]"}}`))
	f.Fuzz(func(t *testing.T, model, config []byte) {
		tok, err := parse(bytes.NewReader(model), ModelFile, config, ConfigFile)
		if err != nil {
			if s := err.Error(); !strings.HasPrefix(s, "tokenizer: ") ||
				!strings.Contains(s, ModelFile) && !strings.Contains(s, ConfigFile) {
				t.Fatalf("error names neither file: %v", err)
			}
			return
		}
		checkAccepted(t, tok)
	})
}

// FuzzFromGGUF fuzzes a GGUF file's tokenizer metadata (llama.cpp's
// tokenizer.ggml.* keys and the chat template) as FromGGUF reads it.
func FuzzFromGGUF(f *testing.F) {
	vocab := trainVocab(f, strings.Repeat(trainCorpus, 2), 40)
	n := len(vocab)
	for _, kvs := range [][]gguf.KV{
		converterKVs(vocab, n+numReserved, true, testTemplate),
		converterKVs(vocab, n+numReserved-2, false, ""),
		converterKVs(vocab, n+numReserved+3, true, ""),
	} {
		var b bytes.Buffer
		if err := gguf.Write(&b, kvs, nil); err != nil {
			f.Fatal(err)
		}
		f.Add(b.Bytes())
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		g, err := gguf.FromBytes("fuzz.gguf", data)
		if err != nil {
			return
		}
		defer g.Close()
		tok, err := FromGGUF(g.Metadata, "fuzz.gguf")
		if err != nil {
			if !strings.Contains(err.Error(), "fuzz.gguf") {
				t.Fatalf("error does not name the file: %v", err)
			}
			return
		}
		checkAccepted(t, tok)
	})
}
