package extract

import (
	"bytes"
	"fmt"
	"log/slog"
	"net/url"
	"strings"
	"sync"

	readability "codeberg.org/readeck/go-readability/v2"
	"github.com/JohannesKaufmann/dom"
	"github.com/JohannesKaufmann/html-to-markdown/v2/converter"
	"github.com/JohannesKaufmann/html-to-markdown/v2/plugin/base"
	"github.com/JohannesKaufmann/html-to-markdown/v2/plugin/commonmark"
	"github.com/JohannesKaufmann/html-to-markdown/v2/plugin/table"
	"golang.org/x/net/html"
	"golang.org/x/net/html/atom"
)

// newMarkdown returns the package's HTML-to-Markdown converter:
// libraryMarkdown's, escaping text without the library's per-byte lock
// (renderWithFastEscape, in escape.go) and with basePlugin (base.go) for
// the library's base plugin, with the same output. That render
// handler is registered before the plugins' so that the handlers, which
// the converter copies and sorts by priority for every element it
// renders, are in order already (sorting them is then cheapest).
func newMarkdown(tables bool) *converter.Converter {
	c := converter.NewConverter()
	c.Register.Renderer(renderWithFastEscape, fastEscapePriority)
	for _, p := range markdownPlugins(basePlugin{}, tables) {
		c.Register.Plugin(p)
	}
	return c
}

// libraryMarkdown returns the library's HTML-to-Markdown converter with
// the package's plugins and options (markdownPlugins).
func libraryMarkdown(tables bool) *converter.Converter {
	return converter.NewConverter(converter.WithPlugins(markdownPlugins(base.NewBasePlugin(), tables)...))
}

// markdownPlugins are the converter plugins of the package, with base as
// the base plugin (the library's, or basePlugin), without the
// table plugin when tables is false. That plugin renders only <table>
// and <tr> elements (and registers '|' as a character to escape, as the
// commonmark plugin does): a tree without either converts alike without
// it, and each of its elements costs less, because the converter copies
// and sorts its render handlers for every element it renders.
func markdownPlugins(base converter.Plugin, tables bool) []converter.Plugin {
	plugins := []converter.Plugin{
		base,
		commonmark.NewCommonmarkPlugin(
			commonmark.WithLinkEmptyHrefBehavior(commonmark.LinkBehaviorSkip),
			commonmark.WithLinkEmptyContentBehavior(commonmark.LinkBehaviorSkip),
		),
	}
	if tables {
		plugins = append(plugins, table.NewTablePlugin(
			table.WithCellPaddingBehavior(table.CellPaddingBehaviorMinimal),
			table.WithNewlineBehavior(table.NewlineBehaviorPreserve),
			table.WithSpanCellBehavior(table.SpanBehaviorMirror),
		))
	}
	return plugins
}

// converters and plainConverters hold converters made by newMarkdown,
// with and without the table plugin. One converter could serve every
// goroutine (ConvertNode keeps its state in the call), but it takes its
// read lock several times for every node it renders (and the library's
// escaping for every character), and goroutines sharing one contend for
// that lock's counter; a converter of its own per conversion costs
// nothing of the kind.
var (
	converters      = sync.Pool{New: func() any { return newMarkdown(true) }}
	plainConverters = sync.Pool{New: func() any { return newMarkdown(false) }}
)

// markdownOf converts root with a converter of a pool: one without the
// table plugin when root holds no <table> or <tr> element.
func markdownOf(root *html.Node, opts ...converter.ConvertOptionFunc) ([]byte, error) {
	pool := &plainConverters
	if holdsTable(root) {
		pool = &converters
	}
	return convertWith(pool, root, opts...)
}

// convertWith converts root with a converter of pool.
func convertWith(pool *sync.Pool, root *html.Node, opts ...converter.ConvertOptionFunc) ([]byte, error) {
	c := pool.Get().(*converter.Converter)
	defer pool.Put(c)
	return c.ConvertNode(root, opts...)
}

// holdsTable reports whether n or a node under it is an element the table
// plugin renders: named "table" or "tr", as the converter reads names.
func holdsTable(n *html.Node) bool {
	if n.Type == html.ElementNode && (n.Data == "table" || n.Data == "tr") {
		return true
	}
	for c := n.FirstChild; c != nil; c = c.NextSibling {
		if holdsTable(c) {
			return true
		}
	}
	return false
}

