package llmstxt

import (
	"bytes"
	"fmt"
	"strings"

	"github.com/yuin/goldmark/ast"
	"github.com/yuin/goldmark/parser"
	"github.com/yuin/goldmark/text"
	"github.com/yuin/goldmark/util"
)

// DefaultMaxBytes is the size limit Parse applies when Parser.MaxBytes is 0.
const DefaultMaxBytes = 10 << 20

// File is a parsed llms.txt document.
type File struct {
	// Title is the plain text of the first top-level H1.
	Title string `json:"title"`
	// Summary is the plain text of the blockquote right after the title;
	// paragraphs are separated by a blank line. Empty when there is none.
	Summary string `json:"summary,omitempty"`
	// Details is the Markdown source between the summary (or the title) and
	// the first section heading, without surrounding blank lines.
	Details string `json:"details,omitempty"`
	// Links are the links that appear before the first section: in the
	// title, the summary, the details, or above the title.
	Links []Link `json:"links,omitempty"`
	// Sections are the H2 sections (and later H1 sections) in order.
	Sections []Section `json:"sections,omitempty"`
}

// Section is one H2 section of an llms.txt file.
type Section struct {
	// Name is the plain text of the section heading.
	Name string `json:"name"`
	// Optional is true for the section named "Optional" (any case): its
	// pages can be skipped when a shorter context is needed.
	Optional bool `json:"optional,omitempty"`
	// Links are all the links in the section, in document order, including
	// links in prose, nested lists and H3 subsections.
	Links []Link `json:"links,omitempty"`
}

// Link is one Markdown link.
type Link struct {
	// Title is the plain text of the link.
	Title string `json:"title"`
	// URL is the destination as written: relative URLs stay relative.
	URL string `json:"url"`
	// Description is the text after a link that starts a list item or a
	// line, without the ":" or dash separating it; empty for other links.
	Description string `json:"description,omitempty"`
}

// Parser parses llms.txt documents with configurable limits. The zero value
// is ready to use; a Parser is safe for concurrent use.
type Parser struct {
	// MaxBytes is the largest document accepted, in bytes; 0 or less
	// means DefaultMaxBytes.
	MaxBytes int
}

// Parse parses an llms.txt document with the default limits.
// Errors are *FormatError values matching ErrTooLarge, ErrBinary,
// ErrTooComplex, ErrNoTitle or ErrHTML.
func Parse(data []byte) (*File, error) {
	return Parser{}.Parse(data)
}

// markdown is the CommonMark parser shared by all calls, extended with the
// paragraph guard. goldmark parsers are safe for concurrent use.
var markdown = parser.NewParser(
	parser.WithBlockParsers(parser.DefaultBlockParsers()...),
	parser.WithInlineParsers(parser.DefaultInlineParsers()...),
	parser.WithParagraphTransformers(append(parser.DefaultParagraphTransformers(),
		util.Prioritized(paragraphGuard{}, 10))...),
)

// Parse parses an llms.txt document. data is not modified or retained.
//
// A document larger than chunkThreshold is parsed in pieces cut where a
// top-level block starts (see chunkBounds), each piece's syntax tree
// dropped once its links are read, so memory stays within a small
// multiple of the document's size. Reference definitions are collected
// from the whole document first, so a reference resolves across pieces.
func (p Parser) Parse(data []byte) (*File, error) {
	return p.parse(data, chunkThreshold, chunkSize)
}

// parse is Parse with the chunking parameters as arguments, for tests.
func (p Parser) parse(data []byte, threshold, size int) (*File, error) {
	limit := p.MaxBytes
	if limit <= 0 {
		limit = DefaultMaxBytes
	}
	if len(data) > limit {
		return nil, &FormatError{Err: ErrTooLarge, Detail: fmt.Sprintf("%d bytes, more than the %d-byte limit; raise Parser.MaxBytes if the file is genuine", len(data), limit)}
	}
	src := bytes.TrimPrefix(data, []byte("\xef\xbb\xbf")) // UTF-8 byte order mark
	if err := checkBinary(src); err != nil {
		return nil, err
	}
	g := newGuard(len(src))
	if err := g.checkLines(src); err != nil {
		return nil, err
	}
	if start, ok := htmlPageStart(src); ok {
		return nil, &FormatError{Err: ErrHTML, Detail: "the body is an HTML page (it starts with " + start + "); fetch the Markdown llms.txt instead of a page that renders it"}
	}
	bounds := []int{0, len(src)}
	var refs map[string]parser.Reference
	if len(src) > threshold {
		var candidates [][]byte
		bounds, candidates = chunkBounds(src, size)
		refs = references(candidates)
	}
	b := &builder{src: src}
	for i := 0; i+1 < len(bounds); i++ {
		lo, hi := bounds[i], bounds[i+1]
		var pc parser.Context = parser.NewContext()
		pc.Set(paragraphGuardKey, g)
		if refs != nil {
			pc = sharedRefs{Context: pc, refs: refs}
		}
		piece := src[lo:hi]
		doc := markdown.Parse(text.NewReader(piece), parser.WithContext(pc))
		if g.err != nil {
			return nil, g.err
		}
		if err := b.blocks(doc, piece, lo); err != nil {
			return nil, err
		}
	}
	return b.finish()
}

