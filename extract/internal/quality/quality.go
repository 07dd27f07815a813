// Package quality scores extracted text against a reference text with the
// metric of the article-extraction benchmark (scrapinghub/article-extraction-benchmark):
// tokens are runs of word characters, each text becomes a multiset of token
// 4-gram shingles, and a page's true positives, false positives and false
// negatives are counted over the two multisets and normalised by their sum,
// so that long pages weigh no more than short ones. Precision and recall are
// the means of the per-page scores; F1 is computed from the two means.
package quality

import (
	"bytes"
	"regexp"
	"strings"
	"unicode"

	"github.com/yuin/goldmark"
	"github.com/yuin/goldmark/extension"
	"golang.org/x/net/html"
)

// ShingleSize is the number of tokens in one shingle.
const ShingleSize = 4

// Counts are one page's normalised true positives, false positives and
// false negatives; they sum to 1 unless both texts are empty (all zero).
type Counts struct {
	TP, FP, FN float64
}

// Metrics are the benchmark's figures over a set of pages.
type Metrics struct {
	Precision, Recall, F1 float64
	// Pages is the number of pages scored.
	Pages int
}

// Tokens splits text into runs of letters, numbers and underscores (the
// Unicode \w of Python's re module, which the benchmark uses).
func Tokens(text string) []string {
	return strings.FieldsFunc(text, func(r rune) bool {
		return !(unicode.IsLetter(r) || unicode.IsNumber(r) || r == '_')
	})
}

// shingles counts the ShingleSize-token shingles of text. A text with fewer
// tokens than ShingleSize yields one shorter shingle; an empty text none.
func shingles(text string) map[string]int {
	toks := Tokens(text)
	out := make(map[string]int, len(toks))
	n := max(1, len(toks)-ShingleSize+1)
	for i := range n {
		end := min(i+ShingleSize, len(toks))
		if i >= end {
			break
		}
		out[strings.Join(toks[i:end], "\x00")]++
	}
	return out
}

// Score compares one page's predicted text with its reference text.
func Score(truth, pred string) Counts {
	ts, ps := shingles(truth), shingles(pred)
	var c Counts
	for k, tc := range ts {
		pc := ps[k]
		c.TP += float64(min(tc, pc))
		c.FN += float64(max(0, tc-pc))
	}
	for k, pc := range ps {
		c.FP += float64(max(0, pc-ts[k]))
	}
	if s := c.TP + c.FP + c.FN; s > 0 {
		c.TP, c.FP, c.FN = c.TP/s, c.FP/s, c.FN/s
	}
	return c
}

// precision and recall follow the benchmark's definitions.
func precision(c Counts) float64 {
	switch {
	case c.FP == 0 && c.FN == 0:
		return 1
	case c.TP == 0 && c.FP == 0:
		return 0
	}
	return c.TP / (c.TP + c.FP)
}

func recall(c Counts) float64 {
	switch {
	case c.FP == 0 && c.FN == 0:
		return 1
	case c.TP == 0 && c.FN == 0:
		return 0
	}
	return c.TP / (c.TP + c.FN)
}

// Summarize averages per-page precision (over pages with TP+FP > 0) and
// recall (over pages with TP+FN > 0), as the benchmark does, and computes F1
// from the two means.
func Summarize(pages []Counts) Metrics {
	var p, r float64
	var np, nr int
	for _, c := range pages {
		if c.TP+c.FP > 0 {
			p += precision(c)
			np++
		}
		if c.TP+c.FN > 0 {
			r += recall(c)
			nr++
		}
	}
	m := Metrics{Pages: len(pages)}
	if np > 0 {
		m.Precision = p / float64(np)
	}
	if nr > 0 {
		m.Recall = r / float64(nr)
	}
	if m.Precision+m.Recall > 0 {
		m.F1 = 2 * m.Precision * m.Recall / (m.Precision + m.Recall)
	}
	return m
}

var (
	markdown = goldmark.New(goldmark.WithExtensions(extension.Table, extension.Strikethrough))
	// <https://example.com>: an autolink's text is its URL.
	autolink = regexp.MustCompile(`<[a-zA-Z][a-zA-Z0-9+.-]{1,31}:[^<>\s]*>`)
)

// MarkdownText is the text a reader sees in rendered Markdown: escapes and
// entities resolved, link targets and image URLs dropped, image alt text
// and link text kept, autolinks (<https://...>, whose text is their URL)
// dropped. It is
// what gets scored, so Markdown syntax neither helps nor hurts a page.
func MarkdownText(md string) string {
	md = autolink.ReplaceAllString(md, "")
	var out bytes.Buffer
	if err := markdown.Convert([]byte(md), &out); err != nil {
		return md
	}
	doc, err := html.Parse(&out)
	if err != nil {
		return md
	}
	var b strings.Builder
	var walk func(*html.Node)
	walk = func(n *html.Node) {
		switch n.Type {
		case html.TextNode:
			b.WriteString(n.Data)
			return
		case html.ElementNode:
			switch n.Data {
			case "img":
				for _, a := range n.Attr {
					if a.Key == "alt" {
						b.WriteString(" " + a.Val + " ")
					}
				}
				return
			}
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			walk(c)
		}
		if n.Type == html.ElementNode {
			b.WriteByte('\n')
		}
	}
	walk(doc)
	return b.String()
}
