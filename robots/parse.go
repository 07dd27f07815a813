package robots

import (
	"bytes"
	"errors"
	"math"
	"sort"
	"strconv"
	"strings"
)

// Parse reads a robots.txt body. It never fails: unreadable lines are
// skipped, and an empty or non-robots body (an HTML error page, say) yields
// rules that allow everything. Only the first MaxSize bytes are read.
func Parse(body []byte) *Rules {
	r := &Rules{}
	if len(body) > MaxSize {
		r.truncated = true
		cut := body[:MaxSize]
		if c := body[MaxSize]; c != '\n' && c != '\r' {
			// The last line runs past the limit: drop it whole rather than
			// obey half a path.
			cut = cut[:bytes.LastIndexAny(cut, "\r\n")+1]
		}
		body = cut
	}
	body = bytes.TrimPrefix(body, []byte("\xef\xbb\xbf"))

	p := parser{seen: map[string]bool{}}
	for len(body) > 0 {
		i := bytes.IndexAny(body, "\r\n")
		if i < 0 {
			p.line(body)
			break
		}
		p.line(body[:i])
		if body[i] == '\r' && i+1 < len(body) && body[i+1] == '\n' {
			i++
		}
		body = body[i+1:]
	}
	p.finish(r)
	return r
}

// rawGroup is one group as written: its user-agent lines and its members.
type rawGroup struct {
	agents     []string // lower-case product tokens
	star       bool
	rules      []rule
	crawlDelay float64 // seconds; negative when absent
}

type parser struct {
	groups   []*rawGroup
	cur      *rawGroup // group receiving member lines; nil before the first user-agent
	inAgents bool      // the last group line was a user-agent line
	sitemaps []string
	seen     map[string]bool // sitemap URLs already collected
}

// Directive kinds.
const (
	keyUnknown = iota
	keyUserAgent
	keyAllow
	keyDisallow
	keyCrawlDelay
	keySitemap
)

// directive maps a lower-case directive name, including the misspellings
// large crawlers accept, to its kind.
func directive(name string) int {
	switch name {
	case "user-agent", "useragent", "user agent":
		return keyUserAgent
	case "allow":
		return keyAllow
	case "disallow", "dissallow", "dissalow", "disalow", "diasllow", "disallaw":
		return keyDisallow
	case "crawl-delay":
		return keyCrawlDelay
	case "sitemap", "site-map":
		return keySitemap
	}
	return keyUnknown
}

// line handles one line, without its line end.
func (p *parser) line(b []byte) {
	if i := bytes.IndexByte(b, '#'); i >= 0 {
		b = b[:i]
	}
	s := strings.TrimSpace(string(b))
	if s == "" {
		return
	}
	var name, value string
	if i := strings.IndexByte(s, ':'); i >= 0 {
		name, value = strings.TrimSpace(s[:i]), strings.TrimSpace(s[i+1:])
	} else if f := strings.Fields(s); len(f) == 2 {
		name, value = f[0], f[1]
	} else {
		return
	}
	switch kind := directive(strings.ToLower(name)); kind {
	case keyUserAgent:
		p.userAgent(value)
	case keyAllow, keyDisallow:
		if p.cur == nil {
			return // a rule outside any group
		}
		p.inAgents = false
		if rl, ok := compileRule(value, kind == keyAllow); ok {
			p.cur.rules = append(p.cur.rules, rl)
		}
	case keyCrawlDelay:
		if p.cur == nil {
			return
		}
		p.inAgents = false
		if d, ok := parseDelay(value); ok && d > p.cur.crawlDelay {
			p.cur.crawlDelay = d
		}
	case keySitemap:
		if value != "" && !p.seen[value] {
			p.seen[value] = true
			p.sitemaps = append(p.sitemaps, value)
		}
	}
}

// userAgent handles a user-agent line: it joins the current group when the
// previous group line was also a user-agent line, and starts a group
// otherwise.
func (p *parser) userAgent(value string) {
	// "*", or "*" followed by a comment-like remainder ("* all robots").
	star := value == "*" || strings.HasPrefix(value, "* ") || strings.HasPrefix(value, "*\t")
	tok := ""
	if !star {
		tok = strings.ToLower(productToken(value))
		if tok == "" {
			return
		}
	}
	if p.cur == nil || !p.inAgents {
		p.cur = &rawGroup{crawlDelay: -1}
		p.groups = append(p.groups, p.cur)
		p.inAgents = true
	}
	if star {
		p.cur.star = true
		return
	}
	for _, a := range p.cur.agents {
		if a == tok {
			return
		}
	}
	p.cur.agents = append(p.cur.agents, tok)
}

// parseDelay reads a Crawl-delay value in seconds (fractions allowed).
// Negative, infinite and non-numeric values are rejected.
func parseDelay(value string) (float64, bool) {
	f := strings.Fields(value)
	if len(f) == 0 {
		return 0, false
	}
	d, err := strconv.ParseFloat(f[0], 64)
	if errors.Is(err, strconv.ErrRange) && d > 0 {
		return d, true // too large for a float64: capped later like any large value
	}
	if err != nil || math.IsNaN(d) || math.IsInf(d, 0) || d < 0 {
		return 0, false
	}
	return d, true
}

// finish merges the groups per agent and stores the result in r.
func (p *parser) finish(r *Rules) {
	r.sitemaps = p.sitemaps
	merge := func(dst **group, g *rawGroup) {
		if *dst == nil {
			*dst = &group{crawlDelay: -1}
		}
		(*dst).rules = append((*dst).rules, g.rules...)
		if g.crawlDelay > (*dst).crawlDelay {
			(*dst).crawlDelay = g.crawlDelay
		}
	}
	for _, g := range p.groups {
		if g.star {
			merge(&r.star, g)
		}
		for _, a := range g.agents {
			if r.byAgent == nil {
				r.byAgent = map[string]*group{}
			}
			dst := r.byAgent[a]
			merge(&dst, g)
			r.byAgent[a] = dst
		}
	}
	sortRules := func(g *group) {
		sort.SliceStable(g.rules, func(i, j int) bool {
			a, b := g.rules[i], g.rules[j]
			if a.length != b.length {
				return a.length > b.length
			}
			return a.allow && !b.allow
		})
	}
	if r.star != nil {
		sortRules(r.star)
	}
	for _, g := range r.byAgent {
		sortRules(g)
	}
}
