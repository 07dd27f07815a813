//go:build extractcompare

// This file compares content extractors; it is built only with
//
//	go test -tags extractcompare -run TestCompareExtractors -v ./extract/
//
// because go-trafilatura costs every binary that links it about 0.6 s and
// 80 MB of allocations at start-up (go-dateparser's tables), which the
// package itself does not pay.

package extract

import (
	"bytes"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	readability "codeberg.org/readeck/go-readability/v2"
	"github.com/JohannesKaufmann/html-to-markdown/v2/converter"
	"github.com/markusmobius/go-trafilatura"
	"github.com/stretchr/testify/require"
	"golang.org/x/net/html"
	"golang.org/x/net/html/atom"

	"github.com/recrawl/recrawl/extract/internal/quality"
)

// extractor turns a page into Markdown (or plain text).
type extractor struct {
	id, name string
	markdown bool // output is Markdown, reduced to text before scoring
	run      func(body []byte, pageURL string) (string, error)
}

var extractors = []extractor{
	{"pipeline-readability", "recrawl pipeline: cleanup + readeck/go-readability + html-to-markdown (chosen)", true, func(body []byte, u string) (string, error) {
		d, err := FromHTML(body, u)
		return d.Markdown, err
	}},
	{"pipeline-trafilatura", "recrawl pipeline, go-trafilatura selecting the main node", true, trafilaturaPipeline},
	{"readability-text", "readeck/go-readability alone, text (as published)", false, func(body []byte, u string) (string, error) {
		a, err := readabilityArticle(body, u)
		if err != nil || a.Node == nil {
			return "", err
		}
		var b bytes.Buffer
		err = a.RenderText(&b)
		return b.String(), err
	}},
	{"readability-markdown", "readeck/go-readability alone, node → html-to-markdown", true, func(body []byte, u string) (string, error) {
		a, err := readabilityArticle(body, u)
		if err != nil || a.Node == nil {
			return "", err
		}
		md, err := markdownOf(a.Node, converter.WithDomain(u))
		return string(md), err
	}},
	{"trafilatura-text-fallback", "go-trafilatura alone, text with fallback (as published)", false, func(body []byte, u string) (string, error) {
		r, err := trafilaturaExtract(body, u, true)
		if err != nil {
			return "", err
		}
		return r.ContentText, nil
	}},
	{"trafilatura-markdown", "go-trafilatura alone, node → html-to-markdown", true, func(body []byte, u string) (string, error) {
		r, err := trafilaturaExtract(body, u, false)
		if err != nil {
			return "", err
		}
		md, err := markdownOf(r.ContentNode, converter.WithDomain(u))
		return string(md), err
	}},
}

func readabilityArticle(body []byte, pageURL string) (readability.Article, error) {
	u, err := url.Parse(pageURL)
	if err != nil {
		return readability.Article{}, err
	}
	doc, err := html.Parse(bytes.NewReader(body))
	if err != nil {
		return readability.Article{}, err
	}
	p := readability.NewParser()
	p.Logger = discard
	return p.ParseAndMutate(doc, u)
}

