package extract

import (
	"strings"

	"golang.org/x/net/html"
	"golang.org/x/net/html/atom"
)

// codeWords are the words (of class names split at '-', '_' and ':') that
// mark an element as a code listing: the names highlighters and
// generators give the blocks they write without <pre> (Doxygen's
// "fragment", "code", "highlight", "listing", "source"...).
var codeWords = map[string]bool{
	"code": true, "codeblock": true, "sourcecode": true,
	"highlight": true, "highlighted": true, "hljs": true, "prism": true, "chroma": true,
	"shiki": true, "rouge": true, "pygments": true, "syntax": true,
	"fragment": true, "mono": true, "monospace": true,
	"console": true, "terminal": true,
}

// monoTags are the elements HTML renders in a monospace font.
func monoTag(a atom.Atom) bool {
	switch a {
	case atom.Code, atom.Samp, atom.Kbd, atom.Tt:
		return true
	}
	return false
}

// monospace reports whether element n is marked as code: a monospace
// element, a class word of codeWords, or an inline style that sets a
// monospace font or preserves white space.
func monospace(n *html.Node) bool {
	if n == nil || n.Type != html.ElementNode {
		return false
	}
	if monoTag(n.DataAtom) {
		return true
	}
	if style := strings.ToLower(attr(n, "style")); style != "" {
		if strings.Contains(style, "monospace") || strings.Contains(style, "courier") || preStyle(n) {
			return true
		}
	}
	class := attr(n, "class")
	if class == "" {
		return false
	}
	found := false
	eachClass(class, func(t string) {
		for _, w := range classWords(t) {
			found = found || codeWords[w]
		}
	})
	return found
}

// blockInLine reports whether elements of atom a cannot sit inside one
// line of code.
func blockInLine(a atom.Atom) bool {
	switch a {
	case atom.Div, atom.P, atom.Ul, atom.Ol, atom.Li, atom.Table, atom.Pre, atom.Section,
		atom.Article, atom.Blockquote, atom.Dl, atom.H1, atom.H2, atom.H3, atom.H4, atom.H5, atom.H6,
		atom.Figure, atom.Details, atom.Form, atom.Hr:
		return true
	}
	return false
}

// inlineOnly reports whether n holds no element that cannot be part of a
// line (blockInLine).
func inlineOnly(n *html.Node) bool {
	ok := true
	walk(n, func(c *html.Node) bool {
		if !ok {
			return false
		}
		if c != n && c.Type == html.ElementNode && blockInLine(c.DataAtom) {
			ok = false
		}
		return ok
	})
	return ok
}

// lineCode rewrites the code listings under root that are written without
// <pre> as <pre> blocks holding every line, blank ones included:
//
//   - a block marked as code (monospace) whose children are all elements
//     of one kind, one line each (a <div> per line with spans, as Doxygen
//     writes), at least two;
//   - a block marked as code, or a monospace element that is the whole of
//     its block, whose lines are divided by <br> or by line breaks in the
//     text, at least two lines with words.
//
// Line-number gutters are left out as in <pre> blocks.
func lineCode(root *html.Node) {
	type listing struct {
		n     *html.Node
		lines []string
	}
	var found []listing
	walk(root, func(n *html.Node) bool {
		if n.Type != html.ElementNode {
			return true
		}
		if isElement(n, atom.Pre) {
			return false
		}
		if lines, ok := fragmentLines(n); ok {
			found = append(found, listing{n, lines})
			return false
		}
		if lines, ok := brokenLines(n); ok {
			found = append(found, listing{n, lines})
			return false
		}
		return true
	})
	for _, l := range found {
		n := l.n
		for c := n.FirstChild; c != nil; c = n.FirstChild {
			n.RemoveChild(c)
		}
		pre := &html.Node{Type: html.ElementNode, Data: "pre", DataAtom: atom.Pre}
		pre.AppendChild(&html.Node{Type: html.TextNode, Data: strings.Join(l.lines, "\n")})
		if monoTag(n.DataAtom) || n.DataAtom == atom.Span || n.DataAtom == atom.P {
			// An inline element cannot hold a <pre>: the <pre> takes its
			// place, and a paragraph's too.
			p := n.Parent
			p.InsertBefore(pre, n)
			p.RemoveChild(n)
			continue
		}
		n.AppendChild(pre)
	}
}

// lineElement reports whether element n says it is a line: a class word
// "line" ("line", "code-line", "highlight-line").
func lineElement(n *html.Node) bool {
	class := attr(n, "class")
	if !strings.Contains(class, "ine") && !strings.Contains(class, "INE") {
		return false
	}
	found := false
	eachClass(class, func(t string) {
		for _, w := range classWords(t) {
			found = found || w == "line"
		}
	})
	return found
}

