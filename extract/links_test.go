package extract

import (
	"bytes"
	"net/url"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"golang.org/x/net/html"
	"golang.org/x/net/html/atom"
)

// absoluteHref is what absolutizeLinks writes for href without known
// resolutions: the resolved URL with its fragment, ok false for an href
// it removes.
func absoluteHref(base *url.URL, href string) (string, bool) {
	u, ok := resolveRef(base, href)
	if !ok || !(isHTTP(u) || u.Scheme == "mailto" && u.Opaque != "") {
		return "", false
	}
	return u.String(), true
}

// checkLinkShortcuts: resolving an href by its linkKey gives what
// resolving the href gives, and withFragment on that gives the href's
// absolute URL with fragment.
func checkLinkShortcuts(t *testing.T, base *url.URL, href string) {
	want, wantOK := resolve(base, href)
	got, gotOK := resolve(base, linkKey(href))
	require.Equal(t, wantOK, gotOK, "%q against %s", href, base)
	require.Equal(t, want, got, "%q against %s", href, base)
	if got == "" || base.Fragment != "" || base.RawFragment != "" {
		return // absolutizeLinks resolves in full
	}
	if abs, ok := withFragment(got, href); ok {
		full, fullOK := absoluteHref(base, href)
		require.True(t, fullOK, "%q against %s", href, base)
		require.Equal(t, full, abs, "%q against %s", href, base)
	}
}

var linkBases = []string{
	"https://docs.example.org/guide/page.html",
	"https://docs.example.org/a/b/../c/page.html?q=1",
	"https://docs.example.org/a/b/../c/page.html?q=1#top",
	"http://example.com",
	"https://user@example.com:8080/x/?#",
}

func TestLinkShortcuts(t *testing.T) {
	for _, b := range linkBases {
		base, err := url.Parse(b)
		require.NoError(t, err)
		for _, href := range []string{
			"#", "#x", "page#x", "page#", "page#%zz", "page#%41", "page#a b", "page#é", " page#x ",
			"\tpa\nge#x\r", "//other.org/p#x", "mailto:a@b.c#x", "?q#x", "../p?x=1#y", "javascript:x#y",
			"p#x#y", "http://[::1/#x", "p%zz#x", "#x%", "  #y", "../../../../p#z", "./a:b#c", "HTTPS://X.ORG/P#Q",
			"p?#x", "ftp://h/p#x", "#\u00a0", "p#x\u00a0", "//", "//#", "///", " // ", "//?#",
		} {
			checkLinkShortcuts(t, base, href)
		}
	}
}

func FuzzLinkShortcuts(f *testing.F) {
	for i := range linkBases {
		f.Add(i, "page#x")
		f.Add(i, "#")
		f.Add(i, "../a/b?c=d#e%20f")
	}
	f.Fuzz(func(t *testing.T, i int, href string) {
		base, err := url.Parse(linkBases[(i%len(linkBases)+len(linkBases))%len(linkBases)])
		require.NoError(t, err)
		checkLinkShortcuts(t, base, href)
	})
}

// unwrapHeadingLinks, the pass fixContainerLinks does first, replaces in-page links wrapping heading text (mdBook,
// Hugo) by their text: the heading is the anchor's target, not a link.
func unwrapHeadingLinks(root *html.Node) {
	var links []*html.Node
	walk(root, func(n *html.Node) bool {
		switch n.DataAtom {
		case atom.H1, atom.H2, atom.H3, atom.H4, atom.H5, atom.H6:
			if n.Type == html.ElementNode {
				walk(n, func(a *html.Node) bool {
					if isElement(a, atom.A) && strings.HasPrefix(strings.TrimSpace(attr(a, "href")), "#") {
						links = append(links, a)
					}
					return true
				})
				return false
			}
		}
		return true
	})
	for _, a := range links {
		removeAttr(a, "href")
	}
}

