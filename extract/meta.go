package extract

import (
	"net/url"
	"strings"

	"golang.org/x/net/html"
	"golang.org/x/net/html/atom"
)

// pageScan is what one walk of the parsed page finds: the elements the
// metadata, the links, the generator rules and restoreTextTags read.
type pageScan struct {
	base      *html.Node // the first <base href>
	title     *html.Node // the first <title>
	h1        *html.Node // the first <h1>
	root      *html.Node // the first <html>
	canonical *html.Node // the first <link rel=canonical href>
	metas     []*html.Node
	hrefs     []string // the href of every <a href>, in document order
	// accidents are the elements of the first <body> that restoreTextTags
	// turns back into text, in document order.
	accidents []*html.Node
	// resolved maps the hrefs links resolved, by linkKey, to the absolute
	// URL without fragment they resolved to ("" for none usable); nil
	// before links or on a page of more than manyLinks hrefs.
	resolved map[string]string
	// generator is the lower-cased content of every <meta name=generator>
	// outside <body>, one a line.
	generator string
	// markers tells, per rule of BuiltinRules, whether one of its Markers
	// matches an element of the page other than the accidents; nil when a
	// built-in rule names the generator, which decides then (recognised).
	markers []bool
}

// scanPage walks doc once.
func scanPage(doc *html.Node) *pageScan {
	s := &pageScan{markers: make([]bool, len(BuiltinRules))}
	var gen strings.Builder
	var body *html.Node
	// Markers are looked for until the page is known to declare a
	// generator a built-in rule names: the <meta> elements that can
	// declare it are all in <head>, before <body>.
	markers := builtinMarkers
	found := func(i int) { s.markers[i] = true }
	var visit func(n *html.Node, inBody, inFirstBody bool)
	visit = func(n *html.Node, inBody, inFirstBody bool) {
		accident := false
		if n.Type == html.ElementNode && n.Namespace == "" {
			switch n.DataAtom {
			case atom.Base:
				if s.base == nil && hasAttr(n, "href") {
					s.base = n
				}
			case atom.Title:
				if s.title == nil {
					s.title = n
				}
			case atom.H1:
				if s.h1 == nil {
					s.h1 = n
				}
			case atom.Html:
				if s.root == nil {
					s.root = n
				}
			case atom.Link:
				if s.canonical == nil && relHas(attr(n, "rel"), "canonical") && hasAttr(n, "href") {
					s.canonical = n
				}
			case atom.Meta:
				s.metas = append(s.metas, n)
				if !inBody && strings.EqualFold(attr(n, "name"), "generator") {
					gen.WriteString(strings.ToLower(attr(n, "content")))
					gen.WriteByte('\n')
				}
			case atom.A:
				if href, ok := attrOK(n, "href"); ok {
					s.hrefs = append(s.hrefs, href)
				}
			case atom.Body:
				inBody = true
				if body == nil {
					body, inFirstBody = n, true
					if builtinGenerator(gen.String()) {
						markers = nil
					}
				}
			}
			if inFirstBody && isTextTag(n) {
				s.accidents = append(s.accidents, n)
				accident = true
			}
		}
		// An accident becomes text (restoreTextTags) before rules are
		// chosen: no marker may see it. No built-in marker can match it
		// (each needs a class, an id or a defined element) or depend on it
		// as an ancestor, so its children are matched here as they will
		// be after it is gone.
		if n.Type == html.ElementNode && markers != nil && !accident {
			markers.match(n, found)
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			visit(c, inBody, inFirstBody)
		}
	}
	visit(doc, false, false)
	s.generator = gen.String()
	if builtinGenerator(s.generator) {
		s.markers = nil
	}
	return s
}

// baseURL is the document's base URL: the first <base href>, resolved
// against the page URL, when it is an absolute http(s) URL; otherwise the
// page URL.
func baseURL(doc *html.Node, page *url.URL) *url.URL {
	return scanPage(doc).baseURL(page)
}

func (s *pageScan) baseURL(page *url.URL) *url.URL {
	// Only the first <base href> counts, usable or not.
	if s.base != nil {
		if u, ok := resolveRef(page, attr(s.base, "href")); ok && isHTTP(u) {
			return u
		}
	}
	return page
}

// resolve resolves a link target against base and returns it as an
// absolute http(s) URL without fragment; ok is false for other schemes,
// unparsable targets and empty ones.
func resolve(base *url.URL, href string) (string, bool) {
	u, ok := resolveRef(base, href)
	if !ok || !isHTTP(u) {
		return "", false
	}
	u.Fragment, u.RawFragment = "", ""
	return u.String(), true
}

