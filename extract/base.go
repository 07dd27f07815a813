package extract

import (
	"bytes"
	"strings"

	"github.com/JohannesKaufmann/dom"
	"github.com/JohannesKaufmann/html-to-markdown/v2/collapse"
	"github.com/JohannesKaufmann/html-to-markdown/v2/converter"
	"golang.org/x/net/html"
)

// basePlugin is the library's base plugin (plugin/base, v2.5.2) with the
// same output and cheaper passes over the page. The library's post-render
// step rebuilds the whole Markdown a rune at a time, appending each to a
// growing slice, to drop blank lines beyond the second: 11% of the CPU of
// a cold run of examples/bench. Here that step moves the stretches it
// keeps to the front of the converter's buffer, in place; the
// hard-line-break step looks for its pattern before it copies; a text
// node's entities and escaping are written in one pass (escapeText); and
// the removal of unwanted elements walks the tree without a deferred call
// a node. The converter requires a plugin named "base" beside the
// commonmark plugin (it checks the name), so this one takes that name.
//
// TestFastEscapeKeepsMarkdown and FuzzFastEscapeKeepsMarkdown check the
// converter's output against the library's plugins (libraryMarkdown), so
// a new version of the library whose base plugin converts differently
// fails them; TestTrimBlankLinesIsLibrarys, FuzzTrimBlankLines,
// TestEscapeTextIsLibrarys and FuzzEscapeText check the parts against the
// library's steps.
type basePlugin struct{}

// Name is "base", the name the converter looks for.
func (basePlugin) Name() string { return "base" }

// Init registers what the library's base plugin registers, with the
// same priorities.
func (b basePlugin) Init(conv *converter.Converter) error {
	for _, tag := range []string{"#comment", "head", "script", "style", "link", "meta", "iframe", "noscript", "input", "textarea"} {
		conv.Register.TagType(tag, converter.TagTypeRemove, converter.PriorityStandard)
	}
	conv.Register.PreRenderer(b.removeTags, converter.PriorityEarly)
	conv.Register.PreRenderer(b.collapse, converter.PriorityLate)
	conv.Register.TextTransformer(b.transformText, converter.PriorityStandard)
	conv.Register.PostRenderer(b.trim, converter.PriorityStandard)
	conv.Register.PostRenderer(b.unescape, converter.PriorityStandard+20)
	return nil
}

// removeTags removes every element whose tag type is TagTypeRemove (and
// comments), then joins the text nodes the removal left side by side.
func (basePlugin) removeTags(ctx converter.Context, doc *html.Node) {
	var doomed []*html.Node
	var visit func(n *html.Node)
	visit = func(n *html.Node) {
		if t, _ := ctx.GetTagType(dom.NodeName(n)); t == converter.TagTypeRemove {
			doomed = append(doomed, n)
			return
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			visit(c)
		}
	}
	visit(doc)
	for _, n := range doomed {
		dom.RemoveNode(n)
	}
	mergeAdjacentText(doc)
}

// mergeAdjacentText joins each run of sibling text nodes under n into
// its first node.
func mergeAdjacentText(n *html.Node) {
	var prev *html.Node
	for c := n.FirstChild; c != nil; {
		next := c.NextSibling
		if c.Type == html.TextNode && prev != nil && prev.Type == html.TextNode {
			prev.Data += c.Data
			n.RemoveChild(c)
		} else {
			mergeAdjacentText(c)
			prev = c
		}
		c = next
	}
}

// collapse collapses white space as a browser would, block elements being
// those of the converter's tag types, else the dom package's list.
func (basePlugin) collapse(ctx converter.Context, doc *html.Node) {
	collapse.Collapse(doc, &collapse.DomFuncs{
		IsBlockNode: func(node *html.Node) bool {
			name := dom.NodeName(node)
			if t, ok := ctx.GetTagType(name); ok {
				return t == converter.TagTypeBlock
			}
			return dom.NameIsBlockNode(name)
		},
	})
}

// angleBrackets writes < and > as entities, as the library's plugin does
// (and not &).
var angleBrackets = strings.NewReplacer("<", "&lt;", ">", "&gt;")