var discard = slog.New(slog.DiscardHandler)

// convertFunc converts a node to Markdown: markdownOf or convert.
type convertFunc func(root *html.Node, opts ...converter.ConvertOptionFunc) ([]byte, error)

// convert is markdownOf after dropBlockSpace, which the output
// does not depend on (TestDropBlockSpaceKeepsMarkdown, FuzzDropBlockSpace).
func convert(root *html.Node, opts ...converter.ConvertOptionFunc) ([]byte, error) {
	dropBlockSpace(root)
	return markdownOf(root, opts...)
}

// dropBlockSpace removes from root the text nodes of white space only
// (as the converter counts it: space, tab, CR, LF) that follow a block
// element or open one, when no text follows them (the converter would
// merge it in, or move it into a list item) and every element above them
// is a block the converter keeps a block: not inside an inline element, a
// heading or <pre>. The converter's white-space collapsing removes every such
// node too, but only after its other passes over the tree have visited
// them: they are about a third of a documentation container's text nodes,
// and dropping them first saves about a seventh of the conversion.
func dropBlockSpace(root *html.Node) {
	var doomed []*html.Node
	var visit func(n *html.Node)
	visit = func(n *html.Node) {
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			switch c.Type {
			case html.TextNode:
				if (c.PrevSibling == nil || isBlock(c.PrevSibling)) && blankText(c.Data) && !textFollows(c) {
					doomed = append(doomed, c)
				}
			case html.ElementNode:
				if stableBlock(c) {
					visit(c)
				}
			}
		}
	}
	if stableBlock(root) {
		visit(root)
	}
	for _, n := range doomed {
		n.Parent.RemoveChild(n)
	}
}

// stableBlock reports whether n is a block element inside which the
// converter renames no element: not a heading, <hr> or <pre>.
func stableBlock(n *html.Node) bool {
	if !isBlock(n) {
		return false
	}
	switch n.Data {
	case "h1", "h2", "h3", "h4", "h5", "h6", "hr", "pre":
		return false
	}
	return true
}

// textFollows reports whether the next sibling of n the converter keeps
// (it removes comments, scripts, styles and the like first) is text.
func textFollows(n *html.Node) bool {
	for s := n.NextSibling; s != nil; s = s.NextSibling {
		switch {
		case s.Type == html.TextNode:
			return true
		case s.Type == html.CommentNode || (s.Type == html.ElementNode && convertRemoves[s.Data]):
			continue
		}
		return false
	}
	return false
}

// convertRemoves are the elements the converter's base plugin removes
// before anything else.
var convertRemoves = map[string]bool{
	"head": true, "script": true, "style": true, "link": true, "meta": true,
	"iframe": true, "noscript": true, "input": true, "textarea": true,
}

// blankText reports whether s is white space only, as the converter's
// collapsing counts it.
func blankText(s string) bool {
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case ' ', '\t', '\n', '\r':
		default:
			return false
		}
	}
	return true
}

// isBlock reports whether n is an element the converter treats as a block.
func isBlock(n *html.Node) bool {
	return n != nil && n.Type == html.ElementNode && dom.NameIsBlockNode(n.Data)
}

// readableMarkdown removes boilerplate from doc, lets Readability choose
// the main content and converts it with conv. doc is modified.
func readableMarkdown(doc *html.Node, base *url.URL, known map[string]string, conv convertFunc) (string, error) {
	removeBoilerplate(doc)
	langClasses := normalizeCode(doc)
	absolutizeLinks(doc, base, known)

	parser := readability.NewParser()
	parser.Logger = discard
	parser.ClassesToPreserve = append(parser.ClassesToPreserve, langClasses...)
	article, err := parser.ParseAndMutate(doc, base)
	if err != nil {
		return "", fmt.Errorf("extract: selecting main content: %w", err)
	}
	node := article.Node
	if node == nil {
		return "", nil
	}
	unwrapBareLinks(node)
	out, err := conv(node, converter.WithDomain(base.String()))
	if err != nil {
		return "", fmt.Errorf("extract: converting to Markdown: %w", err)
	}
	return string(bytes.TrimSpace(out)), nil
}

