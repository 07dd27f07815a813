package normalize

import (
	"bytes"
	"errors"
	"slices"
	"strconv"
	"strings"
)

// MaxLength is the longest URL, in bytes, that URL and Resolve accept as
// input or produce as output. Sitemaps limit URLs to 2,048 characters and
// common servers reject request lines longer than 8 KiB.
const MaxLength = 8192

// Policy holds the choices a site may need to change. The zero value is the
// default policy described in the package documentation. A Policy is a
// plain value: copy it freely and use it from many goroutines.
type Policy struct {
	// KeepTrailingSlash keeps trailing slashes on paths, for sites that
	// serve different pages at /docs and /docs/.
	KeepTrailingSlash bool
	// KeepFragment keeps the fragment (normalized like the query), for
	// single-page applications whose routes live after "#".
	KeepFragment bool
	// Tracking lists the query keys removed from every URL. Keys are
	// compared ignoring ASCII case, with the key as it appears in the
	// normalized URL; an entry ending in "*" matches every key beginning
	// with the rest ("utm_*"), so "*" alone drops the whole query. A nil
	// slice means DefaultTracking(); an empty non-nil slice removes nothing.
	Tracking []string
}

var defaultTracking = []string{"utm_*", "gclid", "fbclid", "mc_cid", "mc_eid", "ref"}

// DefaultTracking returns a new copy of the tracking keys the default policy
// removes: utm_*, gclid, fbclid, mc_cid, mc_eid and ref. Append to it to
// extend the list, or filter it to keep a key a site really uses.
func DefaultTracking() []string { return slices.Clone(defaultTracking) }

// URL normalizes raw with the default policy. See the package documentation
// for the rules.
func URL(raw string) (string, error) { return Policy{}.URL(raw) }

// Resolve resolves the link reference ref against the absolute URL base
// (RFC 3986 section 5.2) and normalizes the result with the default policy.
func Resolve(base, ref string) (string, error) { return Policy{}.Resolve(base, ref) }

// URL returns the normalized form of the absolute http or https URL raw:
// the page's identity under this policy. Errors are *Error values.
func (p Policy) URL(raw string) (string, error) {
	s, err := prepare(raw)
	if err != nil {
		return "", err.at(raw, "")
	}
	r := split(s, false)
	if err := checkAbsolute(&r); err != nil {
		return "", err.at(raw, "")
	}
	out, err := p.build(&r, s)
	if err != nil {
		return "", err.at(raw, "")
	}
	return out, nil
}

// Resolve resolves the link reference ref (as found in an href or a src)
// against base and normalizes the result. Relative paths, "?query",
// "#fragment", "//host/path" and absolute URLs are all accepted; an
// empty ref names base itself.
//
// base must be the URL the page was actually fetched from (after
// redirects, or the page's <base href>), not its normalized form: with the
// default policy "https://example.com/docs/" normalizes to
// "https://example.com/docs", and the reference "intro" means
// /docs/intro against the first but /intro against the second.
//
// As browsers do, a reference that repeats the base's scheme without an
// authority ("https:intro") is treated as relative. Errors are *Error
// values with Raw set to ref and Base to base.
func (p Policy) Resolve(base, ref string) (string, error) {
	b, err := prepare(base)
	if err != nil {
		return "", err.inBase().at(ref, base)
	}
	rb := split(b, false)
	if err := checkAbsolute(&rb); err != nil {
		return "", err.inBase().at(ref, base)
	}
	s, err := prepare(ref)
	if err != nil {
		return "", err.at(ref, base)
	}
	// A reference without a scheme takes the base's, which is special
	// once the base passed checkAbsolute.
	rr := split(s, true)
	t := resolve(&rb, &rr)
	if err := checkAbsolute(&t); err != nil { // an absolute ref with its own scheme
		return "", err.at(ref, base)
	}
	out, err := p.build(&t, "")
	if err != nil {
		if t.auth == rb.auth && !rr.hasAuth && err.Reason != ErrParse {
			err = err.inBase() // the host or port came from the base
		}
		return "", err.at(ref, base)
	}
	return out, nil
}

func (e *Error) at(raw, base string) *Error {
	e.Raw, e.Base = raw, base
	return e
}

func (e *Error) inBase() *Error {
	if errors.Is(e.Reason, ErrScheme) && strings.HasPrefix(e.Detail, "no scheme") {
		e.Detail = "the base URL has no scheme; give the absolute URL the page was fetched from"
		return e
	}
	e.Detail = "in the base URL: " + e.Detail
	return e
}

// prepare trims surrounding white space and rejects control characters and
// oversized input.
func prepare(raw string) (string, *Error) {
	s := strings.TrimSpace(raw)
	if len(s) > MaxLength {
		return "", errf(ErrParse, "the URL is "+strconv.Itoa(len(s))+" bytes long; at most "+strconv.Itoa(MaxLength)+" are accepted")
	}
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c == 0x7f {
			return "", errf(ErrParse, "control character "+strconv.QuoteRune(rune(c))+" at byte "+strconv.Itoa(i)+"; percent-encode it or remove it")
		}
	}
	return s, nil
}

