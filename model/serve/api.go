// The OpenAI request: decoding, checking, and the prompt's token ids.

package serve

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"net/http"
	"os"
	"strconv"
	"strings"

	"github.com/ktune/ktune/model/sample"
	"github.com/ktune/ktune/model/tokenizer"
)

// apiError is an error answered as OpenAI does:
// {"error": {"message", "type", "code"}} with an HTTP status.
type apiError struct {
	Status  int
	Type    string
	Code    string
	Message string
}

func (e *apiError) Error() string { return e.Message }

// badRequest is a 400 invalid_request_error; param names the field.
func badRequest(code, format string, args ...any) *apiError {
	return &apiError{http.StatusBadRequest, "invalid_request_error", code, fmt.Sprintf(format, args...)}
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	b, err := json.Marshal(v)
	if err != nil {
		status, b = http.StatusInternalServerError, []byte(`{"error":{"message":"encoding the response failed","type":"server_error","code":"internal_error"}}`)
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Content-Length", strconv.Itoa(len(b)+1))
	w.WriteHeader(status)
	w.Write(append(b, '\n'))
}

func writeError(w http.ResponseWriter, e *apiError) {
	writeJSON(w, e.Status, errorBody(e))
}

func errorBody(e *apiError) map[string]any {
	return map[string]any{"error": map[string]any{"message": e.Message, "type": e.Type, "code": e.Code, "param": nil}}
}

// request is the body of /v1/chat/completions and /v1/completions (each
// reads its own fields; the other's are refused). Pointers tell a field
// that is absent (or null) from a zero value.
type request struct {
	Model               *string            `json:"model"`
	Messages            []message          `json:"messages"`
	Prompt              json.RawMessage    `json:"prompt"`
	MaxTokens           *int               `json:"max_tokens"`
	MaxCompletionTokens *int               `json:"max_completion_tokens"`
	Temperature         *float64           `json:"temperature"`
	TopP                *float64           `json:"top_p"`
	TopK                *int               `json:"top_k"`
	MinP                *float64           `json:"min_p"`
	RepetitionPenalty   *float64           `json:"repetition_penalty"`
	FrequencyPenalty    *float64           `json:"frequency_penalty"`
	PresencePenalty     *float64           `json:"presence_penalty"`
	LogitBias           map[string]float64 `json:"logit_bias"`
	Seed                *int64             `json:"seed"`
	Stop                json.RawMessage    `json:"stop"`
	N                   *int               `json:"n"`
	Stream              *bool              `json:"stream"`
	StreamOptions       *struct {
		IncludeUsage *bool `json:"include_usage"`
	} `json:"stream_options"`
	Logprobs       json.RawMessage `json:"logprobs"` // chat: bool; completions: int
	TopLogprobs    *int            `json:"top_logprobs"`
	Echo           *bool           `json:"echo"`
	BestOf         *int            `json:"best_of"`
	Suffix         *string         `json:"suffix"`
	Tools          json.RawMessage `json:"tools"`
	ToolChoice     json.RawMessage `json:"tool_choice"`
	ResponseFormat *struct {
		Type string `json:"type"`
	} `json:"response_format"`
	IgnoreEOS      *bool   `json:"ignore_eos"`
	ReturnTokenIDs *bool   `json:"return_token_ids"`
	User           *string `json:"user"`
}

// message is one chat turn; content is a string or a list of text parts.
type message struct {
	Role       string          `json:"role"`
	Content    json.RawMessage `json:"content"`
	Name       string          `json:"name"`
	ToolCallID string          `json:"tool_call_id"`
}

// job is a checked request: what the scheduler needs, and how to answer.
type job struct {
	chat      bool
	prompt    []int32
	maxTokens int
	sample    sample.Config
	freqPen   float32
	presPen   float32
	bias      map[int32]float32
	stop      []string
	ignoreEOS bool
	logprobs  bool // return the chosen tokens' log-probabilities
	topLP     int  // and this many alternatives each
	stream    bool
	usage     bool // stream_options.include_usage
	ids       bool // return token_ids
}

// Limits of the request fields.
const (
	maxStops       = 4
	maxTopLogprobs = 20
)

// decodeRequest reads a JSON body into req: 400 for bad JSON, a field of
// the wrong type, or anything after the object; 413 for a body over limit.
func decodeRequest(r io.Reader, req *request) *apiError {
	dec := json.NewDecoder(r)
	err := dec.Decode(req)
	if err == nil {
		if _, e2 := dec.Token(); e2 != io.EOF {
			return badRequest("invalid_json", "invalid JSON: data after the request object")
		}
		return nil
	}
	var mbe *http.MaxBytesError
	var te *json.UnmarshalTypeError
	var se *json.SyntaxError
	switch {
	case errors.Is(err, os.ErrDeadlineExceeded):
		return &apiError{http.StatusRequestTimeout, "invalid_request_error", "request_timeout", "the request body did not arrive in time"}
	case errors.As(err, &mbe):
		return &apiError{http.StatusRequestEntityTooLarge, "invalid_request_error", "request_too_large", fmt.Sprintf("the request body is over %d bytes", mbe.Limit)}
	case errors.As(err, &te) && te.Field == "":
		return badRequest("invalid_json", "the request body must be a JSON object, not %s", te.Value)
	case errors.As(err, &te) && jsonKind(te.Type.String()) == "an integer" && isIntLiteral(strings.TrimPrefix(te.Value, "number ")):
		// an integer too large for the field's type
		return badRequest("invalid_value", "'%s' is %s, outside the range of %s", te.Field, strings.TrimPrefix(te.Value, "number "), te.Type.String())
	case errors.As(err, &te):
		return badRequest("invalid_type", "invalid type for '%s': got %s, want %s", te.Field, te.Value, jsonKind(te.Type.String()))
	case errors.As(err, &se):
		return badRequest("invalid_json", "invalid JSON at byte %d: %v", se.Offset, err)
	case errors.Is(err, io.EOF):
		return badRequest("invalid_json", "empty request body; want a JSON object")
	case errors.Is(err, io.ErrUnexpectedEOF):
		return badRequest("invalid_json", "invalid JSON: the body ends inside the object")
	}
	return badRequest("invalid_json", "invalid JSON: %v", err)
}

// isIntLiteral reports a JSON number without a fraction or exponent.
func isIntLiteral(s string) bool {
	s = strings.TrimPrefix(s, "-")
	return s != "" && strings.Trim(s, "0123456789") == ""
}

// jsonKind names a Go type as a JSON kind for an error message.
func jsonKind(goType string) string {
	t := strings.TrimPrefix(goType, "*")
	switch {
	case strings.HasPrefix(t, "int") || strings.HasPrefix(t, "uint"):
		return "an integer"
	case strings.HasPrefix(t, "float"):
		return "a number"
	case t == "string":
		return "a string"
	case t == "bool":
		return "a boolean"
	case strings.HasPrefix(t, "[]"):
		return "an array"
	case strings.HasPrefix(t, "map") || strings.Contains(t, "struct"):
		return "an object"
	}
	return t
}

// isNull reports an absent or null raw field.
func isNull(raw json.RawMessage) bool {
	return len(raw) == 0 || string(bytes.TrimSpace(raw)) == "null"
}

// check turns a request into a job, checking every field's range. vocab
// is the model's vocabulary size; ctx the most tokens of a sequence; tok
// may be nil (then prompts must be token ids).
func (req *request) check(chat bool, tok *tokenizer.Tokenizer, vocab, ctx int) (*job, *apiError) {
	j := &job{chat: chat}
	other := func(field, endpoint string) *apiError {
		return badRequest("unsupported_parameter", "'%s' belongs to %s, not to this endpoint", field, endpoint)
	}
	// ---- fields of the other endpoint, and unsupported features
	switch {
	case chat && !isNull(req.Prompt):
		return nil, other("prompt", "/v1/completions")
	case !chat && req.Messages != nil:
		return nil, other("messages", "/v1/chat/completions")
	case chat && (req.Echo != nil || req.BestOf != nil || req.Suffix != nil):
		return nil, badRequest("unsupported_parameter", "echo, best_of and suffix belong to /v1/completions")
	case !chat && req.TopLogprobs != nil:
		return nil, badRequest("unsupported_parameter", "'top_logprobs' belongs to /v1/chat/completions; /v1/completions takes 'logprobs': N")
	case req.N != nil && *req.N != 1:
		return nil, badRequest("unsupported_value", "'n' must be 1: one choice per request")
	case req.BestOf != nil && *req.BestOf != 1:
		return nil, badRequest("unsupported_value", "'best_of' must be 1")
	case req.Echo != nil && *req.Echo:
		return nil, badRequest("unsupported_value", "'echo' is not supported")
	case req.Suffix != nil && *req.Suffix != "":
		return nil, badRequest("unsupported_value", "'suffix' is not supported")
	case !isNull(req.Tools) && string(bytes.TrimSpace(req.Tools)) != "[]":
		return nil, badRequest("unsupported_parameter", "'tools' are not supported")
	case req.ResponseFormat != nil && req.ResponseFormat.Type != "" && req.ResponseFormat.Type != "text":
		return nil, badRequest("unsupported_value", "'response_format' %q is not supported; only \"text\"", req.ResponseFormat.Type)
	}

	// ---- the prompt
	var err *apiError
	if chat {
		j.prompt, err = chatPrompt(req.Messages, tok)
	} else {
		j.prompt, err = textPrompt(req.Prompt, tok)
	}
	if err != nil {
		return nil, err
	}
	for i, id := range j.prompt {
		if id < 0 || int(id) >= vocab {
			return nil, badRequest("invalid_value", "prompt token %d is id %d, outside the vocabulary 0..%d", i, id, vocab-1)
		}
	}
	if len(j.prompt) >= ctx {
		return nil, badRequest("context_length_exceeded", "the prompt is %d tokens; this server's context is %d tokens (--ctx), which must leave room for at least one more", len(j.prompt), ctx)
	}

	// ---- lengths
	room := ctx - len(j.prompt)
	j.maxTokens = room
	for _, f := range []struct {
		name string
		v    *int
	}{{"max_tokens", req.MaxTokens}, {"max_completion_tokens", req.MaxCompletionTokens}} {
		if f.v == nil {
			continue
		}
		switch {
		case *f.v < 1:
			return nil, badRequest("invalid_value", "'%s' is %d; want at least 1", f.name, *f.v)
		case *f.v > room:
			return nil, badRequest("context_length_exceeded", "the prompt's %d tokens and '%s' %d exceed this server's context of %d tokens (--ctx)", len(j.prompt), f.name, *f.v, ctx)
		}
		j.maxTokens = min(j.maxTokens, *f.v)
	}

	// ---- sampling
	j.sample = sample.Config{Temperature: 1}
	rangeErr := func(name string, v float64, want string) *apiError {
		return badRequest("invalid_value", "'%s' is %v; want %s", name, v, want)
	}
	if v := req.Temperature; v != nil {
		if !(*v >= 0 && *v <= 2) {
			return nil, rangeErr("temperature", *v, "a number in [0, 2] (0: greedy)")
		}
		j.sample.Temperature = float32(*v)
	}
	if v := req.TopP; v != nil {
		if !(*v > 0 && *v <= 1) {
			return nil, rangeErr("top_p", *v, "a number in (0, 1]")
		}
		j.sample.TopP = float32(*v)
	}
	if v := req.TopK; v != nil {
		if *v < -1 {
			return nil, badRequest("invalid_value", "'top_k' is %d; want 0 or -1 (off) or more", *v)
		}
		j.sample.TopK = max(*v, 0)
	}
	if v := req.MinP; v != nil {
		if !(*v >= 0 && *v <= 1) {
			return nil, rangeErr("min_p", *v, "a number in [0, 1]")
		}
		j.sample.MinP = float32(*v)
	}
	if v := req.RepetitionPenalty; v != nil {
		if !(*v > 0 && *v <= 10) {
			return nil, rangeErr("repetition_penalty", *v, "a number in (0, 10] (1: off)")
		}
		j.sample.RepeatPenalty = float32(*v)
	}
	for _, f := range []struct {
		name string
		v    *float64
		dst  *float32
	}{{"frequency_penalty", req.FrequencyPenalty, &j.freqPen}, {"presence_penalty", req.PresencePenalty, &j.presPen}} {
		if f.v != nil {
			if !(*f.v >= -2 && *f.v <= 2) {
				return nil, rangeErr(f.name, *f.v, "a number in [-2, 2]")
			}
			*f.dst = float32(*f.v)
		}
	}
	if len(req.LogitBias) > 0 {
		j.bias = map[int32]float32{}
		for k, b := range req.LogitBias {
			id, err := strconv.ParseInt(k, 10, 32)
			if err != nil || id < 0 || int(id) >= vocab {
				return nil, badRequest("invalid_value", "'logit_bias' key %q is not a token id in 0..%d", k, vocab-1)
			}
			if !(b >= -100 && b <= 100) {
				return nil, rangeErr("logit_bias["+k+"]", b, "a number in [-100, 100]")
			}
			j.bias[int32(id)] = float32(b)
		}
	}
	if req.Seed != nil {
		j.sample.Seed = uint64(*req.Seed)
	} else {
		j.sample.Seed = randomSeed()
	}
	if err := j.sample.Validate(); err != nil {
		return nil, badRequest("invalid_value", "%v", err)
	}

	// ---- stop strings
	if !isNull(req.Stop) {
		var one string
		if json.Unmarshal(req.Stop, &one) == nil {
			j.stop = []string{one}
		} else if json.Unmarshal(req.Stop, &j.stop) != nil {
			return nil, badRequest("invalid_type", "invalid type for 'stop': want a string or an array of strings")
		}
		if len(j.stop) > maxStops {
			return nil, badRequest("invalid_value", "'stop' has %d strings; at most %d", len(j.stop), maxStops)
		}
		for _, s := range j.stop {
			if s == "" {
				return nil, badRequest("invalid_value", "'stop' strings must not be empty")
			}
		}
		if tok == nil {
			return nil, badRequest("no_tokenizer", "'stop' strings need a tokenizer, and this server has none; give token ids and stop on max_tokens")
		}
	}

	// ---- log-probabilities
	if !isNull(req.Logprobs) {
		if chat {
			if err := json.Unmarshal(req.Logprobs, &j.logprobs); err != nil {
				return nil, badRequest("invalid_type", "invalid type for 'logprobs': want a boolean")
			}
		} else {
			var n int
			if err := json.Unmarshal(req.Logprobs, &n); err != nil {
				return nil, badRequest("invalid_type", "invalid type for 'logprobs': want an integer (the number of alternatives, 0..%d)", maxTopLogprobs)
			}
			if n < 0 || n > maxTopLogprobs {
				return nil, badRequest("invalid_value", "'logprobs' is %d; want 0..%d", n, maxTopLogprobs)
			}
			j.logprobs, j.topLP = true, n
		}
	}
	if v := req.TopLogprobs; v != nil {
		switch {
		case *v < 0 || *v > maxTopLogprobs:
			return nil, badRequest("invalid_value", "'top_logprobs' is %d; want 0..%d", *v, maxTopLogprobs)
		case *v > 0 && !j.logprobs:
			return nil, badRequest("invalid_value", "'top_logprobs' needs 'logprobs': true")
		}
		j.topLP = *v
	}

	// ---- the answer's form
	j.stream = req.Stream != nil && *req.Stream
	if req.StreamOptions != nil {
		if !j.stream {
			return nil, badRequest("invalid_value", "'stream_options' is only allowed with 'stream': true")
		}
		j.usage = req.StreamOptions.IncludeUsage != nil && *req.StreamOptions.IncludeUsage
	}
	j.ignoreEOS = req.IgnoreEOS != nil && *req.IgnoreEOS
	j.ids = tok == nil || (req.ReturnTokenIDs != nil && *req.ReturnTokenIDs)
	return j, nil
}

// chatPrompt renders messages with the model's chat template and encodes
// them.
func chatPrompt(msgs []message, tok *tokenizer.Tokenizer) ([]int32, *apiError) {
	if len(msgs) == 0 {
		return nil, badRequest("invalid_value", "'messages' must hold at least one message")
	}
	if tok == nil {
		return nil, badRequest("no_tokenizer", "chat needs a tokenizer, and this server has none (give krun serve --tokenizer DIR); /v1/completions takes token ids")
	}
	out := make([]tokenizer.Message, len(msgs))
	for i, m := range msgs {
		role := m.Role
		switch role {
		case "system", "user", "assistant", "tool":
		case "developer":
			role = "system"
		case "":
			return nil, badRequest("invalid_value", "messages[%d] has no 'role'", i)
		default:
			return nil, badRequest("invalid_value", "messages[%d].role %q; want system, developer, user, assistant or tool", i, m.Role)
		}
		text, err := messageText(m.Content)
		if err != nil {
			return nil, badRequest("invalid_value", "messages[%d].content: %s", i, err.Message)
		}
		out[i] = tokenizer.Message{Role: role, Content: text, Name: m.Name, ToolCallID: m.ToolCallID}
	}
	return tok.EncodeChat(out, true), nil
}

// messageText reads a message's content: a string, or an array of
// {"type": "text", "text": ...} parts (joined).
func messageText(raw json.RawMessage) (string, *apiError) {
	if isNull(raw) {
		return "", nil
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s, nil
	}
	var parts []struct {
		Type string  `json:"type"`
		Text *string `json:"text"`
	}
	if json.Unmarshal(raw, &parts) != nil {
		return "", badRequest("invalid_type", "want a string or an array of text parts")
	}
	var b strings.Builder
	for _, p := range parts {
		if p.Type != "text" || p.Text == nil {
			return "", badRequest("unsupported_value", "only text parts are supported, not %q", p.Type)
		}
		b.WriteString(*p.Text)
	}
	return b.String(), nil
}

// textPrompt reads /v1/completions' prompt: a string, an array of token
// ids, or a one-element array of either.
func textPrompt(raw json.RawMessage, tok *tokenizer.Tokenizer) ([]int32, *apiError) {
	if isNull(raw) {
		return nil, badRequest("invalid_value", "'prompt' is required")
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		if tok == nil {
			return nil, badRequest("no_tokenizer", "this server has no tokenizer (give krun serve --tokenizer DIR); give 'prompt' as an array of token ids")
		}
		ids := tok.Encode(s, false)
		if len(ids) == 0 {
			return nil, badRequest("invalid_value", "'prompt' encodes to no tokens")
		}
		return ids, nil
	}
	var elems []json.RawMessage
	if json.Unmarshal(raw, &elems) == nil {
		if len(elems) == 0 {
			return nil, badRequest("invalid_value", "'prompt' is an empty array of token ids")
		}
		if c := elems[0][0]; c == '"' || c == '[' { // a batch of prompts
			if len(elems) != 1 {
				return nil, badRequest("unsupported_value", "'prompt' holds %d prompts; this server takes one per request", len(elems))
			}
			return textPrompt(elems[0], tok)
		}
		out := make([]int32, len(elems))
		for i, el := range elems {
			var id int64
			if c := el[0]; c != '-' && (c < '0' || c > '9') {
				return nil, badRequest("invalid_type", "prompt token %d is %s; want a token id (an integer), or 'prompt' a string", i, clip(el))
			}
			if err := json.Unmarshal(el, &id); err != nil {
				if bytes.ContainsAny(el, ".eE") {
					return nil, badRequest("invalid_value", "prompt token %d is %s, not an integer token id", i, clip(el))
				}
				return nil, badRequest("invalid_value", "prompt token %d is id %s, outside the vocabulary", i, clip(el))
			}
			if id < math.MinInt32 || id > math.MaxInt32 {
				return nil, badRequest("invalid_value", "prompt token %d is id %d, outside the vocabulary", i, id)
			}
			out[i] = int32(id)
		}
		return out, nil
	}
	return nil, badRequest("invalid_type", "invalid type for 'prompt': want a string, an array of token ids, or a one-element array of either")
}

// clip shortens a raw JSON value for an error message.
func clip(raw json.RawMessage) string {
	if len(raw) > 40 {
		return string(raw[:40]) + "..."
	}
	return string(raw)
}
