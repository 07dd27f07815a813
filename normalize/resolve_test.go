package normalize_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/recrawl/recrawl/normalize"
)

func TestResolve(t *testing.T) {
	const base = "https://Example.com/docs/guide/page?x=1#top"
	cases := []struct {
		name string
		base string
		ref  string
		want string
		err  error
	}{
		{"sibling", base, "intro", "https://example.com/docs/guide/intro", nil},
		{"backslash path", base, `..\api\intro`, "https://example.com/docs/api/intro", nil},
		{"backslash root", base, `\api`, "https://example.com/api", nil},
		{"backslash scheme-relative", base, `\\Other.example\x`, "https://other.example/x", nil},
		{"backslash in ref's query", base, `a\b?c\d`, "https://example.com/docs/guide/a/b?c%5Cd", nil},
		{"backslash in base path", `https://example.com\docs\guide\page`, "intro", "https://example.com/docs/guide/intro", nil},
		{"dot slash", base, "./intro", "https://example.com/docs/guide/intro", nil},
		{"parent", base, "../a", "https://example.com/docs/a", nil},
		{"grandparent", base, "../../a", "https://example.com/a", nil},
		{"above root", base, "../../../../a", "https://example.com/a", nil},
		{"parent dir", base, "..", "https://example.com/docs", nil},
		{"current dir", base, ".", "https://example.com/docs/guide", nil},
		{"absolute path", base, "/x/y/", "https://example.com/x/y", nil},
		{"query only", base, "?q=2&utm_source=feed", "https://example.com/docs/guide/page?q=2", nil},
		{"empty query", base, "?", "https://example.com/docs/guide/page", nil},
		{"fragment only", base, "#frag", "https://example.com/docs/guide/page?x=1", nil},
		{"empty ref", base, "", "https://example.com/docs/guide/page?x=1", nil},
		{"scheme-relative", base, "//Other.example/x", "https://other.example/x", nil},
		{"scheme-relative root", base, "//other.example", "https://other.example/", nil},
		{"absolute", base, "http://other.example:80/x/../y?b=1&a=2#f", "http://other.example/y?a=2&b=1", nil},
		{"same scheme no authority", base, "https:intro", "https://example.com/docs/guide/intro", nil},
		{"trimmed ref", base, "\n  intro  \n", "https://example.com/docs/guide/intro", nil},
		{"space in ref", base, "my page.html", "https://example.com/docs/guide/my%20page.html", nil},
		{"non-ASCII ref", base, "ü?q=é", "https://example.com/docs/guide/%C3%BC?q=%C3%A9", nil},
		{"base with trailing slash", "https://example.com/docs/", "intro", "https://example.com/docs/intro", nil},
		{"normalized base loses directory", "https://example.com/docs", "intro", "https://example.com/intro", nil},
		{"base without path", "https://example.com", "intro", "https://example.com/intro", nil},
		{"base without path query", "https://example.com", "?a=1", "https://example.com/?a=1", nil},
		{"IDN ref host", base, "//bücher.example/", "https://xn--bcher-kva.example/", nil},

		{"mailto", base, "mailto:a@example.com", "", normalize.ErrScheme},
		{"javascript", base, "javascript:void(0)", "", normalize.ErrScheme},
		{"other scheme no authority", base, "http:intro", "", normalize.ErrHost},
		{"bad ref host", base, "//exa mple.com/", "", normalize.ErrHost},
		{"ref userinfo", base, "//u:p@example.com/", "", normalize.ErrUserinfo},
		{"ref control", base, "a\x00b", "", normalize.ErrParse},
		{"relative base", "/docs/", "intro", "", normalize.ErrScheme},
		{"ftp base", "ftp://example.com/", "intro", "", normalize.ErrScheme},
		{"base control", "https://example.com/\x01", "intro", "", normalize.ErrParse},
		{"base bad host", "https://exa mple.com/", "intro", "", normalize.ErrHost},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, err := normalize.Resolve(tc.base, tc.ref)
			if tc.err != nil {
				require.ErrorIs(t, err, tc.err, "got %q", got)
				var ne *normalize.Error
				require.ErrorAs(t, err, &ne)
				require.Equal(t, tc.ref, ne.Raw)
				require.Equal(t, tc.base, ne.Base)
				return
			}
			require.NoError(t, err)
			require.Equal(t, tc.want, got)
			again, err := normalize.URL(got)
			require.NoError(t, err)
			require.Equal(t, got, again, "Resolve output is not normalized")
		})
	}
}

// The normal and abnormal examples of RFC 3986 section 5.4, normalized.
// Where the RFC's answer keeps a trailing slash, the default policy drops
// it, so the policy under test keeps trailing slashes and the fragment.
func TestResolveRFC3986Examples(t *testing.T) {
	p := normalize.Policy{KeepTrailingSlash: true, KeepFragment: true}
	const base = "http://a/b/c/d;p?q"
	cases := map[string]string{
		"g":             "http://a/b/c/g",
		"./g":           "http://a/b/c/g",
		"g/":            "http://a/b/c/g/",
		"/g":            "http://a/g",
		"//g":           "http://g/",
		"?y":            "http://a/b/c/d;p?y",
		"g?y":           "http://a/b/c/g?y",
		"#s":            "http://a/b/c/d;p?q#s",
		"g#s":           "http://a/b/c/g#s",
		"g?y#s":         "http://a/b/c/g?y#s",
		";x":            "http://a/b/c/;x",
		"g;x":           "http://a/b/c/g;x",
		"g;x?y#s":       "http://a/b/c/g;x?y#s",
		"":              "http://a/b/c/d;p?q",
		".":             "http://a/b/c/",
		"./":            "http://a/b/c/",
		"..":            "http://a/b/",
		"../":           "http://a/b/",
		"../g":          "http://a/b/g",
		"../..":         "http://a/",
		"../../":        "http://a/",
		"../../g":       "http://a/g",
		"../../../g":    "http://a/g",
		"../../../../g": "http://a/g",
		"/./g":          "http://a/g",
		"/../g":         "http://a/g",
		"g.":            "http://a/b/c/g.",
		".g":            "http://a/b/c/.g",
		"g..":           "http://a/b/c/g..",
		"..g":           "http://a/b/c/..g",
		"./../g":        "http://a/b/g",
		"./g/.":         "http://a/b/c/g/",
		"g/./h":         "http://a/b/c/g/h",
		"g/../h":        "http://a/b/c/h",
		"g;x=1/./y":     "http://a/b/c/g;x=1/y",
		"g;x=1/../y":    "http://a/b/c/y",
		"g?y/./x":       "http://a/b/c/g?y/./x",
		"g?y/../x":      "http://a/b/c/g?y/../x",
		"g#s/./x":       "http://a/b/c/g#s/./x",
		"g#s/../x":      "http://a/b/c/g#s/../x",
		"http:g":        "http://a/b/c/g", // the RFC's non-strict reading, as browsers do
	}
	for ref, want := range cases {
		got, err := p.Resolve(base, ref)
		require.NoError(t, err, ref)
		require.Equal(t, want, got, "ref %q", ref)
	}
}