func trafilaturaExtract(body []byte, pageURL string, fallback bool) (*trafilatura.ExtractResult, error) {
	u, err := url.Parse(pageURL)
	if err != nil {
		return nil, err
	}
	doc, err := html.Parse(bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	return trafilatura.ExtractDocument(doc, trafilatura.Options{
		OriginalURL: u, EnableFallback: fallback, IncludeLinks: true, HtmlDateMode: trafilatura.Disabled,
	})
}

// trafilaturaPipeline is FromHTML with go-trafilatura choosing the main
// content instead of Readability. go-trafilatura rebuilds the tree and
// turns <pre> into attribute-less <code>, so code blocks are put back
// into <pre><code class="language-x"> by matching their text.
func trafilaturaPipeline(body []byte, pageURL string) (string, error) {
	page, err := url.Parse(pageURL)
	if err != nil {
		return "", err
	}
	doc, err := html.Parse(bytes.NewReader(decode(body, "")))
	if err != nil {
		return "", err
	}
	base := baseURL(doc, page)
	if scriptRendered(doc) {
		return "", ErrScriptRendered
	}
	removeBoilerplate(doc)
	normalizeCode(doc)
	absolutizeLinks(doc, base, nil)
	langOfCode := map[string]string{}
	walk(doc, func(n *html.Node) bool {
		if isElement(n, atom.Code) && n.Parent != nil && isElement(n.Parent, atom.Pre) {
			langOfCode[strings.TrimSpace(textContent(n))] = strings.TrimPrefix(attr(n, "class"), "language-")
		}
		return true
	})
	r, err := trafilatura.ExtractDocument(doc, trafilatura.Options{OriginalURL: base, IncludeLinks: true, HtmlDateMode: trafilatura.Disabled})
	if err != nil {
		return "", err
	}
	var blocks []*html.Node
	walk(r.ContentNode, func(n *html.Node) bool {
		// go-trafilatura builds elements without DataAtom: compare names.
		if n.Type == html.ElementNode && n.Data == "code" && !hasAncestor(n, func(p *html.Node) bool { return p.Data == "pre" }) {
			if lang, ok := langOfCode[strings.TrimSpace(textContent(n))]; ok {
				if lang != "" {
					setAttr(n, "class", "language-"+lang)
				}
				blocks = append(blocks, n)
				return false
			}
		}
		return true
	})
	for _, code := range blocks {
		pre := &html.Node{Type: html.ElementNode, Data: "pre", DataAtom: atom.Pre}
		code.Parent.InsertBefore(pre, code)
		code.Parent.RemoveChild(code)
		pre.AppendChild(code)
	}
	unwrapBareLinks(r.ContentNode)
	md, err := markdownOf(r.ContentNode, converter.WithDomain(base.String()))
	return string(bytes.TrimSpace(md)), err
}

var (
	fenceWithLang = regexp.MustCompile("(?m)^```[A-Za-z0-9_+#.-]+$")
	fenceLine     = regexp.MustCompile("(?m)^```")
	tableRule     = regexp.MustCompile(`(?m)^\|(?:\s*:?-+:?\s*\|)+$`)
)

// TestCompareExtractors prints, for each extractor, the benchmark scores
// and speed on the article corpus and what it keeps of the documentation
// pages: fenced code blocks (with language), code lines, pipe tables and
// their non-empty cells. The pages hold 3 code blocks each (8 of them with
// a language, 39 code lines in all) and one table each (20, 12 and 12
// cells).
func TestCompareExtractors(t *testing.T) {
	pages, err := quality.LoadCorpus(filepath.Join("testdata", "benchmark"))
	require.NoError(t, err)
	docs := []struct{ name, url string }{
		{"docusaurus", "https://harborqueue.dev/docs/configuration"},
		{"sphinx", "https://tidepool.readthedocs.io/en/stable/usage/quickstart.html"},
		{"mkdocs", "https://squall.example.org/guide/deploy/"},
	}
	var report strings.Builder
	for _, ex := range extractors {
		start := time.Now()
		m, _ := quality.Evaluate(pages, func(p quality.Page) (string, error) {
			out, err := ex.run(p.HTML, p.URL)
			if ex.markdown {
				out = quality.MarkdownText(out)
			}
			return out, err
		})
		perPage := time.Since(start) / time.Duration(len(pages))
		fmt.Fprintf(&report, "\n%s\n  articles: precision %.3f recall %.3f F1 %.3f, %v/page\n", ex.name, m.Precision, m.Recall, m.F1, perPage.Round(10*time.Microsecond))
		for _, d := range docs {
			body, err := os.ReadFile(filepath.Join("testdata", "golden", d.name+".html"))
			require.NoError(t, err)
			out, err := ex.run(body, d.url)
			fmt.Fprintf(&report, "  %-10s fenced blocks %d (with language %d), code lines %d, pipe tables %d (non-empty cells %d), error %v\n",
				d.name, len(fenceLine.FindAllString(out, -1))/2, len(fenceWithLang.FindAllString(out, -1)),
				codeLines(out), len(tableRule.FindAllString(out, -1)), tableCells(out), err)
		}
	}
	t.Log(report.String())
}

// tableCells counts the non-empty cells of pipe-table rows (not rules).
func tableCells(md string) int {
	n := 0
	for _, line := range strings.Split(md, "\n") {
		if !strings.HasPrefix(line, "|") || tableRule.MatchString(line) {
			continue
		}
		for _, cell := range strings.Split(strings.Trim(line, "|"), "|") {
			if strings.TrimSpace(cell) != "" {
				n++
			}
		}
	}
	return n
}

// codeLines counts the lines inside fenced code blocks.
func codeLines(md string) int {
	n, in := 0, false
	for _, line := range strings.Split(md, "\n") {
		switch {
		case strings.HasPrefix(line, "```"):
			in = !in
		case in:
			n++
		}
	}
	return n
}

// BenchmarkCompareExtractors runs each extractor over the whole article
// corpus; one op is one pass over its 181 pages.
func BenchmarkCompareExtractors(b *testing.B) {
	pages, err := quality.LoadCorpus(filepath.Join("testdata", "benchmark"))
	require.NoError(b, err)
	var size int64
	for _, p := range pages {
		size += int64(len(p.HTML))
	}
	for _, ex := range extractors {
		b.Run(ex.id, func(b *testing.B) {
			b.SetBytes(size)
			b.ReportAllocs()
			for b.Loop() {
				for _, p := range pages {
					_, _ = ex.run(p.HTML, p.URL)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Milliseconds())/float64(b.N*len(pages)), "ms/page")
		})
	}
}
