package robots_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/recrawl/recrawl/robots"
)

// check is one Allowed question and its expected answer.
type check struct {
	agent string
	url   string
	want  bool
}

func runChecks(t *testing.T, body string, checks []check) {
	t.Helper()
	r := robots.Parse([]byte(body))
	for _, c := range checks {
		require.Equal(t, c.want, r.Allowed(c.agent, c.url), "Allowed(%q, %q)", c.agent, c.url)
	}
}

// RFC 9309 section 5.1, "Simple Example".
func TestRFC9309SimpleExample(t *testing.T) {
	const body = `User-Agent: *
Disallow: *.gif$
Disallow: /example/
Allow: /publications/

User-Agent: foobot
Disallow:/
Allow:/example/page.html
Allow:/example/allowed.gif

User-Agent: barbot
User-Agent: bazbot
Disallow: /example/page.html

User-Agent: quxbot

EOF
`
	runChecks(t, body, []check{
		// Any crawler without a group of its own follows "*".
		{"otherbot", "/images/cat.gif", false},
		{"otherbot", "/example/", false},
		{"otherbot", "/example/page.html", false},
		{"otherbot", "/publications/", true},
		// "Allow: /publications/" is longer than "*.gif$", so it wins.
		{"otherbot", "/publications/cat.gif", true},
		{"otherbot", "/index.html", true},
		{"otherbot", "/cat.gif?size=2", true}, // '$' anchors the pattern at the end of path+query
		// foobot may fetch only the two allowed files.
		{"foobot", "/example/page.html", true},
		{"foobot", "/example/allowed.gif", true},
		{"foobot", "/example/other.gif", false},
		{"foobot", "/publications/", false},
		{"foobot", "/", false},
		{"FooBot/2.1 (+https://foo.example/bot)", "/example/page.html", true},
		// barbot and bazbot share one group.
		{"barbot", "/example/page.html", false},
		{"barbot", "/example/", true},
		{"barbot", "/images/cat.gif", true},
		{"bazbot", "/example/page.html", false},
		{"bazbot", "/publications/", true},
		// quxbot's group has no rules: everything is allowed.
		{"quxbot", "/example/page.html", true},
		{"quxbot", "/images/cat.gif", true},
	})
}

// RFC 9309 section 5.2, "Longest Match".
func TestRFC9309LongestMatch(t *testing.T) {
	const body = `User-Agent: foobot
Allow: /example/page/
Disallow: /example/page/disallowed.gif
`
	runChecks(t, body, []check{
		{"foobot", "/example/page/", true},
		{"foobot", "/example/page/index.html", true},
		{"foobot", "/example/page/disallowed.gif", false},
		{"foobot", "/example/page/disallowed.gif?v=2", false},
		{"foobot", "/example/", true},
	})
}

// RFC 9309 section 2.2.1: groups naming the same agent are merged, and "*"
// is used only when no group names the crawler.
func TestRFC9309UserAgentSelection(t *testing.T) {
	const merged = `user-agent: ExampleBot
disallow: /foo
disallow: /bar

user-agent: ExampleBot
disallow: /baz
`
	runChecks(t, merged, []check{
		{"ExampleBot", "/foo", false},
		{"ExampleBot", "/bar", false},
		{"ExampleBot", "/baz", false},
		{"ExampleBot", "/qux", true},
	})

	const fallback = `user-agent: *
disallow: /foo
disallow: /bar

user-agent: BarBot
disallow: /baz
`
	runChecks(t, fallback, []check{
		{"ExampleBot/0.1", "/foo", false},
		{"ExampleBot/0.1", "/bar", false},
		{"ExampleBot/0.1", "/baz", true},
		{"BarBot", "/foo", true},
		{"BarBot", "/baz", false},
	})
}

