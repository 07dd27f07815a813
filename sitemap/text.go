package sitemap

import (
	"bufio"
	"fmt"
	"io"
	"net/url"
	"unicode/utf8"
)

// parseText reads a plain-text sitemap: one URL per line. Blank lines and
// lines starting with '#' are ignored; other lines that are not absolute
// http(s) URLs are skipped and reported. A document with no URL line at all
// but with rejected lines is a *FormatError: it is some other text.
func (p Parser) parseText(in *input, br *bufio.Reader, yield func(Entry) error) (Kind, error) {
	maxLoc := p.maxLoc()
	var (
		long     = capture{limit: maxLoc} // a line longer than the reader's buffer
		isLong   bool
		line     = in.lines
		offset   = in.skip
		yielded  int
		rejected int
	)
	for {
		raw, err := br.ReadSlice('\n')
		offset += int64(len(raw))
		if err == bufio.ErrBufferFull {
			if !isLong {
				long.reset()
				isLong = true
			}
			long.add(raw)
			continue
		}
		if err != nil && err != io.EOF {
			// A line cut short by the size cap or a read error is dropped.
			return Text, in.classify(err, line+1, offset)
		}
		if len(raw) > 0 || isLong {
			line++
			text, over := raw, false
			if isLong {
				long.add(raw)
				text, over, isLong = long.buf, long.over, false
			}
			text = trimSpace(text)
			switch {
			case len(text) == 0 || text[0] == '#':
			case over || len(text) > maxLoc:
				rejected++
				p.skip(line, text, ErrLocTooLong)
			case !isHTTPURL(text):
				rejected++
				p.skip(line, text, ErrNotURL)
			default:
				if yerr := yield(Entry{Kind: Text, Loc: string(text)}); yerr != nil {
					return Text, fmt.Errorf("sitemap: stopped by yield after %d entries: %w", yielded, yerr)
				}
				yielded++
			}
		}
		if err == io.EOF {
			if yielded == 0 && rejected > 0 {
				return Unknown, &FormatError{Format: "text"}
			}
			return Text, nil
		}
	}
}

// isHTTPURL reports whether b is an absolute http or https URL with a host
// and without blanks or control characters.
func isHTTPURL(b []byte) bool {
	if !hasPrefixFold(b, "http://") && !hasPrefixFold(b, "https://") {
		return false
	}
	for _, c := range b {
		if c <= ' ' || c == 0x7f {
			return false
		}
	}
	if !utf8.Valid(b) {
		return false
	}
	u, err := url.Parse(string(b))
	return err == nil && u.Host != ""
}
