package extract

import (
	"bytes"
	"errors"
	"net/url"

	"golang.org/x/net/html"
	"golang.org/x/net/html/atom"
)

// DefaultMaxElements is the most elements a page may have for FromHTML to
// build its tree when Options.MaxElements is zero: 100,000, six times the
// largest page of the documentation corpus in testdata/docsites. The
// tree and its conversion cost about 1 KB per element at their peak.
const DefaultMaxElements = 100_000

// ErrTooManyElements means the page has more elements (start tags) than
// Options.MaxElements allows, such as a link farm of a million links: its
// document tree would take many times the page's size in memory. The page
// is not parsed into a tree; one streaming pass reads its title,
// canonical URL, language, description and links into the returned
// Document, which has no Markdown. Raise Options.MaxElements to extract
// such a page anyway.
var ErrTooManyElements = errors.New("extract: page has too many elements to extract its content")

// streamScan reads the metadata and links of text with the tokenizer
// alone, without building a tree, and counts its elements (start and
// self-closing tags). Its pageScan holds stand-alone nodes for the elements
// the metadata methods read; generator and accidents stay empty.
func streamScan(text []byte) (s *pageScan, elements int) {
	s = &pageScan{}
	z := html.NewTokenizer(bytes.NewReader(text))
	var textOf *html.Node // the <title> or <h1> whose text is being read
	for {
		tt := z.Next()
		switch tt {
		case html.ErrorToken:
			return s, elements
		case html.TextToken:
			if textOf != nil {
				textOf.AppendChild(&html.Node{Type: html.TextNode, Data: string(z.Text())})
			}
			continue
		case html.EndTagToken:
			if textOf != nil {
				if name, _ := z.TagName(); atom.Lookup(name) == textOf.DataAtom {
					textOf = nil
				}
			}
			continue
		case html.StartTagToken, html.SelfClosingTagToken:
		default:
			continue
		}
		elements++
		name, more := z.TagName()
		a := atom.Lookup(name)
		switch a {
		case atom.A:
			// Only the first href counts, as attr reads it.
			for more {
				var k, v []byte
				k, v, more = z.TagAttr()
				if string(k) == "href" {
					s.hrefs = append(s.hrefs, string(v))
					break
				}
			}
			continue
		case atom.Base, atom.Title, atom.H1, atom.Html, atom.Link, atom.Meta:
		default:
			continue
		}
		n := &html.Node{Type: html.ElementNode, DataAtom: a, Data: a.String()}
		for more {
			var k, v []byte
			k, v, more = z.TagAttr()
			n.Attr = append(n.Attr, html.Attribute{Key: string(k), Val: string(v)})
		}
		switch a {
		case atom.Base:
			if s.base == nil && hasAttr(n, "href") {
				s.base = n
			}
		case atom.Title:
			if s.title == nil && tt == html.StartTagToken {
				s.title, textOf = n, n
			}
		case atom.H1:
			if s.h1 == nil && tt == html.StartTagToken {
				s.h1, textOf = n, n
			}
		case atom.Html:
			if s.root == nil {
				s.root = n
			}
		case atom.Link:
			if s.canonical == nil && relHas(attr(n, "rel"), "canonical") && hasAttr(n, "href") {
				s.canonical = n
			}
		case atom.Meta:
			s.metas = append(s.metas, n)
		}
	}
}

// document is the metadata and links of the page scanned, without Markdown.
func (s *pageScan) document(page *url.URL) Document {
	base := s.baseURL(page)
	return Document{
		Title:       s.pageTitle(),
		Canonical:   s.canonicalURL(base),
		Links:       s.links(base),
		Lang:        s.lang(),
		Description: s.description(),
	}
}
