package mapfile

import "io/fs"

// NotRegular names what a file of mode m is when it is not a regular file
// (for an error: "is a named pipe, not a model file"), or "" for a regular
// file. Opening a named pipe to map it would wait for a writer forever.
func NotRegular(m fs.FileMode) string {
	switch {
	case m.IsRegular():
		return ""
	case m.IsDir():
		return "a folder"
	case m&fs.ModeNamedPipe != 0:
		return "a named pipe"
	case m&fs.ModeSocket != 0:
		return "a socket"
	case m&fs.ModeDevice != 0:
		return "a device"
	}
	return "not a regular file"
}
