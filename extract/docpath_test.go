package extract_test

import (
	"path"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/require"

	"github.com/recrawl/recrawl/extract"
)

func TestDocPath(t *testing.T) {
	const html = "text/html; charset=utf-8"
	cases := []struct {
		url, contentType, want string
	}{
		{"https://example.com/docs/install", html, "example.com/docs/install.md"},
		{"https://Example.COM/Docs/Install", html, "example.com/Docs/Install.md"},
		{"https://example.com/docs/", html, "example.com/docs/index.md"},
		{"https://example.com/", html, "example.com/index.md"},
		{"https://example.com", html, "example.com/index.md"},
		{"https://example.com:8443/a", html, "example.com%3A8443/a.md"},
		// The content type decides the extension, not the URL's suffix.
		{"https://example.com/report.pdf", html, "example.com/report.pdf.md"},
		{"https://example.com/report.pdf", "application/pdf", "example.com/report.pdf.pdf"},
		{"https://example.com/guide.md", "text/markdown; charset=utf-8", "example.com/guide.md.md"},
		{"https://example.com/llms.txt", "text/plain", "example.com/llms.txt.txt"},
		{"https://example.com/page.html", "application/xhtml+xml", "example.com/page.html.md"},
		{"https://example.com/data", "application/json", "example.com/data.json"},
		{"https://example.com/feed", "application/octet-stream", "example.com/feed.bin"},
		{"https://example.com/feed", "", "example.com/feed.bin"},
		{"https://example.com/feed", "not a media type", "example.com/feed.bin"},
		// Query strings are hashed into the name, order-insensitively.
		{"https://example.com/search?q=go&page=2", html, "example.com/search~q" + hashOf(t, "https://example.com/search?page=2&q=go") + ".md"},
		{"https://example.com/docs/?v=2", html, "example.com/docs/index~q" + hashOf(t, "https://example.com/docs/?v=2") + ".md"},
		// Fragments, user info and the scheme are not part of the path.
		{"http://user:pw@example.com/a#section", html, "example.com/a.md"},
		// Dot segments resolve; encoded ones are encoded, never followed.
		{"https://example.com/a/b/../c", html, "example.com/a/c.md"},
		{"https://example.com/../../etc/passwd", html, "example.com/etc/passwd.md"},
		{"https://example.com/a/..", html, "example.com/index.md"},
		{"https://example.com/%2e%2e/%2E%2E/x", html, "example.com/%2E%2E/%2E%2E/x.md"},
		{"https://example.com/a%2Fb", html, "example.com/a%2Fb.md"},
		{"https://example.com/a%5Cb", html, "example.com/a%5Cb.md"},
		{"https://example.com/a//b", html, "example.com/a/b.md"},
		{"https://example.com/caf%C3%A9/na%C3%AFve", html, "example.com/caf%C3%A9/na%C3%AFve.md"},
		{"https://example.com/a%00b", html, "example.com/a%00b.md"},
		{"https://example.com/100%25", html, "example.com/100%25.md"},
		{"https://example.com/a~b", html, "example.com/a%7Eb.md"},
		{"https://example.com/docs/index", html, "example.com/docs/%69ndex.md"},
		{"not a url\x7f", html, "~invalid/~h" + hashOf(t, "") + ".md"},
		{"/relative/path", html, "~invalid/~h" + hashOf(t, "") + ".md"},
	}
	for _, tc := range cases {
		got := extract.DocPath(tc.url, tc.contentType)
		if strings.HasPrefix(tc.want, "~invalid/") {
			require.True(t, strings.HasPrefix(got, "~invalid/~h"), "%s → %s", tc.url, got)
			require.True(t, strings.HasSuffix(got, ".md"), "%s → %s", tc.url, got)
		} else {
			require.Equal(t, tc.want, got, tc.url)
		}
		requireSafePath(t, got)
	}
}

// hashOf returns the query hash DocPath puts into the name for url, taken
// from a URL with the same query: the test pins that equal normalised
// queries hash equally, not the hash function itself.
func hashOf(t *testing.T, url string) string {
	t.Helper()
	if url == "" {
		return ""
	}
	p := extract.DocPath(url, "text/html")
	i := strings.LastIndex(p, "~q")
	require.GreaterOrEqual(t, i, 0, p)
	h := strings.TrimSuffix(p[i+2:], ".md")
	require.Len(t, h, 16)
	return h
}

