package extract

import (
	"regexp"
	"strings"

	"golang.org/x/net/html"
	"golang.org/x/net/html/atom"
)

// scriptShellWords is the most visible text, in words, a page may hold
// and still count as a client-side rendered shell when it shows the
// evidence below. Real pages that merely carry a <noscript> notice (for
// comments, analytics) have far more text than that.
const scriptShellWords = 100

// appRootIDs are the ids of the elements client-side frameworks mount into
// (React, Next.js, Vue, Nuxt, Gatsby, Svelte, Quasar, Ember and others).
var appRootIDs = map[string]bool{
	"root": true, "app": true, "app-root": true, "application": true,
	"__next": true, "__nuxt": true, "___gatsby": true, "gatsby-focus-wrapper": true,
	"svelte": true, "q-app": true, "ember-app": true, "react-root": true,
	"react-app": true, "vue-app": true, "main-app": true, "spa-root": true,
}

// appRootTags are custom elements frameworks mount into (Angular).
var appRootTags = map[string]bool{"app-root": true}

// enableJS matches a <noscript> notice asking for JavaScript, e.g. "You
// need to enable JavaScript to run this app." or "JavaScript is required".
var enableJS = regexp.MustCompile(`(?i)javascript|\bjs\b`)

// scriptRendered reports whether the page's content is evidently rendered
// by client-side JavaScript: it runs scripts and either has no visible text
// at all, or has fewer than scriptShellWords words of it and mounts into an
// empty application root or carries a <noscript> asking to enable
// JavaScript.
func scriptRendered(doc *html.Node) bool {
	body := find(doc, atom.Body)
	if body == nil {
		return false
	}
	var scripts, emptyRoot, noscriptJS bool
	walk(doc, func(n *html.Node) bool {
		if n.Type != html.ElementNode {
			return true
		}
		switch {
		case isElement(n, atom.Script):
			if isCode(n) {
				scripts = true
			}
			return false
		case isElement(n, atom.Noscript):
			if enableJS.MatchString(noscriptText(n)) {
				noscriptJS = true
			}
			return false
		case appRootIDs[strings.ToLower(attr(n, "id"))] || appRootTags[n.Data] ||
			hasAttr(n, "data-reactroot") || hasAttr(n, "ng-app") || hasAttr(n, "data-server-rendered"):
			if len(strings.Fields(visibleText(n))) <= 3 { // empty, or "Loading…"
				emptyRoot = true
			}
		}
		return true
	})
	if !scripts {
		return false
	}
	words := len(strings.Fields(visibleText(body)))
	return words == 0 || (emptyRoot || noscriptJS) && words < scriptShellWords && !headed(body)
}

// headed reports whether n holds a visible heading with words: a short
// page that has one (a Javadoc page of one interface, whose <noscript>
// says that JavaScript is disabled) is written, not an application shell.
func headed(n *html.Node) bool {
	found := false
	walk(n, func(c *html.Node) bool {
		switch {
		case found || c.Type != html.ElementNode:
			return !found
		case c.DataAtom == atom.Script, c.DataAtom == atom.Style, c.DataAtom == atom.Template, c.DataAtom == atom.Noscript, hasAttr(c, "hidden"):
			return false
		case headingLevel(c) > 0:
			found = hasWords(visibleText(c))
			return false
		}
		return true
	})
	return found
}

// isCode reports whether a <script> element holds or loads code, as
// opposed to data such as JSON-LD.
func isCode(n *html.Node) bool {
	switch t := strings.ToLower(strings.TrimSpace(attr(n, "type"))); {
	case t == "", t == "module", strings.Contains(t, "javascript"), strings.Contains(t, "ecmascript"):
	default:
		return false
	}
	if hasAttr(n, "src") {
		return true
	}
	for c := n.FirstChild; c != nil; c = c.NextSibling {
		if c.Type == html.TextNode && strings.TrimSpace(c.Data) != "" {
			return true
		}
	}
	return false
}

// noscriptText is the text of a <noscript> element. With scripting enabled
// the parser keeps its content as raw markup, which is parsed here.
func noscriptText(n *html.Node) string {
	var raw strings.Builder
	for c := n.FirstChild; c != nil; c = c.NextSibling {
		if c.Type == html.TextNode {
			raw.WriteString(c.Data)
		} else {
			raw.WriteString(textContent(c))
		}
	}
	frag, err := html.ParseFragment(strings.NewReader(raw.String()), &html.Node{Type: html.ElementNode, Data: "div", DataAtom: atom.Div})
	if err != nil {
		return raw.String()
	}
	var b strings.Builder
	for _, f := range frag {
		b.WriteString(textContent(f))
		b.WriteByte(' ')
	}
	return b.String()
}

// visibleText is n's text outside script, style, template and noscript
// elements and elements marked hidden.
func visibleText(n *html.Node) string {
	var b strings.Builder
	walk(n, func(c *html.Node) bool {
		switch {
		case c.Type == html.TextNode:
			b.WriteString(c.Data)
			b.WriteByte(' ')
		case c.Type == html.ElementNode:
			switch c.DataAtom {
			case atom.Script, atom.Style, atom.Template, atom.Noscript:
				return false
			}
			if hasAttr(c, "hidden") {
				return false
			}
		}
		return true
	})
	return b.String()
}
