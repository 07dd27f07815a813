package extract

import (
	"crypto/sha256"
	"encoding/hex"
	"mime"
	"net/url"
	"sort"
	"strings"
)

// maxComponent bounds the length of each path component DocPath returns
// (file systems allow 255 bytes); longer ones are cut and suffixed with a
// hash of the whole component.
const maxComponent = 120

// DocPath maps a page URL and its response Content-Type to a relative,
// slash-separated file path for storing the page's document:
// "<host>/<path segments>/<name>.<ext>".
//
//   - The extension is that of what gets stored, chosen by the content
//     type, never by the URL's suffix: text/html and application/xhtml+xml
//     → md (pages are stored as Markdown), text/markdown → md, text/plain
//     → txt, application/pdf → pdf, application/json → json, text/xml and
//     application/xml → xml, text/csv → csv, anything else → bin.
//   - The extension is always appended, so "/guide" and "/guide.md" (a
//     docs site's page and its Markdown twin) stay apart: guide.md and
//     guide.md.md.
//   - A directory-like URL ("/", "/docs/") maps to index.<ext>; a literal
//     last segment "index" is written "%69ndex" so it cannot collide.
//   - A query string is hashed into the name ("~q" and 16 hex digits of
//     the SHA-256 of the query with its parameters ordered by name), so
//     URLs that differ only in their query never collide, while reordered
//     parameters give the same name.
//   - Segments are percent-decoded, then every byte outside A-Z a-z 0-9
//     "-", "_" and "." is percent-encoded again, so no segment can contain
//     a separator, and "." and ".." segments are encoded too: the result
//     never escapes its root. Dot segments in the URL path are resolved
//     first and empty segments dropped. Components longer than 120 bytes
//     are cut and suffixed with "~h" and a hash of the whole component.
//   - The scheme, user info and fragment are not part of the path; the host
//     is lower-cased and keeps its port ("example.com%3A8080").
//
// An unparsable URL or one without a host maps to "~invalid/~h<hash>.<ext>".
func DocPath(pageURL, contentType string) string {
	ext := docExt(contentType)
	u, err := url.Parse(pageURL)
	if err != nil || u.Host == "" {
		return "~invalid/~h" + shortHash(pageURL) + "." + ext
	}
	parts := []string{bound(encodeSegment(strings.ToLower(u.Host)), 0)}

	raw := u.EscapedPath()
	dirLike := raw == "" || strings.HasSuffix(raw, "/")
	segs := removeDotSegments(strings.Split(raw, "/"))
	if len(segs) > 0 && raw != "" && !strings.HasSuffix(raw, "/") {
		// resolution of a trailing "." or ".." leaves a directory
		last := raw[strings.LastIndexByte(raw, '/')+1:]
		if last == "." || last == ".." {
			dirLike = true
		}
	}
	var name string
	if !dirLike && len(segs) > 0 {
		name = segs[len(segs)-1]
		segs = segs[:len(segs)-1]
	}
	for _, s := range segs {
		parts = append(parts, bound(encodeSegment(unescape(s)), 0))
	}

	if name == "" {
		name = "index"
	} else {
		name = encodeSegment(unescape(name))
		if name == "index" {
			name = "%69ndex"
		}
	}
	if q := normalizedQuery(u); q != "" {
		name += "~q" + shortHash(q)
	}
	parts = append(parts, bound(name, len(ext)+1)+"."+ext)
	return strings.Join(parts, "/")
}

// docExt returns the extension of the document stored for contentType.
func docExt(contentType string) string {
	mt, _, err := mime.ParseMediaType(contentType)
	if err != nil {
		return "bin"
	}
	switch mt {
	case "text/html", "application/xhtml+xml", "text/markdown", "text/x-markdown":
		return "md"
	case "text/plain":
		return "txt"
	case "application/pdf":
		return "pdf"
	case "application/json":
		return "json"
	case "text/xml", "application/xml":
		return "xml"
	case "text/csv":
		return "csv"
	}
	return "bin"
}

// removeDotSegments resolves "." and ".." segments (RFC 3986, 5.2.4) and
// drops empty ones.
func removeDotSegments(segs []string) []string {
	out := make([]string, 0, len(segs))
	for _, s := range segs {
		switch s {
		case "", ".":
		case "..":
			if len(out) > 0 {
				out = out[:len(out)-1]
			}
		default:
			out = append(out, s)
		}
	}
	return out
}

func unescape(s string) string {
	if d, err := url.PathUnescape(s); err == nil {
		return d
	}
	return s
}

// encodeSegment percent-encodes every byte of s outside A-Z a-z 0-9 - _ .
// and encodes "." and ".." whole, so the result is one safe file name.
func encodeSegment(s string) string {
	switch s {
	case ".":
		return "%2E"
	case "..":
		return "%2E%2E"
	}
	const hexDigits = "0123456789ABCDEF"
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		if 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '-' || c == '_' || c == '.' {
			b.WriteByte(c)
			continue
		}
		b.WriteByte('%')
		b.WriteByte(hexDigits[c>>4])
		b.WriteByte(hexDigits[c&15])
	}
	return b.String()
}

// bound cuts a component that, with reserve more bytes, would be longer
// than maxComponent bytes and appends "~h" and a hash of the whole
// component, never cutting inside a %XX escape.
func bound(s string, reserve int) string {
	if len(s)+reserve <= maxComponent {
		return s
	}
	cut := maxComponent - reserve - len("~h") - 16
	if i := strings.LastIndexByte(s[:cut], '%'); i >= 0 && i > cut-3 {
		cut = i
	}
	return s[:cut] + "~h" + shortHash(s)
}

// normalizedQuery returns u's raw query with its parameters ordered by
// name (parameters of the same name keep their order), or "" when there is
// none. Parameters are compared as written, so "x" and "x=" differ.
func normalizedQuery(u *url.URL) string {
	if u.RawQuery == "" {
		return ""
	}
	params := strings.Split(u.RawQuery, "&")
	sort.SliceStable(params, func(i, j int) bool {
		ki, _, _ := strings.Cut(params[i], "=")
		kj, _, _ := strings.Cut(params[j], "=")
		return ki < kj
	})
	return strings.Join(params, "&")
}

func shortHash(s string) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:8])
}
