package extract

import (
	"bytes"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"golang.org/x/net/html"
	"golang.org/x/net/html/atom"
)

// pageVariant rewrites a parsed documentation page the way another page of
// the same generator (another theme version, another site's layout
// options) may differ; ok is false when the variant does not apply.
type pageVariant struct {
	name    string
	rewrite func(doc, container *html.Node, rule *Rule) (ok bool)
}

var pageVariants = []pageVariant{
	// The site chrome in the opposite order: sidebars, headers and footers
	// before or after the content, at every level above the container.
	{"chrome order reversed", func(doc, c *html.Node, _ *Rule) bool {
		for p := c; p.Parent != nil && !isElement(p, atom.Body); p = p.Parent {
			reverseChildren(p.Parent)
		}
		return true
	}},
	// Class names and attributes in another order on every element.
	{"class and attribute order reversed", func(doc, _ *html.Node, _ *Rule) bool {
		walk(doc, func(n *html.Node) bool {
			if n.Type != html.ElementNode {
				return true
			}
			slices.Reverse(n.Attr)
			for i, a := range n.Attr {
				if a.Key == "class" {
					f := strings.Fields(a.Val)
					slices.Reverse(f)
					n.Attr[i].Val = strings.Join(f, " ")
				}
			}
			return true
		})
		return true
	}},
	// No <meta name="generator">: the rule's markers recognise the page.
	{"no generator meta", func(doc, _ *html.Node, rule *Rule) bool {
		if len(rule.Markers) == 0 {
			return false
		}
		found := false
		walk(doc, func(n *html.Node) bool {
			if isElement(n, atom.Meta) && strings.EqualFold(attr(n, "name"), "generator") {
				setAttr(n, "name", "x-generator")
				found = true
			}
			return true
		})
		return found
	}},
	// The whole page inside one more wrapper, and more chrome outside the
	// content whose ids and classes name content words (removal never
	// goes by keywords, and chrome outside the container never counts).
	{"wrapped, extra chrome", func(doc, c *html.Node, _ *Rule) bool {
		body := find(doc, atom.Body)
		if body == nil {
			return false
		}
		wrap := &html.Node{Type: html.ElementNode, Data: "div", DataAtom: atom.Div, Attr: []html.Attribute{{Key: "id", Val: "site-wrapper"}}}
		for k := body.FirstChild; k != nil; k = body.FirstChild {
			body.RemoveChild(k)
			wrap.AppendChild(k)
		}
		body.AppendChild(wrap)
		extra, err := html.ParseFragment(strings.NewReader(
			`<div id="cookie-consent" class="related share">Cookie banner text</div><aside class="community-extras"><a href="/x">Sidebar extra link</a></aside>`), body)
		if err != nil {
			return false
		}
		for i, n := range extra {
			if i == 0 {
				wrap.InsertBefore(n, wrap.FirstChild)
			} else {
				wrap.AppendChild(n)
			}
		}
		return true
	}},
}

func reverseChildren(p *html.Node) {
	var kids []*html.Node
	for k := p.FirstChild; k != nil; k = k.NextSibling {
		kids = append(kids, k)
	}
	for _, k := range kids {
		p.RemoveChild(k)
	}
	for i := len(kids) - 1; i >= 0; i-- {
		p.AppendChild(kids[i])
	}
}

// TestRuleVariants checks every page of TestBuiltinRules in the variants
// above: the same rule chooses the container and the Markdown is the same
// as the original page's, so no rule depends on the order of the page's
// chrome, on class or attribute order, on the generator's <meta> (when the
// rule has markers) or on wrappers and extra chrome outside the content.
func TestRuleVariants(t *testing.T) {
	for _, tc := range ruleCases {
		body := readPage(t, tc.file)
		url := tc.url
		if url == "" {
			url = "https://docs.example.org/guide/page.html"
		}
		want, err := FromHTML(body, url)
		require.NoError(t, err)
		for _, v := range pageVariants {
			t.Run(strings.TrimSuffix(tc.file, ".html")+"/"+v.name, func(t *testing.T) {
				doc, err := html.Parse(bytes.NewReader(body))
				require.NoError(t, err)
				sel, ok := chooseContainer(doc, nil, scanPage(doc))
				require.True(t, ok)
				if !v.rewrite(doc, sel.container, sel.rule) {
					t.Skipf("%s does not apply to rule %s", v.name, sel.rule.Name)
				}
				var b bytes.Buffer
				require.NoError(t, html.Render(&b, doc))
				variant := b.Bytes()

				doc, err = html.Parse(bytes.NewReader(variant))
				require.NoError(t, err)
				sel, ok = chooseContainer(doc, nil, scanPage(doc))
				require.True(t, ok, "no container chosen")
				require.Equal(t, tc.rule, sel.rule.Name)
				got, err := FromHTML(variant, url)
				require.NoError(t, err)
				require.Equal(t, want.Markdown, got.Markdown)
			})
		}
	}
}
