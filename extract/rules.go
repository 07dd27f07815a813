package extract

import (
	"fmt"
	"strings"
	"sync"

	"github.com/andybalholm/cascadia"
	"golang.org/x/net/html"
)

// Rule says how to recognise the pages of one documentation generator (or
// theme) and where their content is. FromHTML tries Options.Rules, then
// BuiltinRules, in order: the first rule that recognises the page and finds
// its container decides what is converted, and readability is left out.
// A page a rule recognises but whose container it does not find falls
// back to its <main>, [role=main] or single <article> (the rule's Remove
// selectors still apply); a page no rule recognises goes to readability
// (articles and unknown sites).
//
// Selectors are CSS selectors as package github.com/andybalholm/cascadia
// parses them (:has() and :not() included); an invalid one makes
// FromHTMLWithOptions fail with ErrRule.
type Rule struct {
	// Name names the generator or theme, e.g. "mkdocs-material".
	Name string
	// Generators are case-insensitive substrings of the content of
	// <meta name="generator"> that identify the generator's pages.
	Generators []string
	// Markers are selectors of markup only this generator emits; a page
	// where one matches is recognised too.
	Markers []string
	// Content are selectors of the content container, tried in order; the
	// first element one matches is what gets converted.
	Content []string
	// Title are selectors of the page's title heading where the theme
	// renders it outside the content container (Starlight); its text
	// becomes the Markdown's first line.
	Title []string
	// Remove are selectors of chrome inside the container: edit links,
	// breadcrumbs, prev/next links, in-page tables of contents, feedback
	// widgets. Elements are removed only by these selectors and by the
	// rules every container gets (scripts, forms, buttons, <nav>, hidden
	// elements, word-less heading permalinks); never by keywords in ids or
	// classes.
	Remove []string
}

// ErrRule means a Rule in Options.Rules holds a selector that does not parse.
var ErrRule = fmt.Errorf("extract: invalid rule selector")

// headingAnchors are the heading permalinks of the common generators;
// those without words are removed anyway, these are removed even when
// they hold a word such as "permalink".
var headingAnchors = []string{
	"a.headerlink", "a.hash-link", "a.header-anchor", "a.anchor", "a.anchor-heading",
	"a.sl-anchor-link", ".sl-anchor-icon", "a.subheading-anchor", "a.td-heading-self-link",
	"a.anchorjs-link", "a.anchor-link",
}

func with(list []string, more ...string) []string {
	return append(append([]string(nil), list...), more...)
}

