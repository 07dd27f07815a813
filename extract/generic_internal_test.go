package extract

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"golang.org/x/net/html"
	"golang.org/x/net/html/atom"
)

// genericPage wraps body in a page that no rule recognises, with a title.
func genericPage(title, body string) []byte {
	return []byte("<!DOCTYPE html><html><head><title>" + title + "</title></head><body>" + body + "</body></html>")
}

// generic is the Markdown of page on the generic path.
func generic(t *testing.T, page []byte) string {
	t.Helper()
	doc, err := fromHTMLOmitting(page, "https://docs.example.org/guide/page.html", Options{}, convert, func(int) bool { return true })
	require.NoError(t, err)
	return doc.Markdown
}

// TestInvisible: hidden, popover, tooltip and screen-reader-only content
// is dropped; what shows a tooltip, collapsed details and
// hidden=until-found content stay.
func TestInvisible(t *testing.T) {
	for _, c := range []struct {
		name, html   string
		keep, absent []string
	}{
		{"hidden attribute", `<p>Shown.</p><div hidden>Gone.</div><div hidden="until-found">Found by search.</div>`,
			[]string{"Shown.", "Found by search."}, []string{"Gone."}},
		{"styles", `<p>Shown.</p><p style="display: none">Gone one.</p><p style="Visibility:Hidden">Gone two.</p>`,
			[]string{"Shown."}, []string{"Gone one.", "Gone two."}},
		{"popover", `<p>Shown <button popovertarget="g">?</button>.</p><div popover id="g">The glossary entry.</div>`,
			[]string{"Shown"}, []string{"glossary entry"}},
		{"role tooltip", `<p>A <span aria-describedby="t1">berth</span><span role="tooltip" id="t1">A place to moor.</span> is free.</p>`,
			[]string{"A berth is free."}, []string{"A place to moor."}},
		{"tooltip text", `<p>The <span class="tooltip">phantom type<span class="tooltiptext">Holds no value.</span></span> is erased.</p>`,
			[]string{"The phantom type is erased."}, []string{"Holds no value."}},
		{"aria-hidden popover", `<p>Keep me.</p><div class="popover-body" aria-hidden="true">Popover body.</div>`,
			[]string{"Keep me."}, []string{"Popover body."}},
		{"hover popup in code", `<pre><code><span class="twoslash-hover"><span class="twoslash-popup-container">const n: number</span>n</span> = 1</code></pre>`,
			[]string{"n = 1"}, []string{"const n: number"}},
		{"copy popup beside an icon", `<div>Signature text.<span class="icon"></span><div class="copy-popup-wrapper"><span class="copy-popup-icon"></span><span>Copied!</span></div></div>`,
			[]string{"Signature text."}, []string{"Copied!"}},
		{"trigger keeps its term", `<p>See <span class="has-tooltip" data-tip="x">the glossary</span> first.</p>`,
			[]string{"See the glossary first."}, nil},
		{"screen-reader text", `<p>Shown.<span class="sr-only"> (opens in a new tab)</span></p>`,
			[]string{"Shown."}, []string{"opens in a new tab"}},
		{"details stay", `<details><summary>More</summary><p>Collapsed detail.</p></details>`,
			[]string{"Collapsed detail."}, nil},
		{"form control labels", `<p>Shown.</p><label for="theme">Theme</label><select id="theme"><option>Dark</option></select>`,
			[]string{"Shown."}, []string{"Theme", "Dark"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			md := generic(t, genericPage("Page", `<main><h1>Page</h1><pre><code>x := 1</code></pre>`+c.html+`</main>`))
			for _, k := range c.keep {
				require.Contains(t, md, k)
			}
			for _, a := range c.absent {
				require.NotContains(t, md, a)
			}
		})
	}
}

