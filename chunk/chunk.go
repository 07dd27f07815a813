// Package chunk splits Markdown into chunks for embedding, following the
// document's structure so that a small edit changes only the chunks around it.
//
// Split parses the Markdown with goldmark (CommonMark plus GFM tables) and
// works on the top-level blocks of the syntax tree:
//
//   - A top-level heading of level SplitLevel or higher (H1–H3 by default)
//     always starts a new chunk; a chunk never crosses one. Deeper headings
//     are ordinary blocks.
//   - Consecutive blocks of one section are packed greedily into a chunk
//     while the chunk stays within MaxBytes. A deeper heading that would
//     end a chunk starts the next one instead.
//   - A block is never cut unless it alone exceeds MaxBytes. Code blocks,
//     tables and paragraphs are then cut between lines; lists and block
//     quotes between their items (and, if an item is still too long, between
//     lines). A single line longer than MaxBytes is cut at the last space
//     that fits, else at a UTF-8 character boundary.
//
// Every chunk carries a locator — its heading path and its byte range in
// the input — and the SHA-256 of its text, which serves as a stable chunk
// identity when two versions of a page are compared. Version names the
// algorithm and the options, so that a deliberate rechunk can be told apart
// from a source edit.
package chunk

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/yuin/goldmark"
	"github.com/yuin/goldmark/ast"
	"github.com/yuin/goldmark/extension"
	"github.com/yuin/goldmark/parser"
	"github.com/yuin/goldmark/text"
	"github.com/yuin/goldmark/util"
)

// Algorithm names the splitting algorithm and its revision. It changes
// whenever Split would cut the same input with the same options differently.
const Algorithm = "md-heading-v1"

// Defaults used for zero Options fields.
const (
	DefaultSplitLevel = 3
	DefaultMaxBytes   = 1500
	// MinMaxBytes is the smallest effective MaxBytes; smaller values are
	// raised to it so every cut can make progress on UTF-8 text.
	MinMaxBytes = 16
)

// Options configure Split. The zero value selects the defaults.
type Options struct {
	// SplitLevel is the deepest heading level that starts a new chunk:
	// 3 means H1, H2 and H3 do. Zero or negative means DefaultSplitLevel;
	// values above 6 mean 6.
	SplitLevel int
	// MaxBytes is the largest chunk, in bytes of Markdown. Zero or negative
	// means DefaultMaxBytes; values below MinMaxBytes mean MinMaxBytes.
	MaxBytes int
}

// Effective returns o with defaults applied and out-of-range values clamped:
// the options Split actually uses.
func (o Options) Effective() Options {
	if o.SplitLevel <= 0 {
		o.SplitLevel = DefaultSplitLevel
	}
	if o.SplitLevel > 6 {
		o.SplitLevel = 6
	}
	if o.MaxBytes <= 0 {
		o.MaxBytes = DefaultMaxBytes
	}
	if o.MaxBytes < MinMaxBytes {
		o.MaxBytes = MinMaxBytes
	}
	return o
}

// Version names the algorithm and the effective options, for example
// "md-heading-v1/L3/1500". Store it beside the chunks: when it differs
// between two runs, chunk IDs differ because of a rechunk, not an edit.
func Version(opts Options) string {
	o := opts.Effective()
	return fmt.Sprintf("%s/L%d/%d", Algorithm, o.SplitLevel, o.MaxBytes)
}

// Chunk is one piece of a Markdown document.
type Chunk struct {
	// Ordinal is the chunk's position in the document, from 0.
	Ordinal int `json:"ordinal"`
	// Headings is the heading path in effect where the chunk starts, outermost
	// first, as plain text (inline Markdown removed); empty before the first
	// heading. Only top-level headings count, at any level.
	Headings []string `json:"headings"`
	// Start and End delimit the chunk in the input: Text == markdown[Start:End].
	Start int `json:"start"`
	End   int `json:"end"`
	// Text is the chunk's Markdown. It never starts with a blank line and
	// never ends with whitespace.
	Text string `json:"text"`
	// TextHash is the lowercase hex SHA-256 of Text: equal text, equal hash.
	TextHash string `json:"text_hash"`
}

// HeadingPath returns the heading path joined with " > ", for example
// "Install > Linux".
func (c Chunk) HeadingPath() string { return strings.Join(c.Headings, " > ") }

