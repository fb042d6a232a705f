package serve

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"

	"github.com/ktune/ktune/model/tokenizer"
)

// The official OpenAI Go SDK against the server: a client that speaks the
// API as every other client does.

func sdk(url string, opts ...option.RequestOption) openai.Client {
	return openai.NewClient(append([]option.RequestOption{option.WithBaseURL(url + "/v1/"), option.WithAPIKey("unused"), option.WithMaxRetries(0)}, opts...)...)
}

// tokenIDs reads the return_token_ids extension from a choice's raw JSON.
func tokenIDs(t testing.TB, raw string) []int32 {
	t.Helper()
	var c struct {
		TokenIDs []int32 `json:"token_ids"`
	}
	if err := json.Unmarshal([]byte(raw), &c); err != nil {
		t.Fatalf("%v: %s", err, raw)
	}
	return c.TokenIDs
}

// TestSDKCompletionGolden: a greedy completion of the golden prompt ids
// through the SDK returns the golden ids, streamed and not.
func TestSDKCompletionGolden(t *testing.T) {
	ts := startServer(t, Options{}, false)
	c, ctx := sdk(ts.URL), context.Background()
	g := ts.g
	prompt := make([]int64, len(g.prompt))
	for i, id := range g.prompt {
		prompt[i] = int64(id)
	}
	params := openai.CompletionNewParams{
		Model:       "tiny",
		Prompt:      openai.CompletionNewParamsPromptUnion{OfArrayOfTokens: prompt},
		MaxTokens:   openai.Int(int64(len(g.gen))),
		Temperature: openai.Float(0),
	}
	ext := option.WithJSONSet("ignore_eos", true)
	res, err := c.Completions.New(ctx, params, ext)
	if err != nil {
		t.Fatal(err)
	}
	if got := tokenIDs(t, res.Choices[0].RawJSON()); !slices.Equal(got, g.gen) {
		t.Errorf("ids %v; golden %v", got, g.gen)
	}
	if res.Choices[0].FinishReason != "length" || res.Usage.PromptTokens != int64(len(g.prompt)) || res.Usage.CompletionTokens != int64(len(g.gen)) {
		t.Errorf("finish %q, usage %+v", res.Choices[0].FinishReason, res.Usage)
	}
	params.StreamOptions.IncludeUsage = openai.Bool(true)
	st := c.Completions.NewStreaming(ctx, params, ext)
	var ids []int32
	var usage openai.CompletionUsage
	for st.Next() {
		ch := st.Current()
		for _, choice := range ch.Choices {
			ids = append(ids, tokenIDs(t, choice.RawJSON())...)
		}
		if ch.Usage.TotalTokens > 0 {
			usage = ch.Usage
		}
	}
	if err := st.Err(); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(ids, g.gen) || usage.CompletionTokens != int64(len(g.gen)) {
		t.Errorf("stream: ids %v (golden %v), usage %+v", ids, g.gen, usage)
	}
}

// TestSDKChat: chat through the SDK with the test tokenizer: the streamed
// text is the whole text, max_tokens and stop strings end it with their
// finish reasons, usage counts the tokens, logprobs come back, and a
// follow-up turn starts from the cached conversation.
func TestSDKChat(t *testing.T) {
	ts := startServer(t, Options{}, true)
	c, ctx := sdk(ts.URL), context.Background()
	msgs := []openai.ChatCompletionMessageParamUnion{openai.SystemMessage("Be brief."), openai.UserMessage("Say hello.")}
	params := openai.ChatCompletionNewParams{Model: "tiny", Messages: msgs, MaxTokens: openai.Int(24), Temperature: openai.Float(0)}
	ext := option.WithJSONSet("ignore_eos", true)

	// ---- whole
	res, err := c.Chat.Completions.New(ctx, params, ext)
	if err != nil {
		t.Fatal(err)
	}
	text := res.Choices[0].Message.Content
	t.Logf("greedy text %q", text)
	want := len(ts.tok.Encode(ts.tok.ApplyChat(toMessages(msgs), true), true))
	if res.Object != "chat.completion" || res.Choices[0].FinishReason != "length" || res.Usage.CompletionTokens != 24 ||
		res.Usage.PromptTokens != int64(want) || res.Usage.TotalTokens != int64(want+24) {
		t.Errorf("object %q, finish %q, usage %+v (prompt %d tokens)", res.Object, res.Choices[0].FinishReason, res.Usage, want)
	}

	// ---- streamed: the same text, in pieces, with usage last
	sp := params
	sp.StreamOptions.IncludeUsage = openai.Bool(true)
	st := c.Chat.Completions.NewStreaming(ctx, sp, ext)
	acc := openai.ChatCompletionAccumulator{}
	chunks := 0
	for st.Next() {
		acc.AddChunk(st.Current())
		chunks++
	}
	if err := st.Err(); err != nil {
		t.Fatal(err)
	}
	if got := acc.Choices[0].Message.Content; got != text || chunks < 3 || acc.Usage.CompletionTokens != 24 {
		t.Errorf("stream: %d chunks, text %q (whole: %q), usage %+v", chunks, got, text, acc.Usage)
	}

	// ---- a stop string: the text ends before it, finish "stop"
	stop, at := "", -1
	for i := 1; i < len(text); i++ {
		if b := text[i]; b >= 'a' && b <= 'z' || b >= 'A' && b <= 'Z' || b >= '0' && b <= '9' {
			stop, at = text[i:i+1], strings.Index(text, text[i:i+1])
			break
		}
	}
	if at >= 0 {
		for _, stream := range []bool{false, true} {
			p := params
			p.Stop = openai.ChatCompletionNewParamsStopUnion{OfStringArray: []string{"\x00never", stop}}
			var got, finish string
			if stream {
				st := c.Chat.Completions.NewStreaming(ctx, p, ext)
				acc := openai.ChatCompletionAccumulator{}
				for st.Next() {
					acc.AddChunk(st.Current())
				}
				if err := st.Err(); err != nil {
					t.Fatal(err)
				}
				got, finish = acc.Choices[0].Message.Content, acc.Choices[0].FinishReason
			} else {
				res, err := c.Chat.Completions.New(ctx, p, ext)
				if err != nil {
					t.Fatal(err)
				}
				got, finish = res.Choices[0].Message.Content, res.Choices[0].FinishReason
			}
			if got != text[:at] || finish != "stop" {
				t.Errorf("stop %q (stream %v): %q, finish %q; want %q, stop", stop, stream, got, finish, text[:at])
			}
		}
	} else {
		t.Logf("no ASCII letter in %q to stop at", text)
	}

	// ---- logprobs: one entry per token, with the alternatives
	p := params
	p.MaxTokens, p.Logprobs, p.TopLogprobs = openai.Int(5), openai.Bool(true), openai.Int(3)
	res, err = c.Chat.Completions.New(ctx, p, ext)
	if err != nil {
		t.Fatal(err)
	}
	lp := res.Choices[0].Logprobs.Content
	if len(lp) != 5 || len(lp[0].TopLogprobs) != 3 || lp[0].Logprob > 0 || lp[0].TopLogprobs[0].Logprob < lp[0].Logprob {
		t.Errorf("logprobs: %+v", lp)
	}

	// ---- the next turn extends the conversation: its prefix is cached
	next := append(slices.Clone(msgs), openai.AssistantMessage(text), openai.UserMessage("Again."))
	p = params
	p.Messages = next
	res, err = c.Chat.Completions.New(ctx, p, ext)
	if err != nil {
		t.Fatal(err)
	}
	if cached := res.Usage.PromptTokensDetails.CachedTokens; cached <= int64(want) {
		t.Errorf("follow-up turn: %d cached tokens; want more than the first turn's prompt (%d)", cached, want)
	}
}