// TestLineCode: listings written a line an element become fenced code
// with every line, blank and indented ones included; running text,
// poetry and teasers do not.
func TestLineCode(t *testing.T) {
	for _, c := range []struct {
		name, html string
		want       string // a fenced block the Markdown holds; "" for none
	}{
		{"div per line", `<div class="fragment"><div class="line"><span class="lineno">1</span>int x = 1;</div><div class="line">&#160;</div><div class="line">&#160;&#160;return x;</div></div>`,
			"```\nint x = 1;\n\n  return x;\n```"},
		{"spans per line in code", `<p><code class="block"><span class="line">a := 1</span><span class="line">b := 2</span></code></p>`,
			"```\na := 1\nb := 2\n```"},
		{"br lines", `<div class="codeblock">SELECT *<br>FROM berths<br>&#160;&#160;WHERE free;</div>`,
			"```\nSELECT *\nFROM berths\n  WHERE free;\n```"},
		{"white-space pre", `<div style="white-space: pre">line one
line two</div>`,
			"```\nline one\nline two\n```"},
		{"whole-paragraph code with line breaks", `<p><code>go build ./...
go test ./...</code></p>`,
			"```\ngo build ./...\ngo test ./...\n```"},
		{"one-line monospace signature", `<div class="symbol monospace">fun berths(harbour: String): List&lt;Berth&gt;</div>`,
			"```\nfun berths(harbour: String): List<Berth>\n```"},
		{"line spans in pre without newlines", `<pre><code><span class="line">first()</span><span class="line">second()</span></code></pre>`,
			"```\nfirst()\nsecond()\n```"},
		{"blank line elements in pre", `<pre><code><div class="line">a()</div><div class="line"></div><div class="line">b()</div></code></pre>`,
			"```\na()\n\nb()\n```"},
		{"token spans in pre stay one line", `<pre><span class="n">session</span> <span class="o">=</span> <span class="n">open</span><span class="p">()</span></pre>`,
			"```\nsession = open()\n```"},
		{"inline code in text", `<p>Use <code class="literal"><span class="pre">Map&lt;string,</span> <span class="pre">int&gt;</span></code> here.</p>`, ""},
		{"poetry line block", `<div class="line-block"><div class="line">Roses are red,</div><div class="line">violets are blue.</div></div>`, ""},
		{"teaser list", `<div class="wsj-snippet-body"><div>First story</div><div>Second story</div></div>`, ""},
		{"code-named prose wrapped in the source", `<div class="code-description">This paragraph
wraps in the HTML source.</div>`, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			md := generic(t, genericPage("Listing", `<main><h1>Listing</h1><p>Intro text.</p>`+c.html+`</main>`))
			if c.want == "" {
				require.NotContains(t, md, "```", md)
				return
			}
			require.Contains(t, md, c.want)
		})
	}
}

// TestTitleHeading: the title is the <h1> that names the page, or the
// heading of another level that does, wherever it sits; not the site's
// name, nor a heading in navigation; Doxygen's title <div> becomes it.
func TestTitleHeading(t *testing.T) {
	for _, c := range []struct {
		name, title, body, want string
	}{
		{"h1 outside the content", "Install · Acme",
			`<div class="hero"><h1>Install</h1></div><div class="text"><p>` + strings.Repeat("Acme installs in one step. ", 20) + `</p><h2>Linux</h2><p>Use the package.</p></div>`,
			"# Install\n\n"},
		{"site name h1 first", "Queues - Acme docs",
			`<div class="bar"><h1>Acme docs</h1></div><main><h1>Queues</h1><p>` + strings.Repeat("A queue holds jobs. ", 20) + `</p><pre>q.push(1)</pre></main>`,
			"# Queues\n\n"},
		{"h2 title", "Limits | Acme",
			`<main><h2>Limits</h2><p>` + strings.Repeat("Limits cap requests. ", 20) + `</p><h3>Burst</h3><pre>burst: 5</pre></main>`,
			"## Limits\n\n"},
		{"not in navigation", "Sessions · Guide",
			`<div role="navigation"><h1><a href="/">Sessions</a></h1></div><section><h1>Sessions</h1><p>` + strings.Repeat("A session pins a client. ", 20) + `</p><pre>s := New()</pre></section>`,
			"# Sessions\n\nA session"},
		{"title text in a div", "Shoal: RingLog Class Reference",
			`<div class="header"><div class="title">RingLog Class Reference</div></div><div class="contents"><p>` + strings.Repeat("A ring log. ", 20) + `</p><pre>RingLog log(8);</pre></div>`,
			"# RingLog Class Reference\n\n"},
		{"header holding the title stays", "Webhooks - Docs",
			`<div id="content-area"><header><div class="eyebrow">Get started</div><h1>Webhooks</h1><p>Receive an event.</p></header><div class="prose"><p>` + strings.Repeat("Events arrive by POST. ", 20) + `</p><pre>curl -X POST</pre></div></div>`,
			"# Webhooks\n\nGet started\n\nReceive an event."},
	} {
		t.Run(c.name, func(t *testing.T) {
			md := generic(t, genericPage(c.title, c.body))
			require.True(t, strings.HasPrefix(md, c.want), md)
		})
	}
}

// TestSiblingBlocks: several content blocks side by side are all kept, in
// order; the link lists and page actions around them are not.
func TestSiblingBlocks(t *testing.T) {
	para := func(s string) string { return "<p>" + strings.Repeat(s+" ", 12) + "</p>" }
	page := genericPage("Reference", `<div class="page">
<div class="menu"><a href="/a">Alpha</a> <a href="/b">Beta</a> <a href="/c">Gamma</a></div>
<div class="col">
<div class="crumbs"><a href="/">Docs</a> / <a href="/ref">Reference</a></div>
<h1>Reference</h1>
<div class="actions"><a href="https://git.example/edit">Edit this page</a></div>
<div class="block"><h2>Types</h2>`+para("Types describe values.")+`<pre>type Berth struct{}</pre></div>
<div class="block"><h2>Functions</h2>`+para("Functions act on values.")+`</div>
<div class="block"><h2>Errors</h2>`+para("Errors say what failed.")+`</div>
<div class="meta">Last updated today</div>
</div>
<div class="toc"><a href="#types">Types</a> <a href="#functions">Functions</a> <a href="#errors">Errors</a></div>
</div>`)
	md := generic(t, page)
	i, j, k := strings.Index(md, "## Types"), strings.Index(md, "## Functions"), strings.Index(md, "## Errors")
	require.True(t, i > 0 && j > i && k > j, md)
	for _, chrome := range []string{"Alpha", "Docs", "Edit this page", "[Types]"} {
		require.NotContains(t, md, chrome)
	}
	require.True(t, strings.HasPrefix(md, "# Reference\n"), md)
}

