package reports

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/ktune/ktune/internal/chromiumtest"
)

// The HTML report opened in headless Chromium (Debian package chromium):
// no console errors, and a screenshot that is not blank. Without Chromium
// the test skips, unless KTUNE_REQUIRE_CHROMIUM=1 (as .ci/run sets).
// KTUNE_SCREENSHOT_DIR=dir keeps the page and its screenshot.

func TestHTMLInChromium(t *testing.T) {
	bin := chromiumtest.Find(t)
	dir := t.TempDir()

	// The detector first: a page with a console error and an uncaught
	// exception must be caught, or a clean run below proves nothing.
	bad := filepath.Join(dir, "bad.html")
	os.WriteFile(bad, []byte(`<!DOCTYPE html><html><body><p>x</p><script>console.error("planted"); notDefined();</script></body></html>`), 0o644)
	if _, console := chromiumtest.Screenshot(t, bin, bad); len(console) < 2 {
		t.Fatalf("console errors of a broken page not detected (%d lines): Chromium's logging changed?", len(console))
	}

	page := filepath.Join(dir, "report.html")
	var buf bytes.Buffer
	if err := HTML(&buf, sampleReport(t)); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(page, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	chromiumtest.Check(t, bin, page, "report")
}