// fixContainerLinks does what its three passes do: on every test page's
// cleaned container, against a base with and without fragment.
func TestFixContainerLinks(t *testing.T) {
	pages := spacePages(t)
	for i, p := range pages {
		if (raceBuild || testing.Short()) && i%4 != 0 {
			continue
		}
		for _, pageURL := range []string{p.url, p.url + "#top"} {
			var got [2]string
			for k := range got {
				doc, err := html.Parse(bytes.NewReader(decode(p.html, "")))
				require.NoError(t, err)
				page, err := url.Parse(pageURL)
				require.NoError(t, err)
				scan := scanPage(doc)
				base := scan.baseURL(page)
				scan.document(page)
				restoreTextTags(scan.accidents)
				sel, ok := chooseContainer(doc, nil, scan)
				if !ok {
					break
				}
				c := sel.container
				cleanContainer(c, sel.rule)
				leadWithH1(c)
				normalizeCode(c)
				if k == 0 {
					unwrapHeadingLinks(c)
					absolutizeLinks(c, base, scan.resolved)
					unwrapBareLinks(c)
				} else {
					fixContainerLinks(c, base, scan.resolved)
				}
				var b strings.Builder
				require.NoError(t, html.Render(&b, c))
				got[k] = b.String()
			}
			require.Equal(t, got[0], got[1], "%s at %s", p.name, pageURL)
		}
	}
}

// resolverBases are bases for linkResolver: plain paths, an empty path,
// paths the shortcut leaves to url.Parse (escapes, dot segments, "//"),
// queries, fragments and user info.
var resolverBases = append([]string{
	"https://docs.example.org/guide/",
	"https://docs.example.org/guide/intro",
	"https://Docs.Example.org/a/b/c.html?x=1#frag",
	"https://docs.example.org",
	"https://docs.example.org?q",
	"https://docs.example.org/a%20b/c",
	"https://docs.example.org/a/./b/../c/",
	"https://docs.example.org//x/y",
	"https://user:pw@docs.example.org/p/q",
	"http://127.0.0.1:8080/~u/(x)/a,b;c=d/",
	"https://xn--bcher-kva.example/é/",
}, linkBases...)

// resolverHrefs are the shapes linkResolver resolves itself and their near
// misses.
var resolverHrefs = []string{
	"", "#", "#x", "?", "?q", "??", "/", "//", "///", ".", "..", "./", "../", "/.", "/..", "/./", "/../",
	"a", "a/", "a/b", "a#", "a?", "a?b", "a??b?", "a?b#", "a?b#c", "a b", "a%20b", "a%2f", "a\tb", " a",
	"/a", "/a/", "/a//b", "/a/./b", "/a/../b", "/a/b/..", "/a/b/.", "/../../a", "/a?x=1&y=2", "/a?x=%zz",
	"../a", "../../a/b/", "./a", "././a", "a/../../b", "a/.", "a/..", ".a", "..a", "a..", "a/.b/..c",
	"~u/(x)*!$&'+,;=:@", "a:b", "a/b:c", "1a:b", "+a:b", "mailto:x@y.z", "javascript:void(0)", "tel:+1",
	"http://h", "http://h/", "https://h/a/../b?c#", "https://h?x", "https://h#", "HTTP://h/a", "http:/h/a",
	"http://h:80/a", "http://u@h/a", "http://[::1]/a", "http://h%41/a", "http://h_x/a", "http://h/a b",
	"https:", "https:/", "https://", "https:///a", "http://h/é", "/é", "é", "a?é", "/a\x7f", "a\x00",
	"*", "/*", "a/*", "[x]", "/a[b]", "a#b#", "/a#%zz", "//h/a", "\\a", "/a\\b",
}

// linkResolver resolves every href as resolve does, against every base.
func TestLinkResolver(t *testing.T) {
	for _, b := range resolverBases {
		base, err := url.Parse(b)
		require.NoError(t, err)
		r := newLinkResolver(base)
		shortcuts := 0
		for _, href := range resolverHrefs {
			checkLinkResolver(t, r, href)
			if _, ok := r.shortcut(href); ok {
				shortcuts++
			}
		}
		if r.plain {
			require.Greater(t, shortcuts, 20, "the shortcut serves few hrefs against %s", b)
		}
	}
}

func checkLinkResolver(t *testing.T, r *linkResolver, href string) {
	t.Helper()
	want, wantOK := resolve(r.base, href)
	got, gotOK := r.resolve(href)
	require.Equal(t, wantOK, gotOK, "%q against %s", href, r.base)
	require.Equal(t, want, got, "%q against %s", href, r.base)
}

func FuzzLinkResolver(f *testing.F) {
	for i := range resolverBases {
		for _, h := range resolverHrefs[:20] {
			f.Add(i, h)
		}
	}
	f.Add(0, "../a/./b/../c?d=e#")
	f.Add(2, "https://h/a/../b")
	f.Fuzz(func(t *testing.T, i int, href string) {
		base, err := url.Parse(resolverBases[(i%len(resolverBases)+len(resolverBases))%len(resolverBases)])
		require.NoError(t, err)
		checkLinkResolver(t, newLinkResolver(base), href)
	})
}
