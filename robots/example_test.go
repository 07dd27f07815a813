package robots_test

import (
	"fmt"
	"time"

	"github.com/recrawl/recrawl/robots"
)

const exampleFile = `# robots.txt of docs.example.com
User-agent: *
Disallow: /search
Disallow: /*.pdf$
Allow: /search/help

User-agent: recrawl
Disallow: /drafts/
Crawl-delay: 2.5

Sitemap: https://docs.example.com/sitemap.xml
`

func ExampleParse() {
	rules := robots.Parse([]byte(exampleFile))
	fmt.Println(rules.Sitemaps())
	// Output:
	// [https://docs.example.com/sitemap.xml]
}

func ExampleRules_Allowed() {
	rules := robots.Parse([]byte(exampleFile))
	const ua = "recrawl/1.0 (+https://example.com/bot)"
	// recrawl has its own group, so the "*" rules do not apply to it.
	fmt.Println(rules.Allowed(ua, "https://docs.example.com/drafts/new-page"))
	fmt.Println(rules.Allowed(ua, "https://docs.example.com/search?q=go"))
	// Other crawlers follow "*": the longest matching rule wins.
	fmt.Println(rules.Allowed("otherbot", "/search?q=go"))
	fmt.Println(rules.Allowed("otherbot", "/search/help"))
	fmt.Println(rules.Allowed("otherbot", "/guide.pdf"))
	// Output:
	// false
	// true
	// false
	// true
	// false
}

func ExampleRules_CrawlDelay() {
	rules := robots.Parse([]byte(exampleFile))
	fmt.Println(rules.CrawlDelay("recrawl/1.0"))
	fmt.Println(rules.CrawlDelay("otherbot"))

	hostile := robots.Parse([]byte("User-agent: *\nCrawl-delay: 86400\n"))
	fmt.Println(hostile.CrawlDelay("recrawl"))
	hostile.MaxCrawlDelay = 10 * time.Second
	fmt.Println(hostile.CrawlDelay("recrawl"))
	// Output:
	// 2.5s
	// 0s
	// 1m0s
	// 10s
}

func ExampleRules_Sitemaps() {
	rules := robots.Parse([]byte("Sitemap: https://a.example/1.xml\nSitemap: https://a.example/2.xml\nSitemap: https://a.example/1.xml\n"))
	for _, s := range rules.Sitemaps() {
		fmt.Println(s)
	}
	// Output:
	// https://a.example/1.xml
	// https://a.example/2.xml
}

func ExampleAllowAll() {
	// A site without robots.txt (404) imposes no restrictions.
	var rules *robots.Rules = robots.AllowAll()
	fmt.Println(rules.Allowed("recrawl", "/any/page"))
	// Output:
	// true
}

func ExampleRules_Truncated() {
	body := make([]byte, robots.MaxSize+1)
	for i := range body {
		body[i] = '\n'
	}
	fmt.Println(robots.Parse(body).Truncated())
	// Output:
	// true
}
