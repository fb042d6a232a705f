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
// added. The result is meant for Encode(s, true).
//
// Not rendered: tool declarations (`<|im_system|>tool_declare<|im_middle|>JSON<|im_end|>`),
// assistant tool calls, and content given as a list of parts. The format was read from Kimi-K2's
// template and from third-party renderings of it; Kimi-Linear's own chat_template could not be
// fetched here, so whether it differs (beyond the default system prompt, which is read from the
// file) is unverified.
func (t *Tokenizer) ApplyChat(messages []Message, addGenerationPrompt bool) string {
	var b strings.Builder
	for i, m := range messages {
		if i == 0 && m.Role != "system" && t.chat.defaultSystem != "" {
			b.WriteString("<|im_system|>system<|im_middle|>")
			b.WriteString(t.chat.defaultSystem)
			b.WriteString("<|im_end|>")
		}
		switch m.Role {
		case "user":
			b.WriteString("<|im_user|>")
		case "assistant":
			b.WriteString("<|im_assistant|>")
		default:
			b.WriteString("<|im_system|>")
		}
		if m.Name != "" {
			b.WriteString(m.Name)
		} else {
			b.WriteString(m.Role)
		}
		b.WriteString("<|im_middle|>")
		if m.Role == "tool" && m.ToolCallID != "" {
			b.WriteString("## Return of ")
			b.WriteString(m.ToolCallID)
			b.WriteString("\n")
		}
		b.WriteString(m.Content)
		b.WriteString("<|im_end|>")
	}
	if addGenerationPrompt {
		b.WriteString("<|im_assistant|>assistant<|im_middle|>")
	}
	return b.String()
}
