package sitemap

import (
	"encoding/xml"
	"errors"
	"fmt"
)

// Sentinel errors for errors.Is. The typed errors below match them.
var (
	// ErrNotSitemap: the document is not a sitemap (HTML, another XML
	// format, empty, text without URLs). Matched by *FormatError.
	ErrNotSitemap = errors.New("sitemap: not a sitemap")
	// ErrTooLarge: the document exceeds Parser.MaxBytes. Matched by
	// *TooLargeError.
	ErrTooLarge = errors.New("sitemap: document too large")
	// ErrMalformed: the document is truncated or not well-formed. Matched by
	// *SyntaxError.
	ErrMalformed = errors.New("sitemap: malformed document")
)

// Reasons an entry is skipped, carried by *SkipError.
var (
	ErrEmptyLoc   = errors.New("empty loc")
	ErrLocTooLong = errors.New("loc longer than Parser.MaxLocBytes")
	ErrNotURL     = errors.New("not an absolute http(s) URL")
)

// FormatError means the document is not a sitemap Parse can read.
type FormatError struct {
	// Format names what the document is: "HTML", "XML" (another root
	// element or no root at all), "text" (no URL lines), "empty" or "gzip"
	// (nested too deep).
	Format string
	// Root is the local name of the XML root element, when there is one.
	Root string
	// Err is the underlying cause, if any.
	Err error
}

// Error describes the failure.
func (e *FormatError) Error() string {
	switch {
	case e.Format == "HTML":
		root := ""
		if e.Root != "" {
			root = " (root element <" + e.Root + ">)"
		}
		return "sitemap: got an HTML page" + root + ", not a sitemap; check the URL, the server may answer with an error page"
	case e.Format == "empty":
		return "sitemap: document is empty"
	case e.Format == "gzip":
		return fmt.Sprintf("sitemap: gzip nested more than %d levels deep", maxGzipLayers)
	case e.Format == "text":
		return "sitemap: plain-text document has no absolute http(s) URL line; it is not a text sitemap"
	case e.Root != "":
		return "sitemap: XML root element <" + e.Root + "> is not urlset, sitemapindex, rss or feed"
	case e.Err != nil:
		return "sitemap: not an XML sitemap: " + e.Err.Error()
	default:
		return "sitemap: not a sitemap (" + e.Format + ")"
	}
}

// Is reports whether target is ErrNotSitemap.
func (e *FormatError) Is(target error) bool { return target == ErrNotSitemap }

// Unwrap returns the underlying cause.
func (e *FormatError) Unwrap() error { return e.Err }

// TooLargeError means the document (or one of its compressed layers) is
// larger than the configured limit; entries before the limit were yielded.
type TooLargeError struct {
	Limit int64 // the limit in bytes
}

// Error describes the failure.
func (e *TooLargeError) Error() string {
	return fmt.Sprintf("sitemap: document exceeds %d bytes uncompressed; raise Parser.MaxBytes to accept it", e.Limit)
}

// Is reports whether target is ErrTooLarge.
func (e *TooLargeError) Is(target error) bool { return target == ErrTooLarge }

// SyntaxError means the document is truncated or not well-formed (including
// corrupt gzip data). Entries before the error were yielded.
type SyntaxError struct {
	// Line is the 1-based line of the uncompressed document, 0 if unknown.
	Line int
	// Offset is the byte offset in the uncompressed (decoded) document.
	Offset int64
	// Err is the cause, such as an *xml.SyntaxError or a gzip error.
	Err error
}

// Error describes the failure.
func (e *SyntaxError) Error() string {
	msg := e.Err.Error()
	var xe *xml.SyntaxError
	if errors.As(e.Err, &xe) {
		msg = xe.Msg // without its own "on line N"
	}
	if e.Line > 0 {
		return fmt.Sprintf("sitemap: malformed document at line %d (byte %d): %s", e.Line, e.Offset, msg)
	}
	return fmt.Sprintf("sitemap: malformed document at byte %d: %s", e.Offset, msg)
}

// Is reports whether target is ErrMalformed.
func (e *SyntaxError) Is(target error) bool { return target == ErrMalformed }

// Unwrap returns the cause.
func (e *SyntaxError) Unwrap() error { return e.Err }

// SkipError describes one entry or text line Parse left out. It is passed
// to Parser.OnSkip; Parse itself never returns it.
type SkipError struct {
	// Line is the 1-based line where the entry ended.
	Line int
	// Loc is the rejected value, cut to 200 bytes.
	Loc string
	// Err is ErrEmptyLoc, ErrLocTooLong or ErrNotURL.
	Err error
}

// Error describes the failure.
func (e *SkipError) Error() string {
	return fmt.Sprintf("sitemap: line %d: skipped %q: %v", e.Line, e.Loc, e.Err)
}

// Unwrap returns the reason.
func (e *SkipError) Unwrap() error { return e.Err }