// parts are the five components of a URI reference (RFC 3986 appendix B).
// scheme is lowercased.
type parts struct {
	scheme string
	auth   string
	// The path is dir+path: resolve puts the base's directory in dir, so
	// merging paths needs no concatenation.
	dir      string
	path     string
	query    string
	frag     string
	hasAuth  bool
	hasQuery bool
	hasFrag  bool
}

// split breaks s into its components without validating them. In a URL
// of a special scheme (http or https here; a reference without a scheme
// when schemeless is true, as it takes its base's), a backslash before the
// query and the fragment is a slash, as the WHATWG URL standard reads it:
// "https:\\example.com\docs" is "https://example.com/docs".
func split(s string, schemeless bool) parts {
	var r parts
	// A scheme is ALPHA *( ALPHA / DIGIT / "+" / "-" / "." ) before the
	// first ':' that comes before any '/', '?' or '#'.
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c == ':' {
			if i > 0 {
				r.scheme = lowerScheme(s[:i])
				s = s[i+1:]
			}
			break
		}
		if 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' {
			continue
		}
		if i > 0 && ('0' <= c && c <= '9' || c == '+' || c == '-' || c == '.') {
			continue
		}
		break
	}
	if r.scheme == "http" || r.scheme == "https" || r.scheme == "" && schemeless {
		s = slashBackslashes(s)
	}
	if i := strings.IndexByte(s, '#'); i >= 0 {
		r.frag, r.hasFrag = s[i+1:], true
		s = s[:i]
	}
	if i := strings.IndexByte(s, '?'); i >= 0 {
		r.query, r.hasQuery = s[i+1:], true
		s = s[:i]
	}
	if strings.HasPrefix(s, "//") {
		s = s[2:]
		i := strings.IndexByte(s, '/')
		if i < 0 {
			i = len(s)
		}
		r.auth, r.hasAuth = s[:i], true
		s = s[i:]
	}
	r.path = s
	return r
}

