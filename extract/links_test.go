package extract

import (
	"net/url"
	"testing"

	"github.com/stretchr/testify/require"
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
