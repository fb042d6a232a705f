package krun

import (
	"bytes"
	"encoding/base64"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/ktune/ktune/cli"
	"github.com/ktune/ktune/cli/clitest"
	"github.com/ktune/ktune/model"
	"github.com/ktune/ktune/model/tokenizer"
)

// TestCalibrateThreads: krun calibrate writes the same bytes at -t 1 and
// -t 3, with a tuning profile installed or not (calibrate uses none).
func TestCalibrateThreads(t *testing.T) {
	tiny := tinyDir(t)
	dir := t.TempDir()
	clitest.WriteFile(t, dir, "p", "1,2,3,4,5,6,7,8,9,10\n11,12,13\n400,300,200,100,50\n")
	var files [][]byte
	for _, th := range []string{"1", "3"} {
		out := filepath.Join(dir, "t"+th+".imatrix")
		var stdout, stderr bytes.Buffer
		if code := Main([]string{"calibrate", tiny, "--prompts", filepath.Join(dir, "p"), "--ids", "-o", out, "-t", th}, &stdout, &stderr); code != 0 {
			t.Fatalf("-t %s: exit %d: %s", th, code, stderr.String())
		}
		b, err := os.ReadFile(out)
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, b)
	}
	if !bytes.Equal(files[0], files[1]) {
		t.Error("the imatrix files of -t 1 and -t 3 differ")
	}
}

// TestCalibrateText: text prompts go through the tokenizer (--tokenizer;
// a byte-level one here: one token per byte, no BOS).
func TestCalibrateText(t *testing.T) {
	dir := t.TempDir()
	tok := filepath.Join(dir, "tok")
	var b bytes.Buffer
	for r := range 256 {
		fmt.Fprintf(&b, "%s %d\n", base64.StdEncoding.EncodeToString([]byte{byte(r)}), r)
	}
	clitest.WriteFile(t, tok, tokenizer.ModelFile, b.String())
	clitest.WriteFile(t, tok, tokenizer.ConfigFile, `{"added_tokens_decoder": {"256": {"content": "[BOS]", "special": true}, "257": {"content": "[EOS]", "special": true}}, "bos_token": "[BOS]", "eos_token": "[EOS]"}`)
	clitest.WriteFile(t, dir, "p", "Hello, world\n\nthe quick brown fox\r\n")
	out := filepath.Join(dir, "o.imatrix")
	var stdout, stderr bytes.Buffer
	if code := Main([]string{"calibrate", tinyDir(t), "--prompts", filepath.Join(dir, "p"), "--tokenizer", tok, "-o", out, "-t", "1"}, &stdout, &stderr); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr.String())
	}
	im, err := model.ReadImatrix(out)
	if err != nil {
		t.Fatal(err)
	}
	if im.Prompts != 2 || im.Tokens != 12+19 || im.Entries["lm_head.weight"].Rows != 31 {
		t.Errorf("%d prompts, %d tokens, lm_head %d rows; want 2, 31, 31 (one token per byte): %s", im.Prompts, im.Tokens, im.Entries["lm_head.weight"].Rows, stdout.String())
	}
}

// TestCalibrateFlags: calibrate's flags and defaults reach its options;
// convert --imatrix implies the search.
func TestCalibrateFlags(t *testing.T) {
	var got *CalibrateOptions
	cmd := NewCmdCalibrate(&cli.Factory{}, func(o *CalibrateOptions) error { got = o; return nil })
	cmd.SetArgs([]string{"m", "--prompts", "p.txt", "-o", "o.imatrix", "--ids", "-t", "3"})
	if err := cmd.Execute(); err != nil {
		t.Fatal(err)
	}
	if got.Model != "m" || got.Prompts != "p.txt" || got.Output != "o.imatrix" || !got.IDs || got.Threads != 3 || got.Ctx != 512 || got.DType != "f32" || got.dtypeSet {
		t.Errorf("options %+v", got)
	}
	var conv *ConvertOptions
	cc := NewCmdConvert(&cli.Factory{}, func(o *ConvertOptions) error { conv = o; return nil })
	cc.SetArgs([]string{"in", "-o", "out.kt", "--preset", "q4", "--imatrix", "x.imatrix"})
	if err := cc.Execute(); err != nil {
		t.Fatal(err)
	}
	if opt, err := conv.loadOptions(); err != nil || !opt.QuantSearch || conv.Imatrix != "x.imatrix" {
		t.Errorf("convert --imatrix: QuantSearch %v, Imatrix %q, err %v", opt.QuantSearch, conv.Imatrix, err)
	}
}
