package extract

import (
	"bytes"
	"mime"
	"strings"
	"unicode/utf8"

	"golang.org/x/net/html"
	"golang.org/x/net/html/charset"
	"golang.org/x/text/encoding"
	"golang.org/x/text/encoding/charmap"
)

// metaScanLimit bounds how far into the page a <meta> charset declaration
// is looked for. The HTML standard's prescan stops at 1024 bytes; real pages
// often declare it later in a long <head>, so the scan goes further but
// stops at the first element that belongs to the body.
const metaScanLimit = 64 << 10

// decode returns body as UTF-8 (without byte order mark). Precedence: byte
// order mark, charset parameter of contentType, <meta> declaration, then
// UTF-8 if the bytes are valid UTF-8, else windows-1252. Invalid sequences
// become U+FFFD.
func decode(body []byte, contentType string) []byte {
	enc, name := declaredEncoding(body, contentType)
	body = trimBOM(body)
	if enc == nil {
		if utf8.Valid(body) {
			return body
		}
		enc, name = charmap.Windows1252, "windows-1252"
	}
	if name != "utf-8" {
		if out, err := enc.NewDecoder().Bytes(body); err == nil {
			body = out
		}
		// Decoders replace invalid input rather than fail; should one
		// fail anyway, the bytes are kept and repaired as UTF-8 below.
	}
	if utf8.Valid(body) {
		return body
	}
	return bytes.ToValidUTF8(body, []byte("\uFFFD"))
}

// declaredEncoding finds the encoding, and its WHATWG name, that a byte
// order mark, the Content-Type header or a <meta> element declares; nil
// when none does.
func declaredEncoding(body []byte, contentType string) (encoding.Encoding, string) {
	for _, b := range []struct {
		bom   []byte
		label string
	}{
		{[]byte{0xEF, 0xBB, 0xBF}, "utf-8"},
		{[]byte{0xFE, 0xFF}, "utf-16be"},
		{[]byte{0xFF, 0xFE}, "utf-16le"},
	} {
		if bytes.HasPrefix(body, b.bom) {
			return charset.Lookup(b.label)
		}
	}
	if _, params, err := mime.ParseMediaType(contentType); err == nil {
		if e, name := lookupLabel(params["charset"], false); e != nil {
			return e, name
		}
	}
	return metaEncoding(body)
}

func trimBOM(body []byte) []byte {
	switch {
	case bytes.HasPrefix(body, []byte{0xEF, 0xBB, 0xBF}):
		return body[3:]
	case bytes.HasPrefix(body, []byte{0xFE, 0xFF}), bytes.HasPrefix(body, []byte{0xFF, 0xFE}):
		return body[2:]
	}
	return body
}

// lookupLabel maps a charset label to its encoding by the WHATWG Encoding
// standard. A page cannot declare itself UTF-16 in a <meta> written in
// ASCII bytes, so there (inMeta) a UTF-16 label means UTF-8, as in browsers.
func lookupLabel(label string, inMeta bool) (encoding.Encoding, string) {
	label = strings.TrimSpace(label)
	if label == "" {
		return nil, ""
	}
	e, name := charset.Lookup(label)
	if e != nil && inMeta && strings.HasPrefix(name, "utf-16") {
		return charset.Lookup("utf-8")
	}
	return e, name
}

// metaEncoding scans the page's head for <meta charset> or
// <meta http-equiv="Content-Type" content="...; charset=...">.
func metaEncoding(body []byte) (encoding.Encoding, string) {
	if len(body) > metaScanLimit {
		body = body[:metaScanLimit]
	}
	z := html.NewTokenizer(bytes.NewReader(body))
	for {
		switch z.Next() {
		case html.ErrorToken:
			return nil, ""
		case html.StartTagToken, html.SelfClosingTagToken:
			name, hasAttr := z.TagName()
			switch string(name) {
			case "meta":
			case "html", "head", "title", "link", "script", "style", "base", "noscript", "template":
				continue
			default:
				return nil, "" // the body has started
			}
			var cs, httpEquiv, content string
			for hasAttr {
				var k, v []byte
				k, v, hasAttr = z.TagAttr()
				switch string(k) {
				case "charset":
					cs = string(v)
				case "http-equiv":
					httpEquiv = string(v)
				case "content":
					content = string(v)
				}
			}
			if e, name := lookupLabel(cs, true); e != nil {
				return e, name
			}
			if strings.EqualFold(strings.TrimSpace(httpEquiv), "content-type") {
				if e, name := lookupLabel(charsetFromContent(content), true); e != nil {
					return e, name
				}
			}
		}
	}
}

// charsetFromContent extracts the charset from a meta content value such as
// "text/html; charset=Shift_JIS" (quotes allowed), following the HTML
// standard's algorithm rather than MIME parsing, which real pages often
// fail.
func charsetFromContent(content string) string {
	// ASCII case folding byte by byte keeps every byte where it is
	// (strings.ToLower does not: it writes U+FFFD for an invalid byte),
	// so that an index into lower is one into content.
	b := []byte(content)
	for i, c := range b {
		if 'A' <= c && c <= 'Z' {
			b[i] = c + 'a' - 'A'
		}
	}
	lower := string(b)
	i := strings.Index(lower, "charset")
	for i >= 0 {
		rest := strings.TrimLeft(content[i+len("charset"):], " \t\n\f\r")
		if strings.HasPrefix(rest, "=") {
			rest = strings.TrimLeft(rest[1:], " \t\n\f\r")
			if rest == "" {
				return ""
			}
			if q := rest[0]; q == '"' || q == '\'' {
				if end := strings.IndexByte(rest[1:], q); end >= 0 {
					return rest[1 : 1+end]
				}
				return ""
			}
			if end := strings.IndexAny(rest, " \t\n\f\r;"); end >= 0 {
				return rest[:end]
			}
			return rest
		}
		next := strings.Index(lower[i+1:], "charset")
		if next < 0 {
			break
		}
		i += 1 + next
	}
	return ""
}
