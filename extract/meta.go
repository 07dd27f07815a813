package extract

import (
	"bytes"
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
	// omit, when set, tells the built-in rules (by index) to leave out,
	// for the self-check that scores the pages with rules switched off.
	omit func(i int) bool
}

// omitted reports whether built-in rule i is left out.
func (s *pageScan) omitted(i int) bool {
	return s.omit != nil && s.omit(i)
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
	u := base.ResolveReference(ref)
	u.RawQuery = escapeQuery(u.RawQuery)
	// A relative reference parses more leniently than the absolute URL
	// it resolves to ("//m::1" gives "https://m::1", whose port is
	// invalid): what is handed out must parse again.
	if _, err := url.Parse(u.String()); err != nil {
		return nil, false
	}
	return u, true
}

// linkResolver resolves the hrefs of one page against its base URL.
// Hrefs of the common shapes (an absolute http(s) URL of a plain host, a
// root-relative or relative path, each of characters URL.String writes
// as they are, with or without a query) are resolved without url.Parse,
// ResolveReference and String, by the same steps those take; any other
// href is resolved by resolve.
type linkResolver struct {
	base *url.URL
	// origin is the base's "scheme://host", as URL.String writes it;
	// dir is the base's escaped path up to its last "/" ("/" for an
	// empty path). plain is false when the base's path holds characters
	// the shortcut does not handle (it then serves absolute hrefs only).
	origin, dir string
	plain       bool
}

func newLinkResolver(base *url.URL) *linkResolver {
	r := &linkResolver{base: base}
	r.origin = (&url.URL{Scheme: base.Scheme, User: base.User, Host: base.Host}).String()
	path := base.EscapedPath()
	if path == "" {
		r.dir, r.plain = "/", true
		return r
	}
	if path[0] != '/' || strings.HasPrefix(path, "//") || !plainPath(path) {
		return r
	}
	r.dir, r.plain = path[:strings.LastIndexByte(path, '/')+1], true
	return r
}

// resolve is resolve(r.base, href).
func (r *linkResolver) resolve(href string) (string, bool) {
	if u, ok := r.shortcut(href); ok {
		return u, true
	}
	return resolve(r.base, href)
}

// shortcut resolves href as resolve does when href has one of the shapes
// linkResolver handles; ok is false otherwise (not that href is unusable).
func (r *linkResolver) shortcut(href string) (string, bool) {
	// An empty fragment is dropped as resolve drops any; a fragment with
	// text must be parsed, which only url.Parse does exactly.
	if i := strings.IndexByte(href, '#'); i >= 0 {
		if i != len(href)-1 {
			return "", false
		}
		href = href[:i]
	}
	path, query := href, ""
	if i := strings.IndexByte(href, '?'); i >= 0 {
		path, query = href[:i], href[i:]
		if !plainQuery(query) {
			return "", false
		}
	}
	if path == "" || !plainPath(path) {
		return "", false
	}
	switch {
	case strings.HasPrefix(path, "//"):
		return "", false
	case path[0] == '/':
		if !r.plain {
			return "", false
		}
		return r.origin + resolvedPath(path) + query, true
	}
	// A relative path, or an absolute URL: only a scheme puts a ':'
	// before the first '/'.
	colon := strings.IndexByte(path, ':')
	if slash := strings.IndexByte(path, '/'); colon < 0 || slash >= 0 && slash < colon {
		if !r.plain {
			return "", false
		}
		return r.origin + resolvedPath(r.dir+path) + query, true
	}
	scheme, rest := path[:colon], path[colon+1:]
	if scheme != "http" && scheme != "https" || !strings.HasPrefix(rest, "//") {
		return "", false
	}
	host, p := rest[2:], ""
	if i := strings.IndexByte(host, '/'); i >= 0 {
		host, p = host[:i], host[i:]
	}
	if host == "" || !plainHost(host) {
		return "", false
	}
	if p != "" {
		p = resolvedPath(p)
	}
	return scheme + "://" + host + p + query, true
}

// plainPath reports whether every byte of p is one URL.EscapedPath writes
// as it is whatever surrounds it: letters, digits and -._~/!$&'()*+,;=:@
// (no '%': escapes would have to be decoded).
func plainPath(p string) bool {
	for i := 0; i < len(p); i++ {
		c := p[i]
		switch {
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9':
		default:
			switch c {
			case '-', '.', '_', '~', '/', '!', '$', '&', '\'', '(', ')', '*', '+', ',', ';', '=', ':', '@':
			default:
				return false
			}
		}
	}
	return true
}

// escapeQuery percent-encodes the bytes of a raw query that are not
// printable ASCII, as a browser does before it sends the query: url.Parse
// keeps them as they are, and URL.String writes them so, which would hand
// out links of invalid UTF-8.
func escapeQuery(q string) string {
	if plainQuery(q) {
		return q
	}
	const hex = "0123456789ABCDEF"
	var b strings.Builder
	b.Grow(len(q) + 8)
	for i := 0; i < len(q); i++ {
		if c := q[i]; c <= ' ' || c >= 0x7f {
			b.WriteByte('%')
			b.WriteByte(hex[c>>4])
			b.WriteByte(hex[c&15])
		} else {
			b.WriteByte(c)
		}
	}
	return b.String()
}

// plainQuery reports whether q, a query with its '?', is printable ASCII
// without space: url.Parse keeps such a query as it is.
func plainQuery(q string) bool {
	for i := 0; i < len(q); i++ {
		if c := q[i]; c <= ' ' || c >= 0x7f {
			return false
		}
	}
	return true
}

// plainHost reports whether h is a host of letters, digits, '.' and '-'
// (no port, user or IP literal), which url.Parse and URL.String keep as it is.
func plainHost(h string) bool {
	for i := 0; i < len(h); i++ {
		c := h[i]
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '.' || c == '-') {
			return false
		}
	}
	return true
}

// resolvedPath is full with its "." and ".." segments applied, as
// net/url's resolvePath writes it (full is not empty).
func resolvedPath(full string) string {
	if !strings.Contains(full, "/.") && !strings.HasPrefix(full, ".") && full[0] == '/' && !strings.HasPrefix(full, "//") {
		return full // nothing to resolve
	}
	dst := make([]byte, 0, len(full)+1)
	dst = append(dst, '/')
	elem := ""
	remaining := full
	found := true
	first := true
	for found {
		elem, remaining, found = strings.Cut(remaining, "/")
		switch elem {
		case ".":
			first = false
			continue
		case "..":
			if i := bytes.LastIndexByte(dst[1:], '/'); i >= 0 {
				dst = dst[:i+1]
			} else {
				dst = dst[:1]
			}
			first = len(dst) == 1
		default:
			if !first {
				dst = append(dst, '/')
			}
			dst = append(dst, elem...)
			first = false
		}
	}
	if elem == "." || elem == ".." {
		dst = append(dst, '/')
	}
	if len(dst) > 1 && dst[1] == '/' {
		return string(dst[1:])
	}
	return string(dst)
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
	r := newLinkResolver(base)
	for _, href := range s.hrefs {
		var u string
		var ok bool
		if s.resolved != nil {
			href = linkKey(href)
			if _, done := s.resolved[href]; done {
				continue // resolved before, to the same result
			}
			u, ok = r.resolve(href)
			s.resolved[href] = u
		} else {
			u, ok = r.resolve(href)
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
