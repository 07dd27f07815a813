package normalize_test

import (
	"net/url"
	"strings"
	"testing"

	"github.com/recrawl/recrawl/normalize"
)

var fuzzSeeds = []string{
	"https://Example.com/docs/?utm_source=x#top",
	"http://Bücher.example/",
	"http://[2001:DB8::1]:8080/a/../b/./c?z=1&a=2&a=1#f",
	"https://example.com/%7e%2f%3a%zz%/a b?q=a+b&r=%20&&",
	"HTTP://user:pass@host:80/",
	"https://xn--bcher-kva.example./%2E%2E/x/..",
	"https://faß.de/\xff?utm_x=1&ref&gclid=",
	"//example.com/x",
	"../a?b#c",
	"javascript:alert(1)",
	"http:intro",
	"https://example.com/a//..//b//",
	`https:\\Example.com\docs\..\a?b=\#\`,
	`\\other.example\x`,
	`..\a\b`,
}

// slashed is s with every backslash before its query and fragment
// written as a slash: what WHATWG parsers read in an http(s) URL.
func slashed(s string) string {
	end := len(s)
	if i := strings.IndexAny(s, "?#"); i >= 0 {
		end = i
	}
	return strings.ReplaceAll(s[:end], `\`, "/") + s[end:]
}

// sameAsSlashed fails the test unless normalizing the slashed form of the
// input gives the same result (or fails too).
func sameAsSlashed(t *testing.T, in, out string, err error, again func(string) (string, error)) {
	t.Helper()
	out2, err2 := again(slashed(in))
	if (err == nil) != (err2 == nil) || out != out2 {
		t.Fatalf("%q gives %q (%v) but with slashes for its backslashes %q (%v)", in, out, err, out2, err2)
	}
}

// checkNormalized fails the test unless out is a fixed point of p.URL and
// something net/http can request.
func checkNormalized(t *testing.T, p normalize.Policy, in, out string) {
	t.Helper()
	again, err := p.URL(out)
	if err != nil {
		t.Fatalf("URL(%q) = %q, which fails to normalize again: %v", in, out, err)
	}
	if again != out {
		t.Fatalf("not idempotent: URL(%q) = %q, then %q", in, out, again)
	}
	if len(out) > normalize.MaxLength {
		t.Fatalf("output of %d bytes exceeds MaxLength", len(out))
	}
	for i := 0; i < len(out); i++ {
		if c := out[i]; c <= ' ' || c >= 0x7f {
			t.Fatalf("output %q has byte %#x at %d", out, c, i)
		}
	}
	if !strings.HasPrefix(out, "http://") && !strings.HasPrefix(out, "https://") {
		t.Fatalf("output %q is not http(s)", out)
	}
	u, err := url.Parse(out)
	if err != nil {
		t.Fatalf("net/url rejects output %q of %q: %v", out, in, err)
	}
	if u.Host == "" || u.User != nil {
		t.Fatalf("net/url sees host %q, user %v in %q", u.Host, u.User, out)
	}
}

func fuzzPolicy(flags uint8) normalize.Policy {
	p := normalize.Policy{KeepTrailingSlash: flags&1 != 0, KeepFragment: flags&2 != 0}
	if flags&4 != 0 {
		p.Tracking = []string{}
	}
	return p
}

// FuzzURL checks that URL never panics and that its output is a fixed
// point: normalizing it again gives the same string and no error.
func FuzzURL(f *testing.F) {
	for i, s := range fuzzSeeds {
		f.Add(s, uint8(i))
	}
	f.Fuzz(func(t *testing.T, raw string, flags uint8) {
		p := fuzzPolicy(flags)
		out, err := p.URL(raw)
		sameAsSlashed(t, raw, out, err, p.URL)
		if err != nil {
			if out != "" {
				t.Fatalf("error %v with output %q", err, out)
			}
			return
		}
		checkNormalized(t, p, raw, out)
	})
}

// FuzzResolve checks that Resolve never panics and returns normalized URLs.
func FuzzResolve(f *testing.F) {
	for i, s := range fuzzSeeds {
		f.Add("https://example.com/docs/guide/", s, uint8(i))
		f.Add(s, "../x?y#z", uint8(i))
	}
	f.Fuzz(func(t *testing.T, base, ref string, flags uint8) {
		p := fuzzPolicy(flags)
		out, err := p.Resolve(base, ref)
		sameAsSlashed(t, ref, out, err, func(ref string) (string, error) { return p.Resolve(base, ref) })
		if err != nil {
			return
		}
		checkNormalized(t, p, ref, out)
	})
}
