package extract

import (
	"bytes"
	"fmt"
	"log/slog"
	"net/url"

	readability "codeberg.org/readeck/go-readability/v2"
	"github.com/JohannesKaufmann/html-to-markdown/v2/converter"
	"github.com/JohannesKaufmann/html-to-markdown/v2/plugin/base"
	"github.com/JohannesKaufmann/html-to-markdown/v2/plugin/commonmark"
	"github.com/JohannesKaufmann/html-to-markdown/v2/plugin/table"
	"golang.org/x/net/html"
	"golang.org/x/net/html/atom"
)

// markdown is the one HTML-to-Markdown converter of the package. A
// converter's plugins register handlers once, at construction; ConvertNode
// only reads them (under the converter's own lock) and keeps per-call state
// in the call, so one converter serves any number of goroutines.
var markdown = converter.NewConverter(converter.WithPlugins(
	base.NewBasePlugin(),
	commonmark.NewCommonmarkPlugin(
		commonmark.WithLinkEmptyHrefBehavior(commonmark.LinkBehaviorSkip),
		commonmark.WithLinkEmptyContentBehavior(commonmark.LinkBehaviorSkip),
	),
	table.NewTablePlugin(
		table.WithCellPaddingBehavior(table.CellPaddingBehaviorMinimal),
		table.WithNewlineBehavior(table.NewlineBehaviorPreserve),
		table.WithSpanCellBehavior(table.SpanBehaviorMirror),
	),
))

var discard = slog.New(slog.DiscardHandler)

// readableMarkdown removes boilerplate from doc, lets Readability choose
// the main content and converts it to Markdown. doc is modified.
func readableMarkdown(doc *html.Node, base *url.URL) (string, error) {
	removeBoilerplate(doc)
	langClasses := normalizeCode(doc)
	absolutizeLinks(doc, base)

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
	out, err := markdown.ConvertNode(node, converter.WithDomain(base.String()))
	if err != nil {
		return "", fmt.Errorf("extract: converting to Markdown: %w", err)
	}
	return string(bytes.TrimSpace(out)), nil
}

// absolutizeLinks rewrites every <a href> under root to an absolute URL
// resolved against base. Targets other than http(s) and mailto
// (javascript:, tel:, ftp:, data:), empty or unparsable ones lose their
// href, so that only their text remains in the Markdown.
func absolutizeLinks(root *html.Node, base *url.URL) {
	walk(root, func(n *html.Node) bool {
		if !isElement(n, atom.A) || !hasAttr(n, "href") {
			return true
		}
		u, ok := resolveRef(base, attr(n, "href"))
		switch {
		case !ok:
			removeAttr(n, "href")
		case isHTTP(u), u.Scheme == "mailto" && u.Opaque != "":
			setAttr(n, "href", u.String())
		default:
			removeAttr(n, "href")
		}
		return true
	})
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
	for _, a := range bare {
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
