package robots_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/recrawl/recrawl/robots"
)

func TestEdgeCases(t *testing.T) {
	tests := []struct {
		name   string
		body   string
		checks []check
	}{
		{
			name: "several user-agent lines form one group",
			body: "User-agent: a\nUser-agent: b\nDisallow: /x\n\nUser-agent: c\nDisallow: /y\n",
			checks: []check{
				{"a", "/x", false}, {"b", "/x", false}, {"a", "/y", true},
				{"c", "/y", false}, {"c", "/x", true},
			},
		},
		{
			name: "a user-agent line after a rule starts a new group",
			body: "User-agent: a\nDisallow: /x\nUser-agent: b\nDisallow: /y\n",
			checks: []check{
				{"a", "/x", false}, {"a", "/y", true},
				{"b", "/y", false}, {"b", "/x", true},
			},
		},
		{
			name: "groups of the same agent merge, wherever they are",
			body: "User-agent: a\nDisallow: /x\n\nUser-agent: *\nDisallow: /\n\nUser-agent: A\nDisallow: /y\n",
			checks: []check{
				{"a", "/x", false}, {"a", "/y", false}, {"a", "/z", true},
				{"other", "/z", false},
			},
		},
		{
			name:   "several star groups merge",
			body:   "User-agent: *\nDisallow: /x\n\nUser-agent: *\nDisallow: /y\n",
			checks: []check{{"bot", "/x", false}, {"bot", "/y", false}, {"bot", "/z", true}},
		},
		{
			name: "a specific group replaces star entirely",
			body: "User-agent: *\nDisallow: /\n\nUser-agent: recrawl\nDisallow: /private/\n",
			checks: []check{
				{"recrawl/1.0 (+https://example.com/bot)", "/public", true},
				{"recrawl/1.0", "/private/x", false},
				{"otherbot", "/public", false},
			},
		},
		{
			name:   "no groups at all allows everything",
			body:   "# nothing here\nSitemap: https://example.com/s.xml\n",
			checks: []check{{"bot", "/", true}, {"bot", "/a", true}},
		},
		{
			name:   "no star group and no matching group allows everything",
			body:   "User-agent: other\nDisallow: /\n",
			checks: []check{{"bot", "/a", true}, {"other", "/a", false}},
		},
		{
			name: "agent tokens match whole, not by prefix",
			body: "User-agent: my\nDisallow: /a\n\nUser-agent: mybotx\nDisallow: /b\n\nUser-agent: *\nDisallow: /c\n",
			checks: []check{
				{"mybot", "/a", true}, {"mybot", "/b", true}, {"mybot", "/c", false},
				{"my", "/a", false}, {"my/2.0", "/a", false},
				{"mybotx", "/b", false},
			},
		},
		{
			name: "agent tokens are case-insensitive; versions in the file are ignored",
			body: "User-agent: ReCrawl/2.0\nDisallow: /a\n",
			checks: []check{
				{"recrawl", "/a", false}, {"RECRAWL/1.0", "/a", false}, {"recrawler", "/a", true},
			},
		},
		{
			name:   "star with a trailing remark is still star",
			body:   "User-agent: * everyone\nDisallow: /a\n",
			checks: []check{{"bot", "/a", false}},
		},
		{
			name:   "an empty user agent gets the star group",
			body:   "User-agent: *\nDisallow: /a\n",
			checks: []check{{"", "/a", false}, {"  ", "/b", true}},
		},
		{
			name: "empty Disallow allows everything for its group",
			body: "User-agent: friend\nDisallow:\n\nUser-agent: *\nDisallow: /\n",
			checks: []check{
				{"friend", "/", true}, {"friend", "/anything", true}, {"stranger", "/anything", false},
			},
		},
		{
			name:   "empty Allow is ignored",
			body:   "User-agent: *\nAllow:\nDisallow: /a\n",
			checks: []check{{"bot", "/a", false}, {"bot", "/b", true}},
		},
		{
			name: "paths are case-sensitive",
			body: "User-agent: *\nDisallow: /Private\n",
			checks: []check{
				{"bot", "/Private/x", false}, {"bot", "/private/x", true},
			},
		},
		{
			name: "a wildcard rule does not match mid-path",
			body: "User-agent: *\nDisallow: /a*b\n",
			checks: []check{
				{"bot", "/x/a/b", true}, {"bot", "/a/b", false}, {"bot", "/ab", false}, {"bot", "/axxxb/c", false},
			},
		},
		{
			name: "leading wildcard and repeated wildcards",
			body: "User-agent: *\nDisallow: *private\nDisallow: /**/draft$\n",
			checks: []check{
				{"bot", "/a/private/b", false}, {"bot", "/private", false},
				{"bot", "/a/b/draft", false}, {"bot", "/a/b/draft/", true}, {"bot", "/draft", true},
			},
		},
		{
			name: "anchor after wildcard needs the last literal at the very end",
			body: "User-agent: *\nDisallow: /*.pdf$\n",
			checks: []check{
				{"bot", "/a.pdf", false}, {"bot", "/a.pdf.pdf", false}, {"bot", "/a.pdf.html", true},
				{"bot", "/.pdf", false}, {"bot", "/a.pdf?x", true},
			},
		},
		{
			name: "a '$' inside a pattern is literal",
			body: "User-agent: *\nDisallow: /price$list\n",
			checks: []check{
				{"bot", "/price$list", false}, {"bot", "/price%24list/x", false}, {"bot", "/price", true},
			},
		},
		{
			name:   "Allow/Disallow tie does not depend on line order",
			body:   "User-agent: a\nDisallow: /x\nAllow: /x\n\nUser-agent: b\nAllow: /x\nDisallow: /x\n",
			checks: []check{{"a", "/x", true}, {"b", "/x", true}},
		},
		{
			name: "tie with wildcards counts octets, '*' and '$' included",
			body: "User-agent: *\nDisallow: /*.gif$\nAllow: /img/\n",
			checks: []check{
				{"bot", "/img/a.gif", false}, // 7 octets beat 5
				{"bot", "/img/a.png", true},
			},
		},
		{
			name: "query strings take part in matching",
			body: "User-agent: *\nDisallow: /*?sort=\nDisallow: /search?\n",
			checks: []check{
				{"bot", "/list?sort=asc", false}, {"bot", "/list?page=2", true},
				{"bot", "/search?q=go", false}, {"bot", "/search", true},
			},
		},
		{
			name: "percent-encoding in patterns and URLs is normalized",
			body: "User-agent: *\nDisallow: /caf%C3%A9\nDisallow: /%7Euser/\nDisallow: /a%2fb\nDisallow: /sp ace\n",
			checks: []check{
				{"bot", "/café/menu", false}, {"bot", "/caf%c3%a9/menu", false},
				{"bot", "/~user/x", false}, {"bot", "/%7euser/x", false},
				{"bot", "/a%2Fb", false}, {"bot", "/a/b", true},
				{"bot", "/sp%20ace", false}, {"bot", "/sp ace", false},
			},
		},
		{
			name:   "a stray percent sign compares as %25",
			body:   "User-agent: *\nDisallow: /100%\n",
			checks: []check{{"bot", "/100%25", false}, {"bot", "/100%", false}, {"bot", "/100", true}},
		},
		{
			name:   "directive names in any case, values trimmed",
			body:   "USER-AGENT: Bot\nDISALLOW:    /a   \nallow:/a/b\n",
			checks: []check{{"bot", "/a/x", false}, {"bot", "/a/b", true}},
		},
		{
			name: "common misspellings are accepted",
			body: "useragent: a\ndisalow: /1\ndissallow: /2\ndissalow: /3\ndisallaw: /4\ndiasllow: /5\n\nuser agent: b\nDisallow: /6\n",
			checks: []check{
				{"a", "/1", false}, {"a", "/2", false}, {"a", "/3", false}, {"a", "/4", false}, {"a", "/5", false},
				{"a", "/6", true}, {"b", "/6", false},
			},
		},
		{
			name:   "a missing colon is accepted when the line is a name and one value",
			body:   "User-agent *\nDisallow /tmp\nDisallow /a /b\n",
			checks: []check{{"bot", "/tmp/x", false}, {"bot", "/a", true}, {"bot", "/b", true}},
		},
		{
			name:   "a pattern without a leading slash gets one",
			body:   "User-agent: *\nDisallow: private\n",
			checks: []check{{"bot", "/private/x", false}, {"bot", "/x/private", true}},
		},
		{
			name:   "comments anywhere",
			body:   "# header\nUser-agent: * # everyone\nDisallow: /a # not /b\n#Disallow: /c\n",
			checks: []check{{"bot", "/a", false}, {"bot", "/b", true}, {"bot", "/c", true}},
		},
		{
			name:   "rules before the first user-agent are ignored",
			body:   "Disallow: /\nAllow: /x\n\nUser-agent: *\nDisallow: /a\n",
			checks: []check{{"bot", "/", true}, {"bot", "/b", true}, {"bot", "/a", false}},
		},
		{
			name:   "unknown directives and garbage do not reject the file",
			body:   "User-agent: *\nNoindex: /a\n<html><body>\n\x00\xff\xfe garbage : \xff\nHost: example.com\nClean-param: ref /b\nDisallow: /c\n:\n::::\nDisallow\n",
			checks: []check{{"bot", "/a", true}, {"bot", "/b", true}, {"bot", "/c", false}},
		},
		{
			name:   "unknown directives and sitemaps do not end the user-agent run",
			body:   "User-agent: a\nSitemap: https://example.com/s.xml\nHost: x\nUser-agent: b\nDisallow: /x\n",
			checks: []check{{"a", "/x", false}, {"b", "/x", false}},
		},
		{
			name:   "BOM",
			body:   "\xef\xbb\xbfUser-agent: *\nDisallow: /a\n",
			checks: []check{{"bot", "/a", false}},
		},
		{
			name:   "CRLF line ends",
			body:   "User-agent: *\r\nDisallow: /a\r\nAllow: /a/b\r\n",
			checks: []check{{"bot", "/a", false}, {"bot", "/a/b", true}},
		},
		{
			name:   "CR line ends",
			body:   "User-agent: *\rDisallow: /a\rAllow: /a/b\r",
			checks: []check{{"bot", "/a", false}, {"bot", "/a/b", true}},
		},
		{
			name:   "no final line end",
			body:   "User-agent: *\nDisallow: /a",
			checks: []check{{"bot", "/a", false}},
		},
		{
			name: "robots.txt itself is always allowed",
			body: "User-agent: *\nDisallow: /\n",
			checks: []check{
				{"bot", "/robots.txt", true}, {"bot", "https://example.com/robots.txt", true},
				{"bot", "/robots.txt?x=1", true}, {"bot", "/robots%2Etxt", true},
				{"bot", "/robots.txt/x", false}, {"bot", "/robots.txt.bak", false}, {"bot", "/", false},
			},
		},
		{
			name: "absolute, scheme-relative and relative URLs",
			body: "User-agent: *\nDisallow: /a\nDisallow: /$\nAllow: /?\n",
			checks: []check{
				{"bot", "https://example.com/a/b?c#frag", false},
				{"bot", "HTTPS://Example.COM:8443/a", false},
				{"bot", "https://example.com", false}, // empty path is "/"
				{"bot", "https://example.com?q=1", true},
				{"bot", "//example.com/a", false},
				{"bot", "a/b", false},
				{"bot", "/b#/a", true},
				{"bot", "", false},
			},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			runChecks(t, tc.body, tc.checks)
		})
	}
}

