package extract_test

import (
	"bytes"
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/recrawl/recrawl/extract"
	"github.com/recrawl/recrawl/internal/peakheap"
)

// linkFarm is a page of n links, each in a list item (about 41 bytes a
// link): two elements per link.
func linkFarm(n int) []byte {
	var b bytes.Buffer
	b.Grow(41*n + 200)
	b.WriteString(`<!doctype html><html lang="en"><head><title>All pages | Farm</title>` +
		`<link rel="canonical" href="https://farm.example/all"></head><body><h1>All pages</h1><ul>` + "\n")
	for i := range n {
		fmt.Fprintf(&b, "<li><a href=\"/p/%07d\">p%07d</a></li>\n", i, i)
	}
	b.WriteString("</ul></body></html>\n")
	return b.Bytes()
}

// A page of a million links (41 MB; issue 12: extraction peaked at
// 1656 MiB, 40x the body) fails with ErrTooManyElements after one
// streaming pass that still returns its metadata and every link, at a peak
// heap of at most 10x the body. -short and race builds run 50,000 links
// against a limit of 10,000 elements, with the same bound.
func TestLinkFarmMemory(t *testing.T) {
	links, opts := 1_000_000, extract.Options{MaxBytes: 64 << 20}
	if testing.Short() || raceEnabled {
		links, opts = 50_000, extract.Options{MaxElements: 10_000}
	}
	body := linkFarm(links)
	var doc extract.Document
	var err error
	peak := peakheap.Measure(func() { doc, err = extract.FromHTMLWithOptions(body, "https://farm.example/all", opts) })
	ratio := float64(peak) / float64(len(body))
	t.Logf("%d links, body %.1f MiB: peak heap %.1f MiB, %.1fx the body", links, float64(len(body))/(1<<20), float64(peak)/(1<<20), ratio)
	require.ErrorIs(t, err, extract.ErrTooManyElements)
	require.Contains(t, err.Error(), fmt.Sprintf("%d elements", 2*links+7))
	require.Contains(t, err.Error(), "Options.MaxElements")
	require.Empty(t, doc.Markdown)
	require.Equal(t, "All pages | Farm", doc.Title)
	require.Equal(t, "https://farm.example/all", doc.Canonical)
	require.Equal(t, "en", doc.Lang)
	require.Len(t, doc.Links, links)
	require.Equal(t, "https://farm.example/p/0000000", doc.Links[0])
	require.Equal(t, fmt.Sprintf("https://farm.example/p/%07d", links-1), doc.Links[links-1])
	require.LessOrEqual(t, ratio, 10.0, "peak heap %.1fx the body", ratio)
}

// The element limit counts elements, not "<" characters, and a page at
// the limit is extracted as usual; the streaming pass reads metadata as
// the tree does.
func TestMaxElements(t *testing.T) {
	page := func(items int, script string) []byte {
		var b strings.Builder
		b.WriteString(`<html lang="de"><head><base href="https://docs.example/v2/"><title>Guide – Docs</title>` +
			`<meta name="description" content=" A  guide. "><link rel="canonical" href="guide#top"></head><body><main><h1>The <em>guide</em></h1><ul>`)
		for i := range items {
			fmt.Fprintf(&b, `<li><a href="p%d#x">Page %d with enough words to read</a></li>`, i, i)
		}
		b.WriteString(`<li><a href="p0">again</a></li></ul><script>` + script + `</script></main></body></html>`)
		return []byte(b.String())
	}
	// 12 elements around the list, 2 per item and 2 for the last one: 100.
	const elements = 100
	items := (elements - 14) / 2
	script := strings.Repeat("if (a<b) {} ", 3*elements)
	for _, tc := range []struct {
		name    string
		body    []byte
		limit   int
		wantErr bool
	}{
		{"at the limit", page(items, ""), elements, false},
		{"at the limit, more < in a script than the limit", page(items, script), elements, false},
		{"one element over", page(items, ""), elements - 1, true},
		{"one element over, more < in a script", page(items, script), elements - 1, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			opts := extract.Options{MaxElements: tc.limit}
			doc, err := extract.FromHTMLWithOptions(tc.body, "https://docs.example/v2/guide", opts)
			full, ferr := extract.FromHTML(tc.body, "https://docs.example/v2/guide")
			require.NoError(t, ferr)
			if !tc.wantErr {
				require.NoError(t, err)
				require.Equal(t, full, doc)
				return
			}
			require.ErrorIs(t, err, extract.ErrTooManyElements)
			require.Empty(t, doc.Markdown)
			full.Markdown = ""
			require.Equal(t, full, doc, "the streaming pass reads the metadata and links the tree gives")
		})
	}
}