// blockParser finds the block structure only: inline parsing is not needed
// to place chunk boundaries, and some inline inputs cost quadratic time.
var blockParser = sync.OnceValue(func() parser.Parser {
	return parser.NewParser(
		parser.WithBlockParsers(parser.DefaultBlockParsers()...),
		parser.WithParagraphTransformers(append(parser.DefaultParagraphTransformers(),
			util.Prioritized(extension.NewTableParagraphTransformer(), 200))...),
		parser.WithASTTransformers(util.Prioritized(extension.NewTableASTTransformer(), 0)),
	)
})

// inlineParser parses one heading at a time, to get its plain text.
var inlineParser = sync.OnceValue(func() parser.Parser {
	return goldmark.New().Parser()
})

// Limits that keep hostile input from making the parser slow.
const (
	// maxNesting is the number of container markers (">", list bullets) at
	// the start of a line that are parsed as such; further markers on the
	// line are parsed as spaces. goldmark's block parser is quadratic in
	// nesting depth.
	maxNesting = 64
	// maxIndent is the longest line prefix (in bytes) parsed as such.
	maxIndent = 128
	// maxHeadingBytes is how much of a heading's text is kept in the path.
	maxHeadingBytes = 512
)

// unit is an indivisible run of the input (after cutting oversized blocks):
// src[start:end], trimmed, with the heading path in effect at start.
type unit struct {
	start, end int
	path       []string
	breakHere  bool // a split-level heading: a new chunk starts here
	heading    bool // a heading of any level
}

// Split cuts markdown into chunks as described in the package comment.
// Chunks are in document order, do not overlap, and together cover every
// byte of the input except whitespace between chunks (blank lines, trailing
// spaces). Split never fails: any byte sequence is valid Markdown. It returns
// nil for input that is empty or only whitespace.
func Split(markdown string, opts Options) []Chunk {
	o := opts.Effective()
	src := []byte(markdown)
	doc := blockParser().Parse(text.NewReader(flattenNesting([]byte(markdown))))

	// The top-level blocks partition the input: block i owns the lines from
	// its first line up to the first line of block i+1.
	type block struct {
		node  ast.Node
		start int
	}
	var blocks []block
	for n := doc.FirstChild(); n != nil; n = n.NextSibling() {
		s := nodeStart(n)
		if s < 0 {
			continue
		}
		s = lineStart(src, s)
		if len(blocks) == 0 {
			s = 0 // anything before the first block belongs to it
		} else if s <= blocks[len(blocks)-1].start {
			continue // same line as the previous block: part of it
		}
		blocks = append(blocks, block{node: n, start: s})
	}
	if len(blocks) == 0 && len(src) > 0 {
		blocks = append(blocks, block{node: doc, start: 0})
	}

	var units []unit
	var stack []heading
	for i, b := range blocks {
		end := len(src)
		if i+1 < len(blocks) {
			end = blocks[i+1].start
		}
		brk := false
		if h, ok := b.node.(*ast.Heading); ok {
			for len(stack) > 0 && stack[len(stack)-1].level >= h.Level {
				stack = stack[:len(stack)-1]
			}
			stack = append(stack, heading{level: h.Level, text: headingText(h, src)})
			brk = h.Level <= o.SplitLevel
		}
		path := make([]string, len(stack))
		for j, h := range stack {
			path[j] = h.text
		}
		first := len(units)
		units = appendUnits(units, src, b.node, b.start, end, o.MaxBytes, path)
		if _, ok := b.node.(*ast.Heading); ok && len(units) > first {
			units[first].heading = true
			units[first].breakHere = brk
		}
	}
	return pack(markdown, units, o.MaxBytes)
}

type heading struct {
	level int
	text  string
}

// pack joins consecutive units greedily, starting a new chunk at every
// split-level heading and whenever the next unit would exceed maxBytes.
func pack(src string, units []unit, maxBytes int) []Chunk {
	var out []Chunk
	emit := func(first, last unit) {
		t := src[first.start:last.end]
		sum := sha256.Sum256([]byte(t))
		out = append(out, Chunk{
			Ordinal:  len(out),
			Headings: append([]string{}, first.path...),
			Start:    first.start,
			End:      last.end,
			Text:     t,
			TextHash: hex.EncodeToString(sum[:]),
		})
	}
	for i := 0; i < len(units); {
		j := i + 1
		for j < len(units) && !units[j].breakHere && units[j].end-units[i].start <= maxBytes {
			j++
		}
		// A heading below the split level that would end a chunk moves to the
		// next one, beside the text it introduces.
		if j < len(units) && !units[j].breakHere && j-1 > i && units[j-1].heading {
			j--
		}
		emit(units[i], units[j-1])
		i = j
	}
	return out
}

