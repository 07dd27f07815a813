package extract

import (
	"net/url"
	"strings"
	"unicode"

	"golang.org/x/net/html"
	"golang.org/x/net/html/atom"
)

// The generic path extracts a page no Rule recognises by its structure
// alone, nothing by the names of classes and ids but the conventions that
// mark content as hidden, as a tooltip or as code (the package
// documentation, step 7, says what a user sees):
//
//  1. The title heading that names the page is found first
//     (titleHeading), so that the header holding it stays.
//  2. Chrome and invisible content are removed from the body
//     (removeChrome): scripts, media and form controls with their labels,
//     <nav>, <footer>, the page's <header> and <aside> (outside <main>,
//     <article> and <section>), navigation and banner landmarks, tab
//     lists, consent banners, word-less permalinks, and what no reader sees
//     without acting: hidden elements, popovers, tooltips (invisible).
//  3. Code written without <pre> (a <div> a line, lines divided by <br>)
//     becomes a <pre> with every line (lineCode).
//  4. Without a heading that names the page, the title is the first <h1>
//     left, else the element that shows the title as text (titleElement).
//  5. The container is the element where the page's text divides
//     (structuralContainer), its children pruned of what is beside the
//     content (pruneBlocks), and code blocks of the labels that name their
//     language (dropCodeLabels).
//  6. The title heading leads the container, which is converted as a
//     rule's container is.

// dominantShare is the share of an element's text one child must hold for
// the walk to go down into it.
const dominantShare = 0.9

// linkListShare is the share of its text in links above which a block is
// a list of links (a sidebar, a table of contents, prev/next links).
const linkListShare = 0.75

// pageActions is the most links a row of page actions ("Edit on GitHub",
// "Copy page", "View source") holds.
const pageActions = 3

// genericMarkdown converts the page doc by its structure (the steps
// above); a page without a body has no Markdown. doc is modified.
func genericMarkdown(doc *html.Node, scan *pageScan, base *url.URL, known map[string]string, conv convertFunc) (string, error) {
	body := find(doc, atom.Body)
	if body == nil {
		return "", nil
	}
	// A title heading that names the page keeps the header around it
	// (a theme's page header: eyebrow, title, description); one found
	// only as the first <h1> is looked for again once chrome is gone.
	title, named := titleHeading(body, scan)
	if !named {
		title = nil
	}
	removeChrome(body, title)
	lineCode(body)
	if title == nil {
		title, _ = titleHeading(body, scan)
	}
	if title == nil {
		title = titleElement(body, scan)
	}
	c := structuralContainer(body, title)
	dropCodeLabels(c)
	fallbackTitle := pageTitle(scan.pageTitle())
	// A title that holds the container (malformed markup can leave the
	// page inside an unclosed heading) cannot lead it: the page's title
	// names it instead.
	if title != nil && !contains(title, c) {
		fallbackTitle = ""
		leadWith(c, title)
	}
	return containerMarkdown(doc, selection{container: c}, base, known, fallbackTitle, conv)
}

// removeChrome deletes from body what is not the page's content (step 1
// of the generic path). An element holding most of the page's text, or
// the title heading keep, is never removed for being a form, a header, a
// footer or a landmark (some sites wrap their whole page in one).
func removeChrome(body, keep *html.Node) {
	stats := measure(body)
	holdsMost := mostTextHolder(body, stats)
	prune(body, func(n *html.Node) bool {
		if removedTag(n.DataAtom) || n.Namespace != "" || invisible(n) || isPermalink(n) || controlLabel(n) {
			return true
		}
		return isChrome(n, stats) && !holdsMost(n) && (keep == nil || !contains(n, keep))
	})
}

// controlLabel reports whether n is the <label> of a form control (it
// names one by its for attribute, or holds one): the text of a settings
// widget or a toggle, not of the page.
func controlLabel(n *html.Node) bool {
	if !isElement(n, atom.Label) {
		return false
	}
	if hasAttr(n, "for") {
		return true
	}
	for _, a := range []atom.Atom{atom.Input, atom.Select, atom.Textarea, atom.Button} {
		if find(n, a) != nil {
			return true
		}
	}
	return false
}