// builder turns the top-level blocks of a document, met in order, into a
// File.
type builder struct {
	src   []byte // the whole document
	f     File
	state int
	first ast.Node // the document's first block
	seen  bool     // a block was met
	// detailsStart is the offset in src of the first block of the
	// details, -1 when there is none yet.
	detailsStart int
}

// The builder's states.
const (
	beforeTitle = iota
	afterTitle  // the next block may be the summary
	inDetails
	inSections
)

// blocks reads the top-level blocks of doc, the syntax tree of
// src[offset:offset+len(piece)].
func (b *builder) blocks(doc ast.Node, piece []byte, offset int) error {
	e := &extractor{src: piece}
	pos := func(n ast.Node) int {
		if p := n.Pos(); p >= 0 {
			return offset + p
		}
		return offset
	}
	for n := doc.FirstChild(); n != nil; n = n.NextSibling() {
		switch b.state {
		case beforeTitle:
			if !b.seen {
				b.first, b.seen = n, true
			}
			if h, ok := n.(*ast.Heading); ok && h.Level == 1 {
				b.f.Title = e.plain(h)
				if b.f.Title == "" {
					return &FormatError{Err: ErrNoTitle, Detail: "the H1 heading is empty; write the site's name after '# '"}
				}
				b.f.Links = e.links(h, b.f.Links)
				b.state, b.detailsStart = afterTitle, -1
				continue
			}
			b.f.Links = e.links(n, b.f.Links)
			continue
		case afterTitle:
			b.state = inDetails
			if bq, ok := n.(*ast.Blockquote); ok {
				b.f.Summary = e.paragraphs(bq)
				b.f.Links = e.links(bq, b.f.Links)
				continue
			}
		}
		if b.state == inDetails {
			if !isSectionHeading(n) {
				if b.detailsStart < 0 {
					b.detailsStart = lineStart(b.src, pos(n))
				}
				b.f.Links = e.links(n, b.f.Links)
				continue
			}
			b.endDetails(lineStart(b.src, pos(n)))
			b.state = inSections
		}
		if isSectionHeading(n) {
			name := e.plain(n)
			b.f.Sections = append(b.f.Sections, Section{
				Name:     name,
				Optional: strings.EqualFold(name, "optional"),
			})
		}
		s := &b.f.Sections[len(b.f.Sections)-1]
		s.Links = e.links(n, s.Links)
	}
	return nil
}

// endDetails records the details, which end at offset end of src.
func (b *builder) endDetails(end int) {
	if b.detailsStart >= 0 && b.detailsStart < end {
		b.f.Details = trimBlankLines(string(b.src[b.detailsStart:end]))
	}
	b.detailsStart = -1
}

// finish returns the File, or the error of a document without a title.
func (b *builder) finish() (*File, error) {
	switch b.state {
	case beforeTitle:
		if _, ok := b.first.(*ast.HTMLBlock); ok {
			return nil, &FormatError{Err: ErrHTML, Detail: "no '# Title' line, and the body starts with HTML (" + quoteStart(b.src) + "), so the server probably returned an HTML page"}
		}
		if !b.seen {
			return nil, &FormatError{Err: ErrNoTitle, Detail: "the document is empty; an llms.txt file starts with '# <site name>'"}
		}
		return nil, &FormatError{Err: ErrNoTitle, Detail: "no top-level '# Title' heading; an llms.txt file starts with an H1 naming the site"}
	case inDetails:
		b.endDetails(len(b.src))
	}
	return &b.f, nil
}

// isSectionHeading reports whether a top-level block after the title starts
// a section: an H2, or a later H1.
func isSectionHeading(n ast.Node) bool {
	h, ok := n.(*ast.Heading)
	return ok && h.Level <= 2
}

// htmlPageStart reports whether src starts like an HTML page (a doctype or
// an <html>, <head> or <body> tag), and quotes that start.
func htmlPageStart(src []byte) (string, bool) {
	s := bytes.TrimLeft(src, " \t\r\n")
	n := min(len(s), 16)
	lower := bytes.ToLower(s[:n])
	for _, p := range []string{"<!doctype html", "<html", "<head", "<body"} {
		if bytes.HasPrefix(lower, []byte(p)) {
			return quoteStart(src), true
		}
	}
	return "", false
}

// quoteStart quotes the first characters of a document for a message.
func quoteStart(src []byte) string {
	s := bytes.TrimLeft(src, " \t\r\n")
	if i := bytes.IndexByte(s, '\n'); i >= 0 {
		s = s[:i]
	}
	if len(s) > 40 {
		s = s[:40]
	}
	return fmt.Sprintf("%q", bytes.TrimSpace(s))
}

// lineStart returns the offset of the start of the line holding offset pos.
func lineStart(src []byte, pos int) int {
	if pos < 0 || pos > len(src) {
		return 0
	}
	return bytes.LastIndexByte(src[:pos], '\n') + 1
}

// trimBlankLines removes leading blank lines and trailing white space, so
// the first line keeps its indentation.
func trimBlankLines(s string) string {
	s = strings.TrimRight(s, " \t\r\n")
	for {
		i := strings.IndexByte(s, '\n')
		if i < 0 || strings.TrimSpace(s[:i]) != "" {
			return s
		}
		s = s[i+1:]
	}
}