// slashBackslashes is s with every backslash before the first '?' or '#'
// replaced by '/'; s itself when it has none there.
func slashBackslashes(s string) string {
	end := len(s)
	if i := strings.IndexAny(s, "?#"); i >= 0 {
		end = i
	}
	if strings.IndexByte(s[:end], '\\') < 0 {
		return s
	}
	return strings.ReplaceAll(s[:end], `\`, "/") + s[end:]
}

// lowerScheme lowercases a scheme, without allocating for http and https.
func lowerScheme(s string) string {
	switch {
	case strings.EqualFold(s, "http"):
		return "http"
	case strings.EqualFold(s, "https"):
		return "https"
	}
	return strings.ToLower(s)
}

// checkAbsolute rejects anything but an http or https URL with an authority.
func checkAbsolute(r *parts) *Error {
	switch r.scheme {
	case "http", "https":
	case "":
		return errf(ErrScheme, "no scheme: a relative reference is not a page URL; resolve it against the page's URL with Resolve")
	default:
		hint := ""
		if !r.hasAuth && (strings.IndexByte(r.scheme, '.') >= 0 || r.path != "" && '0' <= r.path[0] && r.path[0] <= '9') {
			hint = ` (missing "http://"?)` // "example.com:8080/x" or "localhost:8080"
		}
		return errf(ErrScheme, "scheme "+strconv.Quote(r.scheme)+" is not http or https"+hint)
	}
	if !r.hasAuth {
		return errf(ErrHost, `no host: "//" must follow "`+r.scheme+`:"`)
	}
	return nil
}

// resolve computes the target of reference r against base b (RFC 3986
// section 5.2.2, with the non-strict rule for a reference that repeats the
// base's scheme). Dot segments are left for build to remove.
func resolve(b, r *parts) parts {
	if r.scheme != "" && (r.scheme != b.scheme || r.hasAuth) {
		return *r
	}
	t := parts{scheme: b.scheme, frag: r.frag, hasFrag: r.hasFrag}
	switch {
	case r.hasAuth:
		t.auth, t.hasAuth = r.auth, true
		t.path = r.path
		t.query, t.hasQuery = r.query, r.hasQuery
		return t
	case r.path == "":
		t.path = b.path
		if r.hasQuery {
			t.query, t.hasQuery = r.query, true
		} else {
			t.query, t.hasQuery = b.query, b.hasQuery
		}
	case r.path[0] == '/':
		t.path = r.path
		t.query, t.hasQuery = r.query, r.hasQuery
	default:
		// Merge: the base path up to its last '/', then the reference.
		if b.path == "" {
			t.dir = "/"
		} else {
			t.dir = b.path[:strings.LastIndexByte(b.path, '/')+1]
		}
		t.path = r.path
		t.query, t.hasQuery = r.query, r.hasQuery
	}
	t.auth, t.hasAuth = b.auth, b.hasAuth
	return t
}

// param is one query parameter, as offsets into the output buffer.
type param struct {
	start, keyEnd, end int
}

// build writes the normalized URL of the absolute http(s) reference r. If
// the result equals orig, orig is returned, which saves an allocation.
func (p Policy) build(r *parts, orig string) (string, *Error) {
	var stack [512]byte
	buf := stack[:0]
	buf = append(buf, r.scheme...)
	buf = append(buf, "://"...)
	var err *Error
	if buf, err = appendAuthority(buf, r.auth, r.scheme == "https"); err != nil {
		return "", err
	}

	// Path: escapes normalized first, so that "%2E%2E" counts as "..".
	pathStart := len(buf)
	if r.dir == "" && (r.path == "" || r.path[0] != '/') {
		buf = append(buf, '/')
	}
	buf = appendEscaped(buf, r.dir) // ends in '/', so no escape spans the seam
	buf = appendEscaped(buf, r.path)
	if hasDotSegment(buf[pathStart:]) {
		buf = buf[:pathStart+len(removeDotSegments(buf[pathStart:]))]
	}
	if !p.KeepTrailingSlash {
		for len(buf)-pathStart > 1 && buf[len(buf)-1] == '/' {
			buf = buf[:len(buf)-1]
		}
	}

	if r.hasQuery && r.query != "" {
		buf = p.appendQuery(buf, r.query)
	}
	if p.KeepFragment && r.hasFrag && r.frag != "" {
		buf = append(buf, '#')
		buf = appendEscaped(buf, r.frag)
	}
	if len(buf) > MaxLength {
		return "", errf(ErrParse, "the normalized URL is "+strconv.Itoa(len(buf))+" bytes long; at most "+strconv.Itoa(MaxLength)+" are allowed")
	}
	if string(buf) == orig {
		return orig, nil
	}
	return string(buf), nil
}

// appendQuery appends "?" and the normalized, filtered and sorted
// parameters of q, or nothing if no parameter remains.
func (p Policy) appendQuery(buf []byte, q string) []byte {
	qStart := len(buf)
	buf = append(buf, '?')
	var spans [16]param
	params := spans[:0]
	sorted := true
	for q != "" {
		var item string
		if i := strings.IndexByte(q, '&'); i >= 0 {
			item, q = q[:i], q[i+1:]
		} else {
			item, q = q, ""
		}
		if item == "" {
			continue
		}
		start := len(buf)
		buf = appendEscaped(buf, item)
		pr := param{start: start, keyEnd: len(buf), end: len(buf)}
		for i := start; i < len(buf); i++ {
			if buf[i] == '=' {
				pr.keyEnd = i
				break
			}
		}
		if p.isTracking(buf[start:pr.keyEnd]) {
			buf = buf[:start]
			continue
		}
		if n := len(params); n > 0 && compareParams(buf, params[n-1], pr) > 0 {
			sorted = false
		}
		params = append(params, pr)
		buf = append(buf, '&')
	}
	if len(params) == 0 {
		return buf[:qStart]
	}
	buf = buf[:len(buf)-1] // the last '&'
	if sorted {
		return buf
	}
	slices.SortStableFunc(params, func(a, b param) int { return compareParams(buf, a, b) })
	// Write the parameters in order after the current end, then move them
	// back into place.
	body := qStart + 1
	end := len(buf)
	for i, pr := range params {
		if i > 0 {
			buf = append(buf, '&')
		}
		buf = append(buf, buf[pr.start:pr.end]...)
	}
	n := copy(buf[body:], buf[end:])
	return buf[:body+n]
}

// compareParams orders parameters by key, then by the rest ("" before
// "=value", then by value).
func compareParams(buf []byte, a, b param) int {
	if c := bytes.Compare(buf[a.start:a.keyEnd], buf[b.start:b.keyEnd]); c != 0 {
		return c
	}
	return bytes.Compare(buf[a.keyEnd:a.end], buf[b.keyEnd:b.end])
}

// isTracking reports whether the normalized key matches the policy's
// tracking list.
func (p Policy) isTracking(key []byte) bool {
	list := p.Tracking
	if list == nil {
		list = defaultTracking
	}
	for _, t := range list {
		if n := len(t); n > 0 && t[n-1] == '*' {
			if len(key) >= n-1 && foldEqual(key[:n-1], t[:n-1]) {
				return true
			}
		} else if foldEqual(key, t) {
			return true
		}
	}
	return false
}

// foldEqual reports whether b equals s ignoring ASCII case.
func foldEqual(b []byte, s string) bool {
	if len(b) != len(s) {
		return false
	}
	for i := 0; i < len(b); i++ {
		x, y := b[i], s[i]
		if x == y {
			continue
		}
		if 'A' <= x && x <= 'Z' {
			x += 'a' - 'A'
		}
		if 'A' <= y && y <= 'Z' {
			y += 'a' - 'A'
		}
		if x != y {
			return false
		}
	}
	return true
}
