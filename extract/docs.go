package extract

import (
	"bytes"
	"fmt"
	"net/url"
	"strings"
	"unicode"

	"golang.org/x/net/html"
	"golang.org/x/net/html/atom"
)

// utilityHidden are the class names of the common CSS frameworks that
// hide an element from sight (text for screen readers only).
var utilityHidden = []string{"sr-only", "visually-hidden", "screen-reader-text"}

// hasUtilityHidden reports whether a class attribute holds one of
// utilityHidden. It looks for their text first, which most class
// attributes lack, and tokenizes only those that hold it.
func hasUtilityHidden(class string) bool {
	for _, h := range utilityHidden {
		if !strings.Contains(class, h) {
			continue
		}
		found := false
		eachClass(class, func(t string) { found = found || t == h })
		if found {
			return true
		}
	}
	return false
}

// containerMarkdown converts the container sel chose, after removing its
// chrome, and makes the page title its first line. doc is modified.
func containerMarkdown(doc *html.Node, sel selection, base *url.URL, known map[string]string, pageTitle string, conv convertFunc) (string, error) {
	c := sel.container
	var outsideTitle string
	if sel.rule != nil {
		if t := firstOf(doc, sel.rule.Title); t != nil && !contains(c, t) {
			outsideTitle = collapseSpace(textContent(t))
		}
	}
	cleanContainer(c, sel.rule)
	leadWithH1(c)
	normalizeCode(c)
	fixContainerLinks(c, base, known)
	flattenTableCells(c)

	// Convert the container alone: detached, it is its own document.
	holder := &html.Node{Type: html.ElementNode, Data: "div", DataAtom: atom.Div}
	if c.Parent != nil {
		c.Parent.RemoveChild(c)
	}
	holder.AppendChild(c)
	// Every link is absolute by now and images are gone: the converter
	// need not resolve anything against the page.
	out, err := conv(holder)
	if err != nil {
		return "", fmt.Errorf("extract: converting to Markdown: %w", err)
	}
	out = bytes.TrimSpace(out)
	title := outsideTitle
	if title == "" && find(c, atom.H1) == nil {
		title = pageTitle
	}
	if title == "" || bytes.IndexFunc(out, isWordRune) < 0 {
		return string(out), nil
	}
	// One copy of the Markdown, with the title line before it.
	var md strings.Builder
	title = escapeHeading(title)
	md.Grow(len("# ") + len(title) + len("\n\n") + len(out))
	md.WriteString("# ")
	md.WriteString(title)
	md.WriteString("\n\n")
	md.Write(out)
	return md.String(), nil
}

// leadWithH1 moves the container's first <h1> to its start when text but
// no other heading comes before it (Javadoc's "Package x" line, version
// badges), so that the title is the Markdown's first line.
func leadWithH1(c *html.Node) {
	if h1 := find(c, atom.H1); h1 != nil {
		leadWith(c, h1)
	}
}

func contains(root, n *html.Node) bool {
	for p := n; p != nil; p = p.Parent {
		if p == root {
			return true
		}
	}
	return false
}

