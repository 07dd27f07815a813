package alert_test

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"strings"
	"testing"

	"github.com/recrawl/recrawl/alert"
)

// FuzzDiff checks that Diff never panics and that its output always applies
// back: patching old with Diff(old, new) gives new, for any context.
func FuzzDiff(f *testing.F) {
	f.Add("", "", 3)
	f.Add("a\nb\nc\n", "a\nx\nc\n", 3)
	f.Add("a\nb", "a\nb\n", 0)
	f.Add("x\n", "y", 1)
	f.Add("1\n2\n3\n4\n5\n6\n7\n8\n", "1\n2x\n3\n4\n5\n6\n7x\n8\n", 2)
	f.Add("## 增量抓取\n\n旧\n", "## 增量抓取\n\n新\n", 3)
	f.Add("a\r\nb\r\n", "\n\n\n", -1)
	f.Add("\xff\xfe\n\x00", "\x00\n\xff", 5)
	f.Fuzz(func(t *testing.T, old, new string, context int) {
		if len(old) > 1<<16 || len(new) > 1<<16 {
			t.Skip()
		}
		context %= 50
		d := alert.Diff(old, new, context)
		if (d == "") != (old == new) {
			t.Fatalf("empty diff = %v for equal = %v", d == "", old == new)
		}
		back, err := applyPatch(old, d)
		if err != nil {
			t.Fatalf("diff does not apply: %v\nold %q\nnew %q\n%s", err, old, new, d)
		}
		if back != new {
			t.Fatalf("patched old = %q, want %q\n%s", back, new, d)
		}
	})
}

// FuzzVerifySignature checks that the header parser never panics and
// accepts only the one correct signature of the body.
func FuzzVerifySignature(f *testing.F) {
	f.Add("k", []byte(`{"id":"x"}`), "sha256=00")
	f.Add("k", []byte(""), "sha256="+strings.Repeat("a", 64))
	f.Add("", []byte("x"), "")
	f.Add("k", []byte("x"), "sha256= "+strings.Repeat("F", 64))
	f.Fuzz(func(t *testing.T, secret string, body []byte, header string) {
		got := alert.VerifySignature(secret, body, header)
		m := hmac.New(sha256.New, []byte(secret))
		m.Write(body)
		want := secret != "" && strings.EqualFold(strings.TrimSpace(header), "sha256="+hex.EncodeToString(m.Sum(nil))) &&
			strings.HasPrefix(strings.TrimSpace(header), "sha256=")
		if got != want {
			t.Fatalf("VerifySignature(%q, %q, %q) = %v, want %v", secret, body, header, got, want)
		}
	})
}
