package robots_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/recrawl/recrawl/robots"
)

// realisticFile builds a robots.txt shaped like those of large sites: a few
// named groups, one big "*" group of 100 rules mixing prefixes, wildcards,
// query patterns and '$' anchors, and some sitemaps.
func realisticFile() []byte {
	var b strings.Builder
	b.WriteString("# robots.txt for www.example.com\n\nUser-agent: GPTBot\nUser-agent: CCBot\nDisallow: /\n\n")
	b.WriteString("User-agent: Googlebot-Image\nAllow: /images/\nDisallow: /images/private/\n\n")
	b.WriteString("User-agent: *\nCrawl-delay: 1\n")
	sections := []string{"account", "admin", "api", "cart", "checkout", "compare", "login", "logout", "orders", "print",
		"profile", "register", "reviews/write", "search", "share", "tag", "tmp", "track", "wishlist", "wp-admin"}
	n := 0
	for _, s := range sections {
		fmt.Fprintf(&b, "Disallow: /%s/\n", s)
		fmt.Fprintf(&b, "Disallow: /*/%s/*?*session=\n", s)
		fmt.Fprintf(&b, "Allow: /%s/help$\n", s)
		n += 3
	}
	for _, q := range []string{"sort", "filter", "page", "utm_source", "ref", "sessionid", "print", "replytocom", "share", "lang"} {
		fmt.Fprintf(&b, "Disallow: /*?%s=\n", q)
		fmt.Fprintf(&b, "Disallow: /*&%s=\n", q)
		n += 2
	}
	for _, ext := range []string{"pdf", "doc", "xls", "zip", "json", "xml", "csv", "txt", "php", "cgi"} {
		fmt.Fprintf(&b, "Disallow: /*.%s$\n", ext)
		n++
	}
	for i := 0; n < 100; i++ {
		fmt.Fprintf(&b, "Disallow: /archive/%d/drafts/\n", 2000+i)
		n++
	}
	b.WriteString("\nSitemap: https://www.example.com/sitemap.xml\nSitemap: https://www.example.com/news-sitemap.xml\n")
	return []byte(b.String())
}

var benchURLs = []string{
	"https://www.example.com/",
	"https://www.example.com/docs/guide/getting-started.html",
	"https://www.example.com/blog/2024/05/incremental-crawling?utm_source=newsletter",
	"https://www.example.com/shop/shoes/running?sort=price&page=2",
	"https://www.example.com/account/settings",
	"https://www.example.com/search/help",
	"https://www.example.com/downloads/report-2024.pdf",
	"https://www.example.com/products/caf%C3%A9-au-lait/reviews",
	"https://www.example.com/a/very/long/path/that/goes/on/and/on/with/many/segments/index.html",
	"https://www.example.com/archive/2037/drafts/x",
}

func BenchmarkParse(b *testing.B) {
	body := realisticFile()
	b.SetBytes(int64(len(body)))
	b.ReportAllocs()
	for b.Loop() {
		robots.Parse(body)
	}
}

// BenchmarkAllowed asks about ten typical URLs per iteration against the
// 100-rule "*" group.
func BenchmarkAllowed(b *testing.B) {
	r := robots.Parse(realisticFile())
	b.ReportAllocs()
	for b.Loop() {
		for _, u := range benchURLs {
			r.Allowed("recrawl/1.0 (+https://example.com/bot)", u)
		}
	}
}

func BenchmarkAllowedPathological(b *testing.B) {
	r := robots.Parse([]byte("User-agent: *\nDisallow: /*a*a*a*a*a*b\nDisallow: /" + strings.Repeat("*a", 200) + "$\n"))
	path := "/" + strings.Repeat("a", 64<<10)
	b.SetBytes(int64(len(path)))
	b.ReportAllocs()
	for b.Loop() {
		r.Allowed("bot", path)
	}
}