// headingEscapes backslash-escapes what would make a title read as
// Markdown other than heading text.
var headingEscapes = strings.NewReplacer(`\`, `\\`, "*", `\*`, "_", `\_`, "[", `\[`, "]", `\]`, "<", `\<`, "`", "\\`", "#", `\#`)

// escapeHeading keeps a title from reading as Markdown other than heading text.
func escapeHeading(s string) string {
	return headingEscapes.Replace(s)
}

// cleanContainer removes from c what a reader of the page does not see as
// its content: the rule's chrome selectors, scripts, styles, media, form
// controls and forms, <nav>, hidden elements (but hidden=until-found),
// popovers, tooltips (role=tooltip, tooltipBubble), tab lists,
// screen-reader-only text, comments and word-less in-page permalinks.
func cleanContainer(c *html.Node, rule *Rule) {
	chrome := removeIndex(rule)
	// Each test below removes the element with its subtree, so their order
	// does not matter: the cheap ones come first.
	prune(c, func(n *html.Node) bool {
		if removedTag(n.DataAtom) || n.Namespace != "" {
			return true
		}
		switch n.DataAtom {
		case atom.Nav, atom.Form, atom.Menu:
			return true
		}
		// The first of each attribute counts, as attr reads it.
		var role, style, class string
		var seenRole, seenStyle, seenClass, hiddenAttr, popover bool
		for _, a := range n.Attr {
			if a.Namespace != "" {
				continue
			}
			switch a.Key {
			case "role":
				if !seenRole {
					role, seenRole = a.Val, true
				}
			case "style":
				if !seenStyle {
					style, seenStyle = a.Val, true
				}
			case "class":
				if !seenClass {
					class, seenClass = a.Val, true
				}
			case "hidden":
				// hidden=until-found is content the browser's find
				// reveals (a collapsed section).
				hiddenAttr = hiddenAttr || !strings.EqualFold(strings.TrimSpace(a.Val), "until-found")
			case "popover":
				popover = true
			}
		}
		if role != "" {
			role = strings.ToLower(strings.TrimSpace(role))
		}
		// Hidden by attribute or inline style. aria-hidden is not enough
		// inside content: highlighters and heading widgets mark visible
		// text with it.
		if role == "navigation" || role == "tablist" || role == "search" || role == "tooltip" || hiddenAttr || popover || styleHides(style) || isPermalink(n) {
			return true
		}
		// Tooltip bubbles are found before their terms lose them: the
		// generic path (no rule) has removed them from the whole page
		// already, and a term whose bubble is gone reads as a bubble.
		if class != "" && (hasUtilityHidden(class) || rule != nil && tooltipBubble(n, class)) {
			return true
		}
		return chrome != nil && chrome.matches(n) && !holdsHeadingText(n)
	})
}

// prune removes from under root (not root itself) its comments and the
// elements drop reports, with their subtrees; drop is not asked about the
// elements inside one it reported.
func prune(root *html.Node, drop func(n *html.Node) bool) {
	var list []*html.Node
	walk(root, func(n *html.Node) bool {
		if n == root {
			return true
		}
		switch n.Type {
		case html.CommentNode:
			list = append(list, n)
			return false
		case html.ElementNode:
			if drop(n) {
				list = append(list, n)
				return false
			}
		}
		return true
	})
	removeAll(list)
}

// builtinRemoves indexes the Remove selectors of each built-in rule.
var builtinRemoves = func() map[*Rule]*selIndex {
	m := make(map[*Rule]*selIndex, len(BuiltinRules))
	for i := range BuiltinRules {
		m[&BuiltinRules[i]] = indexRemove(&BuiltinRules[i])
	}
	return m
}()

// removeIndex is the index of rule's Remove selectors (nil for no rule);
// a rule of Options is indexed on each call.
func removeIndex(rule *Rule) *selIndex {
	if rule == nil {
		return nil
	}
	if x, ok := builtinRemoves[rule]; ok {
		return x
	}
	return indexRemove(rule)
}

func indexRemove(rule *Rule) *selIndex {
	x := newSelIndex()
	for _, sel := range rule.Remove {
		x.add(sel, 0)
	}
	return x
}

// holdsHeadingText reports whether n is a link that wraps the whole text
// of its heading (VuePress, mdBook): a permalink class on it must not take
// the heading's text away.
func holdsHeadingText(n *html.Node) bool {
	if !isElement(n, atom.A) {
		return false
	}
	for p := n.Parent; p != nil; p = p.Parent {
		switch p.DataAtom {
		case atom.H1, atom.H2, atom.H3, atom.H4, atom.H5, atom.H6:
			if p.Type != html.ElementNode {
				continue
			}
			text := collapseSpace(textContent(n))
			return hasWords(text) && text == collapseSpace(textContent(p))
		}
	}
	return false
}

// styleHides reports whether an inline style, lower-cased and without
// white space, contains "display:none"; it allocates nothing.
func styleHides(style string) bool {
	const want = "display:none"
	// Only 'n' and 'N' lower-case to 'n' (no rune beyond ASCII does): a
	// style without either, such as a highlighter's colours, is visible.
	if strings.IndexByte(style, 'n') < 0 && strings.IndexByte(style, 'N') < 0 {
		return false
	}
	// No prefix of want recurs inside it, so a mismatch restarts the match.
	j := 0
	for _, r := range style {
		switch {
		case r == ' ' || r == '\t' || r == '\n' || r == '\v' || r == '\f' || r == '\r':
			continue
		case 'A' <= r && r <= 'Z':
			r += 'a' - 'A'
		case r >= 0x80:
			if unicode.IsSpace(r) {
				continue
			}
			r = unicode.ToLower(r)
		}
		if r != rune(want[j]) {
			j = 0
			if r != rune(want[0]) {
				continue
			}
		}
		if j++; j == len(want) {
			return true
		}
	}
	return false
}

// tableBreaker reports whether elements of atom a are ones the Markdown
// table converter cannot put in a cell; with one inside, it gives up and
// writes the table as paragraphs.
func tableBreaker(a atom.Atom) bool {
	switch a {
	case atom.Ul, atom.Ol, atom.Blockquote, atom.Hr, atom.Table,
		atom.H1, atom.H2, atom.H3, atom.H4, atom.H5, atom.H6,
		atom.Pre, atom.Dl:
		return true
	}
	return false
}

// flattenTableCells rewrites block content of table cells (lists,
// quotes, headings, code blocks, nested tables) as lines of inline text,
// so that every data table becomes a pipe table. A table whose cells are
// all layout (one row, such as an admonition box) is left alone.
func flattenTableCells(root *html.Node) {
	var cells []*html.Node
	walk(root, func(n *html.Node) bool {
		if isElement(n, atom.Td) || isElement(n, atom.Th) {
			cells = append(cells, n)
			return false
		}
		return true
	})
	for _, cell := range cells {
		var breakers []*html.Node
		walk(cell, func(n *html.Node) bool {
			if n != cell && n.Type == html.ElementNode && tableBreaker(n.DataAtom) {
				breakers = append(breakers, n)
				return false
			}
			return true
		})
		for _, b := range breakers {
			if b.Parent == nil {
				continue
			}
			lines := blockLines(b)
			span := &html.Node{Type: html.ElementNode, Data: "span", DataAtom: atom.Span}
			for i, l := range lines {
				if i > 0 {
					span.AppendChild(&html.Node{Type: html.ElementNode, Data: "br", DataAtom: atom.Br})
				}
				if b.DataAtom == atom.Pre {
					code := &html.Node{Type: html.ElementNode, Data: "code", DataAtom: atom.Code}
					code.AppendChild(&html.Node{Type: html.TextNode, Data: l})
					span.AppendChild(code)
				} else {
					span.AppendChild(&html.Node{Type: html.TextNode, Data: l})
				}
			}
			b.Parent.InsertBefore(span, b)
			b.Parent.RemoveChild(b)
		}
	}
}

// blockLines is the text of a block element as lines: one per list item,
// table row or line of code.
func blockLines(n *html.Node) []string {
	if isElement(n, atom.Pre) {
		var out []string
		for _, l := range strings.Split(codeText(n), "\n") {
			if strings.TrimSpace(l) != "" {
				out = append(out, l)
			}
		}
		return out
	}
	var out []string
	var cur strings.Builder
	flush := func() {
		if s := collapseSpace(cur.String()); s != "" {
			out = append(out, s)
		}
		cur.Reset()
	}
	var visit func(*html.Node)
	visit = func(c *html.Node) {
		if c.Type == html.TextNode {
			cur.WriteString(c.Data)
			return
		}
		if c.Type != html.ElementNode {
			return
		}
		line := false
		switch c.DataAtom {
		case atom.Li, atom.Tr, atom.P, atom.Dt, atom.Dd, atom.Div, atom.Br,
			atom.H1, atom.H2, atom.H3, atom.H4, atom.H5, atom.H6:
			line = true
		case atom.Td, atom.Th:
			cur.WriteByte(' ')
		}
		if line {
			flush()
		}
		if isElement(c, atom.Li) && isElement(c.Parent, atom.Ul) {
			cur.WriteString("• ")
		}
		for k := c.FirstChild; k != nil; k = k.NextSibling {
			visit(k)
		}
		if line {
			flush()
		}
	}
	visit(n)
	flush()
	return out
}

// holdsWords reports whether n has a letter or digit in its text outside
// scripts, styles and templates.
func holdsWords(n *html.Node) bool {
	found := false
	walk(n, func(c *html.Node) bool {
		if found {
			return false
		}
		switch {
		case c.Type == html.TextNode:
			found = hasWords(c.Data)
		case isElement(c, atom.Script), isElement(c, atom.Style), isElement(c, atom.Template):
			return false
		}
		return true
	})
	return found
}