// stripTabsNewlines removes what browsers remove from a URL before
// parsing it: tabs and newlines anywhere.
var stripTabsNewlines = strings.NewReplacer("\t", "", "\n", "", "\r", "")

// resolveRef parses href as a browser does (surrounding white space
// trimmed, tabs and newlines removed) and resolves it against base; ok is
// false for an empty or unparsable href.
func resolveRef(base *url.URL, href string) (*url.URL, bool) {
	href = strings.TrimSpace(stripTabsNewlines.Replace(href))
	if href == "" {
		return nil, false
	}
	ref, err := url.Parse(href)
	if err != nil {
		return nil, false
	}
	return base.ResolveReference(ref), true
}

// manyLinks is the number of links above which links resolves every href
// again instead of remembering those it resolved: on a link farm (a
// million distinct targets) that map would cost more memory than it saves
// time.
const manyLinks = 10_000

// links lists every <a href> target of the page, resolved, http(s) only,
// deduplicated in document order. Up to manyLinks hrefs, it remembers in
// s.resolved what each href resolved to, by linkKey.
func (s *pageScan) links(base *url.URL) []string {
	out := make([]string, 0, len(s.hrefs))
	seen := make(map[string]bool, len(s.hrefs))
	if len(s.hrefs) <= manyLinks {
		s.resolved = make(map[string]string, len(s.hrefs))
	}
	for _, href := range s.hrefs {
		var u string
		var ok bool
		if s.resolved != nil {
			href = linkKey(href)
			if _, done := s.resolved[href]; done {
				continue // resolved before, to the same result
			}
			u, ok = resolve(base, href)
			s.resolved[href] = u
		} else {
			u, ok = resolve(base, href)
		}
		if ok && !seen[u] {
			seen[u] = true
			out = append(out, u)
		}
	}
	return out
}

// linkKey is href without the text of its fragment ("guide.html#setup" ->
// "guide.html#"), which resolves as href does: resolve drops the fragment,
// and url.Parse rejects one only for a malformed %-escape, so a fragment
// holding "%" is kept.
func linkKey(href string) string {
	i := strings.IndexByte(href, '#')
	if i < 0 || i == len(href)-1 || strings.IndexByte(href[i:], '%') >= 0 {
		return href
	}
	return href[:i+1]
}

// canonical returns the first <link rel="canonical" href> resolved like a
// link; "" when absent or not an http(s) URL.
func (s *pageScan) canonicalURL(base *url.URL) string {
	if s.canonical == nil {
		return ""
	}
	out, _ := resolve(base, attr(s.canonical, "href"))
	return out
}

func relHas(rel, token string) bool {
	for _, t := range strings.Fields(rel) {
		if strings.EqualFold(t, token) {
			return true
		}
	}
	return false
}

// title returns <title>, else og:title, else the first <h1>.
func (s *pageScan) pageTitle() string {
	if s.title != nil {
		if t := collapseSpace(textContent(s.title)); t != "" {
			return t
		}
	}
	if t := s.metaContent("og:title"); t != "" {
		return t
	}
	if s.h1 != nil {
		return collapseSpace(textContent(s.h1))
	}
	return ""
}

// description returns the meta description, else og:description.
func (s *pageScan) description() string {
	if d := s.metaContent("description"); d != "" {
		return d
	}
	return s.metaContent("og:description")
}

// metaContent returns the collapsed content of the first <meta> whose name
// or property attribute equals key (case-insensitive) and whose content is
// not empty.
func (s *pageScan) metaContent(key string) string {
	for _, n := range s.metas {
		if strings.EqualFold(strings.TrimSpace(attr(n, "name")), key) ||
			strings.EqualFold(strings.TrimSpace(attr(n, "property")), key) {
			if out := collapseSpace(attr(n, "content")); out != "" {
				return out
			}
		}
	}
	return ""
}

// lang returns the <html lang> attribute.
func (s *pageScan) lang() string {
	if s.root != nil {
		return strings.TrimSpace(attr(s.root, "lang"))
	}
	return ""
}

// titleSeparators divide a <title> into the page's and the site's name.
var titleSeparators = []string{" | ", " — ", " – ", " - ", " · ", " :: ", " » "}

// pageTitle is a <title> without its site suffix: the part before the
// first separator, or the whole title when it has none.
func pageTitle(full string) string {
	cut := len(full)
	for _, sep := range titleSeparators {
		if i := strings.Index(full, sep); i > 0 && i < cut {
			cut = i
		}
	}
	if t := strings.TrimSpace(full[:cut]); t != "" {
		return t
	}
	return full
}