// The behaviours in which temoto/robotstxt departs from RFC 9309, each pinned.
func TestTemotoRegressions(t *testing.T) {
	t.Run("wildcard does not match mid-path", func(t *testing.T) {
		r := robots.Parse([]byte("User-agent: *\nDisallow: /a*b\n"))
		require.True(t, r.Allowed("bot", "/x/a/b"))
		require.False(t, r.Allowed("bot", "/a/b"))
	})
	t.Run("tie does not depend on line order", func(t *testing.T) {
		for _, body := range []string{"Allow: /p\nDisallow: /p\n", "Disallow: /p\nAllow: /p\n"} {
			r := robots.Parse([]byte("User-agent: *\n" + body))
			require.True(t, r.Allowed("bot", "/p/q"), body)
		}
	})
	t.Run("one malformed line does not reject the file", func(t *testing.T) {
		r := robots.Parse([]byte("User-agent: *\nCrawl-delay: soon\nDisallow /a /b /c\nDisallow: /secret\n"))
		require.False(t, r.Allowed("bot", "/secret"))
	})
	t.Run("groups do not match by prefix", func(t *testing.T) {
		r := robots.Parse([]byte("User-agent: my\nDisallow: /\n"))
		require.True(t, r.Allowed("mybot", "/x"))
		require.False(t, r.Allowed("my", "/x"))
	})
	t.Run("paths are percent-normalized", func(t *testing.T) {
		r := robots.Parse([]byte("User-agent: *\nDisallow: /%7Ea\n"))
		require.False(t, r.Allowed("bot", "/~a"))
	})
	t.Run("robots.txt is implicitly allowed", func(t *testing.T) {
		r := robots.Parse([]byte("User-agent: *\nDisallow: /\n"))
		require.True(t, r.Allowed("bot", "/robots.txt"))
	})
	t.Run("the parse has a size limit", func(t *testing.T) {
		body := "User-agent: *\n" + strings.Repeat("#\n", robots.MaxSize/2) + "Disallow: /\n"
		r := robots.Parse([]byte(body))
		require.True(t, r.Truncated())
		require.True(t, r.Allowed("bot", "/x"))
	})
}