// isChrome reports whether element n is page furniture: navigation, the
// page's header, footer and sidebars, a form, a tab list, a consent
// banner.
func isChrome(n *html.Node, stats map[*html.Node]nodeStat) bool {
	switch n.DataAtom {
	case atom.Nav, atom.Footer, atom.Form, atom.Menu:
		return true
	case atom.Header, atom.Aside:
		// The header of an article or a section holds its title; an
		// aside inside one is a note.
		return !hasAncestor(n, isSectioning)
	}
	role := strings.ToLower(strings.TrimSpace(attr(n, "role")))
	if role == "tablist" || landmarkRoles[role] {
		return true
	}
	if role == "complementary" && !hasAncestor(n, isSectioning) {
		return true
	}
	// Consent banners are known by words in their ids and classes, as
	// everywhere; inside an article or a section such a word names
	// content ("cookie-handling").
	return !isSectioning(n) && !hasAncestor(n, isSectioning) && isConsentBanner(n, stats[n])
}

// navigation reports whether n is navigation or a form, where a heading
// that repeats the page's title is no title (a theme's toolbar).
func navigation(n *html.Node) bool {
	switch n.DataAtom {
	case atom.Nav, atom.Form, atom.Menu:
		return true
	}
	role := attr(n, "role")
	return role != "" && landmarkRoles[strings.ToLower(strings.TrimSpace(role))]
}

// isSectioning reports whether n is <main>, role=main or an element
// whose <header> and <aside> belong to it rather than to the page:
// <article> and <section>.
func isSectioning(n *html.Node) bool {
	return isContentRoot(n) || isElement(n, atom.Section)
}

// tooltipWords are the class words (classWords) that name the bubble of a
// tooltip or a popover: text shown on hover, in the page's markup all
// along.
var tooltipWords = map[string]bool{
	"tooltip": true, "tooltiptext": true, "popover": true, "popup": true,
	"hovercard": true, "tippy": true,
}

// invisible reports whether element n is content no reader sees without
// acting on the page: hidden (the hidden attribute, except
// hidden=until-found, which the browser's find reveals; display:none or
// visibility:hidden), a popover (the popover attribute), a tooltip
// (role=tooltip, tooltipBubble) or text for screen readers only.
func invisible(n *html.Node) bool {
	if v, ok := attrOK(n, "hidden"); ok && !strings.EqualFold(strings.TrimSpace(v), "until-found") {
		return true
	}
	if hasAttr(n, "popover") {
		return true
	}
	if strings.EqualFold(strings.TrimSpace(attr(n, "role")), "tooltip") {
		return true
	}
	if style := attr(n, "style"); style != "" && (styleHides(style) || strings.Contains(strings.ToLower(strings.Join(strings.Fields(style), "")), "visibility:hidden")) {
		return true
	}
	class := attr(n, "class")
	if class == "" {
		return false
	}
	if hasUtilityHidden(class) {
		return true
	}
	return tooltipBubble(n, class)
}

// tooltipBubble reports whether n, of class attribute class, is the
// bubble of a tooltip or popover by its class (tooltipWords): hidden from
// screen readers too, or the innermost element so named (the term it
// explains wraps it) unless the name marks the trigger (triggerWords).
func tooltipBubble(n *html.Node, class string) bool {
	if !tooltipClass(class) {
		return false
	}
	if strings.EqualFold(strings.TrimSpace(attr(n, "aria-hidden")), "true") {
		return true
	}
	// The bubble, not the term it explains: the innermost element so
	// named, unless its name says it is the trigger ("has-tooltip").
	if triggerClass(class) {
		return false
	}
	inner := true
	walk(n, func(c *html.Node) bool {
		if c != n && c.Type == html.ElementNode && tooltipClass(attr(c, "class")) && holdsWords(c) {
			inner = false
		}
		return inner
	})
	return inner
}

// triggerWords are the class words that mark an element as what shows a
// tooltip, not as the tooltip.
var triggerWords = map[string]bool{"has": true, "with": true, "trigger": true, "toggle": true, "target": true, "anchor": true}

// triggerClass reports whether a class attribute has a word of
// triggerWords.
func triggerClass(class string) bool {
	found := false
	eachClass(class, func(t string) {
		for _, w := range classWords(t) {
			found = found || triggerWords[w]
		}
	})
	return found
}

