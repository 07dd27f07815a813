package llmstxt

import (
	"bytes"
	"strings"

	"github.com/yuin/goldmark/ast"
	"github.com/yuin/goldmark/util"
)

// extractor reads text and links out of the AST of one document.
type extractor struct {
	src []byte
	buf textBuilder
	// entries maps the links that start a line of the block being walked
	// to their descriptions; it is small and reused.
	entries []entry
	next    int // index in entries of the next entry link the walk will meet
}

type entry struct {
	link        ast.Node
	description string
}

// walk visits root and its descendants in document order without
// recursion, so deeply nested inlines cannot exhaust the stack. visit
// returns false to skip a node's children.
func walk(root ast.Node, visit func(ast.Node) bool) {
	n := root
	for {
		if visit(n) {
			if c := n.FirstChild(); c != nil {
				n = c
				continue
			}
		}
		for {
			if n == root {
				return
			}
			if s := n.NextSibling(); s != nil {
				n = s
				break
			}
			n = n.Parent()
		}
	}
}

// plain returns the plain text of a node's inlines, white space collapsed.
func (e *extractor) plain(n ast.Node) string {
	e.buf.reset()
	e.appendPlain(n)
	return e.buf.String()
}

// appendPlain adds the plain text of n's descendants to the builder.
func (e *extractor) appendPlain(root ast.Node) {
	walk(root, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.Text:
			v := n.Value(e.src)
			if !n.IsRaw() {
				v = unescape(v)
			}
			e.buf.write(v)
			if n.SoftLineBreak() || n.HardLineBreak() {
				e.buf.space()
			}
		case *ast.String:
			e.buf.write(n.Value)
		case *ast.AutoLink:
			e.buf.write(n.Label(e.src))
		case *ast.RawHTML:
			return false
		}
		return true
	})
}

// paragraphs returns the plain text of the text blocks under n, separated
// by blank lines.
func (e *extractor) paragraphs(root ast.Node) string {
	var parts []string
	walk(root, func(n ast.Node) bool {
		switch n.(type) {
		case *ast.Paragraph, *ast.TextBlock, *ast.Heading:
			if s := e.plain(n); s != "" {
				parts = append(parts, s)
			}
			return false
		}
		return true
	})
	return strings.Join(parts, "\n\n")
}

// links appends every link under root to dst, in document order.
func (e *extractor) links(root ast.Node, dst []Link) []Link {
	walk(root, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.Paragraph, *ast.TextBlock:
			e.findEntries(n)
		case *ast.Link:
			dst = append(dst, Link{
				Title:       e.plain(n),
				URL:         string(unescape(n.Destination)),
				Description: e.description(n),
			})
			// A link cannot contain links, but images inside it are text.
			return false
		case *ast.AutoLink:
			url := string(n.URL(e.src))
			if n.AutoLinkType == ast.AutoLinkEmail {
				url = "mailto:" + url
			}
			dst = append(dst, Link{
				Title:       string(n.Label(e.src)),
				URL:         url,
				Description: e.description(n),
			})
		case *ast.Image, *ast.CodeSpan, *ast.RawHTML:
			return false
		}
		return true
	})
	return dst
}

// description returns the description findEntries recorded for link. The
// walk meets entry links in the order they were recorded, so a cursor
// finds each in constant time.
func (e *extractor) description(link ast.Node) string {
	if e.next < len(e.entries) && e.entries[e.next].link == link {
		e.next++
		return e.entries[e.next-1].description
	}
	return ""
}

// findEntries records, for a paragraph or list item text, each link that
// starts one of its lines (after white space or a stray bullet such as the
// "-" of "-[name](url)"), with the text that follows it up to the next such
// line as its description.
func (e *extractor) findEntries(block ast.Node) {
	e.entries, e.next = e.entries[:0], 0
	var (
		lineStart = true // the next inline starts a line
		lead      = true // only white space and bullets so far on this line
		current   = -1   // index in e.entries of the entry being described
		desc      []ast.Node
		bullets   []ast.Node // leading bullet text, dropped if a link follows
	)
	flush := func() {
		if current >= 0 {
			e.buf.reset()
			for _, d := range desc {
				e.appendPlain(d)
			}
			e.entries[current].description = trimSeparator(e.buf.String())
		}
		desc = desc[:0]
	}
	for n := block.FirstChild(); n != nil; n = n.NextSibling() {
		if lineStart {
			lead, lineStart = true, false
			bullets = bullets[:0]
		}
		if lead {
			if link := leadingLink(n); link != nil {
				flush()
				e.entries = append(e.entries, entry{link: link})
				current = len(e.entries) - 1
				lead = false
				lineStart = endsLine(n)
				continue
			}
			if isBulletText(n, e.src) && !endsLine(n) {
				bullets = append(bullets, n)
				continue
			}
			lead = false
			desc = append(desc, bullets...)
		}
		desc = append(desc, n)
		lineStart = endsLine(n)
	}
	flush()
}

// leadingLink returns the link n is, or the link that opens it when n is
// emphasis around a link ("**[name](url)**"); otherwise nil.
func leadingLink(n ast.Node) ast.Node {
	for {
		switch n.(type) {
		case *ast.Link, *ast.AutoLink:
			return n
		case *ast.Emphasis:
			n = n.FirstChild()
		default:
			return nil
		}
	}
}

// endsLine reports whether a line break follows inline n.
func endsLine(n ast.Node) bool {
	for ; n != nil; n = n.LastChild() {
		if t, ok := n.(*ast.Text); ok {
			return t.SoftLineBreak() || t.HardLineBreak()
		}
	}
	return false
}

// isBulletText reports whether n is text made only of white space and
// bullet characters, which may precede the link of an entry.
func isBulletText(n ast.Node, src []byte) bool {
	t, ok := n.(*ast.Text)
	if !ok {
		return false
	}
	return len(bytes.Trim(t.Value(src), " \t-*+•·")) == 0
}

// trimSeparator removes the ":" or dash that separates a link from its
// description, and surrounding space.
func trimSeparator(s string) string {
	s = strings.TrimSpace(s)
	if rest, ok := strings.CutPrefix(s, ":"); ok {
		return strings.TrimSpace(rest)
	}
	for _, dash := range []string{"-", "–", "—", "|"} {
		if rest, ok := strings.CutPrefix(s, dash); ok && (rest == "" || rest[0] == ' ' || rest[0] == '\t') {
			return strings.TrimSpace(rest)
		}
	}
	return s
}

// unescape resolves backslash escapes and character references, as a
// renderer does for text and link destinations.
func unescape(v []byte) []byte {
	if bytes.IndexByte(v, '\\') >= 0 {
		v = util.UnescapePunctuations(v)
	}
	if bytes.IndexByte(v, '&') >= 0 {
		v = util.ResolveEntityNames(util.ResolveNumericReferences(v))
	}
	return v
}

// textBuilder accumulates plain text with runs of white space collapsed to
// one space and no space at either end.
type textBuilder struct {
	b       []byte
	pending bool // a space is due before the next non-space byte
}

func (t *textBuilder) reset() { t.b, t.pending = t.b[:0], false }

func (t *textBuilder) space() { t.pending = len(t.b) > 0 }

func (t *textBuilder) write(v []byte) {
	for _, c := range v {
		switch c {
		case ' ', '\t', '\n', '\r', '\f', '\v':
			t.pending = len(t.b) > 0
		default:
			if t.pending {
				t.b = append(t.b, ' ')
				t.pending = false
			}
			t.b = append(t.b, c)
		}
	}
}

func (t *textBuilder) String() string { return string(t.b) }