// BuiltinRules are the generator rules FromHTML knows, most specific
// first. Each has a test page under testdata/rules. The slice may be read
// but must not be modified; extend it with Options.Rules.
var BuiltinRules = []Rule{
	{
		Name:       "mkdocs-material",
		Generators: []string{"mkdocs-material"},
		Markers:    []string{"article.md-content__inner"},
		Content:    []string{"article.md-content__inner", ".md-content"},
		Remove: with(headingAnchors, ".md-content__button", ".md-source-file", "nav.md-tags",
			".md-feedback", ".md-source-date"),
	},
	{
		Name:       "mkdocs",
		Generators: []string{"mkdocs"},
		Content:    []string{"div[role=main] div.section", "div[role=main]", "[itemprop=articleBody]", "main"},
		Remove:     with(headingAnchors, ".rst-breadcrumbs-buttons", "div[role=navigation]", ".edit-on-github"),
	},
	{
		Name:       "docusaurus",
		Generators: []string{"docusaurus"},
		Markers:    []string{".theme-doc-markdown", "#__docusaurus"},
		Content:    []string{"article .theme-doc-markdown", "article .markdown", ".theme-doc-markdown", "main article", "main"},
		Remove: with(headingAnchors, ".theme-doc-toc-mobile", ".theme-doc-footer",
			".theme-doc-breadcrumbs", ".theme-doc-version-badge", ".theme-edit-this-page",
			".pagination-nav", ".theme-doc-version-banner"),
	},
	{
		Name:       "starlight",
		Generators: []string{"starlight"},
		Markers:    []string{".sl-markdown-content"},
		Content:    []string{".sl-markdown-content"},
		Title:      []string{"main .content-panel h1#_top", "h1#_top"},
		Remove: with(headingAnchors, ".expressive-code .copy", "starlight-toc", "mobile-starlight-toc",
			".sl-anchor-link"),
	},
	{
		Name:       "vitepress",
		Generators: []string{"vitepress"},
		Markers:    []string{".vp-doc", "#VPContent"},
		Content:    []string{"main .vp-doc", ".vp-doc"},
		Remove:     with(headingAnchors, "pre.vp-code-dark", "span.lang", "button.copy", ".edit-info", ".prev-next"),
	},
	{
		Name:       "vuepress",
		Generators: []string{"vuepress"},
		Markers:    []string{".theme-default-content", "[vp-content]"},
		Content:    []string{".theme-default-content", "[vp-content]", "main .vp-page", "main"},
		Remove:     with(headingAnchors, ".page-meta", ".page-nav", ".vp-page-meta", ".vp-page-nav", ".code-copy-button"),
	},
	{
		Name:    "mdbook",
		Markers: []string{"#mdbook-sidebar", "nav#sidebar .sidebar-scrollbox", ".sidebar-scrollbox", "#mdbook-content"},
		Content: []string{"#mdbook-content main", "#content main", "main"},
		Remove:  with(headingAnchors, ".nav-wrapper", ".nav-chapters"),
	},
	{
		Name:    "docsy",
		Markers: []string{".td-content", ".td-main"},
		Content: []string{".td-content", "main[role=main]", "main"},
		Remove: with(headingAnchors, "header.article-meta", ".td-page-meta", ".td-page-meta__lastmod",
			".d-print-none", ".section-index", ".td-breadcrumbs", "nav.td-breadcrumbs", ".td-toc",
			".feedback--title", ".td-alert--feedback"),
	},
	{
		Name:    "hugo-book",
		Markers: []string{"article.book-article", ".book-page"},
		Content: []string{"article.book-article", ".book-page article", "main article"},
		Remove:  with(headingAnchors, ".book-footer", ".book-comments", ".book-toc"),
	},
	{
		Name:    "just-the-docs",
		Markers: []string{"#main-content-wrap", ".side-bar .site-nav"},
		Content: []string{"#main-content main", "#main-content"},
		Remove:  with(headingAnchors, "nav.breadcrumb-nav", "footer", ".site-footer"),
	},
	{
		Name:       "antora",
		Generators: []string{"antora"},
		Markers:    []string{"article.doc"},
		Content:    []string{"article.doc", "main article"},
		Remove:     with(headingAnchors, "aside.toc", ".toc.embedded", "nav.pagination", ".feedback", ".edit-this-page"),
	},
	{
		Name:    "nextra",
		Markers: []string{".nextra-content", ".nextra-body", ".nextra-nav-container", "[class*=nextra-]"},
		Content: []string{"main[data-pagefind-body]", "article main", ".nextra-content main", "main"},
		Remove: with(headingAnchors, ".nextra-breadcrumb", ".nextra-toc", ".nextra-copy-button",
			".nextra-feedback", "main > div.nx-border-t:has(a[title])", `main > div.x\:border-t:has(a[title])`),
	},
	{
		Name:       "gitbook",
		Generators: []string{"gitbook"},
		Markers:    []string{".markdown-section", ".book-body .page-inner"},
		Content:    []string{"section.markdown-section", ".markdown-section", ".page-inner", "main"},
		Remove:     with(headingAnchors, ".navigation", ".page-footer", ".gitbook-link"),
	},
	{
		Name:       "sphinx",
		Generators: []string{"sphinx", "docutils"},
		Markers:    []string{"script[src*='documentation_options.js']", "script#documentation_options", "a.headerlink"},
		Content: []string{"article[role=main]", "article.bd-article", "[itemprop=articleBody]",
			"div.body[role=main]", "div[role=main]", "div.body", "main"},
		Remove: with(headingAnchors, ".content-icon-container", ".rst-breadcrumbs-buttons",
			".prev-next-area", ".bd-header-article", ".sphx-glr-download-link-note",
			".sphx-glr-download", ".sphx-glr-signature", ".toc-drawer"),
	},
	{
		Name:       "javadoc",
		Generators: []string{"javadoc"},
		Markers:    []string{"div.contentContainer", "div.header h1.title", "main[role=main] .header .title"},
		Content:    []string{"main[role=main]", "main", "body:has(div.contentContainer)"},
		Title:      []string{"div.header h1.title", "div.header h2.title"},
		Remove: with(headingAnchors, ".topNav", ".bottomNav", ".subNav", ".skipNav", ".top-nav",
			".sub-nav", ".navList", "header.flex-header", ".legalCopy", ".legal-copy"),
	},
	{
		Name:       "rustdoc",
		Generators: []string{"rustdoc"},
		Markers:    []string{"section#main-content.content", "rustdoc-search"},
		Content:    []string{"section#main-content", "#main-content", "main"},
		Remove: with(headingAnchors, ".out-of-band", "rustdoc-toolbar", "#copy-path", ".src",
			"a.tooltip", ".anchor", "summary.hideme", ".rustdoc-breadcrumbs"),
	},
	{
		Name:    "pkgsite",
		Markers: []string{".UnitDoc", ".Documentation-content"},
		Content: []string{"main .go-Main-article", "article.go-Main-article", ".UnitDoc", "main"},
		Title:   []string{"h1.UnitHeader-titleHeading", ".go-Main-headerTitle h1"},
		Remove: with(headingAnchors, ".Documentation-idLink", ".UnitMeta", ".go-Main-headerBreadcrumb",
			".UnitOutline", ".Documentation-source"),
	},
	{
		Name:    "godoc",
		Markers: []string{"#pkg-overview", "#pkg-index"},
		Content: []string{"#page .container", "#page", "main"},
		Remove:  with(headingAnchors, "#pkg-callgraph", ".permalink", "#footer", "#short-nav", ".toggleVisible > .collapsed", ".toggle > .collapsed"),
	},
}