// tooltipClass reports whether a class attribute has a word of
// tooltipWords.
func tooltipClass(class string) bool {
	// Most class attributes hold none of the words' stems: they are
	// not tokenized.
	if !containsFold(class, "tool") && !containsFold(class, "pop") &&
		!containsFold(class, "hover") && !containsFold(class, "tipp") {
		return false
	}
	found := false
	eachClass(class, func(t string) {
		words := classWords(t)
		for i, w := range words {
			// A word, or two run together ("HoverCard", "tooltipText").
			found = found || tooltipWords[w] || i > 0 && tooltipWords[words[i-1]+w]
		}
	})
	return found
}

// containsFold reports whether s holds sub, ASCII letters compared
// without case (sub is lower-case); it allocates nothing.
func containsFold(s, sub string) bool {
	for i := 0; i+len(sub) <= len(s); i++ {
		j := 0
		for ; j < len(sub); j++ {
			c := s[i+j]
			if 'A' <= c && c <= 'Z' {
				c += 'a' - 'A'
			}
			if c != sub[j] {
				break
			}
		}
		if j == len(sub) {
			return true
		}
	}
	return false
}

// classWords splits a class name into its lower-case words at '-', '_',
// ':' and '/', and where a lower-case letter or digit meets an upper-case
// one ("codeLine", "CodeBlock_line__x1": code, line; code, block, line, x1).
func classWords(class string) []string {
	var words []string
	start := 0
	flush := func(end int) {
		if end > start {
			words = append(words, strings.ToLower(class[start:end]))
		}
	}
	for i := 0; i < len(class); i++ {
		c := class[i]
		switch {
		case c == '-' || c == '_' || c == ':' || c == '/':
			flush(i)
			start = i + 1
		case 'A' <= c && c <= 'Z' && i > start && ('a' <= class[i-1] && class[i-1] <= 'z' || '0' <= class[i-1] && class[i-1] <= '9'):
			flush(i)
			start = i
		}
	}
	flush(len(class))
	return words
}

// weight is what an element holds: characters of text (white space left
// out) outside links and inside them.
type weight struct {
	plain, link int
}

// weigh computes the weight of every element under root.
func weigh(root *html.Node) map[*html.Node]weight {
	out := make(map[*html.Node]weight)
	var visit func(n *html.Node, inLink bool) weight
	visit = func(n *html.Node, inLink bool) weight {
		var w weight
		switch n.Type {
		case html.TextNode:
			k := 0
			for _, r := range n.Data {
				if !unicode.IsSpace(r) {
					k++
				}
			}
			if inLink {
				w.link = k
			} else {
				w.plain = k
			}
			return w
		case html.ElementNode:
			if isElement(n, atom.A) && hasAttr(n, "href") {
				inLink = true
			}
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			cw := visit(c, inLink)
			w.plain += cw.plain
			w.link += cw.link
		}
		if n.Type == html.ElementNode {
			out[n] = w
		}
		return w
	}
	visit(root, false)
	return out
}

// structuralContainer is step 5 of the generic path: the element of body
// where its text (outside links) divides, found going down from body into
// the child that holds dominantShare of it, not past title (nil for none);
// pruned by pruneBlocks.
func structuralContainer(body, title *html.Node) *html.Node {
	w := weigh(body)
	cur := body
	for {
		var best *html.Node
		for c := cur.FirstChild; c != nil; c = c.NextSibling {
			if c.Type == html.ElementNode && (best == nil || w[c].plain > w[best].plain) {
				best = c
			}
		}
		if best == nil || float64(w[best].plain) < dominantShare*float64(w[cur].plain) {
			break
		}
		if title != nil && contains(cur, title) && !contains(best, title) {
			break
		}
		cur = best
	}
	pruneBlocks(cur, title, w)
	return cur
}