// appendUnits appends the units of the block n occupying src[start:end].
// A block that fits in maxBytes is one unit; a larger container is cut
// between its children, anything else between lines.
func appendUnits(units []unit, src []byte, n ast.Node, start, end, maxBytes int, path []string) []unit {
	s, e := trim(src, start, end)
	if s >= e {
		return units
	}
	if e-s <= maxBytes {
		return append(units, unit{start: s, end: e, path: path})
	}
	if isContainer(n) {
		// Child boundaries inside the container, each moved to its line start.
		var cuts []int
		var kids []ast.Node
		for c := n.FirstChild(); c != nil; c = c.NextSibling() {
			cs := nodeStart(c)
			if cs < 0 {
				continue
			}
			cs = lineStart(src, cs)
			if len(cuts) == 0 {
				cs = start
			} else if cs <= cuts[len(cuts)-1] || cs >= end {
				continue
			}
			cuts = append(cuts, cs)
			kids = append(kids, c)
		}
		if len(cuts) > 1 {
			for i, cs := range cuts {
				ce := end
				if i+1 < len(cuts) {
					ce = cuts[i+1]
				}
				units = appendUnits(units, src, kids[i], cs, ce, maxBytes, path)
			}
			return units
		}
	}
	return appendLines(units, src, s, e, maxBytes, path)
}

// isContainer reports whether n is a block whose children are blocks that
// may be kept apart: lists, list items and block quotes. Tables and code
// blocks are cut between lines instead.
func isContainer(n ast.Node) bool {
	switch n.Kind() {
	case ast.KindList, ast.KindListItem, ast.KindBlockquote:
		return true
	}
	return false
}

// appendLines cuts src[s:e] into units of at most maxBytes, between lines
// where possible.
func appendLines(units []unit, src []byte, s, e, maxBytes int, path []string) []unit {
	for s < e {
		if e-s <= maxBytes {
			return append(units, unit{start: s, end: e, path: path})
		}
		// The last line break that keeps the piece within maxBytes.
		cut := -1
		for i := s + maxBytes; i > s; i-- {
			if src[i-1] == '\n' {
				cut = i
				break
			}
		}
		if cut < 0 {
			cut = cutLine(src, s, s+maxBytes)
		}
		ps, pe := trim(src, s, cut)
		if ps < pe {
			units = append(units, unit{start: ps, end: pe, path: path})
		}
		s, _ = trim(src, cut, e)
	}
	return units
}

// cutLine picks a cut in src[s:limit] (a line longer than the limit): after
// the last space or tab in its second half, else at the last UTF-8
// character boundary, else at limit.
func cutLine(src []byte, s, limit int) int {
	for i := limit; i > s+(limit-s)/2; i-- {
		if src[i-1] == ' ' || src[i-1] == '\t' {
			return i
		}
	}
	for i := limit; i > limit-utf8.UTFMax && i > s; i-- {
		if utf8.RuneStart(src[i]) {
			return i
		}
	}
	return limit
}

// trim narrows src[s:e] to drop leading blank lines and trailing whitespace.
// Leading spaces of the first non-blank line are kept (indentation matters
// in Markdown).
func trim(src []byte, s, e int) (int, int) {
	for e > s && isSpace(src[e-1]) {
		e--
	}
	i := s
	for i < e && isSpace(src[i]) {
		if src[i] == '\n' {
			s = i + 1
		}
		i++
	}
	return s, e
}

func isSpace(b byte) bool {
	return b == ' ' || b == '\t' || b == '\n' || b == '\r' || b == '\f' || b == '\v'
}

// lineStart returns the offset of the beginning of the line holding pos.
func lineStart(src []byte, pos int) int {
	if pos > len(src) {
		pos = len(src)
	}
	for pos > 0 && src[pos-1] != '\n' && src[pos-1] != '\r' {
		pos--
	}
	return pos
}