func TestSizeLimit(t *testing.T) {
	head := "User-agent: *\nDisallow: /kept\n"
	pad := func(n int) string { return "#" + strings.Repeat("x", n-2) + "\n" }

	t.Run("exactly MaxSize is read whole", func(t *testing.T) {
		tail := "Disallow: /last"
		body := head + pad(robots.MaxSize-len(head)-len(tail)) + tail
		require.Len(t, body, robots.MaxSize)
		r := robots.Parse([]byte(body))
		require.False(t, r.Truncated())
		require.False(t, r.Allowed("bot", "/last"))
	})
	t.Run("a line cut by the limit is dropped", func(t *testing.T) {
		tail := "Disallow: /cut-here-and-more\n"
		body := head + pad(robots.MaxSize-len(head)-10) + tail
		r := robots.Parse([]byte(body))
		require.True(t, r.Truncated())
		require.False(t, r.Allowed("bot", "/kept"))
		// Half of the line would read "Disallow:" (allow everything) or
		// "Disallow: /c" (too much); neither may be obeyed.
		require.True(t, r.Allowed("bot", "/cut-here-and-more"))
		require.True(t, r.Allowed("bot", "/c"))
	})
	t.Run("a line ending exactly at the limit is kept", func(t *testing.T) {
		tail := "Disallow: /edge"
		body := head + pad(robots.MaxSize-len(head)-len(tail)) + tail + "\nDisallow: /after\n"
		r := robots.Parse([]byte(body))
		require.True(t, r.Truncated())
		require.False(t, r.Allowed("bot", "/edge"))
		require.True(t, r.Allowed("bot", "/after"))
	})
	t.Run("a huge single line is dropped", func(t *testing.T) {
		body := head + "Disallow: /" + strings.Repeat("a", 2*robots.MaxSize)
		r := robots.Parse([]byte(body))
		require.True(t, r.Truncated())
		require.False(t, r.Allowed("bot", "/kept"))
		require.True(t, r.Allowed("bot", "/a"))
	})
}