// pruneBlocks removes from the container cur, where its text divides, the
// children that are not its content:
//   - before the title's (title nil for none), the short ones: a site
//     name, breadcrumbs, a toolbar;
//   - between the title's and the first holding a fifth of the text, the
//     short link lists of a few links: page actions ("Edit this page");
//   - after the main one (holding half the text or more), the short
//     wrappers without a heading (a footer), and with one too when the main
//     one holds the title (a sidebar);
//   - outside the span from the first child that holds content to the
//     last, the wrappers that are link lists (isLinkList: a sidebar, a
//     table of contents, prev/next links).
//
// Between cur and the title, link lists of two links or more before the
// title (breadcrumbs) go too; down the main child, only short trailing
// wrappers (pruneTrailing).
func pruneBlocks(cur, title *html.Node, w map[*html.Node]weight) {
	kids := elementChildren(cur)
	total := float64(w[cur].plain)
	short := func(c *html.Node) bool { return float64(w[c].plain) < (1-dominantShare)*total }
	holdsTitle := func(c *html.Node) bool { return title != nil && contains(c, title) }
	content := func(c *html.Node) bool {
		return holdsTitle(c) || !isLinkList(c, w) || isElement(c, atom.Table)
	}
	first, last, heavy := -1, -1, -1
	for i, c := range kids {
		if content(c) {
			if first < 0 {
				first = i
			}
			last = i
		}
		if heavy < 0 && float64(w[c].plain) >= total/5 && !holdsTitle(c) {
			heavy = i
		}
	}
	main := mainChild(kids, total, w)
	titleAt := -1
	if title != nil && title != cur && contains(cur, title) {
		for i, c := range kids {
			if holdsTitle(c) {
				titleAt = i
				break
			}
		}
	}
	// A main child that holds the title is the page's column: what is
	// short beside it after it is chrome (a sidebar, a feedback form, a
	// footer), headed or not; after a main child without the title, a
	// short child with a heading may be the last section.
	mainHoldsTitle := main >= 0 && holdsTitle(kids[main])
	var doomed []*html.Node
	for i, c := range kids {
		switch {
		case holdsTitle(c):
		case i < titleAt && short(c):
			doomed = append(doomed, c)
		case i > titleAt && i < heavy && short(c) && wrapper(c) && isLinkList(c, w) && links(c) <= pageActions && !holdsHeading(c):
			// Page actions between the title and the text ("Edit on
			// GitHub", "View source").
			doomed = append(doomed, c)
		case main >= 0 && i > main && short(c) && wrapper(c) && (mainHoldsTitle || !holdsHeading(c)):
			doomed = append(doomed, c)
		case (i < first || i > last) && !content(c) && wrapper(c):
			doomed = append(doomed, c)
		}
	}
	if titleAt >= 0 {
		// Breadcrumbs beside the title, down to it.
		for a := title; a != nil && a != cur; a = a.Parent {
			for s := a.PrevSibling; s != nil; s = s.PrevSibling {
				if s.Type == html.ElementNode && a.Parent != cur && isLinkList(s, w) && links(s) >= 2 {
					doomed = append(doomed, s)
				}
			}
		}
	}
	removeAll(doomed)
	if main >= 0 {
		pruneTrailing(kids[main], title, w)
	}
}

// pruneTrailing removes, down the chain of main children from n, the
// short wrappers without a heading after each main child: a page's column
// holds its content and, after it, the page's meta (an update date, a
// feedback form). An element with text of its own is running text, whose
// elements are inline: it is left alone.
func pruneTrailing(n, title *html.Node, w map[*html.Node]weight) {
	for n != nil && n != title && !ownText(n) {
		kids := elementChildren(n)
		total := float64(w[n].plain)
		main := mainChild(kids, total, w)
		if main < 0 {
			return
		}
		var doomed []*html.Node
		for _, c := range kids[main+1:] {
			if float64(w[c].plain) < (1-dominantShare)*total && wrapper(c) && !holdsHeading(c) && (title == nil || !contains(c, title)) {
				doomed = append(doomed, c)
			}
		}
		removeAll(doomed)
		n = kids[main]
	}
}

// mainChild is the index of the first of kids that is a wrapper or an
// <article> or <main> and holds half of total or more of the text outside
// links; -1 for none (a paragraph that long is not a column).
func mainChild(kids []*html.Node, total float64, w map[*html.Node]weight) int {
	for i, c := range kids {
		if total > 0 && float64(w[c].plain) >= total/2 && (wrapper(c) || isContentRoot(c)) {
			return i
		}
	}
	return -1
}

// elementChildren are n's element children in order.
func elementChildren(n *html.Node) []*html.Node {
	var kids []*html.Node
	for c := n.FirstChild; c != nil; c = c.NextSibling {
		if c.Type == html.ElementNode {
			kids = append(kids, c)
		}
	}
	return kids
}