// absolutizeLinks rewrites every <a href> under root to an absolute URL
// resolved against base. Targets other than http(s) and mailto
// (javascript:, tel:, ftp:, data:), empty or unparsable ones lose their
// href, so that only their text remains in the Markdown.
//
// known maps hrefs by linkKey to what they resolve to without fragment, as
// pageScan.resolved does (nil for none known): an http(s) URL there is the
// href's resolution but for the fragment, which is the href's own, or the
// base URL's for some hrefs without one ("//"), so known serves only a base
// without fragment.
func absolutizeLinks(root *html.Node, base *url.URL, known map[string]string) {
	known = usableKnown(base, known)
	walk(root, func(n *html.Node) bool {
		if isElement(n, atom.A) {
			absolutizeLink(n, base, known)
		}
		return true
	})
}

// usableKnown is known for absolutizeLink when base has no fragment, else nil.
func usableKnown(base *url.URL, known map[string]string) map[string]string {
	if base.Fragment != "" || base.RawFragment != "" {
		return nil
	}
	return known
}

// absolutizeLink is absolutizeLinks for the <a> element n alone.
func absolutizeLink(n *html.Node, base *url.URL, known map[string]string) {
	href, has := attrOK(n, "href")
	if !has {
		return
	}
	if v := known[linkKey(href)]; v != "" {
		if abs, ok := withFragment(v, href); ok {
			setAttr(n, "href", abs)
			return
		}
	}
	u, ok := resolveRef(base, href)
	switch {
	case !ok:
		removeAttr(n, "href")
	case isHTTP(u), u.Scheme == "mailto" && u.Opaque != "":
		setAttr(n, "href", u.String())
	default:
		removeAttr(n, "href")
	}
}

// fixContainerLinks is unwrapHeadingLinks, absolutizeLinks and
// unwrapBareLinks on the container c in one walk: each changes only the
// <a> it looks at, and the bare links are unwrapped after the walk, in
// document order, as unwrapBareLinks does.
func fixContainerLinks(c *html.Node, base *url.URL, known map[string]string) {
	known = usableKnown(base, known)
	var bare []*html.Node
	var visit func(n *html.Node, inHeading bool)
	visit = func(n *html.Node, inHeading bool) {
		if n.Type == html.ElementNode {
			switch n.DataAtom {
			case atom.H1, atom.H2, atom.H3, atom.H4, atom.H5, atom.H6:
				inHeading = true
			case atom.A:
				if n.Namespace != "" {
					break
				}
				if inHeading && strings.HasPrefix(strings.TrimSpace(attr(n, "href")), "#") {
					removeAttr(n, "href")
				}
				absolutizeLink(n, base, known)
				if !hasAttr(n, "href") {
					bare = append(bare, n)
				}
			}
		}
		for k := n.FirstChild; k != nil; k = k.NextSibling {
			visit(k, inHeading)
		}
	}
	visit(c, false)
	unwrapLinks(bare)
}

// withFragment is the absolute URL href resolves to against a base without
// fragment when resolved, its resolution without fragment, is an http(s)
// URL: resolved with the fragment of href as URL.String writes it. ok is
// false when that fragment does not parse (resolved is then "" anyway).
func withFragment(resolved, href string) (string, bool) {
	if strings.IndexByte(href, '#') < 0 {
		return resolved, true
	}
	href = strings.TrimSpace(stripTabsNewlines.Replace(href))
	_, frag, _ := strings.Cut(href, "#")
	if frag == "" {
		return resolved, true
	}
	f, err := url.Parse("#" + frag)
	if err != nil {
		return "", false
	}
	return resolved + "#" + f.EscapedFragment(), true
}

// unwrapBareLinks replaces each <a> without href by its children: the
// converter would otherwise link their text to the page itself.
func unwrapBareLinks(root *html.Node) {
	var bare []*html.Node
	walk(root, func(n *html.Node) bool {
		if isElement(n, atom.A) && !hasAttr(n, "href") {
			bare = append(bare, n)
		}
		return true
	})
	unwrapLinks(bare)
}

// unwrapLinks replaces each of links, in order, by its children.
func unwrapLinks(links []*html.Node) {
	for _, a := range links {
		if a.Parent == nil {
			continue
		}
		for c := a.FirstChild; c != nil; c = a.FirstChild {
			a.RemoveChild(c)
			a.Parent.InsertBefore(c, a)
		}
		a.Parent.RemoveChild(a)
	}
}