// A page of more links than links remembers resolutions for still lists
// each target once, in document order.
func TestManyLinksDeduplicated(t *testing.T) {
	var b strings.Builder
	b.WriteString(`<html><head><title>Index</title></head><body><main><h1>Index</h1><p>`)
	const targets = 6_000
	for i := range targets {
		fmt.Fprintf(&b, `<a href="p/%d">%d</a> <a href="/docs/p/%d#top">again</a> `, i, i, i)
	}
	b.WriteString(`</p></main></body></html>`)
	doc, err := extract.FromHTML([]byte(b.String()), "https://docs.example/docs/index")
	require.NoError(t, err)
	require.Len(t, doc.Links, targets)
	for i, l := range doc.Links {
		require.Equal(t, fmt.Sprintf("https://docs.example/docs/p/%d", i), l)
	}
}

// docsPage is a documentation page no rule recognises, of n sections
// (heading, paragraph, code block written a line a <div>, tooltip) beside
// a sidebar of n links: some 330 bytes and 13 elements a section.
func docsPage(n int) []byte {
	var b bytes.Buffer
	b.WriteString(`<!doctype html><html><head><title>Reference | Big</title></head><body><div class="layout"><div class="sidebar"><ul>`)
	for i := range n {
		fmt.Fprintf(&b, `<li><a href="/ref/%d">Item %d</a></li>`, i, i)
	}
	b.WriteString(`</ul></div><div class="content"><h1>Reference</h1>`)
	for i := range n {
		fmt.Fprintf(&b, `<h2 id="s%d">Section %d</h2><p>Section %d explains one call, <span class="tooltip">its cost<span class="tooltiptext">in tokens</span></span>, and its errors.</p>`+
			`<div class="fragment"><div class="line">x%d := call(%d)</div><div class="line">&#160;</div><div class="line">check(x%d)</div></div>`+"\n", i, i, i, i, i, i)
	}
	b.WriteString(`</div></div></body></html>`)
	return b.Bytes()
}

// The generic path (structure, not a rule) keeps memory a small multiple
// of the page: a 2.3 MiB page of 7,000 sections (91,000 elements, near
// DefaultMaxElements) peaks at no more than 32 times its body (the tree,
// as on every path, and a weight per element).
// -short and race builds run 3,000 sections.
func TestGenericPathMemory(t *testing.T) {
	n := 7_000
	if testing.Short() || raceEnabled {
		n = 3_000
	}
	body := docsPage(n)
	var doc extract.Document
	var err error
	peak := peakheap.Measure(func() { doc, err = extract.FromHTML(body, "https://big.example/ref") })
	ratio := float64(peak) / float64(len(body))
	t.Logf("%d sections, body %.1f MiB: peak heap %.1f MiB, %.1fx the body", n, float64(len(body))/(1<<20), float64(peak)/(1<<20), ratio)
	require.NoError(t, err)
	require.True(t, strings.HasPrefix(doc.Markdown, "# Reference\n"))
	require.Contains(t, doc.Markdown, fmt.Sprintf("```\nx%d := call(%d)\n\ncheck(x%d)\n```", n-1, n-1, n-1))
	require.NotContains(t, doc.Markdown, "in tokens")
	require.NotContains(t, doc.Markdown, "Item 1")
	require.LessOrEqual(t, ratio, 32.0, "peak heap %.1fx the body", ratio)
}
