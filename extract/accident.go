package extract

import (
	"strings"

	"golang.org/x/net/html"
	"golang.org/x/net/html/atom"
)

// restoreTextTags undoes what the HTML parser makes of type notation left
// unescaped in text, such as "Array<object>", "Promise<object>",
// "Map<string>" or "<T>": an element that swallows the rest of its parent.
// An element of the body that HTML does not define (no hyphen, so not a
// custom element), an <object> that embeds nothing (no data, type or
// classid) and a <map> without name become their tag as text followed by
// their children, so the text and everything after it stay in place.
//
// accidents are the elements of the page's first <body> that isTextTag
// reports, in document order (scanPage collects them).
func restoreTextTags(accidents []*html.Node) {
	for _, n := range accidents {
		p := n.Parent
		if p == nil {
			continue
		}
		p.InsertBefore(&html.Node{Type: html.TextNode, Data: tagText(n)}, n)
		for c := n.FirstChild; c != nil; c = n.FirstChild {
			n.RemoveChild(c)
			p.InsertBefore(c, n)
		}
		p.RemoveChild(n)
	}
}

func isTextTag(n *html.Node) bool {
	switch n.DataAtom {
	case 0:
		return !strings.Contains(n.Data, "-") && !hasAttr(n, "id") && !hasAttr(n, "class")
	case atom.Object:
		return !hasAttr(n, "data") && !hasAttr(n, "type") && !hasAttr(n, "classid")
	case atom.Map:
		return !hasAttr(n, "name") && !hasAttr(n, "id")
	}
	return false
}

// tagText is the start tag of n as it was written (near enough: the
// parser lower-cases names).
func tagText(n *html.Node) string {
	var b strings.Builder
	b.WriteByte('<')
	b.WriteString(n.Data)
	for _, a := range n.Attr {
		b.WriteByte(' ')
		b.WriteString(a.Key)
		if a.Val != "" {
			b.WriteString(`="` + a.Val + `"`)
		}
	}
	b.WriteByte('>')
	return b.String()
}