// fallbackContent are the containers of a recognised page whose rule
// finds none of its own.
var fallbackContent = []string{"main", "[role=main]"}

// selectors caches compiled selectors by their text.
var selectors sync.Map // string -> cascadia.Selector

func compile(sel string) (cascadia.Selector, error) {
	if s, ok := selectors.Load(sel); ok {
		return s.(cascadia.Selector), nil
	}
	s, err := cascadia.Compile(sel)
	if err != nil {
		return nil, err
	}
	selectors.Store(sel, s)
	return s, nil
}

// checkRules compiles every selector of rules.
func checkRules(rules []Rule) error {
	for _, r := range rules {
		for _, list := range [][]string{r.Markers, r.Content, r.Title, r.Remove} {
			for _, sel := range list {
				if _, err := compile(sel); err != nil {
					return fmt.Errorf("%w: rule %q: %q: %w", ErrRule, r.Name, sel, err)
				}
			}
		}
	}
	return nil
}

func init() {
	if err := checkRules(BuiltinRules); err != nil {
		panic(err)
	}
	for _, s := range fallbackContent {
		if _, err := compile(s); err != nil {
			panic(err)
		}
	}
}

// first returns the first element any of sels matches under root, trying
// the selectors in order.
func first(root *html.Node, sels []string) *html.Node {
	for _, sel := range sels {
		s, err := compile(sel)
		if err != nil {
			continue
		}
		if n := s.MatchFirst(root); n != nil {
			return n
		}
	}
	return nil
}

// indexes caches, by the address of a selector list's first element, the
// selIndex of each list of BuiltinRules and fallbackContent: those lists
// never change.
var indexes = func() map[*string]*selIndex {
	m := map[*string]*selIndex{}
	add := func(list []string) {
		if len(list) > 1 {
			m[&list[0]] = indexList(list)
		}
	}
	for i := range BuiltinRules {
		add(BuiltinRules[i].Content)
		add(BuiltinRules[i].Title)
	}
	add(fallbackContent)
	return m
}()

func indexList(list []string) *selIndex {
	x := newSelIndex()
	for i, sel := range list {
		x.add(sel, i)
	}
	return x
}

// firstOf is first in one walk of root: for each element it tries only
// the selectors an index lets through, and it stops early once the first
// selector has matched.
func firstOf(root *html.Node, sels []string) *html.Node {
	if len(sels) <= 1 {
		return first(root, sels)
	}
	x := indexes[&sels[0]]
	if x == nil {
		x = indexList(sels)
	}
	hits := make([]*html.Node, len(sels))
	best := len(sels)
	walk(root, func(n *html.Node) bool {
		if best == 0 {
			return false
		}
		if n.Type == html.ElementNode {
			x.match(n, func(i int) {
				if hits[i] == nil {
					hits[i] = n
					best = min(best, i)
				}
			})
		}
		return true
	})
	if best < len(sels) {
		return hits[best]
	}
	return nil
}

