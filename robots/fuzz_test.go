package robots_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/recrawl/recrawl/robots"
)

func FuzzParse(f *testing.F) {
	f.Add([]byte("User-agent: *\nDisallow: /a*b$\nAllow: /a/\nCrawl-delay: 0.5\nSitemap: https://example.com/s.xml\n"), "recrawl/1.0", "https://example.com/a/b?c#d")
	f.Add([]byte("\xef\xbb\xbfUser-Agent: foobot\r\nDisallow:/\r\nAllow:/example/page.html\r\n"), "FooBot", "/example/page.html")
	f.Add([]byte("useragent: *\rdisalow /x\r%\x00\xff: ::\n"), "", "%zz/*$")
	f.Add([]byte("User-agent: *\nDisallow: /*a*a*a*a*b\n"), "bot", "/aaaaaaaaaaaaaaaaaaaaaaaaaaaa")
	f.Add([]byte("<html><body>404</body></html>"), "bot", "//host")
	f.Fuzz(func(t *testing.T, body []byte, agent, rawURL string) {
		r := robots.Parse(body)
		allowed := r.Allowed(agent, rawURL)
		require.Equal(t, allowed, robots.Parse(body).Allowed(agent, rawURL), "Allowed must be deterministic")
		require.True(t, r.Allowed(agent, "/robots.txt"))
		d := r.CrawlDelay(agent)
		require.True(t, d >= 0 && d <= robots.DefaultMaxCrawlDelay, "crawl delay %v out of range", d)
		seen := map[string]bool{}
		for _, s := range r.Sitemaps() {
			require.NotEmpty(t, s)
			require.False(t, seen[s], "duplicate sitemap %q", s)
			seen[s] = true
		}
	})
}
