package robots

import "strings"

// rule is one compiled Allow or Disallow line. The pattern is split on '*'
// into literal segments: first must be a prefix of the path, the middle
// segments are found left to right, and last must follow them (at the very
// end of the path when the pattern ends in '$').
type rule struct {
	allow    bool
	anchored bool     // the pattern ended in '$'
	wild     bool     // the pattern holds at least one '*'
	length   int      // octets of the normalized pattern, '*' and '$' included
	first    string   // literal text before the first '*'
	mid      []string // non-empty literals between stars
	last     string   // literal text after the last '*'
}

// compileRule compiles the value of an Allow or Disallow line. An empty
// value matches nothing (an empty "Disallow:" allows everything), so it
// reports false.
func compileRule(value string, allow bool) (rule, bool) {
	if value == "" {
		return rule{}, false
	}
	r := rule{allow: allow}
	if strings.HasSuffix(value, "$") {
		r.anchored = true
		value = value[:len(value)-1]
	}
	if value == "" || value[0] != '/' && value[0] != '*' {
		value = "/" + value
	}
	norm := normalize(value, true)
	r.length = len(norm)
	if r.anchored {
		r.length++
	}
	parts := strings.Split(norm, "*")
	r.first = parts[0]
	if len(parts) == 1 {
		return r, true
	}
	r.wild = true
	r.last = parts[len(parts)-1]
	for _, m := range parts[1 : len(parts)-1] {
		if m != "" {
			r.mid = append(r.mid, m)
		}
	}
	return r, true
}

// match reports whether the normalized path p matches the rule. It never
// backtracks: the middle segments are matched at their leftmost positions,
// which is optimal because '*' may absorb anything between them.
func (r *rule) match(p string) bool {
	if !strings.HasPrefix(p, r.first) {
		return false
	}
	if !r.wild {
		return !r.anchored || len(p) == len(r.first)
	}
	pos := len(r.first)
	for _, m := range r.mid {
		i := strings.Index(p[pos:], m)
		if i < 0 {
			return false
		}
		pos += i + len(m)
	}
	if r.anchored {
		return len(p)-pos >= len(r.last) && strings.HasSuffix(p, r.last)
	}
	return strings.Contains(p[pos:], r.last)
}

// requestPath returns the path and query of rawURL, which may be absolute,
// scheme-relative ("//host/p") or a path. The fragment is dropped; an empty
// path becomes "/".
func requestPath(rawURL string) string {
	s := rawURL
	if i := strings.IndexByte(s, '#'); i >= 0 {
		s = s[:i]
	}
	if i := strings.Index(s, "://"); i > 0 && isScheme(s[:i]) {
		s = authorityRest(s[i+3:])
	} else if strings.HasPrefix(s, "//") {
		s = authorityRest(s[2:])
	}
	switch {
	case s == "":
		return "/"
	case s[0] != '/':
		return "/" + s
	}
	return s
}

// authorityRest drops the authority (host and port) at the start of s.
func authorityRest(s string) string {
	if i := strings.IndexAny(s, "/?"); i >= 0 {
		return s[i:]
	}
	return ""
}

func isScheme(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z':
		case i > 0 && ('0' <= c && c <= '9' || c == '+' || c == '-' || c == '.'):
		default:
			return false
		}
	}
	return s != ""
}

const upperHex = "0123456789ABCDEF"

// normalize puts a path (or a pattern, when pattern is true) into the form
// rules and URLs are compared in: escapes of unreserved characters decoded,
// other escapes in upper-case hex, a '%' that starts no escape written as
// %25, and bytes outside printable ASCII percent-encoded. In a URL, '*' and
// '$' are encoded too (they are pattern syntax); in a pattern '*' stays a
// wildcard and '$' (a trailing anchor has been removed already) is literal.
// The input is returned unchanged, without allocating, when it is already
// normal.
func normalize(s string, pattern bool) string {
	i := 0
	for i < len(s) && !needsWork(s, i, pattern) {
		i++
	}
	if i == len(s) {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + 16)
	b.WriteString(s[:i])
	for ; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '%':
			if i+2 < len(s) && isHex(s[i+1]) && isHex(s[i+2]) {
				v := unhex(s[i+1])<<4 | unhex(s[i+2])
				if unreserved(v) {
					b.WriteByte(v)
				} else {
					writeEscape(&b, v)
				}
				i += 2
			} else {
				b.WriteString("%25")
			}
		case c <= ' ' || c >= 0x7f, c == '$', c == '*' && !pattern:
			writeEscape(&b, c)
		default:
			b.WriteByte(c)
		}
	}
	return b.String()
}

// needsWork reports whether normalize must rewrite s[i].
func needsWork(s string, i int, pattern bool) bool {
	c := s[i]
	switch {
	case c == '%':
		if i+2 >= len(s) || !isUpperHex(s[i+1]) || !isUpperHex(s[i+2]) {
			return true
		}
		return unreserved(unhex(s[i+1])<<4 | unhex(s[i+2]))
	case c <= ' ' || c >= 0x7f, c == '$':
		return true
	case c == '*':
		return !pattern
	}
	return false
}

func writeEscape(b *strings.Builder, c byte) {
	b.WriteByte('%')
	b.WriteByte(upperHex[c>>4])
	b.WriteByte(upperHex[c&15])
}

// unreserved reports whether c is an RFC 3986 unreserved character.
func unreserved(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' ||
		c == '-' || c == '.' || c == '_' || c == '~'
}

func isHex(c byte) bool {
	return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F'
}

func isUpperHex(c byte) bool { return '0' <= c && c <= '9' || 'A' <= c && c <= 'F' }

func unhex(c byte) byte {
	switch {
	case '0' <= c && c <= '9':
		return c - '0'
	case 'a' <= c && c <= 'f':
		return c - 'a' + 10
	}
	return c - 'A' + 10
}
