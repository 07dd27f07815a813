package extract

import (
	"github.com/JohannesKaufmann/html-to-markdown/v2/converter"
	"github.com/JohannesKaufmann/html-to-markdown/v2/marker"
	"golang.org/x/net/html"
)

// Fast escaping of text for the Markdown converter.
//
// The library's base plugin calls Context.EscapeContent on every text
// node; the library's implementation takes the converter's read lock
// (two atomic adds) and looks a rune up in a map for every byte: 14% of
// the CPU of converting the docsites corpus (BenchmarkMarkdown). The
// converter offers no way to replace that function, but it passes the
// Context down the tree: renderWithFastEscape hands every node a Context
// whose EscapeContent is escapeMarkdown, which gives the same bytes from a
// table. The package's own base plugin (basePlugin, base.go) takes that
// Context as the sign that the package's plugins are the converter's and
// escapes with escapeText, the same table with the entities in one pass;
// escapeMarkdown remains the Context's EscapeContent for any other
// caller. Everything else (the link rule of the commonmark plugin, all
// un-escaping) stays the library's.
// TestFastEscapeKeepsMarkdown and FuzzFastEscapeKeepsMarkdown check the
// output against the library's converter; TestEscapeMarkdownIsLibrarys
// and FuzzEscapeMarkdown check escapeMarkdown against the library's
// function; TestFastEscapeReachesText checks that every text node gets it.
// Do not replace it by the library's escaping: that brings the lock back.

// fastEscapePriority is the priority of renderWithFastEscape: before every
// render handler of the plugins newMarkdown uses (converter.PriorityStandard).
const fastEscapePriority = converter.PriorityEarly

// renderWithFastEscape is a render handler that renders n, the first node
// it is called for (the root), as the converter would with ctx, but with
// a fastEscapeContext, which the converter then passes to every node under
// it. Given a fastEscapeContext it lets the next handler render.
func renderWithFastEscape(ctx converter.Context, w converter.Writer, n *html.Node) converter.RenderStatus {
	if _, ok := ctx.(fastEscapeContext); ok {
		return converter.RenderTryNext
	}
	// The converter ignores what rendering a node returns but to stop
	// trying handlers; the node is rendered either way.
	ctx.RenderNodes(fastEscapeContext{ctx}, w, n)
	return converter.RenderSuccess
}

// fastEscapeContext is a converter.Context whose EscapeContent is
// escapeMarkdown: the library's takes a lock for every byte. Every other
// method is the wrapped Context's; WithValue keeps the wrapper, so that a
// renderer's derived Context (the link renderer's "is_inside_link") passes
// it on too.
type fastEscapeContext struct {
	converter.Context
}

// EscapeContent is escapeMarkdown.
func (c fastEscapeContext) EscapeContent(content []byte) []byte {
	return escapeMarkdown(content)
}

// WithValue is the wrapped Context's WithValue, wrapped.
func (c fastEscapeContext) WithValue(key, val any) converter.Context {
	return fastEscapeContext{c.Context.WithValue(key, val)}
}

// escapePlaceholder is the byte the converter puts before each character
// it may have to escape; un-escaping turns it into a backslash or drops it.
var escapePlaceholder = marker.BytesMarkerEscaping[0]

// escapedBytes marks the characters the commonmark and table plugins
// register with Register.EscapedChar: ASCII all, so looking up a byte is
// looking up the rune the library decodes at that byte (a byte of a
// multi-byte sequence decodes to a non-ASCII rune or U+FFFD, neither of
// them registered).
var escapedBytes = func() (t [256]bool) {
	for _, c := range "\\*_-+.>|$#=[]()!~`\"'" {
		t[c] = true
	}
	return t
}()

// escapeMarkdown is what the converter's EscapeContent returns for chars
// with the plugins of newMarkdown and escaping on (the default mode): each
// NUL byte replaced by U+FFFD, escapePlaceholder put before each byte of
// escapedBytes. When there is nothing to change it returns chars itself.
// escapeText is the same loop over a string, with the entities of < and >;
// the two are kept apart so that neither converts between string and
// []byte on its way.
func escapeMarkdown(chars []byte) []byte {
	extra := 0
	for _, c := range chars {
		if c == 0 {
			extra += len("\uFFFD") - 1
		} else if escapedBytes[c] {
			extra++
		}
	}
	if extra == 0 {
		return chars
	}
	out := make([]byte, 0, len(chars)+extra)
	start := 0
	for i, c := range chars {
		switch {
		case c == 0:
			out = append(out, chars[start:i]...)
			out = append(out, "\uFFFD"...)
			start = i + 1
		case escapedBytes[c]:
			out = append(out, chars[start:i]...)
			out = append(out, escapePlaceholder, c)
			start = i + 1
		}
	}
	return append(out, chars[start:]...)
}
