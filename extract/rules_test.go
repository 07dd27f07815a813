package extract

import (
	"bytes"
	"compress/gzip"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"golang.org/x/net/html"

	"github.com/recrawl/recrawl/extract/internal/quality"
)

// ruleCase is a real documentation page (trimmed for the generators the
// docsites corpus lacks) with what its Markdown must hold.
type ruleCase struct {
	file     string // under testdata; .gz pages are gunzipped
	url      string
	rule     string // the rule that must choose the container
	title    string
	headings [][2]any
	code     []string
	tables   [][]string
	nav      []string // site chrome that must stay out
}

var ruleCases = []ruleCase{
	{file: "docsites/pages/httpx/1.html.gz", url: "https://www.python-httpx.org/advanced/authentication/", rule: "mkdocs-material",
		title:    "Authentication",
		headings: [][2]any{{1, "Authentication"}, {2, "Basic authentication"}, {2, "Digest authentication"}, {2, "NetRC authentication"}, {2, "Custom authentication schemes"}},
		nav:      []string{"Skip to content", "QuickStart", "Edit this page"}},
	{file: "rules/mkdocs.html", rule: "mkdocs", title: "Queues",
		headings: [][2]any{{1, "Queues"}, {2, "Durable queues"}, {2, "Community extras"}},
		code:     []string{`queue = sluice.Queue("orders", durable=True)`}, tables: [][]string{{"Option", "Default"}},
		nav: []string{"Workers", "Previous", "Documentation built with"}},
	{file: "docsites/pages/reduxsaga/16.html.gz", url: "https://redux-saga.js.org/docs/api/", rule: "docusaurus",
		title: "API Reference", tables: [][]string{{"method", "return value"}, {"Name", "Blocking"}},
		nav: []string{"Edit this page"}},
	{file: "docsites/pages/atmosphere-docs/9.html.gz", url: "https://atmosphere.github.io/docs/", rule: "starlight"},
	{file: "docsites/pages/goravel/2.html.gz", url: "https://www.goravel.dev/", rule: "vitepress"},
	{file: "rules/vuepress.html", rule: "vuepress", title: "Plugin API",
		headings: [][2]any{{1, "Plugin API"}, {2, "Hooks"}, {3, "Share state"}},
		code:     []string{"export const myPlugin = { name: 'my-plugin' }"}, tables: [][]string{{"Hook", "When"}},
		nav: []string{"Edit this page on GitHub", "Last Updated", "Config", "Prev"}},
	{file: "docsites/pages/watermelondb/9.html.gz", url: "https://watermelondb.dev/docs/", rule: "mdbook"},
	{file: "docsites/pages/cortex/25.html.gz", url: "https://cortexmetrics.io/docs/", rule: "docsy"},
	{file: "rules/hugo-book.html", rule: "hugo-book", title: "Retention",
		headings: [][2]any{{1, "Retention"}, {2, "Policies"}, {3, "RSS feeds"}},
		code:     []string{"retention:\n  max_age: 7d"}, tables: [][]string{{"Policy", "Default"}},
		nav: []string{"Install", "Backup and restore", "Edit this page"}},
	{file: "docsites/pages/gdunit4/3.html.gz", url: "https://mikeschulze.github.io/gdUnit4/latest/", rule: "just-the-docs"},
	{file: "docsites/pages/esmf/3.html.gz", url: "https://eclipse-esmf.github.io/", rule: "antora"},
	{file: "rules/nextra.html", rule: "nextra", title: "Middleware",
		headings: [][2]any{{1, "Middleware"}, {2, "Matchers"}},
		code:     []string{"export const config = { matcher: '/about/:path*' }"}, tables: [][]string{{"Option", "Type"}},
		nav: []string{"Routing", "On This Page", "Documentation", "Blog", "MIT 2025"}},
	{file: "rules/gitbook.html", rule: "gitbook", title: "Sessions",
		headings: [][2]any{{1, "Sessions"}, {2, "Session store"}},
		code:     []string{"store := tollbooth.NewStore(redisURL, 30*time.Second)"}, tables: [][]string{{"Store", "Shared"}},
		nav: []string{"Introduction", "Limits", "Published with GitBook", "results matching"}},
	{file: "docsites/pages/memray/3.html.gz", url: "https://bloomberg.github.io/memray/", rule: "sphinx"},
	{file: "rules/sphinx-rtd.html", rule: "sphinx", title: "Configuration",
		headings: [][2]any{{1, "Configuration"}, {2, "Expiration"}, {2, "Cookie handling"}},
		code:     []string{"session = CachedSession('demo', expire_after=360)"}, tables: [][]string{{"Value", "Meaning"}},
		nav: []string{"Installation", "Storage backends", "View page source", "Previous", "Next", "Copyright"}},
	{file: "rules/sphinx-pydata.html", rule: "sphinx", title: "Shared memory metadata",
		headings: [][2]any{{1, "Shared memory metadata"}, {2, "Generic metadata"}, {2, "Creating a shared drive"}},
		code:     []string{"meta = tile.metadata()"}, tables: [][]string{{"Key", "Type"}},
		nav: []string{"Skip to main content", "User Guide", "API reference", "Installing", "On this page", "Section Navigation"}},
	{file: "rules/sphinx-alabaster.html", rule: "sphinx", title: "Tutorial",
		headings: [][2]any{{1, "Tutorial"}, {2, "Related projects"}},
		code:     []string{"$ pip install quibble"},
		nav:      []string{"Navigation", "Related Topics", "Quick search", "Welcome", "Page source"}},
	{file: "docsites/pages/atmosphere-javadoc/13.html.gz", url: "https://atmosphere.github.io/apidocs/", rule: "javadoc"},
	{file: "rules/rustdoc.html", rule: "rustdoc", title: "Struct BoundedQueue",
		headings: [][2]any{{1, "Struct BoundedQueue"}, {2, "Implementations"}, {3, "impl<T> BoundedQueue<T>"}, {4, "pub fn new(capacity: usize) -> Self"}},
		code:     []string{"pub struct BoundedQueue<T> { /* private fields */ }", "let mut q = BoundedQueue::new(2);\nq.push(1).unwrap();"},
		nav:      []string{"Methods", "Trait Implementations", "Copy item path", "Expand description", "Source"}},
	{file: "rules/pkgsite.html", rule: "pkgsite", title: "ringbuf",
		headings: [][2]any{{1, "ringbuf"}, {2, "Documentation"}, {3, "Overview"}, {3, "Index"}, {4, "type Ring"}},
		code:     []string{"r := ringbuf.New[int](4)\nr.Push(1)", "type Ring[T any] struct {"},
		nav:      []string{"Discover Packages", "Why Go", "Valid go.mod file", "Imported by"}},
	{file: "rules/godoc.html", rule: "godoc", title: "Package tally",
		headings: [][2]any{{1, "Package tally"}, {2, "Overview ▾"}, {2, "Index ▾"}, {2, "type Counter"}},
		code:     []string{"c := tally.New(time.Minute)\nc.Add(\"login\")"},
		nav:      []string{"Go Documentation Server", "Terms of Service", "Build version"}},
}