// transformText is the text transformer: angle brackets as entities, then
// the context's escaping; with a fastEscapeContext both in one pass
// (escapeText).
func (basePlugin) transformText(ctx converter.Context, content string) string {
	if _, ok := ctx.(fastEscapeContext); ok {
		return escapeText(content)
	}
	content = angleBrackets.Replace(content)
	return string(ctx.EscapeContent([]byte(content)))
}

// escapeText is escapeMarkdown of content after angleBrackets, in one
// pass and at most one allocation: content itself when nothing changes.
// The entities hold no byte escapeMarkdown changes, and after them no
// '>' is left for it to escape.
func escapeText(content string) string {
	extra := 0
	for i := 0; i < len(content); i++ {
		switch c := content[i]; {
		case c == '<' || c == '>':
			extra += len("&lt;") - 1
		case c == 0:
			extra += len("\uFFFD") - 1
		case escapedBytes[c]:
			extra++
		}
	}
	if extra == 0 {
		return content
	}
	var out strings.Builder
	out.Grow(len(content) + extra)
	start := 0
	for i := 0; i < len(content); i++ {
		var rep string
		switch c := content[i]; {
		case c == '<':
			rep = "&lt;"
		case c == '>':
			rep = "&gt;"
		case c == 0:
			rep = "\uFFFD"
		case escapedBytes[c]:
			out.WriteString(content[start:i])
			out.WriteByte(escapePlaceholder)
			out.WriteByte(c)
			start = i + 1
			continue
		default:
			continue
		}
		out.WriteString(content[start:i])
		out.WriteString(rep)
		start = i + 1
	}
	out.WriteString(content[start:])
	return out.String()
}

// trim removes the white space around the Markdown, blank lines beyond
// the second in a row, and the hard line breaks that end a paragraph. It
// writes over result.
func (basePlugin) trim(_ converter.Context, result []byte) []byte {
	return trimHardBreaks(trimBlankLines(bytes.TrimSpace(result)))
}

// unescape is the context's un-escaping.
func (basePlugin) unescape(ctx converter.Context, result []byte) []byte {
	return ctx.UnEscapeContent(result)
}

// trimBlankLines drops, in every stretch of spaces and line feeds that
// holds more than two line feeds, the line feeds after the second and the
// spaces before each of them: "a \n \n \n  \nb" becomes "a \n \nb". It
// moves the bytes it keeps to the front of in, in place (the converter's
// buffer, which nothing else holds), and returns that prefix. It gives
// what the library's rune-by-rune loop gives: only space and line feed are
// special, and neither occurs inside a UTF-8 sequence.
func trimBlankLines(in []byte) []byte {
	w := -1   // in[:w] is the output so far, once a line is dropped
	kept := 0 // in[kept:] is still to be moved
	for i := 0; i < len(in); {
		j := bytes.IndexByte(in[i:], '\n')
		if j < 0 {
			break
		}
		j += i
		lines, second, last := 0, 0, 0
		e := j
		for ; e < len(in) && (in[e] == '\n' || in[e] == ' '); e++ {
			if in[e] == '\n' {
				lines++
				if lines == 2 {
					second = e + 1
				}
				last = e
			}
		}
		if lines > 2 {
			if w < 0 {
				w = second
			} else {
				w += copy(in[w:], in[kept:second])
			}
			kept = last + 1
		}
		i = e
	}
	if w < 0 {
		return in
	}
	w += copy(in[w:], in[kept:])
	return in[:w]
}

// trimHardBreaks removes the two spaces of a hard line break before a
// blank line, as the library's plugin does, in the same three steps; it
// copies nothing when there is no "  \n".
func trimHardBreaks(b []byte) []byte {
	if !bytes.Contains(b, []byte("  \n")) {
		return b
	}
	b = bytes.ReplaceAll(b, []byte("  \n\n"), []byte("\n\n"))
	b = bytes.ReplaceAll(b, []byte("  \n  \n"), []byte("\n\n"))
	return bytes.ReplaceAll(b, []byte("  \n \n"), []byte("\n\n"))
}