// toMessages is the SDK's messages as the tokenizer's (system and user
// turns with string content).
func toMessages(msgs []openai.ChatCompletionMessageParamUnion) []tokenizer.Message {
	var out []tokenizer.Message
	for _, m := range msgs {
		switch {
		case m.OfSystem != nil:
			out = append(out, tokenizer.Message{Role: "system", Content: m.OfSystem.Content.OfString.Value})
		case m.OfUser != nil:
			out = append(out, tokenizer.Message{Role: "user", Content: m.OfUser.Content.OfString.Value})
		}
	}
	return out
}

// TestSDKErrors: the server's errors reach the SDK as *openai.Error with
// the status, type and code.
func TestSDKErrors(t *testing.T) {
	ts := startServer(t, Options{Ctx: 64, APIKey: "sekret"}, true)
	ctx := context.Background()
	good := sdk(ts.URL, option.WithAPIKey("sekret"))
	for _, c := range []struct {
		name   string
		client openai.Client
		params openai.ChatCompletionNewParams
		status int
		typ    string
		code   string
	}{
		{"wrong key", sdk(ts.URL, option.WithAPIKey("nope")), openai.ChatCompletionNewParams{Model: "tiny", Messages: []openai.ChatCompletionMessageParamUnion{openai.UserMessage("x")}},
			401, "authentication_error", "invalid_api_key"},
		{"temperature", good, openai.ChatCompletionNewParams{Model: "tiny", Messages: []openai.ChatCompletionMessageParamUnion{openai.UserMessage("x")}, Temperature: openai.Float(5)},
			400, "invalid_request_error", "invalid_value"},
		{"too long", good, openai.ChatCompletionNewParams{Model: "tiny", Messages: []openai.ChatCompletionMessageParamUnion{openai.UserMessage(strings.Repeat("x", 100))}},
			400, "invalid_request_error", "context_length_exceeded"},
		{"no messages", good, openai.ChatCompletionNewParams{Model: "tiny"},
			400, "invalid_request_error", "invalid_value"},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := c.client.Chat.Completions.New(ctx, c.params)
			var ae *openai.Error
			if !errors.As(err, &ae) {
				t.Fatalf("err %v; want an *openai.Error", err)
			}
			if ae.StatusCode != c.status || ae.Type != c.typ || ae.Code != c.code || ae.Message == "" {
				t.Errorf("status %d type %q code %q message %q; want %d %q %q", ae.StatusCode, ae.Type, ae.Code, ae.Message, c.status, c.typ, c.code)
			}
			// streamed, the same error before any event
			st := c.client.Chat.Completions.NewStreaming(ctx, c.params)
			for st.Next() {
			}
			if !errors.As(st.Err(), &ae) || ae.StatusCode != c.status {
				t.Errorf("stream: err %v", st.Err())
			}
		})
	}
	// the models list through the SDK
	page, err := good.Models.List(ctx)
	if err != nil || len(page.Data) != 1 || page.Data[0].ID != "tiny" {
		t.Errorf("models: %v, %+v", err, page)
	}
}