func TestCrawlDelay(t *testing.T) {
	tests := []struct {
		name  string
		body  string
		agent string
		max   time.Duration
		want  time.Duration
	}{
		{"absent", "User-agent: *\nDisallow: /a\n", "bot", 0, 0},
		{"whole seconds", "User-agent: *\nCrawl-delay: 5\n", "bot", 0, 5 * time.Second},
		{"fraction", "User-agent: *\nCrawl-delay: 0.5\n", "bot", 0, 500 * time.Millisecond},
		{"zero", "User-agent: *\nCrawl-delay: 0\n", "bot", 0, 0},
		{"capped at the default", "User-agent: *\nCrawl-delay: 86400\n", "bot", 0, robots.DefaultMaxCrawlDelay},
		{"capped at a chosen cap", "User-agent: *\nCrawl-delay: 30\n", "bot", 10 * time.Second, 10 * time.Second},
		{"raised cap", "User-agent: *\nCrawl-delay: 90\n", "bot", 5 * time.Minute, 90 * time.Second},
		{"astronomic value", "User-agent: *\nCrawl-delay: 1e300\n", "bot", 0, robots.DefaultMaxCrawlDelay},
		{"beyond float64", "User-agent: *\nCrawl-delay: 1e400\n", "bot", 0, robots.DefaultMaxCrawlDelay},
		{"negative ignored", "User-agent: *\nCrawl-delay: -3\n", "bot", 0, 0},
		{"garbage ignored", "User-agent: *\nCrawl-delay: soon\nCrawl-delay: NaN\nCrawl-delay: Inf\n", "bot", 0, 0},
		{"unit word tolerated", "User-agent: *\nCrawl-delay: 2 seconds\n", "bot", 0, 2 * time.Second},
		{"largest of several", "User-agent: *\nCrawl-delay: 2\nCrawl-delay: 7\nCrawl-delay: 3\n", "bot", 0, 7 * time.Second},
		{"merged groups: largest", "User-agent: a\nCrawl-delay: 2\n\nUser-agent: a\nCrawl-delay: 4\n", "a", 0, 4 * time.Second},
		{"group of the agent", "User-agent: *\nCrawl-delay: 9\n\nUser-agent: a\nCrawl-delay: 1\n", "a", 0, time.Second},
		{"specific group without delay does not inherit star", "User-agent: *\nCrawl-delay: 9\n\nUser-agent: a\nDisallow: /x\n", "a", 0, 0},
		{"star for others", "User-agent: *\nCrawl-delay: 9\n\nUser-agent: a\nCrawl-delay: 1\n", "b", 0, 9 * time.Second},
		{"outside a group ignored", "Crawl-delay: 9\nUser-agent: *\nDisallow: /\n", "b", 0, 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := robots.Parse([]byte(tc.body))
			r.MaxCrawlDelay = tc.max
			require.Equal(t, tc.want, r.CrawlDelay(tc.agent))
		})
	}
}