// nodeStart returns the smallest source offset known for n: its position,
// its first line, or its first child's start; -1 if none is known.
func nodeStart(n ast.Node) int {
	best := n.Pos()
	if n.Type() == ast.TypeBlock {
		if l := n.Lines(); l != nil && l.Len() > 0 {
			if s := l.At(0).Start; best < 0 || s < best {
				best = s
			}
		}
	}
	if best >= 0 {
		return best
	}
	for c := n.FirstChild(); c != nil; c = c.NextSibling() {
		if s := nodeStart(c); s >= 0 {
			return s
		}
	}
	return -1
}

// headingText returns the plain text of a heading: inline Markdown removed,
// whitespace collapsed, at most maxHeadingBytes of source considered.
func headingText(h *ast.Heading, src []byte) string {
	var raw []byte
	lines := h.Lines()
	for i := range lines.Len() {
		if i > 0 {
			raw = append(raw, ' ')
		}
		seg := lines.At(i)
		raw = append(raw, bytes.TrimSpace(seg.Value(src))...)
	}
	if len(raw) > maxHeadingBytes {
		cut := maxHeadingBytes
		for cut > maxHeadingBytes-utf8.UTFMax && !utf8.RuneStart(raw[cut]) {
			cut--
		}
		raw = raw[:cut]
	}
	if bytes.IndexAny(raw, "\\`*_[]<>!&") < 0 {
		return strings.Join(strings.Fields(string(raw)), " ") // no inline markup
	}
	// Parsed as an ATX heading so that text like "1. Intro" stays a heading.
	hsrc := append([]byte("# "), raw...)
	doc := inlineParser().Parse(text.NewReader(hsrc))
	var b strings.Builder
	var walk func(n ast.Node)
	walk = func(n ast.Node) {
		for c := n.FirstChild(); c != nil; c = c.NextSibling() {
			switch t := c.(type) {
			case *ast.Text:
				b.Write(t.Segment.Value(hsrc))
				if t.SoftLineBreak() || t.HardLineBreak() {
					b.WriteByte(' ')
				}
			case *ast.String:
				b.Write(t.Value)
			case *ast.AutoLink:
				b.Write(t.Label(hsrc))
			case *ast.RawHTML:
				// tags carry no heading text
			default:
				walk(c)
			}
		}
	}
	walk(doc)
	return strings.Join(strings.Fields(b.String()), " ")
}

// flattenNesting returns src with the container prefix of each line (the
// run of spaces, tabs, ">" and list markers a line starts with) defused
// where it is hostile: markers beyond maxNesting become spaces, and a prefix
// longer than maxIndent bytes ends in dots from there on, which turns the
// line into text at a bounded depth. Offsets are unchanged, so the tree
// parsed from the copy locates blocks in the original. goldmark's block
// parser costs time proportional to nesting depth times indentation on every
// line; real documents stay far below both limits.
func flattenNesting(src []byte) []byte {
	for i := 0; i < len(src); {
		depth := 0
		j := i
	prefix:
		for j < len(src) {
			n := 0 // length of a container marker at j, 0 if none
			switch c := src[j]; {
			case c == ' ' || c == '\t':
				j++
				continue
			case c == '>':
				n = 1
			case (c == '-' || c == '+' || c == '*') && j+1 < len(src) && (src[j+1] == ' ' || src[j+1] == '\t'):
				n = 1
			case c >= '0' && c <= '9':
				k := j
				for k < len(src) && k-j < 10 && src[k] >= '0' && src[k] <= '9' {
					k++
				}
				if k+1 >= len(src) || (src[k] != '.' && src[k] != ')') || (src[k+1] != ' ' && src[k+1] != '\t') {
					break prefix
				}
				n = k + 1 - j
			default:
				break prefix
			}
			depth++
			if depth > maxNesting {
				for m := j; m < j+n; m++ {
					src[m] = ' '
				}
			}
			j += n
		}
		if j-i > maxIndent && j < len(src) && src[j] != '\n' && src[j] != '\r' {
			for m := i + maxIndent; m < j; m++ {
				src[m] = '.'
			}
		}
		for j < len(src) && src[j] != '\n' {
			j++
		}
		i = j + 1
	}
	return src
}
