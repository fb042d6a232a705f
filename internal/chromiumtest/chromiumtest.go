// Package chromiumtest opens HTML pages in headless Chromium for tests:
// it finds the browser, takes a screenshot, collects the console messages
// and measures how much of the screenshot is inked. Without Chromium a test
// skips, unless KTUNE_REQUIRE_CHROMIUM=1 (as .ci/run sets).
package chromiumtest

import (
	"bytes"
	"context"
	"image"
	"image/png"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// Find returns the Chromium binary: $KTUNE_CHROMIUM, else chromium,
// chromium-browser or google-chrome on the PATH; it skips the test when
// there is none (fails with KTUNE_REQUIRE_CHROMIUM=1).
func Find(t testing.TB) string {
	t.Helper()
	if p := os.Getenv("KTUNE_CHROMIUM"); p != "" {
		return p
	}
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	msg := "chromium not found (Debian: apt-get install chromium; or set KTUNE_CHROMIUM=/path)"
	if os.Getenv("KTUNE_REQUIRE_CHROMIUM") == "1" {
		t.Fatal(msg + ", and KTUNE_REQUIRE_CHROMIUM=1")
	}
	t.Skip(msg + "; KTUNE_REQUIRE_CHROMIUM=1 makes this a failure")
	return ""
}

// Screenshot loads page (a file path) in headless Chromium at 1200×1600
// and returns the decoded screenshot and the console messages Chromium
// logged for it (uncaught exceptions included).
func Screenshot(t testing.TB, bin, page string) (image.Image, []string) {
	t.Helper()
	dir := t.TempDir()
	shot := filepath.Join(dir, "shot.png")
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin,
		"--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
		"--disable-component-update", "--no-first-run", "--hide-scrollbars",
		"--user-data-dir="+filepath.Join(dir, "profile"),
		"--screenshot="+shot, "--window-size=1200,1600",
		"--enable-logging=stderr", "--v=0",
		"file://"+page)
	var stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stderr, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("%s: %v\n%s", bin, err, stderr.String())
	}
	var console []string
	for _, line := range strings.Split(stderr.String(), "\n") {
		// Chromium logs each console message as "…:CONSOLE(line)] "msg", source: …"
		// (or ":CONSOLE:line]"), uncaught exceptions included.
		if strings.Contains(line, ":CONSOLE") || strings.Contains(line, "Uncaught") {
			console = append(console, line)
		}
	}
	f, err := os.Open(shot)
	if err != nil {
		t.Fatalf("no screenshot: %v\n%s", err, stderr.String())
	}
	defer f.Close()
	img, err := png.Decode(f)
	if err != nil {
		t.Fatalf("screenshot: %v", err)
	}
	return img, console
}

// Inked counts pixels that are not near-white, and those of them that are
// coloured (not grey): text alone is grey, the charts' bars and lines are not.
func Inked(img image.Image) (nonWhite, coloured, total int) {
	b := img.Bounds()
	for y := b.Min.Y; y < b.Max.Y; y++ {
		for x := b.Min.X; x < b.Max.X; x++ {
			r, g, bl, _ := img.At(x, y).RGBA()
			r, g, bl = r>>8, g>>8, bl>>8
			total++
			if r < 240 || g < 240 || bl < 240 {
				nonWhite++
				if max(r, g, bl)-min(r, g, bl) > 60 {
					coloured++
				}
			}
		}
	}
	return
}

// Check fails t when the page logged console messages, or its screenshot
// is nearly blank or has no coloured (chart) pixels. With
// KTUNE_SCREENSHOT_DIR set it keeps the page and the screenshot there as
// name.html and name.png.
func Check(t testing.TB, bin, page, name string) image.Image {
	t.Helper()
	img, console := Screenshot(t, bin, page)
	for _, c := range console {
		t.Errorf("console: %s", c)
	}
	nonWhite, coloured, total := Inked(img)
	t.Logf("screenshot %v: %d of %d pixels inked, %d coloured", img.Bounds().Size(), nonWhite, total, coloured)
	if b := img.Bounds().Size(); b.X < 1000 || b.Y < 1000 {
		t.Errorf("screenshot is %v, want about 1200×1600", b)
	}
	if nonWhite < total/50 {
		t.Errorf("screenshot nearly blank: %d of %d pixels inked", nonWhite, total)
	}
	// text alone has no coloured pixels; a roofline's lines and points
	// in the first screen give thousands
	if coloured < total/1000 {
		t.Errorf("charts not drawn: only %d coloured pixels", coloured)
	}
	if out := os.Getenv("KTUNE_SCREENSHOT_DIR"); out != "" {
		os.MkdirAll(out, 0o755)
		if b, err := os.ReadFile(page); err == nil {
			os.WriteFile(filepath.Join(out, name+".html"), b, 0o644)
		}
		if f, err := os.Create(filepath.Join(out, name+".png")); err == nil {
			png.Encode(f, img)
			f.Close()
			t.Logf("kept %s/%s.{html,png}", out, name)
		}
	}
	return img
}
