package robots

import (
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// oracle builds the regular expression a rule stands for from its
// normalized pattern; RE2 runs in linear time, so it is a safe reference.
func oracle(r rule, norm string) *regexp.Regexp {
	parts := strings.Split(norm, "*")
	for i := range parts {
		parts[i] = regexp.QuoteMeta(parts[i])
	}
	expr := `(?s)^` + strings.Join(parts, `.*`)
	if r.anchored {
		expr += `$`
	}
	return regexp.MustCompile(expr)
}

func normalizedPattern(value string) string {
	value = strings.TrimSuffix(value, "$")
	if value == "" || value[0] != '/' && value[0] != '*' {
		value = "/" + value
	}
	return normalize(value, true)
}

// FuzzMatch checks the segment matcher against a regular-expression oracle.
func FuzzMatch(f *testing.F) {
	f.Add("/a*b", "/x/a/b")
	f.Add("/*.php$", "/folder/filename.php")
	f.Add("/*a*a*b$", "/aaab")
	f.Add("*", "")
	f.Add("/%7E$", "/~")
	f.Add("/fish*.php", "/fishheads/catfish.php?parameters")
	f.Fuzz(func(t *testing.T, pattern, path string) {
		r, ok := compileRule(pattern, false)
		if !ok {
			require.Empty(t, pattern)
			return
		}
		p := normalize(requestPath(path), false)
		want := oracle(r, normalizedPattern(pattern)).MatchString(p)
		require.Equal(t, want, r.match(p), "pattern %q path %q (normalized %q)", pattern, path, p)
	})
}

func TestNormalize(t *testing.T) {
	tests := []struct {
		in      string
		pattern bool
		want    string
	}{
		{"/plain/path?q=1&r=2", false, "/plain/path?q=1&r=2"},
		{"/%7e%41%2d", false, "/~A-"},
		{"/%2f%3F%e3%83%84", false, "/%2F%3F%E3%83%84"},
		{"/ツ", false, "/%E3%83%84"},
		{"/a b\t", false, "/a%20b%09"},
		{"/100%", false, "/100%25"},
		{"/%zz%4", false, "/%25zz%254"},
		{"/a*b$", false, "/a%2Ab%24"},
		{"/a*b$c", true, "/a*b%24c"},
		{"/\x7f\x00", false, "/%7F%00"},
	}
	for _, tc := range tests {
		require.Equal(t, tc.want, normalize(tc.in, tc.pattern), "normalize(%q, %v)", tc.in, tc.pattern)
		// Normal form is a fixed point.
		require.Equal(t, tc.want, normalize(tc.want, tc.pattern))
	}
}

func TestNormalizeDoesNotAllocateWhenNormal(t *testing.T) {
	s := "/docs/guide/getting-started.html?lang=en&v=%2F"
	allocs := testing.AllocsPerRun(100, func() { _ = normalize(s, false) })
	require.Zero(t, allocs)
}

func TestRequestPath(t *testing.T) {
	tests := map[string]string{
		"https://example.com/a?b#c": "/a?b",
		"https://example.com":       "/",
		"https://example.com?x":     "/?x",
		"http://u:p@h:1/x":          "/x",
		"//h/p":                     "/p",
		"/p#f":                      "/p",
		"p":                         "/p",
		"":                          "/",
		"#only":                     "/",
		"mailto:a@b":                "/mailto:a@b",
		"1http://x/y":               "/1http://x/y",
	}
	for in, want := range tests {
		require.Equal(t, want, requestPath(in), "requestPath(%q)", in)
	}
}
