package llmstxt

import "errors"

// Sentinel errors, matched with errors.Is on the *FormatError Parse returns.
var (
	// ErrTooLarge means the document is bigger than Parser.MaxBytes.
	ErrTooLarge = errors.New("llmstxt: document too large")
	// ErrBinary means the document is not text: NUL or control bytes,
	// gzip data, or UTF-16.
	ErrBinary = errors.New("llmstxt: document is not text")
	// ErrTooComplex means the document's structure would make parsing
	// superlinear (see MaxNesting and the package documentation).
	ErrTooComplex = errors.New("llmstxt: document too complex to parse safely")
	// ErrNoTitle means the document has no top-level H1 heading, so it is
	// not an llms.txt file.
	ErrNoTitle = errors.New("llmstxt: no H1 title")
	// ErrHTML means the document is an HTML page. An error matching ErrHTML
	// also matches ErrNoTitle.
	ErrHTML = errors.New("llmstxt: document is HTML, not Markdown")
)

// FormatError reports input that Parse rejected. Err is one of the
// sentinels above; Detail says what was found and what to change.
type FormatError struct {
	Err    error
	Detail string
}

// Error implements error.
func (e *FormatError) Error() string {
	if e.Detail == "" {
		return e.Err.Error()
	}
	return e.Err.Error() + ": " + e.Detail
}

// Unwrap lets errors.Is match the sentinel; an ErrHTML error also matches
// ErrNoTitle, since an HTML page has no Markdown title.
func (e *FormatError) Unwrap() []error {
	if e.Err == ErrHTML {
		return []error{ErrHTML, ErrNoTitle}
	}
	return []error{e.Err}
}