// TestDocumentLike: code, a table of contents or heading permalinks make
// a page documentation; an article shows none.
func TestDocumentLike(t *testing.T) {
	parse := func(s string) *html.Node {
		doc, err := html.Parse(strings.NewReader(s))
		require.NoError(t, err)
		return doc
	}
	for body, want := range map[string]bool{
		`<p>Text.</p><pre>x</pre>`:                        true,
		`<p>Use <code>x</code>.</p>`:                      true,
		`<h2 id="a">A<a href="#a">¶</a></h2><p>Text.</p>`: true,
		`<ul><li><a href="#a">A</a><li><a href="#b">B</a></ul><h2 id="a">A</h2><h2 id="b">B</h2>`: true,
		`<div class="fragment"><div class="line">a</div><div class="line">b</div></div>`:          true,
		`<h1>News</h1><p>Text.</p><h2 id="a">A</h2>`:                                              false,
		`<p>Text.</p><div hidden><pre>x</pre></div>`:                                              false,
		`<p>Text.</p><script>var code = 1</script>`:                                               false,
	} {
		require.Equal(t, want, documentLike(parse("<html><body>"+body+"</body></html>")), body)
	}
}

// TestArticleLike: og:type, article:* properties and schema.org types
// declare an article.
func TestArticleLike(t *testing.T) {
	for head, want := range map[string]bool{
		`<meta property="og:type" content="article">`:                           true,
		`<meta property="article:published_time" content="2024-01-01">`:         true,
		`<script type="application/ld+json">{"@type":"NewsArticle"}</script>`:   true,
		`<script type="application/ld+json">{"@type": "BlogPosting"}</script>`:  true,
		`<meta property="og:type" content="website">`:                           false,
		`<script type="application/ld+json">{"@type":"ArticleSeries"}</script>`: false,
		`<script type="application/ld+json">{"@type":"TechArticleX"}</script>`:  false,
	} {
		doc, err := html.Parse(strings.NewReader("<html><head>" + head + "</head><body><p>x</p></body></html>"))
		require.NoError(t, err)
		require.Equal(t, want, articleLike(doc, scanPage(doc)), head)
	}
	doc, err := html.Parse(strings.NewReader(`<html><body><div itemscope itemtype="https://schema.org/Article"><p>x</p></div></body></html>`))
	require.NoError(t, err)
	require.True(t, articleLike(doc, scanPage(doc)))
}

// TestLeadWithTitle: readability's Markdown gets the title line unless it
// has the title already.
func TestLeadWithTitle(t *testing.T) {
	require.Equal(t, "# Crêpes \\*au\\* beurre\n\nText.", leadWithTitle("Text.", "Crêpes *au* beurre"))
	require.Equal(t, "## Crêpes\n\nText.", leadWithTitle("## Crêpes\n\nText.", "Crêpes"))
	require.Equal(t, "Text.", leadWithTitle("Text.", ""))
	require.Equal(t, "", leadWithTitle("", "Title"))
}

func TestHeadingLevel(t *testing.T) {
	for i, a := range []atom.Atom{atom.P, atom.H1, atom.H2, atom.H3, atom.H4, atom.H5, atom.H6} {
		require.Equal(t, i, headingLevel(&html.Node{Type: html.ElementNode, DataAtom: a, Data: a.String()}))
	}
}

func TestClassWords(t *testing.T) {
	for class, want := range map[string][]string{
		"codeLine":                 {"code", "line"},
		"CodeBlock_lines__x1Y2z":   {"code", "block", "lines", "x1", "y2z"},
		"font-mono":                {"font", "mono"},
		"md:hidden":                {"md", "hidden"},
		"twoslash-popup-container": {"twoslash", "popup", "container"},
		"HTML":                     {"html"},
		"":                         nil,
		"--":                       nil,
	} {
		require.Equal(t, want, classWords(class), class)
	}
}

func TestTooltipClass(t *testing.T) {
	for class, want := range map[string]bool{
		"tooltip": true, "TooltipText": true, "HoverCard_body": true, "twoslash-popup-container": true,
		"tippy-box": true, "popover": true, "md-typeset": false, "toolbar": false, "hover": false,
		"popular-posts": false, "": false,
	} {
		require.Equal(t, want, tooltipClass(class), class)
	}
	require.True(t, containsFold("aXbPoPc", "pop"))
	require.False(t, containsFold("po", "pop"))
}