// ownText reports whether n has a text child with words.
func ownText(n *html.Node) bool {
	for c := n.FirstChild; c != nil; c = c.NextSibling {
		if c.Type == html.TextNode && hasWords(c.Data) {
			return true
		}
	}
	return false
}

// removeAll detaches each of nodes still attached.
func removeAll(nodes []*html.Node) {
	for _, n := range nodes {
		if n.Parent != nil {
			n.Parent.RemoveChild(n)
		}
	}
}

// wrapper reports whether n is an element that only groups others (a
// <div>, <section>, <aside>, <footer>, <header>, <span>), an <address>
// (contact details) or a rule, not one that holds content by its kind (a
// paragraph, a list, a table, a code block).
func wrapper(n *html.Node) bool {
	switch n.DataAtom {
	case atom.Div, atom.Section, atom.Aside, atom.Footer, atom.Header, atom.Span, atom.Center,
		atom.Address, atom.Hr:
		return true
	}
	return n.DataAtom == 0 // a custom element
}

// isLinkList reports whether n holds text and linkListShare of it or more
// in links.
func isLinkList(n *html.Node, w map[*html.Node]weight) bool {
	nw := w[n]
	return nw.link > 0 && float64(nw.link) >= linkListShare*float64(nw.plain+nw.link)
}

// links counts the <a href> elements under n.
func links(n *html.Node) int {
	k := 0
	walk(n, func(c *html.Node) bool {
		if isElement(c, atom.A) && hasAttr(c, "href") {
			k++
		}
		return true
	})
	return k
}

// holdsHeading reports whether n is or holds a heading with words.
func holdsHeading(n *html.Node) bool {
	return findWhere(n, func(c *html.Node) bool { return headingLevel(c) > 0 && holdsWords(c) }) != nil
}

// headingLevel is 1 to 6 for <h1> to <h6>, else 0.
func headingLevel(n *html.Node) int {
	if n.Type != html.ElementNode || n.Namespace != "" {
		return 0
	}
	switch n.DataAtom {
	case atom.H1:
		return 1
	case atom.H2:
		return 2
	case atom.H3:
		return 3
	case atom.H4:
		return 4
	case atom.H5:
		return 5
	case atom.H6:
		return 6
	}
	return 0
}

// titleNames are the texts, folded by foldTitle, that name a page: its
// og:title, its <title> whole, the page's part of "Page | Site" and what
// follows "Project: " (page) and the other parts of the <title> and
// og:site_name (site).
func titleNames(scan *pageScan) (page, site map[string]bool) {
	page, site = map[string]bool{}, map[string]bool{}
	if t := scan.titleText(); t != "" {
		page[foldTitle(t)] = true
		page[foldTitle(pageTitle(t))] = true
		if _, rest, ok := strings.Cut(t, ": "); ok {
			page[foldTitle(rest)] = true
		}
		for _, part := range titleParts(t) {
			if f := foldTitle(part); !page[f] {
				site[f] = true
			}
		}
	}
	if t := scan.metaContent("og:title"); t != "" {
		page[foldTitle(t)] = true
	}
	if t := scan.metaContent("og:site_name"); t != "" {
		site[foldTitle(t)] = true
	}
	delete(page, "")
	return page, site
}

// titleHeading is the page's title heading under body: the first <h1>
// whose text names the page (titleNames), else the first heading of any
// level whose text does (named is true for either), else the first <h1>
// with words that does not name the site; nil when there is none. Hidden
// headings do not count.
func titleHeading(body *html.Node, scan *pageScan) (h *html.Node, named bool) {
	page, site := titleNames(scan)
	var firstH1, matchH1, matchAny *html.Node
	walk(body, func(n *html.Node) bool {
		if matchH1 != nil || n.Type != html.ElementNode {
			return matchH1 == nil
		}
		if removedTag(n.DataAtom) || invisible(n) || navigation(n) {
			return false
		}
		level := headingLevel(n)
		if level == 0 {
			return true
		}
		text := collapseSpace(textContent(n))
		if !hasWords(text) {
			return false
		}
		f := foldTitle(text)
		match := page[f]
		switch {
		case level == 1 && match:
			matchH1 = n
		case match && matchAny == nil:
			matchAny = n
		case level == 1 && firstH1 == nil && !site[f]:
			firstH1 = n
		}
		return false
	})
	switch {
	case matchH1 != nil:
		return matchH1, true
	case matchAny != nil:
		return matchAny, true
	}
	return firstH1, false
}