func TestDocPathNoCollisions(t *testing.T) {
	urls := []string{
		"https://example.com/", "https://example.com/index", "https://example.com/index.html",
		"https://example.com/docs", "https://example.com/docs/", "https://example.com/docs/index",
		"https://example.com/docs/index.md", "https://example.com/docs.md",
		"https://example.com/guide", "https://example.com/guide.md", "https://example.com/guide.html",
		"https://example.com/Guide", "https://example.com/guide/", "https://example.com/guide/index",
		"https://example.com/a/b", "https://example.com/a%2Fb", "https://example.com/a_b", "https://example.com/a%5Fb2",
		"https://example.com/a%20b", "https://example.com/a+b", "https://example.com/a%2Bb2",
		"https://example.com/%2e%2e", "https://example.com/..%2F", "https://example.com/.hidden",
		"https://example.com/a~qdeadbeefdeadbeef", "https://example.com/a?x=1", "https://example.com/a?x=2",
		"https://example.com/a?x=1&y=2", "https://example.com/a?y=1&x=2", "https://example.com/a?x", "https://example.com/a?x=",
		"https://example.com/a~b", "https://example.com/a%7Eb2", "https://example.com/100%25", "https://example.com/100%2525",
		"https://example.com:8080/a", "https://example.com%3A8080/a", "https://sub.example.com/a",
		"https://example.com/" + strings.Repeat("x", 300), "https://example.com/" + strings.Repeat("x", 301),
		"https://example.com/" + strings.Repeat("x", 300) + "?q=1",
		"https://example.com/caf%C3%A9", "https://example.com/cafe%CC%81",
	}
	seen := map[string]string{}
	for _, u := range urls {
		p := extract.DocPath(u, "text/html")
		requireSafePath(t, p)
		if prev, dup := seen[p]; dup {
			t.Fatalf("%s and %s both map to %s", prev, u, p)
		}
		seen[p] = u
	}
}

func TestDocPathEquivalentSpellings(t *testing.T) {
	// Spellings of one URL that differ only in percent-encoding of
	// characters that need none, or in the case of the host, are one
	// document.
	for _, pair := range [][2]string{
		{"https://example.com/a b", "https://example.com/a%20b"},
		{"https://example.com/%41%62c", "https://example.com/Abc"},
		{"https://EXAMPLE.com/x", "https://example.com/x"},
		{"https://example.com/x?b=2&a=1", "https://example.com/x?a=1&b=2"},
	} {
		require.Equal(t, extract.DocPath(pair[0], "text/html"), extract.DocPath(pair[1], "text/html"), pair[0])
	}
}

func TestDocPathLongComponents(t *testing.T) {
	long := strings.Repeat("ü", 200) // 400 bytes, 1200 encoded
	p := extract.DocPath("https://example.com/"+long+"/"+long+"?q="+long, "application/pdf")
	requireSafePath(t, p)
	require.True(t, strings.HasSuffix(p, ".pdf"))
	for _, c := range strings.Split(p, "/") {
		require.LessOrEqual(t, len(c), 120, c)
	}
}

// requireSafePath asserts that p is a clean, relative, slash-separated path
// that stays inside the directory it is joined to.
func requireSafePath(t testing.TB, p string) {
	t.Helper()
	require.NotEmpty(t, p)
	require.True(t, utf8.ValidString(p), "%q is not UTF-8", p)
	require.False(t, path.IsAbs(p), "%q is absolute", p)
	require.Equal(t, path.Clean(p), p, "%q is not clean", p)
	require.True(t, filepath.IsLocal(filepath.FromSlash(p)), "%q escapes its root", p)
	require.NotContains(t, p, "\\")
	require.NotContains(t, p, "\x00")
	parts := strings.Split(p, "/")
	require.GreaterOrEqual(t, len(parts), 2, "%q lacks a host directory", p)
	for _, c := range parts {
		require.NotContains(t, []string{"", ".", ".."}, c, "%q has component %q", p, c)
		require.LessOrEqual(t, len(c), 120, "%q has a component longer than 120 bytes", p)
		for _, r := range c {
			require.True(t, r < 0x80 && r > 0x20, "%q has unsafe character %q", p, r)
		}
	}
}

func FuzzDocPath(f *testing.F) {
	for _, seed := range []struct{ url, ct string }{
		{"https://example.com/docs/install", "text/html"},
		{"https://example.com/../../etc/passwd", "application/pdf"},
		{"https://example.com/%2e%2e/%2f/%5c/%00", "text/plain; charset=utf-8"},
		{"https://example.com/a/b/?q=1&r=2#frag", "text/markdown"},
		{"http://[::1]:8080/a/./b/../c", ""},
		{"https://example.com/" + strings.Repeat("%C3%BC", 100), "application/json"},
		{"::not a url", "text/html"},
		{"https://..//..", "x/y"},
	} {
		f.Add(seed.url, seed.ct)
	}
	f.Fuzz(func(t *testing.T, rawURL, contentType string) {
		p := extract.DocPath(rawURL, contentType)
		requireSafePath(t, p)
		ext := path.Ext(p)
		require.Contains(t, []string{".md", ".txt", ".pdf", ".json", ".xml", ".csv", ".bin"}, ext)
		require.Equal(t, p, extract.DocPath(rawURL, contentType), "deterministic")
	})
}
