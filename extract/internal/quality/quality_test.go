package quality

import (
	"bytes"
	"math"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"golang.org/x/net/html"
)

func TestTokens(t *testing.T) {
	require.Equal(t, []string{"Hello", "wörld", "snake_case", "42", "日本語"}, Tokens("Hello, wörld! snake_case -42- 日本語."))
	require.Empty(t, Tokens(" ,.;- "))
}

func TestScore(t *testing.T) {
	near := func(t *testing.T, want, got Counts) {
		t.Helper()
		for _, p := range [][2]float64{{want.TP, got.TP}, {want.FP, got.FP}, {want.FN, got.FN}} {
			require.InDelta(t, p[0], p[1], 1e-9, "want %+v, got %+v", want, got)
		}
	}
	// Identical texts: every shingle matches.
	near(t, Counts{TP: 1}, Score("a b c d e f", "a b c d e f"))
	// Punctuation and spacing do not matter, words do.
	near(t, Counts{TP: 1}, Score("a, b. c d!", "a b\nc   d"))
	// "a b c d e": shingles abcd, bcde. Prediction "a b c d x": abcd, bcdx.
	near(t, Counts{TP: 1.0 / 3, FP: 1.0 / 3, FN: 1.0 / 3}, Score("a b c d e", "a b c d x"))
	// Multisets: a passage predicted twice matches once. Prediction
	// shingles: abcd twice, bcda, cdab, dabc; truth: abcd once.
	near(t, Counts{TP: 1.0 / 5, FP: 4.0 / 5}, Score("a b c d", "a b c d. a b c d"))
	// Fewer than four tokens make one short shingle.
	near(t, Counts{TP: 1}, Score("a b", "a b"))
	near(t, Counts{FP: 0.5, FN: 0.5}, Score("a b", "a c"))
	// Empty against empty counts nothing.
	near(t, Counts{}, Score("", ""))
	near(t, Counts{FN: 1}, Score("a b c d", ""))
}

func TestSummarize(t *testing.T) {
	m := Summarize([]Counts{
		{TP: 1},              // perfect
		{TP: 0.5, FP: 0.5},   // precision 0.5, recall 1
		{FN: 1},              // nothing predicted: precision skipped, recall 0
		{},                   // both empty: skipped by both, as the benchmark does
		{TP: 0.25, FN: 0.75}, // precision 1, recall 0.25
	})
	require.InDelta(t, (1+0.5+1)/3.0, m.Precision, 1e-9)
	require.InDelta(t, (1+1+0+0.25)/4.0, m.Recall, 1e-9)
	require.InDelta(t, 2*m.Precision*m.Recall/(m.Precision+m.Recall), m.F1, 1e-9)
	require.Equal(t, 5, m.Pages)
}

func TestMarkdownText(t *testing.T) {
	md := "# Title\n\nSee [the guide](https://example.com/guide \"Guide\") and ![a diagram](https://cdn.example.com/d.png).\n\n" +
		"Escaped snake\\_case and &lt;tags&gt;; autolink <https://example.com/raw> gone.\n\n" +
		"```go\nfmt.Println(\"hi\")\n```\n\n| a | b |\n|---|---|\n| c | d |\n"
	text := MarkdownText(md)
	for _, want := range []string{"Title", "the guide", "a diagram", "snake_case", "<tags>", "fmt.Println", "c"} {
		require.Contains(t, text, want)
	}
	for _, gone := range []string{"example.com", "cdn", "https", "&lt;", "\\_", "**", "|"} {
		require.NotContains(t, text, gone)
	}
}

// TestMetricDiscriminates shows that the benchmark separates good from bad
// extraction on the real corpus, so a threshold on it can fail: the truth
// scores 1, nothing scores 0, and dumping all of a page's text (the
// classic baseline, published at F1 ≈ 0.66) stays far below 0.947.
func TestMetricDiscriminates(t *testing.T) {
	pages, err := LoadCorpus(filepath.Join("..", "..", "testdata", "benchmark"))
	require.NoError(t, err)
	require.Len(t, pages, 181)

	perfect, _ := Evaluate(pages, func(p Page) (string, error) { return p.Truth, nil })
	require.InDelta(t, 1.0, perfect.F1, 1e-9)

	none, _ := Evaluate(pages, func(Page) (string, error) { return "", nil })
	require.True(t, none.F1 == 0 || math.IsNaN(none.F1))

	dump, _ := Evaluate(pages, func(p Page) (string, error) { return pageText(p.HTML) })
	t.Logf("whole-page text: precision %.3f, recall %.3f, F1 %.3f", dump.Precision, dump.Recall, dump.F1)
	require.Less(t, dump.F1, 0.8)
	require.Greater(t, dump.Recall, 0.9, "the dump holds the article")
}

// pageText is all text of a page outside script and style elements.
func pageText(body []byte) (string, error) {
	doc, err := html.Parse(bytes.NewReader(body))
	if err != nil {
		return "", err
	}
	var b strings.Builder
	var walk func(*html.Node)
	walk = func(n *html.Node) {
		if n.Type == html.ElementNode && (n.Data == "script" || n.Data == "style" || n.Data == "noscript") {
			return
		}
		if n.Type == html.TextNode {
			b.WriteString(n.Data)
			b.WriteByte(' ')
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			walk(c)
		}
	}
	walk(doc)
	return b.String(), nil
}