// titleElement is, for a page without a title heading, the element that
// shows its title as text (Doxygen's <div class="title">): the first
// element of only inline content whose text names the page, made an <h1>.
// nil when there is none.
func titleElement(body *html.Node, scan *pageScan) *html.Node {
	page, _ := titleNames(scan)
	if len(page) == 0 {
		return nil
	}
	var found *html.Node
	walk(body, func(n *html.Node) bool {
		if found != nil || n.Type != html.ElementNode {
			return found == nil
		}
		switch n.DataAtom {
		case atom.A, atom.Table, atom.Pre, atom.Title:
			return false
		case atom.Div, atom.P, atom.Span, atom.Strong, atom.B:
			if inlineOnly(n) && page[foldTitle(textContent(n))] {
				found = n
				return false
			}
		}
		return true
	})
	if found != nil {
		found.Data, found.DataAtom, found.Attr = "h1", atom.H1, nil
	}
	return found
}

// titleText is the text of the page's <title>.
func (s *pageScan) titleText() string {
	if s.title == nil {
		return ""
	}
	return collapseSpace(textContent(s.title))
}

// titleSplitter marks every separator of titleSeparators with a NUL.
var titleSplitter = func() *strings.Replacer {
	var pairs []string
	for _, sep := range titleSeparators {
		pairs = append(pairs, sep, "\x00")
	}
	return strings.NewReplacer(pairs...)
}()

// titleParts splits a title at every separator of titleSeparators.
func titleParts(t string) []string {
	return strings.Split(titleSplitter.Replace(t), "\x00")
}

// foldTitle lower-cases s and keeps only its letters and digits, one space
// between words, for comparing a heading with the page's title.
func foldTitle(s string) string {
	var b strings.Builder
	space := false
	for _, r := range strings.ToLower(s) {
		if isWordRune(r) {
			if space && b.Len() > 0 {
				b.WriteByte(' ')
			}
			space = false
			b.WriteRune(r)
		} else {
			space = true
		}
	}
	return b.String()
}

// leadWith makes the title heading the first thing of the container c:
// moved into c when it sits outside, to c's start when only text without
// headings comes before it; left where it is when it holds c.
func leadWith(c, title *html.Node) {
	if contains(title, c) {
		return // moving title into c would make it its own ancestor
	}
	if !contains(c, title) {
		title.Parent.RemoveChild(title)
		c.InsertBefore(title, c.FirstChild)
		return
	}
	headingFirst := false
	done := false
	walk(c, func(n *html.Node) bool {
		if done || headingFirst {
			return false
		}
		if n == title {
			done = true
			return false
		}
		if headingLevel(n) > 0 && holdsWords(n) {
			headingFirst = true
			return false
		}
		return true
	})
	if headingFirst || c.FirstChild == title {
		return
	}
	title.Parent.RemoveChild(title)
	c.InsertBefore(title, c.FirstChild)
}

// documentLike reports whether the page doc is shaped like documentation
// rather than an article: it shows code (a <pre>, a <code> element or a
// listing lineCode reads), an in-page table of contents (two links or more
// to the ids of its headings, outside them) or headings with permalinks
// (word-less links to a fragment inside a heading). Articles, which show
// none of these, are left to readability, whose class-name heuristics
// drop their comments and related stories.
func documentLike(doc *html.Node) bool {
	body := find(doc, atom.Body)
	if body == nil {
		return false
	}
	ids := map[string]bool{}
	code := false
	walk(body, func(n *html.Node) bool {
		if code || n.Type != html.ElementNode {
			return !code
		}
		switch {
		case removedTag(n.DataAtom), invisible(n):
			return false
		case isElement(n, atom.Pre), isElement(n, atom.Code):
			code = true
			return false
		}
		if headingLevel(n) > 0 {
			if id := attr(n, "id"); id != "" {
				ids[id] = true
			}
			walk(n, func(c *html.Node) bool {
				if isElement(c, atom.A) && isPermalink(c) {
					code = true // a permalink: as good a sign
				}
				return !code
			})
			return false
		}
		if _, ok := fragmentLines(n); ok {
			code = true
			return false
		}
		if _, ok := brokenLines(n); ok {
			code = true
			return false
		}
		return true
	})
	if code {
		return true
	}
	if len(ids) == 0 {
		return false
	}
	toc := 0
	walk(body, func(n *html.Node) bool {
		if toc >= 2 || headingLevel(n) > 0 {
			return false
		}
		if isElement(n, atom.A) {
			if href := strings.TrimSpace(attr(n, "href")); len(href) > 1 && href[0] == '#' && ids[href[1:]] {
				toc++
			}
		}
		return true
	})
	return toc >= 2
}

