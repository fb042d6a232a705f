package tokenizer

import (
	"encoding/json"
	"slices"
	"testing"
)

func TestApplyChat(t *testing.T) {
	tok := newTestTokenizer(t)
	if got := tok.DefaultSystemPrompt(); got != "You are a test assistant." {
		t.Fatalf("DefaultSystemPrompt = %q", got)
	}
	cases := []struct {
		name string
		msgs []Message
		gen  bool
		want string
	}{
		{"default system", []Message{{Role: "user", Content: "Hi"}}, true,
			"<|im_system|>system<|im_middle|>You are a test assistant.<|im_end|>" +
				"<|im_user|>user<|im_middle|>Hi<|im_end|>" +
				"<|im_assistant|>assistant<|im_middle|>"},
		{"own system, multi-turn, no prompt", []Message{
			{Role: "system", Content: "Be brief."},
			{Role: "user", Content: "2+2?"},
			{Role: "assistant", Content: "4"},
			{Role: "user", Content: "and 3+3?\n"},
		}, false,
			"<|im_system|>system<|im_middle|>Be brief.<|im_end|>" +
				"<|im_user|>user<|im_middle|>2+2?<|im_end|>" +
				"<|im_assistant|>assistant<|im_middle|>4<|im_end|>" +
				"<|im_user|>user<|im_middle|>and 3+3?\n<|im_end|>"},
		{"names and tool result", []Message{
			{Role: "system", Content: "s"},
			{Role: "user", Name: "alice", Content: "q"},
			{Role: "tool", Name: "search", ToolCallID: "functions.search:0", Content: "r"},
		}, true,
			"<|im_system|>system<|im_middle|>s<|im_end|>" +
				"<|im_user|>alice<|im_middle|>q<|im_end|>" +
				"<|im_system|>search<|im_middle|>## Return of functions.search:0\nr<|im_end|>" +
				"<|im_assistant|>assistant<|im_middle|>"},
		{"empty", nil, true, "<|im_assistant|>assistant<|im_middle|>"},
	}
	for _, c := range cases {
		if got := tok.ApplyChat(c.msgs, c.gen); got != c.want {
			t.Errorf("%s:\n got %q\nwant %q", c.name, got, c.want)
		}
	}

	// Encoded with specials allowed, the markers are single special ids.
	ids := tok.Encode(tok.ApplyChat([]Message{{Role: "user", Content: "Hi"}}, true), true)
	sp := func(s string) int32 { id, _ := tok.Special(s); return id }
	want := slices.Concat(
		[]int32{sp("<|im_system|>")}, tok.Encode("system", false), []int32{sp("<|im_middle|>")},
		tok.Encode("You are a test assistant.", false), []int32{sp("<|im_end|>"), sp("<|im_user|>")},
		tok.Encode("user", false), []int32{sp("<|im_middle|>")}, tok.Encode("Hi", false),
		[]int32{sp("<|im_end|>"), sp("<|im_assistant|>")}, tok.Encode("assistant", false),
		[]int32{sp("<|im_middle|>")})
	if !slices.Equal(ids, want) {
		t.Errorf("encoded chat = %v\nwant %v", ids, want)
	}
}

func TestChatTemplateForms(t *testing.T) {
	list, _ := json.Marshal([]map[string]string{
		{"name": "tool_use", "template": "x"},
		{"name": "default", "template": "<|im_system|>system<|im_middle|>D<|im_end|>"},
	})
	for _, c := range []struct {
		raw, want string
	}{
		{``, ""},
		{`null`, ""},
		{`"no default here {{ messages }}"`, ""},
		{`"{{'<|im_system|>system<|im_middle|>{{ sys }}<|im_end|>'}}"`, ""}, // Jinja, not a literal
		{string(list), "D"},
	} {
		cf, err := parseChatTemplate(json.RawMessage(c.raw))
		if err != nil || cf.defaultSystem != c.want {
			t.Errorf("parseChatTemplate(%s) = %q, %v; want %q", c.raw, cf.defaultSystem, err, c.want)
		}
	}
}
