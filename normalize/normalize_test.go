package normalize_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/recrawl/recrawl/normalize"
)

type urlCase struct {
	name string
	in   string
	want string // expected output when err is nil
	err  error  // expected reason
}

func runURLCases(t *testing.T, p normalize.Policy, cases []urlCase) {
	t.Helper()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, err := p.URL(tc.in)
			if tc.err != nil {
				require.ErrorIs(t, err, tc.err, "got %q", got)
				var ne *normalize.Error
				require.ErrorAs(t, err, &ne)
				require.Equal(t, tc.in, ne.Raw)
				require.Empty(t, got)
				return
			}
			require.NoError(t, err)
			require.Equal(t, tc.want, got)
			again, err := p.URL(got)
			require.NoError(t, err, "normalizing the output again")
			require.Equal(t, got, again, "not idempotent")
		})
	}
}

func TestURLDefault(t *testing.T) {
	runURLCases(t, normalize.Policy{}, []urlCase{
		// The seed's example: two spellings of one page.
		{"seed example", "https://Example.com/docs/?utm_source=x#top", "https://example.com/docs", nil},
		{"seed example plain", "https://example.com/docs", "https://example.com/docs", nil},

		// Scheme and host case.
		{"upper scheme", "HTTPS://EXAMPLE.COM/Docs", "https://example.com/Docs", nil},
		{"mixed scheme", "hTTp://example.com/", "http://example.com/", nil},
		{"path case kept", "https://example.com/A/b/C", "https://example.com/A/b/C", nil},

		// International names.
		{"IDN to punycode", "http://Bücher.example/", "http://xn--bcher-kva.example/", nil},
		{"IDN mixed labels", "https://www.BÜCHER.example/x", "https://www.xn--bcher-kva.example/x", nil},
		{"IDN percent-encoded", "http://B%C3%BCcher.example/", "http://xn--bcher-kva.example/", nil},
		{"punycode kept", "http://XN--BCHER-KVA.example/", "http://xn--bcher-kva.example/", nil},
		{"IDN sharp s non-transitional", "https://faß.de/", "https://xn--fa-hia.de/", nil},
		{"IDN fullwidth letters", "http://\uff25\uff38\uff21\uff2d\uff30\uff2c\uff25.com/", "http://example.com/", nil},
		{"IDN trailing dot", "http://Bücher.example./", "http://xn--bcher-kva.example./", nil},
		{"IDN fullwidth dot", "https://example\uff0ecom/", "https://example.com/", nil},
		{"IDN japanese", "https://日本語.jp/ページ", "https://xn--wgv71a119e.jp/%E3%83%9A%E3%83%BC%E3%82%B8", nil},
		{"percent-encoded ASCII host", "http://%65xample.com/", "http://example.com/", nil},
		{"underscore host", "https://my_host.example.com/", "https://my_host.example.com/", nil},
		{"trailing dot host kept", "https://example.com./a", "https://example.com./a", nil},
		{"IPv4 host", "http://127.0.0.1:8080/x", "http://127.0.0.1:8080/x", nil},
		{"IPv6 host", "http://[2001:DB8:0:0::1]:8080/", "http://[2001:db8::1]:8080/", nil},
		{"IPv6 default port", "https://[::1]:443/", "https://[::1]/", nil},

		// Ports.
		{"http default port", "http://example.com:80/a", "http://example.com/a", nil},
		{"https default port", "https://example.com:443/a", "https://example.com/a", nil},
		{"http on 443 kept", "http://example.com:443/a", "http://example.com:443/a", nil},
		{"https on 80 kept", "https://example.com:80/a", "https://example.com:80/a", nil},
		{"other port kept", "https://example.com:8443/a", "https://example.com:8443/a", nil},
		{"leading zeros", "http://example.com:0080/a", "http://example.com/a", nil},
		{"leading zeros other", "http://example.com:08080/a", "http://example.com:8080/a", nil},
		{"empty port", "http://example.com:/a", "http://example.com/a", nil},
		{"max port", "http://example.com:65535/", "http://example.com:65535/", nil},

		// Fragment.
		{"fragment dropped", "https://example.com/a#section-2", "https://example.com/a", nil},
		{"empty fragment dropped", "https://example.com/a#", "https://example.com/a", nil},
		{"fragment with query", "https://example.com/a?b=1#c?d=2", "https://example.com/a?b=1", nil},

		// Dot segments (RFC 3986 5.2.4 and its examples).
		{"dot", "https://example.com/a/./b", "https://example.com/a/b", nil},
		{"dot dot", "https://example.com/a/b/../c", "https://example.com/a/c", nil},
		{"rfc example", "http://a/b/c/./../../g", "http://a/g", nil},
		{"rfc example 2", "http://a/mid/content=5/../6", "http://a/mid/6", nil},
		{"above root", "https://example.com/../../a", "https://example.com/a", nil},
		{"trailing dot dot", "https://example.com/a/b/..", "https://example.com/a", nil},
		{"trailing dot dot to root", "https://example.com/a/..", "https://example.com/", nil},
		{"encoded dots", "https://example.com/a/%2E%2e/b", "https://example.com/b", nil},
		{"encoded dot", "https://example.com/a/%2E/b", "https://example.com/a/b", nil},
		{"dots in names kept", "https://example.com/a/..b/.c/...", "https://example.com/a/..b/.c/...", nil},
		{"dot dot after empty segment", "https://example.com/a//../b", "https://example.com/a/b", nil},
		{"encoded slash is no segment", "https://example.com/a/..%2Fb", "https://example.com/a/..%2Fb", nil},

		// Percent-encoding.
		{"tilde decoded", "https://example.com/%7Euser", "https://example.com/~user", nil},
		{"unreserved decoded", "https://example.com/%41%62%2D%5F%30", "https://example.com/Ab-_0", nil},
		{"slash kept", "https://example.com/a%2Fb", "https://example.com/a%2Fb", nil},
		{"lower hex uppercased", "https://example.com/a%3ab%2fc", "https://example.com/a%3Ab%2Fc", nil},
		{"reserved in query kept", "https://example.com/?q=a%26b%3Dc%3Fd", "https://example.com/?q=a%26b%3Dc%3Fd", nil},
		{"space encoded", "https://example.com/a b", "https://example.com/a%20b", nil},
		{"non-ASCII path encoded", "https://example.com/Straße", "https://example.com/Stra%C3%9Fe", nil},
		{"encoded non-ASCII kept", "https://example.com/Stra%c3%9fe", "https://example.com/Stra%C3%9Fe", nil},
		{"raw and encoded agree", "https://example.com/ü?q=ü", "https://example.com/%C3%BC?q=%C3%BC", nil},
		{"invalid UTF-8 byte encoded", "https://example.com/\xff", "https://example.com/%FF", nil},
		{"brackets encoded", "https://example.com/a[1]?b[]=2", "https://example.com/a%5B1%5D?b%5B%5D=2", nil},
		{"must-encode ASCII", "https://example.com/\"<>^`{|}", "https://example.com/%22%3C%3E%5E%60%7B%7C%7D", nil},

		// Backslashes, as WHATWG reads them in http(s) URLs.
		{"backslash in path", `https://example.com/docs\guide\intro`, "https://example.com/docs/guide/intro", nil},
		{"backslash ends host", `https://Example.com\docs`, "https://example.com/docs", nil},
		{"backslash slashes", `https:\\example.com\a`, "https://example.com/a", nil},
		{"mixed slashes", `http:/\example.com/a\/b`, "http://example.com/a//b", nil},
		{"backslash dot segments", `https://example.com/a\b\..\c\.\d`, "https://example.com/a/c/d", nil},
		{"backslash trailing", `https://example.com/docs\`, "https://example.com/docs", nil},
		{"backslash in query is data", `https://example.com/a\b?q=c\d`, "https://example.com/a/b?q=c%5Cd", nil},
		{"backslash in fragment is data", `https://example.com/a\b#c\d`, "https://example.com/a/b", nil},
		{"escaped backslash kept", "https://example.com/a%5cb", "https://example.com/a%5Cb", nil},
		{"sub-delims kept", "https://example.com/!$&'()*+,;=:@", "https://example.com/!$&'()*+,;=:@", nil},
		{"stray percent fixed", "https://example.com/100%?off=50%", "https://example.com/100%25?off=50%25", nil},
		{"short escape fixed", "https://example.com/a%2", "https://example.com/a%252", nil},
		{"non-hex escape fixed", "https://example.com/a%zz", "https://example.com/a%25zz", nil},
		{"encoded percent kept", "https://example.com/a%25", "https://example.com/a%25", nil},
		{"plus and %20 distinct", "https://example.com/?q=a+b&r=a%20b", "https://example.com/?q=a+b&r=a%20b", nil},
		{"encoded plus kept", "https://example.com/?q=a%2Bb", "https://example.com/?q=a%2Bb", nil},

		// Query.
		{"sorted by key", "https://example.com/?b=2&a=1&c=3", "https://example.com/?a=1&b=2&c=3", nil},
		{"duplicates sorted by value", "https://example.com/?a=2&b=1&a=1&a=10", "https://example.com/?a=1&a=10&a=2&b=1", nil},
		{"identical duplicates kept", "https://example.com/?a=1&a=1", "https://example.com/?a=1&a=1", nil},
		{"blank values kept", "https://example.com/?b=&a", "https://example.com/?a&b=", nil},
		{"bare before empty value", "https://example.com/?a=&a", "https://example.com/?a&a=", nil},
		{"key before value order", "https://example.com/?a-b=1&a=2", "https://example.com/?a=2&a-b=1", nil},
		{"empty params dropped", "https://example.com/?&a=1&&b=2&", "https://example.com/?a=1&b=2", nil},
		{"empty query dropped", "https://example.com/a?", "https://example.com/a", nil},
		{"only ampersands dropped", "https://example.com/a?&&", "https://example.com/a", nil},
		{"question mark in query", "https://example.com/?next=/a?b", "https://example.com/?next=/a?b", nil},
		{"equals in value", "https://example.com/?a=b=c", "https://example.com/?a=b=c", nil},
		{"empty key", "https://example.com/?=x&a=1", "https://example.com/?=x&a=1", nil},
		{"many params sorted", "https://example.com/?t=1&s=1&r=1&q=1&p=1&o=1&n=1&m=1&l=1&k=1&j=1&i=1&h=1&g=1&f=1&e=1&d=1&c=1&b=1&a=1",
			"https://example.com/?a=1&b=1&c=1&d=1&e=1&f=1&g=1&h=1&i=1&j=1&k=1&l=1&m=1&n=1&o=1&p=1&q=1&r=1&s=1&t=1", nil},

		// Tracking parameters.
		{"utm family", "https://example.com/a?utm_source=x&utm_medium=y&utm_campaign=z&utm_term=t&utm_content=c&utm_id=9", "https://example.com/a", nil},
		{"click ids", "https://example.com/a?gclid=1&fbclid=2&mc_cid=3&mc_eid=4&ref=5&id=7", "https://example.com/a?id=7", nil},
		{"tracking key case", "https://example.com/a?UTM_Source=x&GCLID=1&Ref=hn", "https://example.com/a", nil},
		{"tracking key encoded", "https://example.com/a?utm%5Fsource=x", "https://example.com/a", nil},
		{"tracking without value", "https://example.com/a?ref&b", "https://example.com/a?b", nil},
		{"similar keys kept", "https://example.com/a?utm=1&referrer=2&refs=3", "https://example.com/a?referrer=2&refs=3&utm=1", nil},
		{"tracking value irrelevant", "https://example.com/a?x=utm_source", "https://example.com/a?x=utm_source", nil},

		// Trailing slash and empty path.
		{"trailing slash removed", "https://example.com/docs/", "https://example.com/docs", nil},
		{"trailing slashes removed", "https://example.com/docs//", "https://example.com/docs", nil},
		{"trailing slash before query", "https://example.com/docs/?a=1", "https://example.com/docs?a=1", nil},
		{"root kept", "https://example.com/", "https://example.com/", nil},
		{"empty path", "https://example.com", "https://example.com/", nil},
		{"empty path with query", "https://example.com?a=1", "https://example.com/?a=1", nil},
		{"root double slash", "https://example.com//", "https://example.com/", nil},
		{"inner double slash kept", "https://example.com/a//b", "https://example.com/a//b", nil},
		{"encoded trailing slash kept", "https://example.com/a%2F", "https://example.com/a%2F", nil},

		// White space.
		{"surrounding space trimmed", "  \t\nhttps://example.com/a \r\n", "https://example.com/a", nil},
		{"no-break space trimmed", "\u00a0https://example.com/a\u00a0", "https://example.com/a", nil},

		// Errors.
		{"ftp", "ftp://example.com/file", "", normalize.ErrScheme},
		{"mailto", "mailto:someone@example.com", "", normalize.ErrScheme},
		{"javascript", "javascript:alert(1)", "", normalize.ErrScheme},
		{"data", "data:text/plain,hi", "", normalize.ErrScheme},
		{"no scheme", "example.com/docs", "", normalize.ErrScheme},
		{"host and port without scheme", "example.com:8080/docs", "", normalize.ErrScheme},
		{"scheme-relative", "//example.com/docs", "", normalize.ErrScheme},
		{"relative path", "docs/intro", "", normalize.ErrScheme},
		{"empty", "", "", normalize.ErrScheme},
		{"blank", "   ", "", normalize.ErrScheme},
		{"no slashes", "http:example.com", "", normalize.ErrHost},
		{"one slash", "http:/example.com", "", normalize.ErrHost},
		{"empty host", "http:///a", "", normalize.ErrHost},
		{"empty host with port", "http://:80/a", "", normalize.ErrHost},
		{"empty label", "http://a..b/", "", normalize.ErrHost},
		{"leading dot", "http://.example.com/", "", normalize.ErrHost},
		{"only dot", "http://./", "", normalize.ErrHost},
		{"bad host char", "http://exa mple.com/", "", normalize.ErrHost},
		{"bad host char encoded", "http://exa%20mple.com/", "", normalize.ErrHost},
		{"host slash encoded", "http://a%2Fb.com/", "", normalize.ErrHost},
		{"bad host escape", "http://exa%2mple.com/", "", normalize.ErrHost},
		{"host invalid UTF-8", "http://exa%FFmple.com/", "", normalize.ErrHost},
		{"label too long", "http://" + strings.Repeat("a", 64) + ".com/", "", normalize.ErrHost},
		{"host too long", "http://" + strings.Repeat("abcdefghi.", 26) + "com/", "", normalize.ErrHost},
		{"host maps to nothing", "http://\u00ad/", "", normalize.ErrHost},
		{"fullwidth port", "http://example.com:\uff18\uff10/", "", normalize.ErrPort},
		{"bad IDN", "http://xn--a\u0300.com/", "", normalize.ErrHost},
		{"IPv6 unclosed", "http://[::1/", "", normalize.ErrHost},
		{"IPv6 invalid", "http://[::g]/", "", normalize.ErrHost},
		{"IPv6 holds IPv4", "http://[1.2.3.4]/", "", normalize.ErrHost},
		{"IPv6 zone", "http://[fe80::1%25eth0]/", "", normalize.ErrHost},
		{"IPv6 junk after", "http://[::1]x/", "", normalize.ErrHost},
		{"port not number", "http://example.com:http/", "", normalize.ErrPort},
		{"port too big", "http://example.com:65536/", "", normalize.ErrPort},
		{"port huge", "http://example.com:99999999999999999999/", "", normalize.ErrPort},
		{"port zero", "http://example.com:0/", "", normalize.ErrPort},
		{"port negative", "http://example.com:-1/", "", normalize.ErrPort},
		{"unbracketed IPv6", "http://::1/", "", normalize.ErrHost},
		{"userinfo", "https://user:secret@example.com/", "", normalize.ErrUserinfo},
		{"user only", "https://user@example.com/", "", normalize.ErrUserinfo},
		{"empty userinfo", "https://@example.com/", "", normalize.ErrUserinfo},
		{"deceptive userinfo", "https://example.com@evil.example/", "", normalize.ErrUserinfo},
		{"NUL", "https://example.com/a\x00b", "", normalize.ErrParse},
		{"inner newline", "https://example.com/a\nb", "", normalize.ErrParse},
		{"inner tab", "https://exam\tple.com/", "", normalize.ErrParse},
		{"DEL", "https://example.com/\x7f", "", normalize.ErrParse},
		{"too long", "https://example.com/" + strings.Repeat("a", normalize.MaxLength), "", normalize.ErrParse},
		{"too long after encoding", "https://example.com/" + strings.Repeat("é", normalize.MaxLength/3), "", normalize.ErrParse},
	})
}

func TestURLKeepTrailingSlash(t *testing.T) {
	runURLCases(t, normalize.Policy{KeepTrailingSlash: true}, []urlCase{
		{"slash kept", "https://example.com/docs/", "https://example.com/docs/", nil},
		{"no slash stays", "https://example.com/docs", "https://example.com/docs", nil},
		{"double kept", "https://example.com/docs//", "https://example.com/docs//", nil},
		{"seed example", "https://Example.com/docs/?utm_source=x#top", "https://example.com/docs/", nil},
		{"dot segment slash", "https://example.com/a/b/..", "https://example.com/a/", nil},
		{"empty path", "https://example.com", "https://example.com/", nil},
	})
}

func TestURLKeepFragment(t *testing.T) {
	runURLCases(t, normalize.Policy{KeepFragment: true}, []urlCase{
		{"hash route", "https://example.com/#/docs/intro", "https://example.com/#/docs/intro", nil},
		{"fragment normalized", "https://example.com/a#%7ex%3a y", "https://example.com/a#~x%3A%20y", nil},
		{"empty fragment dropped", "https://example.com/a#", "https://example.com/a", nil},
		{"fragment params not sorted", "https://example.com/a#b=2&a=1", "https://example.com/a#b=2&a=1", nil},
		{"fragment after query", "https://example.com/a?utm_source=x&b=1#top", "https://example.com/a?b=1#top", nil},
	})
}

func TestURLTrackingPolicy(t *testing.T) {
	t.Run("extended", func(t *testing.T) {
		p := normalize.Policy{Tracking: append(normalize.DefaultTracking(), "sessionid", "_hs*")}
		runURLCases(t, p, []urlCase{
			{"custom key", "https://example.com/a?SessionID=9&b=1", "https://example.com/a?b=1", nil},
			{"custom prefix", "https://example.com/a?_hsenc=1&_hsmi=2&hs=3", "https://example.com/a?hs=3", nil},
			{"defaults still apply", "https://example.com/a?utm_source=x&ref=y", "https://example.com/a", nil},
		})
	})
	t.Run("ref kept", func(t *testing.T) {
		var list []string
		for _, k := range normalize.DefaultTracking() {
			if k != "ref" {
				list = append(list, k)
			}
		}
		runURLCases(t, normalize.Policy{Tracking: list}, []urlCase{
			{"ref is content", "https://git.example.com/blob/README.md?ref=main&utm_medium=x", "https://git.example.com/blob/README.md?ref=main", nil},
		})
	})
	t.Run("none", func(t *testing.T) {
		runURLCases(t, normalize.Policy{Tracking: []string{}}, []urlCase{
			{"nothing removed", "https://example.com/a?utm_source=x&gclid=1", "https://example.com/a?gclid=1&utm_source=x", nil},
		})
	})
	t.Run("drop whole query", func(t *testing.T) {
		runURLCases(t, normalize.Policy{Tracking: []string{"*"}}, []urlCase{
			{"all removed", "https://example.com/a?x=1&y=2", "https://example.com/a", nil},
		})
	})
	t.Run("DefaultTracking is a copy", func(t *testing.T) {
		l := normalize.DefaultTracking()
		require.Equal(t, []string{"utm_*", "gclid", "fbclid", "mc_cid", "mc_eid", "ref"}, l)
		l[0] = "changed"
		require.Equal(t, "utm_*", normalize.DefaultTracking()[0])
		got, err := normalize.URL("https://example.com/?utm_source=x")
		require.NoError(t, err)
		require.Equal(t, "https://example.com/", got)
	})
}

// Every spelling of one page must give the same key.
func TestURLSameIdentity(t *testing.T) {
	spellings := []string{
		"https://example.com/docs/guide?b=2&a=1",
		"HTTPS://EXAMPLE.COM:443/docs/guide/?a=1&b=2",
		"https://example.com/docs/./intro/../guide?a=1&utm_campaign=x&b=2#part",
		"https://example.com/%64ocs/guide?%61=1&b=%32",
		" https://Example.COM/docs/guide/?a=1&b=2&fbclid=abc&&\n",
	}
	want := "https://example.com/docs/guide?a=1&b=2"
	for _, s := range spellings {
		got, err := normalize.URL(s)
		require.NoError(t, err, s)
		require.Equal(t, want, got, s)
	}
}

func TestErrorMessage(t *testing.T) {
	_, err := normalize.URL("ftp://example.com/x")
	require.EqualError(t, err, `normalize "ftp://example.com/x": unsupported scheme: scheme "ftp" is not http or https`)

	_, err = normalize.URL("example.com/docs")
	require.ErrorContains(t, err, "a relative reference is not a page URL")

	_, err = normalize.URL("localhost:8080/docs")
	require.ErrorContains(t, err, `scheme "localhost" is not http or https (missing "http://"?)`)

	_, err = normalize.URL("example.com:8080")
	require.ErrorContains(t, err, `(missing "http://"?)`)

	_, err = normalize.URL("mailto:a@example.com")
	require.NotContains(t, err.Error(), "missing")

	_, err = normalize.URL("https://bob:hunter2@example.com/")
	require.ErrorContains(t, err, `remove "bob:hunter2@"`)

	_, err = normalize.URL("https://example.com:99999/")
	require.EqualError(t, err, `normalize "https://example.com:99999/": invalid port: "99999" is above 65535`)

	_, err = normalize.Resolve("https://example.com/a", "https://exa mple.com/")
	require.EqualError(t, err, `normalize "https://exa mple.com/" (base "https://example.com/a"): invalid host: character ' ' is not allowed in host "exa mple.com"`)

	_, err = normalize.Resolve("/relative/base", "a")
	var ne *normalize.Error
	require.ErrorAs(t, err, &ne)
	require.True(t, errors.Is(err, normalize.ErrScheme))
	require.Equal(t, "a", ne.Raw)
	require.Equal(t, "/relative/base", ne.Base)
	require.Equal(t, "the base URL has no scheme; give the absolute URL the page was fetched from", ne.Detail)

	_, err = normalize.Resolve("https://exa mple.com/", "a")
	require.ErrorIs(t, err, normalize.ErrHost)
	require.ErrorContains(t, err, "in the base URL: character ' ' is not allowed")
}

// One Policy is shared by all of a source's workers.
func TestConcurrentUse(t *testing.T) {
	p := normalize.Policy{Tracking: append(normalize.DefaultTracking(), "sid")}
	want, err := p.Resolve("https://example.com/a/", "b/?sid=1&z=2&y=1")
	require.NoError(t, err)
	require.Equal(t, "https://example.com/a/b?y=1&z=2", want)
	done := make(chan string)
	for range 8 {
		go func() {
			var got string
			for range 200 {
				got, _ = p.Resolve("https://example.com/a/", "b/?sid=1&z=2&y=1")
			}
			done <- got
		}()
	}
	for range 8 {
		require.Equal(t, want, <-done)
	}
}

func TestSameSite(t *testing.T) {
	for _, tc := range []struct {
		a, b string
		want bool
	}{
		{"https://docs.x.test/a", "https://docs.x.test/b", true},
		{"https://x.test/a", "https://www.x.test/a", true},
		{"https://WWW.x.test/a", "http://x.test./a", true},
		{"http://x.test/a", "https://x.test:443/a", true},
		{"http://x.test:80/a", "http://x.test/a", true},
		{"https://x.test/a", "https://docs.x.test/a", false},
		{"https://x.test/a", "https://evil.test/a", false},
		{"https://x.test/a", "https://x.test.evil.test/a", false},
		{"http://127.0.0.1:8080/a", "http://127.0.0.1:9090/a", false},
		{"http://127.0.0.1:8080/a", "http://127.0.0.1:8080/b", true},
		{"https://x.test/a", "/relative", false},
		{"https://x.test/a", "::bad", false},
	} {
		require.Equal(t, tc.want, normalize.SameSite(tc.a, tc.b), "%s vs %s", tc.a, tc.b)
		require.Equal(t, tc.want, normalize.SameSite(tc.b, tc.a), "%s vs %s", tc.b, tc.a)
	}
}