// leadWithTitle is the Markdown md with "# title" as its first line, unless
// md has a heading of that text already or no words (title "" leaves md
// as it is).
func leadWithTitle(md, title string) string {
	if title == "" || !hasWords(md) {
		return md
	}
	want := foldTitle(title)
	for line := range strings.Lines(md) {
		if t, ok := strings.CutPrefix(line, "#"); ok && foldTitle(strings.TrimLeft(t, "#")) == want {
			return md
		}
	}
	return "# " + escapeHeading(title) + "\n\n" + md
}

// articleTypes are the schema.org types of articles, as JSON-LD and
// microdata name them.
var articleTypes = []string{"Article", "BlogPosting", "NewsArticle", "Report", "LiveBlogPosting", "OpinionNewsArticle"}

// articleLike reports whether the page declares itself an article: an
// og:type of "article", article:* meta properties (published_time,
// author, section), a JSON-LD or microdata type of articleTypes.
func articleLike(doc *html.Node, scan *pageScan) bool {
	for _, m := range scan.metas {
		prop := strings.ToLower(strings.TrimSpace(attr(m, "property")))
		if prop == "" {
			prop = strings.ToLower(strings.TrimSpace(attr(m, "name")))
		}
		if prop == "og:type" && strings.EqualFold(strings.TrimSpace(attr(m, "content")), "article") || strings.HasPrefix(prop, "article:") {
			return true
		}
	}
	found := false
	walk(doc, func(n *html.Node) bool {
		if found || n.Type != html.ElementNode {
			return !found
		}
		if isElement(n, atom.Script) {
			if strings.EqualFold(strings.TrimSpace(attr(n, "type")), "application/ld+json") {
				for c := n.FirstChild; c != nil && !found; c = c.NextSibling {
					found = c.Type == html.TextNode && namesArticleType(c.Data, `"`)
				}
			}
			return false
		}
		if t := attr(n, "itemtype"); t != "" {
			found = namesArticleType(t, "/")
		}
		return !found
	})
	return found
}

// namesArticleType reports whether s names one of articleTypes right
// after the delimiter before (a quote in JSON, a slash in a schema.org
// URL) and before a quote, a slash or the end.
func namesArticleType(s, before string) bool {
	for _, t := range articleTypes {
		for i := strings.Index(s, before+t); i >= 0; {
			end := i + len(before) + len(t)
			if end == len(s) || s[end] == '"' || s[end] == '/' || s[end] == ' ' {
				return true
			}
			j := strings.Index(s[end:], before+t)
			if j < 0 {
				break
			}
			i = end + j
		}
	}
	return false
}

// dropCodeLabels removes from under root the labels that name a code
// block's language beside it (a "go" or "bash" over the block, as
// VitePress and many themes show): elements next to the <pre>, or next to
// its wrapper up to two levels above it, whose whole text is the block's
// language.
func dropCodeLabels(root *html.Node) {
	var labels []*html.Node
	walk(root, func(n *html.Node) bool {
		if !isElement(n, atom.Pre) {
			return true
		}
		lang := codeLang(n)
		if lang == "" {
			return false
		}
		for p, i := n, 0; p != nil && p != root && i < 3; p, i = p.Parent, i+1 {
			for s := p.Parent.FirstChild; s != nil; s = s.NextSibling {
				if s != p && s.Type == html.ElementNode && !holdsElement(s, atom.Pre) && strings.EqualFold(collapseSpace(textContent(s)), lang) {
					labels = append(labels, s)
				}
			}
		}
		return false
	})
	for _, l := range labels {
		if l.Parent != nil {
			l.Parent.RemoveChild(l)
		}
	}
}

// holdsElement reports whether n is or holds an element of atom a.
func holdsElement(n *html.Node, a atom.Atom) bool {
	return isElement(n, a) || find(n, a) != nil
}
