package llmstxt

import "strings"

// Pages returns every page the file links to, in document order: the links
// before the first section, then each section's links, the Optional
// section included. A URL that appears more than once is returned once, at
// its first appearance; URLs that differ only in their #fragment name the
// same page. Links that are not pages are left out: mailto:, tel:,
// javascript: and any other scheme but http and https, empty URLs and
// same-document anchors ("#top"). Relative URLs are kept as written.
func (f *File) Pages() []Link {
	n := len(f.Links)
	for _, s := range f.Sections {
		n += len(s.Links)
	}
	pages := make([]Link, 0, n)
	seen := make(map[string]struct{}, n)
	add := func(links []Link) {
		for _, l := range links {
			if !isPage(l.URL) {
				continue
			}
			key, _, _ := strings.Cut(l.URL, "#")
			if _, dup := seen[key]; dup {
				continue
			}
			seen[key] = struct{}{}
			pages = append(pages, l)
		}
	}
	add(f.Links)
	for _, s := range f.Sections {
		add(s.Links)
	}
	return pages
}

// isPage reports whether a link URL names a page to fetch: an http or https
// URL, or a relative reference that is not only a fragment.
func isPage(u string) bool {
	u = strings.TrimSpace(u)
	if u == "" || u[0] == '#' {
		return false
	}
	scheme, ok := urlScheme(u)
	if !ok {
		return true // relative reference
	}
	return strings.EqualFold(scheme, "http") || strings.EqualFold(scheme, "https")
}

// urlScheme returns the scheme of an absolute URL (RFC 3986: a letter, then
// letters, digits, "+", "-" or ".", then ":"), or false for a relative
// reference.
func urlScheme(u string) (string, bool) {
	for i := 0; i < len(u); i++ {
		c := u[i]
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z':
		case (c >= '0' && c <= '9') || c == '+' || c == '-' || c == '.':
			if i == 0 {
				return "", false
			}
		case c == ':':
			return u[:i], i > 0
		default:
			return "", false
		}
	}
	return "", false
}