func readPage(tb testing.TB, file string) []byte {
	tb.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", file))
	require.NoError(tb, err)
	if strings.HasSuffix(file, ".gz") {
		zr, err := gzip.NewReader(bytes.NewReader(b))
		require.NoError(tb, err)
		b, err = io.ReadAll(zr)
		require.NoError(tb, err)
	}
	return b
}

// TestBuiltinRules checks every built-in rule on a real page of its
// generator: the rule is the one chosen, the title is the first line, and
// the page's headings, code blocks and tables are all in the Markdown and
// none of its chrome.
func TestBuiltinRules(t *testing.T) {
	covered := map[string]bool{}
	for _, tc := range ruleCases {
		t.Run(strings.TrimSuffix(filepath.Base(tc.file), ".html"), func(t *testing.T) {
			body := readPage(t, tc.file)
			url := tc.url
			if url == "" {
				url = "https://docs.example.org/guide/page.html"
			}
			doc, err := html.Parse(bytes.NewReader(body))
			require.NoError(t, err)
			sel, ok := chooseContainer(doc, nil, scanPage(doc))
			require.True(t, ok, "no container chosen")
			require.NotNil(t, sel.rule)
			require.Equal(t, tc.rule, sel.rule.Name)
			covered[tc.rule] = true

			out, err := FromHTML(body, url)
			require.NoError(t, err)
			first, _, _ := strings.Cut(out.Markdown, "\n")
			require.True(t, strings.HasPrefix(first, "# "), "first line %q", first)
			if tc.title == "" {
				return // a corpus page: TestDocsitesQuality scores it
			}
			require.Equal(t, "# "+tc.title, strings.ReplaceAll(first, `\`, ""))
			c := quality.CaseOf(tc.title, tc.headings, tc.code, tc.tables, tc.nav)
			s := quality.ScoreDoc(c, out.Title, out.Markdown)
			require.Equal(t, 1.0, s.H1, out.Markdown)
			if s.HasHeadings {
				require.Equal(t, 1.0, s.HeadingRecall, out.Markdown)
			}
			if s.HasLevelOrder {
				require.Equal(t, 1.0, s.LevelOrder, out.Markdown)
			}
			if s.HasCode {
				require.Equal(t, 1.0, s.CodeRecall, out.Markdown)
			}
			if s.HasTables {
				require.Equal(t, 1.0, s.TableRecall, out.Markdown)
			}
			require.Zero(t, s.NavLeak, out.Markdown)
		})
	}
	for _, r := range BuiltinRules {
		require.True(t, covered[r.Name], "rule %q has no test page", r.Name)
	}
}

// TestOptionsRules shows a rule of the caller's own taking precedence
// and a bad selector failing the call.
func TestOptionsRules(t *testing.T) {
	page := []byte(`<html><head><title>Intro · Acme Docs</title></head><body>
<div class="acme-nav"><a href="/a">Alpha</a> <a href="/b">Beta</a></div>
<div class="acme-doc"><div class="acme-edit"><a href="https://example.com/edit">Edit on Acme</a></div>
<h2>Getting started</h2><p>Acme starts in one command.</p></div></body></html>`)
	rule := Rule{Name: "acme", Markers: []string{".acme-doc"}, Content: []string{".acme-doc"}, Remove: []string{".acme-edit"}}
	doc, err := FromHTMLWithOptions(page, "https://acme.example/docs/intro", Options{Rules: []Rule{rule}})
	require.NoError(t, err)
	require.Equal(t, "# Intro\n\n## Getting started\n\nAcme starts in one command.", doc.Markdown)

	_, err = FromHTMLWithOptions(page, "https://acme.example/docs/intro", Options{Rules: []Rule{{Name: "bad", Content: []string{"div[["}}}})
	require.True(t, errors.Is(err, ErrRule), "%v", err)
}

// TestTextTags covers text that the HTML parser turns into elements: the
// real cases of the docsites corpus and the shapes the issue names. The
// tag keeps its text and everything after it stays.
func TestTextTags(t *testing.T) {
	cases := []struct {
		name, file, url string
		html            string
		want            []string
	}{
		{name: "cortex-tenant", file: "docsites/pages/cortex/25.html.gz", url: "https://cortexmetrics.io/docs/proposals/tenant-deletion/",
			want: []string{"“/&lt;tenant&gt;/deleted”. This object will contain the timestamp"}},
		{name: "watermelondb-cassert", file: "docsites/pages/watermelondb/9.html.gz", url: "https://watermelondb.dev/docs/CHANGELOG.html",
			want: []string{"a missing &lt;cassert&gt; import\n- \\[sync] Fixed marking changes"}},
		{name: "httpx-repr", file: "docsites/pages/httpx/10.html.gz", url: "https://www.python-httpx.org/api/",
			want: []string{"*auth=&lt;httpx.\\_client.useclientdefault object at 0x1045fe270&gt;*, *follow\\_redirects="}},
		{name: "array-object", html: `<p>Returns {Array<object>} of rows.</p><h2>Errors</h2><table><tr><th>Code</th><th>Meaning</th></tr><tr><td>1</td><td>bad</td></tr></table>`,
			want: []string{"Returns {Array&lt;object&gt;} of rows.", "## Errors", "| Code | Meaning |"}},
		{name: "promise-object", html: `<p>It resolves to a Promise<object> once done.</p><h2>Next</h2><p>More.</p>`,
			want: []string{"Promise&lt;object&gt; once done.", "## Next", "More."}},
		{name: "map-string", html: `<p>Use Map<string> for headers.</p><h2>Headers</h2>`,
			want: []string{"Map&lt;string&gt; for headers.", "## Headers"}},
		{name: "generic-T", html: `<p>A value of type <T> is returned.</p><h2>Types</h2>`,
			want: []string{"type &lt;t&gt; is returned.", "## Types"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var body []byte
			url := tc.url
			if tc.file != "" {
				body = readPage(t, tc.file)
			} else {
				body = []byte(`<html><head><meta name="generator" content="mkdocs-1.6.1, mkdocs-material-9.5.47"><title>API - Lib</title></head><body>` +
					`<nav class="md-nav">Home</nav><main><article class="md-content__inner"><h1>API</h1>` + tc.html + `</article></main></body></html>`)
				url = "https://lib.example/api/"
			}
			doc, err := FromHTML(body, url)
			require.NoError(t, err)
			for _, w := range tc.want {
				require.Contains(t, doc.Markdown, w)
			}
		})
	}
}

// TestRealEmbedsStay: an <object> that embeds something is not text.
func TestRealEmbedsStay(t *testing.T) {
	body := []byte(`<html><head><meta name="generator" content="Docusaurus v3.1.0"><title>Diagram | X</title></head><body><article><div class="theme-doc-markdown markdown"><h1>Diagram</h1><p>Before <object data="/d.svg" type="image/svg+xml">fallback text</object> after.</p></div></article></body></html>`)
	doc, err := FromHTML(body, "https://x.example/docs/diagram")
	require.NoError(t, err)
	require.Equal(t, "# Diagram\n\nBefore after.", doc.Markdown)
}

func TestSelectorKey(t *testing.T) {
	for sel, want := range map[string]string{
		"nav.md-tags":                             ".md-tags",
		"section#main-content.content":            "#main-content",
		"main":                                    "tmain",
		"article .theme-doc-markdown":             ".theme-doc-markdown",
		"main > div.nx-border-t:has(a[title])":    ".nx-border-t",
		"script[src*='documentation_options.js']": "tscript",
		"[vp-content]":                            "",
		"a, b":                                    "",
		`main > div.x\:border-t`:                  "",
		"starlight-toc":                           "tstarlight-toc",
		"body:has(div.contentContainer)":          "tbody",
	} {
		kind, key := selectorKey(sel)
		got := ""
		if kind != 0 {
			got = string(kind) + key
		}
		require.Equal(t, want, got, sel)
	}
	// An index finds what the selectors find.
	doc, err := html.Parse(strings.NewReader(`<main><div class="a b" id="x"><p class="c">t</p></div><span>s</span></main>`))
	require.NoError(t, err)
	x := newSelIndex()
	for _, c := range []struct{ sel, name, holds string }{
		{"[vp-content]", "vp-content", ""}, {"[class*=nextra-]", "class", "nextra-"},
		{`[class*="a-b"]`, "class", "a-b"}, {"[class*='x']", "class", "x"},
		{"[class*=A]", "", ""}, {"[class*=x i]", "", ""}, {"[a=b]", "", ""}, {"[a*=]", "", ""},
		{"div[a]", "", ""}, {"[a],[b]", "", ""}, {`[a\:b]`, "", ""}, {"[A]", "", ""},
	} {
		name, holds, ok := attrKey(c.sel)
		require.Equal(t, c.name != "", ok, c.sel)
		require.Equal(t, c.name, name, c.sel)
		require.Equal(t, c.holds, holds, c.sel)
	}
	for i, s := range []string{"div.b", "#x", "main p.c", "span", "[id]", "div.zzz", "[class*=zz]", "[class*=c]"} {
		x.add(s, i)
	}
	var hits []int
	matched := 0
	walk(doc, func(n *html.Node) bool {
		if n.Type == html.ElementNode {
			before := len(hits)
			x.match(n, func(i int) { hits = append(hits, i) })
			require.Equal(t, len(hits) > before, x.matches(n), n.Data)
			if x.matches(n) {
				matched++
			}
		}
		return true
	})
	require.ElementsMatch(t, []int{0, 1, 4, 2, 7, 3}, hits)
	require.Equal(t, 3, matched) // div, p, span
}

// TestStyleHides pins the allocation-free check against the definition it
// replaces: lower-cased, white space removed, contains "display:none".
func TestStyleHides(t *testing.T) {
	for _, style := range []string{
		"", "display:none", "DISPLAY: NONE", "color:red; display :\tnone !important",
		"display:block", "display:non", "ddisplay:none", "display:nonE", "dis play:no ne",
		"display:\u00a0none", "displaydisplay:none", "display:inline-block;visibility:hidden",
		"d\u0130splay:none", "display:n\u212aone",
	} {
		want := strings.Contains(strings.ToLower(strings.Join(strings.Fields(style), "")), "display:none")
		require.Equal(t, want, styleHides(style), "%q", style)
	}
	require.Zero(t, testing.AllocsPerRun(10, func() { styleHides("color: red; Display: None") }))
}

// TestGutterClasses: isGutter skips class attributes without an "l" or a
// "g", which every gutter class holds.
func TestGutterClasses(t *testing.T) {
	for c := range lineNumberClasses {
		require.True(t, hasLOrG(c), c)
		require.Equal(t, strings.ToLower(c), c)
	}
	require.False(t, hasLOrG("n o p k s2 mi"))
	require.True(t, hasLOrG("n LINENOS"))
}

// TestRulePagesWithoutRules extracts the hand-trimmed page of every
// generator rule through the generic path, with BuiltinRules switched off:
// the title is the first line and every code block and table the rule
// test names is there; so is every heading, but for pkgsite's "type Ring",
// whose heading keeps its "source" link on the generic path. (Chrome
// inside the content that only a rule names, such as rustdoc's "Source"
// links or godoc's collapsed section copies, is left to the rules.)
func TestRulePagesWithoutRules(t *testing.T) {
	for _, tc := range ruleCases {
		if tc.title == "" {
			continue // a corpus page: TestDocsitesWithoutRules scores it
		}
		t.Run(strings.TrimSuffix(filepath.Base(tc.file), ".html"), func(t *testing.T) {
			body := readPage(t, tc.file)
			out, err := fromHTMLOmitting(body, "https://docs.example.org/guide/page.html", Options{}, convert, func(int) bool { return true })
			require.NoError(t, err)
			first, _, _ := strings.Cut(out.Markdown, "\n")
			require.Equal(t, "# "+tc.title, strings.ReplaceAll(first, `\`, ""))
			c := quality.CaseOf(tc.title, tc.headings, tc.code, tc.tables, nil)
			s := quality.ScoreDoc(c, out.Title, out.Markdown)
			require.Equal(t, 1.0, s.H1, out.Markdown)
			if s.HasHeadings {
				want := 1.0
				if tc.rule == "pkgsite" {
					want = 0.8
				}
				require.GreaterOrEqual(t, s.HeadingRecall, want, out.Markdown)
			}
			if s.HasCode {
				require.Equal(t, 1.0, s.CodeRecall, out.Markdown)
			}
			if s.HasTables {
				require.Equal(t, 1.0, s.TableRecall, out.Markdown)
			}
		})
	}
}

// TestRuleContainerDropsTooltips: inside a rule's container too, what
// shows only on hover or on demand (tooltips, popovers, a hover popup in
// highlighted code) is no content; the terms they explain stay.
func TestRuleContainerDropsTooltips(t *testing.T) {
	body := []byte(`<html><head><meta name="generator" content="vitepress"><title>Channels | Reef</title></head><body><main><div class="vp-doc"><h1>Channels</h1>
<p>The <span class="tooltip">phantom type<span class="tooltiptext">Holds no value.</span></span> is erased; a <abbr>ch</abbr><span role="tooltip">A channel.</span> carries it.</p>
<div popover id="g">Glossary entry.</div>
<pre><code><span class="twoslash-hover"><span class="twoslash-popup-container">const c: Channel</span>c</span> = open()</code></pre></div></main></body></html>`)
	doc, err := FromHTML(body, "https://reef.example/channels")
	require.NoError(t, err)
	require.Equal(t, "# Channels\n\nThe phantom type is erased; a ch carries it.\n\n```\nc = open()\n```", doc.Markdown)
}