// RFC 9309 section 2.2.2: the percent-encoding table.
func TestRFC9309PercentEncoding(t *testing.T) {
	tests := []struct {
		pattern string
		url     string
		want    bool // whether Disallow: pattern blocks url
	}{
		{"/foo/bar?baz=quz", "/foo/bar?baz=quz", false},
		{"/foo/bar/ツ", "/foo/bar/%E3%83%84", false},
		{"/foo/bar/ツ", "/foo/bar/ツ", false},
		{"/foo/bar/%E3%83%84", "/foo/bar/%E3%83%84", false},
		{"/foo/bar/%E3%83%84", "/foo/bar/ツ", false},
		{"/foo/bar/%e3%83%84", "/foo/bar/%E3%83%84", false},
		{"/foo/bar/%62%61%7A", "/foo/bar/baz", false},
		{"/foo/bar/baz", "/foo/bar/%62%61%7a", false},
		// Reserved characters stay encoded: %2F is not a path separator.
		{"/a%2Fb", "/a/b", true},
		{"/a/b", "/a%2fb", true},
		{"/a%2Fb", "/a%2fb", false},
		// Section 2.2.3: %2A and %24 match a literal '*' and '$' in the URL.
		{"/path/file-with-a-%2A.html", "https://www.example.com/path/file-with-a-*.html", false},
		{"/path/file-with-a-%2A.html", "/path/file-with-a-x.html", true},
		{"/path/foo-%24", "https://www.example.com/path/foo-$", false},
		{"/path/foo-%24", "/path/foo-", true},
	}
	for _, tc := range tests {
		t.Run(tc.pattern+" "+tc.url, func(t *testing.T) {
			r := robots.Parse([]byte("User-agent: *\nDisallow: " + tc.pattern + "\n"))
			require.Equal(t, tc.want, r.Allowed("bot", tc.url))
		})
	}
}

// The wildcard and end-anchor examples of RFC 9309 section 2.2.3, and the
// path-matching table published for Google's crawler, which implements the
// RFC.
func TestRFC9309SpecialCharacters(t *testing.T) {
	tests := []struct {
		pattern  string
		matching []string
		other    []string
	}{
		{"/this/*/exactly", []string{"/this/path/exactly", "/this/a/b/exactly.html"}, []string{"/this/exactly", "/that/path/exactly"}},
		{"/this/path/exactly$", []string{"/this/path/exactly"}, []string{"/this/path/exactly/", "/this/path/exactly?x=1"}},
		{"/fish", []string{"/fish", "/fish.html", "/fish/salmon.html", "/fishheads", "/fishheads/yummy.html", "/fish.php?id=anything"},
			[]string{"/Fish.asp", "/catfish", "/?id=fish", "/desert/fish"}},
		{"/fish*", []string{"/fish", "/fish.html", "/fish/salmon.html", "/fishheads", "/fish.php?id=anything"},
			[]string{"/Fish.asp", "/catfish", "/?id=fish", "/desert/fish"}},
		{"/fish/", []string{"/fish/", "/fish/?id=anything", "/fish/salmon.htm"},
			[]string{"/fish", "/fish.html", "/animals/fish/", "/Fish/Salmon.asp"}},
		{"/*.php", []string{"/index.php", "/filename.php", "/folder/filename.php", "/folder/filename.php?parameters",
			"/folder/any.php.file.html", "/filename.php/"}, []string{"/", "/windows.PHP"}},
		{"/*.php$", []string{"/filename.php", "/folder/filename.php"},
			[]string{"/filename.php?parameters", "/filename.php/", "/filename.php5", "/windows.PHP"}},
		{"/fish*.php", []string{"/fish.php", "/fishheads/catfish.php?parameters"}, []string{"/Fish.PHP"}},
	}
	for _, tc := range tests {
		t.Run(tc.pattern, func(t *testing.T) {
			r := robots.Parse([]byte("User-agent: *\nDisallow: " + tc.pattern + "\n"))
			for _, u := range tc.matching {
				require.False(t, r.Allowed("bot", u), "%q should match %q", tc.pattern, u)
			}
			for _, u := range tc.other {
				require.True(t, r.Allowed("bot", u), "%q should not match %q", tc.pattern, u)
			}
		})
	}
}

// Precedence: the longest pattern wins, Allow wins a tie.
func TestRFC9309Precedence(t *testing.T) {
	tests := []struct {
		name  string
		rules string
		url   string
		want  bool
	}{
		{"longer allow", "Allow: /p\nDisallow: /", "/page", true},
		{"equal, allow first", "Allow: /folder\nDisallow: /folder", "/folder/page", true},
		{"equal, disallow first", "Disallow: /folder\nAllow: /folder", "/folder/page", true},
		{"longer wildcard disallow", "Allow: /page\nDisallow: /*.htm", "/page.htm", false},
		{"equal with wildcard", "Allow: /page\nDisallow: /*.ph", "/page.php", true},
		{"anchored root allow", "Allow: /$\nDisallow: /", "/", true},
		{"anchored root, other page", "Allow: /$\nDisallow: /", "/page.htm", false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := robots.Parse([]byte("User-agent: *\n" + tc.rules + "\n"))
			require.Equal(t, tc.want, r.Allowed("bot", tc.url))
		})
	}
}
