package sitemap

import (
	"errors"
	"io"
	"time"
)

// Kind is the format of a parsed document.
type Kind int

// The kinds of document Parse recognizes. Unknown is returned when the
// document could not be identified.
const (
	Unknown Kind = iota
	URLSet       // <urlset>: entries are pages
	Index        // <sitemapindex>: entries are child sitemaps
	Text         // plain text, one URL per line
	RSS          // RSS 0.9x/1.0/2.0 feed: entries are items
	Atom         // Atom 0.3/1.0 feed: entries are entries
)

// String returns the root element name of the kind ("urlset",
// "sitemapindex"), or "text", "rss", "atom" or "unknown".
func (k Kind) String() string {
	switch k {
	case URLSet:
		return "urlset"
	case Index:
		return "sitemapindex"
	case Text:
		return "text"
	case RSS:
		return "rss"
	case Atom:
		return "atom"
	default:
		return "unknown"
	}
}

// ChangeFreq is a <changefreq> value. Only the protocol's seven values are
// kept; anything else becomes the empty ChangeFreq.
type ChangeFreq string

// The change frequencies the protocol defines.
const (
	Always  ChangeFreq = "always"
	Hourly  ChangeFreq = "hourly"
	Daily   ChangeFreq = "daily"
	Weekly  ChangeFreq = "weekly"
	Monthly ChangeFreq = "monthly"
	Yearly  ChangeFreq = "yearly"
	Never   ChangeFreq = "never"
)

// Entry is one <url> of a url set, one <sitemap> of an index, one line of a
// text sitemap, or one item of a feed.
type Entry struct {
	// Kind is the kind of the document the entry comes from: Index entries
	// are child sitemaps, every other kind lists pages.
	Kind Kind
	// Loc is the URL, trimmed of surrounding whitespace, never empty.
	Loc string
	// LastMod is the last modification time in UTC; zero when absent or
	// unparseable.
	LastMod time.Time
	// ChangeFreq is the declared change frequency; empty when absent or not
	// one of the protocol's values.
	ChangeFreq ChangeFreq
	// Priority is the declared priority in [0, 1]; valid only when
	// HasPriority is true (the protocol's default is 0.5).
	Priority float64
	// HasPriority reports whether a valid <priority> was present.
	HasPriority bool
}

// Default limits used when the Parser fields are zero.
const (
	// DefaultMaxBytes is the protocol's size limit for one sitemap,
	// 50 MiB (52,428,800 bytes) of uncompressed data.
	DefaultMaxBytes int64 = 50 << 20
	// DefaultMaxLocBytes caps one URL. The protocol allows 2,048
	// characters; the default leaves generous room for real-world URLs.
	DefaultMaxLocBytes = 8 << 10
)

// Parser holds the limits for parsing. The zero value uses the defaults;
// a Parser is safe for concurrent use as long as OnSkip is.
type Parser struct {
	// MaxBytes caps the uncompressed size of the document (and of every
	// compressed layer). Zero or negative means DefaultMaxBytes.
	MaxBytes int64
	// MaxLocBytes caps the length of one URL; longer entries are skipped.
	// Zero or negative means DefaultMaxLocBytes.
	MaxLocBytes int
	// OnSkip, when set, is called for every entry or text line that was
	// left out, with the reason (ErrEmptyLoc, ErrLocTooLong or ErrNotURL).
	OnSkip func(*SkipError)
}

// Parse reads a sitemap from r with the default limits and calls yield for
// each entry in document order. It returns the document's kind and the
// first error; see the package documentation for the error types.
func Parse(r io.Reader, yield func(Entry) error) (Kind, error) {
	return Parser{}.Parse(r, yield)
}

// Parse reads a sitemap from r and calls yield for each entry in document
// order. It returns the document's kind and the first error. The kind is
// known once the root element or first line was read, so it is set
// alongside a *SyntaxError or *TooLargeError met later; with a
// *FormatError it is Unknown. To stop early, return an error from yield.
func (p Parser) Parse(r io.Reader, yield func(Entry) error) (Kind, error) {
	if r == nil || yield == nil {
		return Unknown, errors.New("sitemap: Parse needs a non-nil reader and yield function")
	}
	in := newInput(r, p.maxBytes())
	br, err := in.open()
	if err != nil {
		return Unknown, in.classify(err, 0, 0)
	}
	first, err := br.Peek(1)
	if err != nil {
		if err == io.EOF {
			return Unknown, &FormatError{Format: "empty"}
		}
		return Unknown, in.classify(err, 0, 0)
	}
	if first[0] == '<' {
		if looksLikeHTML(br) {
			return Unknown, &FormatError{Format: "HTML"}
		}
		return p.parseXML(in, br, yield)
	}
	return p.parseText(in, br, yield)
}

func (p Parser) maxBytes() int64 {
	if p.MaxBytes <= 0 {
		return DefaultMaxBytes
	}
	return p.MaxBytes
}

func (p Parser) maxLoc() int {
	if p.MaxLocBytes <= 0 {
		return DefaultMaxLocBytes
	}
	return p.MaxLocBytes
}

func (p Parser) skip(line int, loc []byte, reason error) {
	if p.OnSkip == nil {
		return
	}
	const show = 200
	s := string(loc[:min(len(loc), show)])
	if len(loc) > show {
		s += "…"
	}
	p.OnSkip(&SkipError{Line: line, Loc: s, Err: reason})
}
