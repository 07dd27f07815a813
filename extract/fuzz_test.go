package extract_test

import (
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/require"

	"github.com/recrawl/recrawl/extract"
)

// FuzzFromHTML feeds arbitrary bytes, content types and page URLs to
// FromHTMLWithOptions: it must return a Document or one of the package's
// errors, never panic, and every Document must keep the documented
// guarantees.
func FuzzFromHTML(f *testing.F) {
	for _, tc := range goldenCases {
		body, err := os.ReadFile(filepath.Join("testdata", "golden", tc.name+".html"))
		require.NoError(f, err)
		f.Add(body, tc.url, tc.contentType)
	}
	// The generic path's pages: no rule recognises them.
	for _, tc := range genericCases {
		body, err := os.ReadFile(filepath.Join("testdata", "generic", tc.name+".html"))
		require.NoError(f, err)
		f.Add(body, "https://docs.example.org/api/"+tc.name+".html", "text/html")
	}
	for _, s := range []string{
		"", "<", "<html", "<!DOCTYPE html><title>t</title>",
		"<title>A: B</title><div class=title>B</div><div class=fragment><div class=line>x</div><div class=line>&#160;</div><div class=line>y</div></div>",
		"<h1>T</h1><p><code>a\nb</code></p><div class=\"symbol monospace\">f()</div><div class=codeblock>a<br>b</div>",
		"<code>x</code><span class=tooltip>t<span class=tooltiptext>tip</span></span><div popover>p</div><i role=tooltip>r</i>",
		"<pre><code><span class=line>a</span><span class=line>b</span></code></pre><header><h1>T</h1></header><aside>x</aside>",
		"<pre><code class=\"language-go\">x := 1<br>y := 2</code></pre>",
		"<table class=\"highlighttable\"><tr><td class=\"linenos\"><pre>1\n2</pre></td><td><pre>a\nb</pre></td></tr></table>",
		"<base href=\"javascript:alert(1)\"><a href=\"x\">x</a><link rel=canonical href=\"//[::1\">",
		"<meta charset=\"utf-16\"><p>\xff\xfe\x00x</p>",
		"<noscript>enable JavaScript</noscript><div id=root></div><script>x</script>",
		strings.Repeat("<div>", 513),
		strings.Repeat("<a href=#>x", 300),
	} {
		f.Add([]byte(s), "https://example.com/a/b?c=d", "text/html; charset=windows-1252")
	}
	f.Fuzz(func(t *testing.T, body []byte, pageURL, contentType string) {
		doc, err := extract.FromHTMLWithOptions(body, pageURL, extract.Options{ContentType: contentType, MaxBytes: 1 << 20})
		var tooLarge *extract.TooLargeError
		switch {
		case err == nil:
			require.True(t, strings.TrimSpace(doc.Markdown) != "", "accepted page without Markdown")
		case errors.Is(err, extract.ErrEmpty), errors.Is(err, extract.ErrScriptRendered):
			require.Empty(t, doc.Markdown)
		case errors.Is(err, extract.ErrPageURL), errors.Is(err, extract.ErrMalformed), errors.As(err, &tooLarge):
			require.Equal(t, extract.Document{}, doc)
			return
		default:
			t.Fatalf("unexpected error kind: %v", err)
		}
		checkDocument(t, doc)

		// With a small element limit the page is extracted the same, or it
		// is too large and only its metadata and links are read.
		small, smallErr := extract.FromHTMLWithOptions(body, pageURL, extract.Options{ContentType: contentType, MaxBytes: 1 << 20, MaxElements: 16})
		if errors.Is(smallErr, extract.ErrTooManyElements) {
			require.Empty(t, small.Markdown)
			checkDocument(t, small)
			return
		}
		require.Equal(t, fmt.Sprint(err), fmt.Sprint(smallErr))
		require.Equal(t, doc, small)
	})
}

// checkDocument asserts the guarantees of every Document: valid UTF-8,
// absolute http(s) links without fragment, no duplicate link.
func checkDocument(t *testing.T, doc extract.Document) {
	t.Helper()
	for _, s := range []string{doc.Title, doc.Markdown, doc.Canonical, doc.Lang, doc.Description} {
		require.True(t, utf8.ValidString(s), "invalid UTF-8 in %q", s)
	}
	for _, l := range append([]string{doc.Canonical}, doc.Links...) {
		if l == "" {
			continue
		}
		u, err := url.Parse(l)
		require.NoError(t, err, l)
		require.Contains(t, []string{"http", "https"}, u.Scheme, l)
		require.NotEmpty(t, u.Host, l)
		require.Empty(t, u.Fragment, l)
	}
	seen := map[string]bool{}
	for _, l := range doc.Links {
		require.False(t, seen[l], "duplicate link %s", l)
		seen[l] = true
	}
}
