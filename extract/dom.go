package extract

import (
	"strings"

	"golang.org/x/net/html"
	"golang.org/x/net/html/atom"
)

// attr returns the value of n's attribute key ("" when absent).
func attr(n *html.Node, key string) string {
	for _, a := range n.Attr {
		if a.Namespace == "" && a.Key == key {
			return a.Val
		}
	}
	return ""
}

// attrOK returns the value of n's attribute key and whether n has it.
func attrOK(n *html.Node, key string) (string, bool) {
	for _, a := range n.Attr {
		if a.Namespace == "" && a.Key == key {
			return a.Val, true
		}
	}
	return "", false
}

func hasAttr(n *html.Node, key string) bool {
	for _, a := range n.Attr {
		if a.Namespace == "" && a.Key == key {
			return true
		}
	}
	return false
}

func setAttr(n *html.Node, key, val string) {
	for i, a := range n.Attr {
		if a.Namespace == "" && a.Key == key {
			n.Attr[i].Val = val
			return
		}
	}
	n.Attr = append(n.Attr, html.Attribute{Key: key, Val: val})
}

func removeAttr(n *html.Node, key string) {
	out := n.Attr[:0]
	for _, a := range n.Attr {
		if a.Namespace != "" || a.Key != key {
			out = append(out, a)
		}
	}
	n.Attr = out
}

// isElement reports whether n is an HTML element with the given atom.
func isElement(n *html.Node, a atom.Atom) bool {
	return n.Type == html.ElementNode && n.Namespace == "" && n.DataAtom == a
}

// walk visits n and its descendants in document order. When visit returns
// false the node's children are skipped. The tree must not be changed
// during the walk; collect nodes first to change them.
func walk(n *html.Node, visit func(*html.Node) bool) {
	if !visit(n) {
		return
	}
	for c := n.FirstChild; c != nil; c = c.NextSibling {
		walk(c, visit)
	}
}

// find returns the first element in document order with the given atom.
func find(n *html.Node, a atom.Atom) *html.Node {
	var found *html.Node
	walk(n, func(c *html.Node) bool {
		if found != nil {
			return false
		}
		if isElement(c, a) {
			found = c
			return false
		}
		return true
	})
	return found
}

// findWhere returns n or the first node under it, in document order, that
// match reports.
func findWhere(n *html.Node, match func(*html.Node) bool) *html.Node {
	var found *html.Node
	walk(n, func(c *html.Node) bool {
		if found == nil && match(c) {
			found = c
		}
		return found == nil
	})
	return found
}

// textContent is the concatenated text of n's descendants, skipping
// script, style and template contents.
func textContent(n *html.Node) string {
	var b strings.Builder
	walk(n, func(c *html.Node) bool {
		switch {
		case c.Type == html.TextNode:
			b.WriteString(c.Data)
		case isElement(c, atom.Script), isElement(c, atom.Style), isElement(c, atom.Template):
			return false
		}
		return true
	})
	return b.String()
}

// collapseSpace trims s and replaces each run of white space with one space.
func collapseSpace(s string) string {
	return strings.Join(strings.Fields(s), " ")
}

// hasAncestor reports whether one of n's ancestors satisfies pred.
func hasAncestor(n *html.Node, pred func(*html.Node) bool) bool {
	for p := n.Parent; p != nil; p = p.Parent {
		if pred(p) {
			return true
		}
	}
	return false
}