// recognisesGenerator reports whether rule r names the page's generator.
func (r *Rule) recognisesGenerator(generator string) bool {
	for _, g := range r.Generators {
		if g != "" && strings.Contains(generator, strings.ToLower(g)) {
			return true
		}
	}
	return false
}

// builtinMarkers indexes the markers of BuiltinRules by rule index.
var builtinMarkers = func() *selIndex {
	x := newSelIndex()
	for i, r := range BuiltinRules {
		for _, m := range r.Markers {
			x.add(m, i)
		}
	}
	return x
}()

// builtinGenerator reports whether a rule of BuiltinRules names the
// generator.
func builtinGenerator(generator string) bool {
	if generator == "" {
		return false
	}
	for i := range BuiltinRules {
		if BuiltinRules[i].recognisesGenerator(generator) {
			return true
		}
	}
	return false
}

// recognised reports, per rule of rules and of BuiltinRules, whether the
// page shows its generator or one of its markers. When a built-in rule
// names the page's generator, the built-in markers are not looked for: the
// generator's own declaration decides. Otherwise scan.markers tells which
// built-in markers match (scanPage looks for them in its walk), and the
// page is walked once more only for the markers of rules.
func recognised(doc *html.Node, rules []Rule, scan *pageScan) (own, builtin []bool) {
	generator := scan.generator
	own, builtin = make([]bool, len(rules)), make([]bool, len(BuiltinRules))
	var mine *selIndex
	pending := 0
	for i := range rules {
		if own[i] = rules[i].recognisesGenerator(generator); !own[i] && len(rules[i].Markers) > 0 {
			if mine == nil {
				mine = newSelIndex()
			}
			for _, m := range rules[i].Markers {
				mine.add(m, i)
			}
			pending++
		}
	}
	byGenerator := false
	for i := range BuiltinRules {
		if scan.omitted(i) {
			continue
		}
		if builtin[i] = BuiltinRules[i].recognisesGenerator(generator); builtin[i] {
			byGenerator = true
		}
	}
	if !byGenerator {
		markers := scan.markers
		if markers == nil {
			// Only omitted rules name the generator: scanPage did not
			// look for the markers.
			markers = make([]bool, len(BuiltinRules))
			walk(doc, func(n *html.Node) bool {
				if n.Type == html.ElementNode {
					builtinMarkers.match(n, func(i int) { markers[i] = true })
				}
				return true
			})
		}
		for i, m := range markers {
			builtin[i] = m && !scan.omitted(i)
		}
	}
	if mine == nil {
		return own, builtin
	}
	walk(doc, func(n *html.Node) bool {
		if pending == 0 {
			return false
		}
		if n.Type == html.ElementNode {
			mine.match(n, func(i int) {
				if !own[i] {
					own[i] = true
					pending--
				}
			})
		}
		return true
	})
	return own, builtin
}

// selection is the content container chosen for a page.
type selection struct {
	rule      *Rule // nil for a fallback container
	container *html.Node
}

// chooseContainer applies rules, then BuiltinRules, then the fallback
// containers; ok is false when the page is left to readability. scan is
// scanPage's walk of doc.
func chooseContainer(doc *html.Node, rules []Rule, scan *pageScan) (selection, bool) {
	own, builtin := recognised(doc, rules, scan)
	var known *Rule
	for k, set := range [][]Rule{rules, BuiltinRules} {
		hits := own
		if k == 1 {
			hits = builtin
		}
		for i := range set {
			if !hits[i] {
				continue
			}
			r := &set[i]
			if c := firstOf(doc, r.Content); c != nil {
				return selection{rule: r, container: c}, true
			}
			if known == nil {
				known = r
			}
		}
	}
	if known == nil {
		return selection{}, false
	}
	// A documentation page whose markup its rule no longer knows (a new
	// theme version): its landmarks still hold the content.
	if c := firstOf(doc, fallbackContent); c != nil {
		return selection{rule: known, container: c}, true
	}
	if arts := cascadia.MustCompile("article").MatchAll(doc); len(arts) == 1 {
		return selection{rule: known, container: arts[0]}, true
	}
	return selection{}, false
}
