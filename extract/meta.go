package extract

import (
	"net/url"
	"strings"

	"golang.org/x/net/html"
	"golang.org/x/net/html/atom"
)

// baseURL is the document's base URL: the first <base href>, resolved
// against the page URL, when it is an absolute http(s) URL; otherwise the
// page URL.
func baseURL(doc *html.Node, page *url.URL) *url.URL {
	var base *url.URL
	walk(doc, func(n *html.Node) bool {
		if base != nil {
			return false
		}
		if isElement(n, atom.Base) && hasAttr(n, "href") {
			if u, ok := resolveRef(page, attr(n, "href")); ok && isHTTP(u) {
				base = u
			}
			// Only the first <base href> counts, usable or not.
			if base == nil {
				base = page
			}
			return false
		}
		return true
	})
	if base == nil {
		return page
	}
	return base
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

// links lists every <a href> target of the page, resolved, http(s) only,
// deduplicated in document order.
func links(doc *html.Node, base *url.URL) []string {
	var out []string
	seen := map[string]bool{}
	walk(doc, func(n *html.Node) bool {
		if isElement(n, atom.A) && hasAttr(n, "href") {
			if u, ok := resolve(base, attr(n, "href")); ok && !seen[u] {
				seen[u] = true
				out = append(out, u)
			}
		}
		return true
	})
	return out
}

// canonical returns the first <link rel="canonical" href> resolved like a
// link; "" when absent or not an http(s) URL.
func canonical(doc *html.Node, base *url.URL) string {
	var out string
	var found bool
	walk(doc, func(n *html.Node) bool {
		if found {
			return false
		}
		if isElement(n, atom.Link) && relHas(attr(n, "rel"), "canonical") && hasAttr(n, "href") {
			found = true
			out, _ = resolve(base, attr(n, "href"))
			return false
		}
		return true
	})
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
func title(doc *html.Node) string {
	if t := find(doc, atom.Title); t != nil {
		if s := collapseSpace(textContent(t)); s != "" {
			return s
		}
	}
	if s := metaContent(doc, "og:title"); s != "" {
		return s
	}
	if h := find(doc, atom.H1); h != nil {
		return collapseSpace(textContent(h))
	}
	return ""
}

// description returns the meta description, else og:description.
func description(doc *html.Node) string {
	if s := metaContent(doc, "description"); s != "" {
		return s
	}
	return metaContent(doc, "og:description")
}

// metaContent returns the collapsed content of the first <meta> whose name
// or property attribute equals key (case-insensitive) and whose content is
// not empty.
func metaContent(doc *html.Node, key string) string {
	var out string
	walk(doc, func(n *html.Node) bool {
		if out != "" {
			return false
		}
		if isElement(n, atom.Meta) &&
			(strings.EqualFold(strings.TrimSpace(attr(n, "name")), key) ||
				strings.EqualFold(strings.TrimSpace(attr(n, "property")), key)) {
			out = collapseSpace(attr(n, "content"))
		}
		return true
	})
	return out
}

// lang returns the <html lang> attribute.
func lang(doc *html.Node) string {
	if h := find(doc, atom.Html); h != nil {
		return strings.TrimSpace(attr(h, "lang"))
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