// fragmentLines reads n as a listing of one element a line; ok is false
// when it is not one. The lines are blocks (<div>, <p>), or inline
// elements that say they are lines (lineElement); a monospace element in
// running text, whose spans are words, is no listing.
func fragmentLines(n *html.Node) ([]string, bool) {
	switch n.DataAtom {
	case atom.Div, atom.Td, atom.Section:
	case atom.Code, atom.Samp:
		if !wholeOfBlock(n) {
			return nil, false
		}
	default:
		return nil, false
	}
	var kind string
	lines := 0
	for c := n.FirstChild; c != nil; c = c.NextSibling {
		switch c.Type {
		case html.TextNode:
			if strings.TrimSpace(c.Data) != "" {
				return nil, false
			}
			continue
		case html.ElementNode:
		default:
			continue
		}
		if isGutter(c) {
			continue
		}
		if kind == "" {
			kind = c.Data
		}
		if c.Data != kind || !inlineOnly(c) {
			return nil, false
		}
		switch c.DataAtom {
		case atom.Div, atom.P:
		case atom.Span, atom.Code:
			if !lineElement(c) {
				return nil, false
			}
		default:
			return nil, false
		}
		lines++
	}
	if lines < 2 {
		return nil, false
	}
	if !monospace(n) && !monospace(n.Parent) && !everyLineMono(n) {
		return nil, false
	}
	var out []string
	full := 0
	for c := n.FirstChild; c != nil; c = c.NextSibling {
		if c.Type == html.ElementNode && !isGutter(c) {
			l := lineText(c)
			if strings.TrimSpace(l) == "" {
				l = ""
			} else {
				full++
			}
			out = append(out, l)
		}
	}
	if full < 2 {
		return nil, false
	}
	return trimBlankEnds(out), true
}

// everyLineMono reports whether every element child of n is marked as
// code, or holds a monospace element as its only content.
func everyLineMono(n *html.Node) bool {
	for c := n.FirstChild; c != nil; c = c.NextSibling {
		if c.Type != html.ElementNode || isGutter(c) {
			continue
		}
		if monospace(c) {
			continue
		}
		var only *html.Node
		for k := c.FirstChild; k != nil; k = k.NextSibling {
			if k.Type == html.TextNode && strings.TrimSpace(k.Data) == "" {
				continue
			}
			if only != nil || k.Type != html.ElementNode {
				return false
			}
			only = k
		}
		if only == nil || !monoTag(only.DataAtom) {
			return false
		}
	}
	return true
}

// brokenLines reads n as a listing whose lines are divided by <br> or by
// line breaks in its text; ok is false when it is not one.
func brokenLines(n *html.Node) ([]string, bool) {
	switch {
	case n.DataAtom == atom.Div || n.DataAtom == atom.P || n.DataAtom == atom.Td:
		if !monospace(n) {
			return nil, false
		}
	case monoTag(n.DataAtom) || n.DataAtom == atom.Span:
		if !monospace(n) || !wholeOfBlock(n) {
			return nil, false
		}
	default:
		return nil, false
	}
	if !inlineOnly(n) {
		return nil, false
	}
	// Line breaks in the text divide lines only where white space is
	// kept: in a monospace element that is its whole block, or under
	// white-space:pre; elsewhere they are the source's wrapping (and a
	// block that says it is monospace is one line).
	if find(n, atom.Br) == nil && !monoTag(n.DataAtom) && !preStyle(n) {
		if !saysMonospace(n) || !hasWords(textContent(n)) {
			return nil, false
		}
		return []string{collapseSpace(lineText(n))}, true
	}
	lines := strings.Split(lineText(n), "\n")
	words := 0
	for _, l := range lines {
		if hasWords(l) {
			words++
		}
	}
	if words < 2 && !(words == 1 && saysMonospace(n)) {
		return nil, false
	}
	return trimBlankEnds(lines), true
}

// saysMonospace reports whether block n says outright that it is set in a
// monospace font (a class word "mono" or "monospace", an inline
// font-family): a one-line signature such a block holds is code, as a
// <pre> of one line is.
func saysMonospace(n *html.Node) bool {
	if n.DataAtom != atom.Div && n.DataAtom != atom.P {
		return false
	}
	if style := strings.ToLower(attr(n, "style")); strings.Contains(style, "monospace") {
		return true
	}
	found := false
	eachClass(attr(n, "class"), func(t string) {
		for _, w := range classWords(t) {
			found = found || w == "mono" || w == "monospace"
		}
	})
	return found
}

// wholeOfBlock reports whether the inline element n is all its block
// parent holds (white space aside).
func wholeOfBlock(n *html.Node) bool {
	p := n.Parent
	if p == nil || p.Type != html.ElementNode || !(p.DataAtom == atom.P || p.DataAtom == atom.Div) {
		return false
	}
	for c := p.FirstChild; c != nil; c = c.NextSibling {
		if c != n && !(c.Type == html.TextNode && strings.TrimSpace(c.Data) == "") && c.Type != html.CommentNode {
			return false
		}
	}
	return true
}

// lineText is the text of a line element as codeText reads it, non-breaking
// spaces as spaces.
func lineText(n *html.Node) string {
	return strings.ReplaceAll(codeText(n), "\u00a0", " ")
}

// trimBlankEnds drops the blank lines at the start and end of lines.
func trimBlankEnds(lines []string) []string {
	for len(lines) > 0 && strings.TrimSpace(lines[0]) == "" {
		lines = lines[1:]
	}
	for len(lines) > 0 && strings.TrimSpace(lines[len(lines)-1]) == "" {
		lines = lines[:len(lines)-1]
	}
	return lines
}

// preStyle reports whether n's inline style keeps white space as written
// (white-space: pre, pre-wrap or pre-line).
func preStyle(n *html.Node) bool {
	return strings.Contains(strings.ToLower(strings.Join(strings.Fields(attr(n, "style")), "")), "white-space:pre")
}
