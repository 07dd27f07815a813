package normalize

const upperHex = "0123456789ABCDEF"

// Character classes of RFC 3986, as lookup tables indexed by byte.
var (
	// unreserved = ALPHA / DIGIT / "-" / "." / "_" / "~"
	unreserved [256]bool
	// literal holds the bytes that may appear unescaped in a path, query or
	// fragment: pchar / "/" / "?" (pchar = unreserved / sub-delims / ":" /
	// "@"). Everything else is percent-encoded.
	literal [256]bool
	// hostByte holds the bytes allowed in a normalized registered name:
	// letters, digits, "-", "." and "_" (seen in real host names although
	// DNS host names forbid it).
	hostByte [256]bool
)

func init() {
	for c := 'a'; c <= 'z'; c++ {
		unreserved[c] = true
		unreserved[c-'a'+'A'] = true
	}
	for c := '0'; c <= '9'; c++ {
		unreserved[c] = true
	}
	for _, c := range "-._~" {
		unreserved[c] = true
	}
	literal = unreserved
	for _, c := range "!$&'()*+,;=:@/?" {
		literal[c] = true
	}
	hostByte = unreserved
	hostByte['~'] = false
}

func isHex(c byte) bool {
	return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F'
}

func unhex(c byte) byte {
	switch {
	case c <= '9':
		return c - '0'
	case c <= 'F':
		return c - 'A' + 10
	default:
		return c - 'a' + 10
	}
}

// appendEscaped appends s to dst with its percent-encoding normalized:
//   - a valid escape of an unreserved character is decoded ("%7E" → "~");
//   - any other valid escape is kept, with uppercase hex ("%2f" → "%2F");
//   - a "%" that does not start a valid escape becomes "%25";
//   - a byte that may not appear literally (space, '"', '<', '[', non-ASCII
//     UTF-8 bytes, ...) is percent-encoded.
//
// The result contains only literal bytes and valid uppercase escapes of
// bytes other than unreserved ones, so appendEscaped is idempotent.
func appendEscaped(dst []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '%':
			if i+2 < len(s) && isHex(s[i+1]) && isHex(s[i+2]) {
				b := unhex(s[i+1])<<4 | unhex(s[i+2])
				i += 2
				if unreserved[b] {
					dst = append(dst, b)
					continue
				}
				dst = append(dst, '%', upperHex[b>>4], upperHex[b&15])
				continue
			}
			dst = append(dst, "%25"...)
		case literal[c]:
			dst = append(dst, c)
		default:
			dst = append(dst, '%', upperHex[c>>4], upperHex[c&15])
		}
	}
	return dst
}

// removeDotSegments removes "." and ".." segments from p in place, as RFC
// 3986 section 5.2.4 does, and returns the shortened slice. p must begin
// with "/". A path ending in a dot segment keeps its trailing slash
// ("/a/b/.." → "/a/"); ".." never climbs above the root.
func removeDotSegments(p []byte) []byte {
	w := 0 // p[:w] is the output so far
	for i := 0; i < len(p); {
		// p[i] == '/': the segment runs to the next '/' or the end.
		j := i + 1
		for j < len(p) && p[j] != '/' {
			j++
		}
		last := j == len(p)
		switch seg := p[i+1 : j]; {
		case len(seg) == 1 && seg[0] == '.':
			if last {
				p[w] = '/'
				w++
			}
		case len(seg) == 2 && seg[0] == '.' && seg[1] == '.':
			for w > 0 && p[w-1] != '/' {
				w--
			}
			if w > 0 {
				w-- // drop the '/' that began the removed segment
			}
			if last {
				p[w] = '/'
				w++
			}
		default:
			w += copy(p[w:], p[i:j])
		}
		i = j
	}
	if w == 0 {
		p[0] = '/'
		w = 1
	}
	return p[:w]
}

// hasDotSegment reports whether the path p (beginning with "/") contains a
// "." or ".." segment.
func hasDotSegment(p []byte) bool {
	for i := 0; i < len(p); i++ {
		if p[i] != '/' || i+1 >= len(p) || p[i+1] != '.' {
			continue
		}
		j := i + 2
		if j < len(p) && p[j] == '.' {
			j++
		}
		if j == len(p) || p[j] == '/' {
			return true
		}
	}
	return false
}
