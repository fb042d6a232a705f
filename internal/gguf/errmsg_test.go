package gguf

import (
	"strings"
	"testing"
)

// TestErrorLongName: a corrupt file's long binary key is shown cut, with its
// length, so that the error stays one short line; a normal one whole.
func TestErrorLongName(t *testing.T) {
	key := strings.Repeat("\x01\xff", 225)
	msg := (&Error{Path: "f.gguf", Key: key, Msg: "bad type"}).Error()
	if len(msg) > 400 || !strings.Contains(msg, "(450 bytes)") || strings.Contains(msg, "\n") {
		t.Errorf("%d bytes: %s", len(msg), msg)
	}
	if msg := (&Error{Path: "f.gguf", Key: "general.name", Msg: "x"}).Error(); msg != `gguf: f.gguf: metadata "general.name": x` {
		t.Errorf("short key: %s", msg)
	}
}
