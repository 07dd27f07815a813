package extract

import (
	"strings"
	"unicode"

	"golang.org/x/net/html"
	"golang.org/x/net/html/atom"
)

// removedTag reports whether elements of atom a never hold readable text
// worth keeping: code, styling, embedded media, form controls. Images go
// too: their URLs churn (resizing services, cache-busting queries) without
// the text changing, and a figure's caption, which is kept, says what alt
// text rarely does. (A switch: it runs on every element of the page.)
func removedTag(a atom.Atom) bool {
	switch a {
	case atom.Script, atom.Style, atom.Noscript, atom.Template,
		atom.Svg, atom.Canvas, atom.Iframe, atom.Object,
		atom.Embed, atom.Applet, atom.Audio, atom.Video,
		atom.Source, atom.Track, atom.Picture, atom.Img,
		atom.Map, atom.Input, atom.Button, atom.Select,
		atom.Textarea, atom.Datalist, atom.Dialog, atom.Link,
		atom.Meta, atom.Frameset, atom.Frame:
		return true
	}
	return false
}

// landmarkRoles are ARIA roles of page furniture.
var landmarkRoles = map[string]bool{
	"navigation": true, "banner": true, "contentinfo": true, "search": true,
	"menu": true, "menubar": true, "dialog": true, "alertdialog": true,
}

// consentWords appear in the id or class of cookie and consent banners,
// including those of the common consent-management platforms.
var consentWords = []string{
	"cookie", "consent", "gdpr", "onetrust", "didomi", "usercentrics", "truste",
	"osano", "iubenda", "termly", "qc-cmp", "sp_message_container", "cmp-container", "cmp-banner",
}

// consentMaxText bounds the text of an element taken for a consent banner,
// so that an article merely classed "cookies" is never dropped.
const consentMaxText = 2000

// removeBoilerplate deletes page furniture from doc: the tags above,
// navigation, page header and footers, sidebars outside the main content,
// forms, consent banners, hidden elements, heading permalinks and skip
// links. An element holding most of the page's text is never removed
// (some sites wrap their whole page in a <form> or a mislabelled
// container); it is kept for the extractor to judge.
func removeBoilerplate(doc *html.Node) {
	body := find(doc, atom.Body)
	if body == nil {
		return
	}
	stats := measure(body)
	holdsMost := mostTextHolder(body, stats)
	prune(body, func(n *html.Node) bool {
		return removedTag(n.DataAtom) || n.Namespace != "" || isFurniture(n, stats) && !holdsMost(n) || isPermalink(n)
	})
}

// mostTextHolder reports of an element of body whether it holds most of
// body's text (and some 200 characters at least): such an element is
// never removed as furniture, for some sites wrap their whole page in a
// <form> or a mislabelled container.
func mostTextHolder(body *html.Node, stats map[*html.Node]nodeStat) func(*html.Node) bool {
	bodyText := stats[body].text
	return func(n *html.Node) bool {
		t := stats[n].text
		return t > 200 && 2*t > bodyText
	}
}

// isFurniture reports whether element n is navigation, a page header or
// footer, a sidebar, a form, a consent banner or hidden.
func isFurniture(n *html.Node, stats map[*html.Node]nodeStat) bool {
	switch n.DataAtom {
	case atom.Nav, atom.Footer, atom.Form, atom.Menu:
		return true
	case atom.Header:
		// An article's own header holds its title; the page's holds the
		// site's logo and menu.
		return !hasAncestor(n, isContentRoot)
	case atom.Aside:
		// Inside the content an <aside> is often an admonition or a note.
		return !hasAncestor(n, isContentRoot)
	}
	if landmarkRoles[strings.ToLower(strings.TrimSpace(attr(n, "role")))] {
		return true
	}
	if isHidden(n) {
		return true
	}
	return isConsentBanner(n, stats[n])
}

// isContentRoot reports whether n is an <article>, <main> or role=main.
func isContentRoot(n *html.Node) bool {
	return isElement(n, atom.Article) || isElement(n, atom.Main) ||
		strings.EqualFold(strings.TrimSpace(attr(n, "role")), "main")
}

func isHidden(n *html.Node) bool {
	if hasAttr(n, "hidden") || strings.EqualFold(strings.TrimSpace(attr(n, "aria-hidden")), "true") {
		return true
	}
	style := strings.ToLower(strings.Join(strings.Fields(attr(n, "style")), ""))
	return strings.Contains(style, "display:none") || strings.Contains(style, "visibility:hidden")
}

func isConsentBanner(n *html.Node, st nodeStat) bool {
	switch n.DataAtom {
	case atom.Html, atom.Body, atom.Main, atom.Article:
		return false
	}
	if st.text > consentMaxText || st.holdsContent {
		return false
	}
	for _, a := range n.Attr {
		if a.Key != "id" && a.Key != "class" && a.Key != "aria-label" {
			continue
		}
		v := strings.ToLower(a.Val)
		for _, w := range consentWords {
			if strings.Contains(v, w) {
				return true
			}
		}
	}
	return false
}

// nodeStat summarises an element's subtree.
type nodeStat struct {
	// text counts the non-space characters of its text.
	text int
	// holdsContent is true when it contains an <h1>, <article> or <main>.
	holdsContent bool
}

// measure computes the nodeStat of every element under root in one pass.
func measure(root *html.Node) map[*html.Node]nodeStat {
	stats := make(map[*html.Node]nodeStat)
	var visit func(n *html.Node) nodeStat
	visit = func(n *html.Node) nodeStat {
		var st nodeStat
		switch n.Type {
		case html.TextNode:
			for _, r := range n.Data {
				if !unicode.IsSpace(r) {
					st.text++
				}
			}
			return st
		case html.ElementNode:
			switch n.DataAtom {
			case atom.Script, atom.Style, atom.Template:
				return st
			case atom.H1, atom.Article, atom.Main:
				st.holdsContent = true
			}
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			cs := visit(c)
			st.text += cs.text
			st.holdsContent = st.holdsContent || cs.holdsContent
		}
		if n.Type == html.ElementNode {
			stats[n] = st
		}
		return st
	}
	visit(root)
	return stats
}

// isPermalink reports whether n is an in-page link without words, such as
// the "¶" or "#" permalink beside a heading, or a "Skip to content" link.
func isPermalink(n *html.Node) bool {
	if !isElement(n, atom.A) {
		return false
	}
	href := strings.TrimSpace(attr(n, "href"))
	if !strings.HasPrefix(href, "#") {
		return false
	}
	if !holdsWords(n) {
		return true
	}
	return strings.HasPrefix(strings.ToLower(collapseSpace(textContent(n))), "skip to ")
}

// hasWords reports whether s contains a letter or a digit.
func hasWords(s string) bool {
	return strings.IndexFunc(s, isWordRune) >= 0
}

func isWordRune(r rune) bool { return unicode.IsLetter(r) || unicode.IsNumber(r) }