func TestSitemaps(t *testing.T) {
	body := `Sitemap: https://example.com/a.xml
User-agent: *
Sitemap: https://example.com/b.xml
Disallow: /x
sitemap:https://example.com/a.xml
SITE-MAP : https://example.com/c.xml
Sitemap:
Sitemap: https://example.com/b.xml # again
`
	r := robots.Parse([]byte(body))
	require.Equal(t, []string{"https://example.com/a.xml", "https://example.com/b.xml", "https://example.com/c.xml"}, r.Sitemaps())
	// Sitemap lines are not group members: the group still holds its rule.
	require.False(t, r.Allowed("bot", "/x"))
	// The returned slice is a copy.
	s := r.Sitemaps()
	s[0] = "changed"
	require.Equal(t, "https://example.com/a.xml", r.Sitemaps()[0])

	require.Nil(t, robots.Parse([]byte("User-agent: *\nDisallow:\n")).Sitemaps())
}

func TestNilAndAllowAll(t *testing.T) {
	for name, r := range map[string]*robots.Rules{"nil": nil, "AllowAll": robots.AllowAll(), "empty": robots.Parse(nil)} {
		t.Run(name, func(t *testing.T) {
			require.True(t, r.Allowed("bot", "/anything"))
			require.True(t, r.Allowed("", ""))
			require.Zero(t, r.CrawlDelay("bot"))
			require.Nil(t, r.Sitemaps())
			require.False(t, r.Truncated())
		})
	}
}

// Real robots.txt bodies from the shared corpus (see testdata/README.md).
func TestCorpusFiles(t *testing.T) {
	const host = "http://test_ultimate-sitemap-parser.com"
	tests := []struct {
		file     string
		sitemaps []string
		checks   []check
	}{
		{"usp_site_map_typo.txt", []string{host + "/sitemap_pages.xml", host + "/sitemap_news_index_1.xml"},
			[]check{{"bot", "/whatever", false}, {"bot", "/whatever/x", false}, {"bot", "/", true}}},
		{"usp_utf8_bom.txt", []string{host + "/sitemap.xml"},
			[]check{{"bot", "/whatever", false}, {"bot", "/other", true}}},
		{"usp_weird_spacing.txt", []string{host + "/sitemap.xml"},
			[]check{{"bot", "/whatever", true}}},
		{"usp_html_404.txt", nil,
			[]check{{"bot", "/", true}, {"bot", "/whatever", true}}},
		{"usp_four_sitemaps.txt", []string{host + "/sitemap_1.gz", host + "/sitemap_2.dat", host + "/sitemap_3.xml.gz", host + "/sitemap_4.xml"},
			[]check{{"bot", "/whatever", false}}},
	}
	for _, tc := range tests {
		t.Run(tc.file, func(t *testing.T) {
			body, err := os.ReadFile(filepath.Join("testdata", tc.file))
			require.NoError(t, err)
			r := robots.Parse(body)
			require.Equal(t, tc.sitemaps, r.Sitemaps())
			for _, c := range tc.checks {
				require.Equal(t, c.want, r.Allowed(c.agent, c.url), "Allowed(%q, %q)", c.agent, c.url)
			}
		})
	}
}

// Patterns built to make a backtracking matcher explode. The matcher scans
// each '*'-separated literal once, so these finish in microseconds; a
// backtracking implementation would not finish before the test timeout.
// BenchmarkAllowedPathological measures the same inputs.
func TestPathologicalPatterns(t *testing.T) {
	long := "/" + strings.Repeat("a", 1<<20)
	tests := []struct {
		pattern string
		url     string
		want    bool
	}{
		{"/*a*a*a*a*a*b", long, true},
		{"/*a*a*a*a*a*a", long, false},
		{"/" + strings.Repeat("*a", 2000) + "*b", long, true},
		{"/" + strings.Repeat("*a", 2000) + "$", long, false},
		{"/" + strings.Repeat("*a", 2000) + "*b$", long + "b", false},
		{strings.Repeat("*", 10000) + "b", long, true},
	}
	for i, tc := range tests {
		r := robots.Parse([]byte("User-agent: *\nDisallow: " + tc.pattern + "\n"))
		require.Equal(t, tc.want, r.Allowed("bot", tc.url), "case %d", i)
	}
}
