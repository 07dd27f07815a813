// Package robots parses robots.txt files and answers whether a crawler may
// fetch a URL, following RFC 9309 (the Robots Exclusion Protocol).
//
// Parse never fails: lines it cannot read are skipped, so one broken line
// never discards the rest of a file. The matcher is hand-written: each rule is
// compiled once into literal segments split on '*', and a match costs one
// forward scan of the path per segment, so hostile patterns cannot cause
// backtracking.
//
// What the package decides beyond the RFC text:
//
//   - Product tokens. The crawler's token is the part of its User-Agent
//     before the first '/' or space ("recrawl/1.0 (+https://…)" → "recrawl").
//     A robots.txt user-agent value is read the same way. Tokens are compared
//     case-insensitively and whole: "my" never selects a "mybot" group, nor
//     the other way round. A crawler that sends a browser-like User-Agent
//     ("Mozilla/5.0 (compatible; ExampleBot/0.1)") must pass its product
//     token itself.
//   - Groups. Every group naming the crawler's token is merged; the "*"
//     groups (also merged) are used only when no group names the crawler.
//     A group with no rules, or with only an empty "Disallow:", allows
//     everything for the agents it names.
//   - Precedence. The matching rule with the longest normalized pattern
//     (counting '*' and '$') wins; Allow wins a tie, whatever the line order.
//   - Percent-encoding. Patterns and the URL's path+query are compared in one
//     normal form: %XX escapes of unreserved characters (A-Z a-z 0-9 - . _ ~)
//     are decoded, all other escapes get upper-case hex, and bytes outside
//     printable ASCII (including UTF-8 text) are percent-encoded. A literal
//     '*' or '$' in the URL is matched by %2A or %24 in a pattern, as RFC 9309
//     section 2.2.3 describes. A '$' that does not end a pattern is literal.
//   - Leniency, modelled on what large crawlers accept: a UTF-8 byte order
//     mark, LF/CRLF/CR line ends, directive names in any case, the
//     misspellings "useragent", "user agent", "disalow", "dissallow",
//     "dissalow", "disallaw", "diasllow" and "site-map", and a missing colon
//     when the line is exactly a directive name and one value
//     ("Disallow /tmp"). Patterns that start with neither '/' nor '*' get a
//     leading '/'. Unknown directives and rules before the first user-agent
//     line are ignored.
//   - Limits. Only the first MaxSize bytes are parsed; a line cut by that
//     limit is dropped. Crawl-delay is capped by Rules.MaxCrawlDelay.
//   - The path /robots.txt is always allowed.
//
// Fetching robots.txt, caching it and mapping HTTP errors to a policy are
// not part of this parser.
package robots

import (
	"math"
	"strings"
	"time"
)

// MaxSize is the number of bytes of a robots.txt body that Parse reads
// (500 KiB, the minimum RFC 9309 asks crawlers to parse). Bytes after it are
// ignored, and a line cut by the limit is dropped.
const MaxSize = 500 << 10

// DefaultMaxCrawlDelay caps Crawl-delay when Rules.MaxCrawlDelay is zero, so
// a hostile or mistaken file cannot stall a run.
const DefaultMaxCrawlDelay = 60 * time.Second

// Rules is a parsed robots.txt. A nil *Rules allows everything. Rules is
// safe for concurrent reads once parsed; set MaxCrawlDelay before sharing it.
type Rules struct {
	// MaxCrawlDelay caps the value CrawlDelay returns. Zero or negative
	// means DefaultMaxCrawlDelay.
	MaxCrawlDelay time.Duration

	byAgent   map[string]*group // lower-case product token → merged group
	star      *group            // merged "*" groups; nil when there is none
	sitemaps  []string
	truncated bool
}

// group is the merged view of every group naming one agent.
type group struct {
	rules      []rule  // sorted: longest pattern first, Allow first on ties
	crawlDelay float64 // seconds; negative when no valid Crawl-delay was seen
}

// AllowAll returns rules that allow every URL, as an absent robots.txt does.
func AllowAll() *Rules { return &Rules{} }

// Allowed reports whether the crawler identified by userAgent may fetch
// rawURL. rawURL may be absolute (its path and query are used; the fragment
// is ignored) or a path such as "/a/b?q=1". A nil Rules allows everything.
func (r *Rules) Allowed(userAgent, rawURL string) bool {
	if r == nil {
		return true
	}
	g := r.groupFor(userAgent)
	if g == nil || len(g.rules) == 0 {
		return true
	}
	p := normalize(requestPath(rawURL), false)
	if p == "/robots.txt" || strings.HasPrefix(p, "/robots.txt?") {
		return true
	}
	for i := range g.rules {
		if g.rules[i].match(p) {
			return g.rules[i].allow
		}
	}
	return true
}

// CrawlDelay returns the Crawl-delay of the group that applies to userAgent,
// capped by MaxCrawlDelay, or zero when the group sets none. When merged
// groups give several values, the largest is used. Crawl-delay is not part
// of RFC 9309; it is honoured because many sites rely on it.
func (r *Rules) CrawlDelay(userAgent string) time.Duration {
	if r == nil {
		return 0
	}
	g := r.groupFor(userAgent)
	if g == nil || g.crawlDelay <= 0 {
		return 0
	}
	limit := r.MaxCrawlDelay
	if limit <= 0 {
		limit = DefaultMaxCrawlDelay
	}
	if g.crawlDelay >= limit.Seconds() {
		return limit
	}
	return time.Duration(math.Round(g.crawlDelay * float64(time.Second)))
}

// Sitemaps returns the Sitemap URLs of the file in the order they appear,
// without duplicates. Sitemap lines belong to no group. The URLs are returned
// as written; resolving or validating them is the caller's job.
func (r *Rules) Sitemaps() []string {
	if r == nil || len(r.sitemaps) == 0 {
		return nil
	}
	return append([]string(nil), r.sitemaps...)
}

// Truncated reports whether the body was longer than MaxSize, so that part
// of it was ignored.
func (r *Rules) Truncated() bool { return r != nil && r.truncated }

// groupFor returns the merged group that applies to userAgent: the groups
// naming its product token, else the "*" groups, else nil.
func (r *Rules) groupFor(userAgent string) *group {
	if tok := productToken(userAgent); tok != "" && tok != "*" {
		if g, ok := r.byAgent[strings.ToLower(tok)]; ok {
			return g
		}
	}
	return r.star
}

// productToken returns the leading product token of a User-Agent string or
// of a robots.txt user-agent value: the text before the first '/' or
// whitespace, after leading whitespace.
func productToken(s string) string {
	s = strings.TrimLeft(s, " \t")
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '/', ' ', '\t':
			return s[:i]
		}
	}
	return s
}
