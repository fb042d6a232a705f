// Kimi's chat format.

package tokenizer

import (
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
)

// Message is one chat turn.
type Message struct {
	Role    string // "system", "user", "assistant", "tool", ...
	Content string
	// Name, when set, replaces the role in the turn header (Kimi's template uses
	// `message.get('name') or message['role']`); for a tool result it is the tool's name.
	Name string
	// ToolCallID, for a "tool" turn, prefixes the content with "## Return of ID\n".
	ToolCallID string
}

// chatFormat holds what ApplyChat takes from tokenizer_config.json.
type chatFormat struct {
	template      string // the raw Jinja template, kept for inspection
	defaultSystem string // system prompt inserted when the first turn is not a system turn; "" for none
}

// defaultSystemRe finds the literal default system turn in a Kimi chat template:
// <|im_system|>system<|im_middle|>TEXT<|im_end|> with TEXT free of Jinja syntax.
var defaultSystemRe = regexp.MustCompile(`<\|im_system\|>system<\|im_middle\|>([^{}<]+)<\|im_end\|>`)

// parseChatTemplate reads chat_template, given as a string or as a list of {name, template}
// (the "default" one, else the first).
func parseChatTemplate(raw json.RawMessage) (chatFormat, error) {
	var cf chatFormat
	if len(raw) == 0 || string(raw) == "null" {
		return cf, nil
	}
	if err := json.Unmarshal(raw, &cf.template); err != nil {
		var list []struct {
			Name     string `json:"name"`
			Template string `json:"template"`
		}
		if err := json.Unmarshal(raw, &list); err != nil {
			return cf, fmt.Errorf("chat_template is neither a string nor a list of {name, template}")
		}
		for i, e := range list {
			if e.Name == "default" || i == 0 {
				cf.template = e.Template
			}
		}
	}
	if m := defaultSystemRe.FindStringSubmatch(cf.template); m != nil {
		cf.defaultSystem = m[1]
	}
	return cf, nil
}

// ChatTemplate returns the raw chat_template of tokenizer_config.json ("" when absent).
func (t *Tokenizer) ChatTemplate() string { return t.chat.template }

// DefaultSystemPrompt returns the system prompt ApplyChat inserts when the conversation does
// not start with a system turn: the literal one in the config's chat_template, or "".
func (t *Tokenizer) DefaultSystemPrompt() string { return t.chat.defaultSystem }

// ApplyChat renders messages in Kimi's chat format, as Kimi-K2's chat_template does for plain
// text turns:
//
//	<|im_system|>system<|im_middle|>DEFAULT<|im_end|>      when messages[0] is not a system turn
//	                                                        and the template has a default
//	<|im_user|>user<|im_middle|>CONTENT<|im_end|>           role "user"
//	<|im_assistant|>assistant<|im_middle|>CONTENT<|im_end|> role "assistant"
//	<|im_system|>ROLE<|im_middle|>CONTENT<|im_end|>         any other role (system, tool, ...)
//	<|im_assistant|>assistant<|im_middle|>                  when addGenerationPrompt
//
// where the header word is Name when set, else Role, and a tool turn with a ToolCallID starts
// its content with "## Return of ID\n". Turns are concatenated with no separator, and no BOS is
// added. EncodeChat gives its token ids (the messages' text as text); Encode(s, true) of
// the result would also turn special-token text inside a message into control tokens.
//
// Not rendered: tool declarations (`<|im_system|>tool_declare<|im_middle|>JSON<|im_end|>`),
// assistant tool calls, and content given as a list of parts. The format was read from Kimi-K2's
// template and from third-party renderings of it; Kimi-Linear's own chat_template could not be
// fetched here, so whether it differs (beyond the default system prompt, which is read from the
// file) is unverified.
func (t *Tokenizer) ApplyChat(messages []Message, addGenerationPrompt bool) string {
	var b strings.Builder
	for _, p := range t.chatParts(messages, addGenerationPrompt) {
		b.WriteString(p.text)
	}
	return b.String()
}

// EncodeChat is the token ids of ApplyChat's rendering, the control tokens
// coming only from the format: every text the messages carry (content,
// names, tool call ids, the default system prompt) is encoded as text, so
// "<|im_end|>" typed in a message is those characters, not the end of the
// turn (a user cannot close their turn and forge another). For text with
// no special-token text in it the ids equal Encode(ApplyChat(…), true).
func (t *Tokenizer) EncodeChat(messages []Message, addGenerationPrompt bool) []int32 {
	var ids []int32
	for _, p := range t.chatParts(messages, addGenerationPrompt) {
		if id, ok := t.special[p.text]; ok && p.control {
			ids = append(ids, id)
		} else {
			ids = append(ids, t.Encode(p.text, false)...)
		}
	}
	return ids
}

// chatPart is a piece of a rendered chat: a control token of the format,
// or a run of text (the format's words and the messages' text together,
// as they lie between two control tokens).
type chatPart struct {
	text    string
	control bool
}

// chatParts renders messages (see ApplyChat) as control tokens and the
// runs of text between them.
func (t *Tokenizer) chatParts(messages []Message, addGenerationPrompt bool) []chatPart {
	var parts []chatPart
	var run strings.Builder
	control := func(name string) {
		if run.Len() > 0 {
			parts = append(parts, chatPart{text: run.String()})
			run.Reset()
		}
		parts = append(parts, chatPart{text: name, control: true})
	}
	for i, m := range messages {
		if i == 0 && m.Role != "system" && t.chat.defaultSystem != "" {
			control("<|im_system|>")
			run.WriteString("system")
			control("<|im_middle|>")
			run.WriteString(t.chat.defaultSystem)
			control("<|im_end|>")
		}
		switch m.Role {
		case "user":
			control("<|im_user|>")
		case "assistant":
			control("<|im_assistant|>")
		default:
			control("<|im_system|>")
		}
		if m.Name != "" {
			run.WriteString(m.Name)
		} else {
			run.WriteString(m.Role)
		}
		control("<|im_middle|>")
		if m.Role == "tool" && m.ToolCallID != "" {
			run.WriteString("## Return of ")
			run.WriteString(m.ToolCallID)
			run.WriteString("\n")
		}
		run.WriteString(m.Content)
		control("<|im_end|>")
	}
	if addGenerationPrompt {
		control("<|im_assistant|>")
		run.WriteString("assistant")
		control("<|im_middle|>")
	}
	return parts
}
