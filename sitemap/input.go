package sitemap

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"encoding/xml"
	"errors"
	"fmt"
	"io"

	"golang.org/x/text/encoding/unicode"
	"golang.org/x/text/transform"
)

const (
	// maxGzipLayers is how many nested gzip layers are decompressed.
	maxGzipLayers = 2
	bufSize       = 32 << 10
)

// input layers the caller's reader: size caps on every layer, gzip, byte
// order marks. It remembers a failure of the caller's reader so that it is
// reported as such and not as a malformed document.
type input struct {
	src   srcReader
	limit int64
	utf16 bool  // the document was transcoded from UTF-16
	skip  int64 // bytes dropped before the parser started (BOM, blanks)
	lines int   // newlines among them
}

func newInput(r io.Reader, limit int64) *input {
	return &input{src: srcReader{r: r}, limit: limit}
}

type srcReader struct {
	r   io.Reader
	err error
}

func (s *srcReader) Read(p []byte) (int, error) {
	n, err := s.r.Read(p)
	if err != nil && err != io.EOF {
		s.err = err
	}
	return n, err
}

// capReader returns a *TooLargeError once more than max bytes were read.
type capReader struct {
	r      io.Reader
	n, max int64
}

func (c *capReader) Read(p []byte) (int, error) {
	if c.n > c.max {
		return 0, &TooLargeError{Limit: c.max}
	}
	// Read at most one byte past the limit, to tell "exactly max" from
	// "more than max".
	if room := c.max - c.n + 1; int64(len(p)) > room {
		p = p[:room]
	}
	n, err := c.r.Read(p)
	c.n += int64(n)
	if c.n > c.max {
		return n - int(c.n-c.max), &TooLargeError{Limit: c.max}
	}
	return n, err
}

// gzipError marks an error raised while decompressing.
type gzipError struct{ err error }

func (e *gzipError) Error() string { return "gzip: " + e.err.Error() }
func (e *gzipError) Unwrap() error { return e.err }

type gunzipReader struct{ zr *gzip.Reader }

func (g gunzipReader) Read(p []byte) (int, error) {
	n, err := g.zr.Read(p)
	if err != nil && err != io.EOF && !errors.Is(err, ErrTooLarge) {
		err = &gzipError{err}
	}
	return n, err
}

// open returns a reader positioned at the first non-blank character of the
// uncompressed, BOM-free document.
func (in *input) open() (*bufio.Reader, error) {
	br := bufio.NewReaderSize(&capReader{r: &in.src, max: in.limit}, bufSize)
	for layer := 0; ; layer++ {
		magic, err := br.Peek(2)
		if len(magic) < 2 || magic[0] != 0x1f || magic[1] != 0x8b {
			if err != nil && err != io.EOF {
				return nil, err
			}
			break
		}
		if layer == maxGzipLayers {
			return nil, &FormatError{Format: "gzip"}
		}
		zr, err := gzip.NewReader(br)
		if err != nil {
			if errors.Is(err, ErrTooLarge) || in.src.err != nil {
				return nil, err
			}
			return nil, &gzipError{err}
		}
		br = bufio.NewReaderSize(&capReader{r: gunzipReader{zr}, max: in.limit}, bufSize)
	}

	bom, err := br.Peek(3)
	switch {
	case bytes.HasPrefix(bom, []byte{0xef, 0xbb, 0xbf}):
		_, _ = br.Discard(3)
		in.skip += 3
	case bytes.HasPrefix(bom, []byte{0xfe, 0xff}), bytes.HasPrefix(bom, []byte{0xff, 0xfe}):
		dec := unicode.UTF16(unicode.BigEndian, unicode.ExpectBOM).NewDecoder()
		br = bufio.NewReaderSize(transform.NewReader(br, dec), bufSize)
		in.utf16 = true
	case err != nil && err != io.EOF:
		return nil, err
	}

	for {
		c, err := br.ReadByte()
		if err != nil {
			if err == io.EOF {
				return br, nil
			}
			return nil, err
		}
		if !isSpace(c) {
			_ = br.UnreadByte()
			return br, nil
		}
		in.skip++
		if c == '\n' {
			in.lines++
		}
	}
}

// classify turns an error met while reading into the package's error types.
func (in *input) classify(err error, line int, offset int64) error {
	var tooLarge *TooLargeError
	if errors.As(err, &tooLarge) {
		return tooLarge
	}
	if in.src.err != nil {
		return fmt.Errorf("sitemap: reading input: %w", in.src.err)
	}
	var formatErr *FormatError
	if errors.As(err, &formatErr) {
		return formatErr
	}
	var xmlErr *xml.SyntaxError
	if errors.As(err, &xmlErr) {
		return &SyntaxError{Line: line, Offset: offset, Err: xmlErr}
	}
	return &SyntaxError{Line: line, Offset: offset, Err: err}
}

// looksLikeHTML reports whether the document starts like an HTML page.
func looksLikeHTML(br *bufio.Reader) bool {
	head, _ := br.Peek(16)
	return hasPrefixFold(head, "<!doctype html") || hasPrefixFold(head, "<html")
}

var htmlRoots = map[string]bool{
	"html": true, "head": true, "body": true, "title": true, "meta": true,
	"h1": true, "h2": true, "h3": true, "h4": true, "h5": true, "h6": true,
	"p": true, "div": true, "span": true, "a": true, "br": true, "pre": true,
	"table": true, "center": true, "script": true, "style": true,
}

func hasPrefixFold(b []byte, prefix string) bool {
	if len(b) < len(prefix) {
		return false
	}
	for i := 0; i < len(prefix); i++ {
		c := b[i]
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		if c != prefix[i] {
			return false
		}
	}
	return true
}

func isSpace(c byte) bool {
	return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v'
}

func trimSpace(b []byte) []byte {
	for len(b) > 0 && isSpace(b[0]) {
		b = b[1:]
	}
	for len(b) > 0 && isSpace(b[len(b)-1]) {
		b = b[:len(b)-1]
	}
	return b
}
