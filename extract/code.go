package extract

import (
	"regexp"
	"strings"
	"unicode/utf8"

	"golang.org/x/net/html"
	"golang.org/x/net/html/atom"
)

// validLang is what a fenced code block's info string may hold.
var validLang = regexp.MustCompile(`^[A-Za-z0-9_+#.-]{1,32}$`)

// noLang are class suffixes that name no language.
var noLang = map[string]bool{"none": true, "default": true, "nohighlight": true}

// lineNumberClasses (lower case, each with an "l" or a "g": isGutter relies
// on it) mark line-number gutters inside or beside code blocks
// (Pygments/Sphinx, Chroma/Hugo, Rouge/Jekyll, highlight.js, Prism).
var lineNumberClasses = map[string]bool{
	"linenos": true, "linenodiv": true, "lineno": true, "lnt": true, "ln": true,
	"gutter": true, "line-numbers-rows": true, "hljs-ln-numbers": true,
	"line-number": true, "code-line-number": true, "rouge-gutter": true,
}

// normalizeCode rewrites every code block to the one shape both the
// extractor and the Markdown converter keep intact:
// <pre><code class="language-x">plain text</code></pre>. Highlighter
// markup (a span per token, a <br> or a <div> per line), line-number
// gutters and line-number tables are flattened away; the language is read
// from the classes and data attributes that Prism, highlight.js, Pygments,
// Rouge, Chroma, Shiki, GitHub and Pandoc put on the block or its
// wrappers. It returns the language classes it wrote.
func normalizeCode(doc *html.Node) []string {
	var pres []*html.Node
	walk(doc, func(n *html.Node) bool {
		if isElement(n, atom.Pre) {
			pres = append(pres, n)
			return false
		}
		return true
	})
	langs := make(map[*html.Node]string, len(pres))
	for _, pre := range pres {
		langs[pre] = codeLang(pre)
	}
	for _, pre := range pres {
		unwrapLineNumberTable(pre, langs)
	}
	var classes []string
	seen := map[string]bool{}
	for _, pre := range pres {
		if pre.Parent == nil {
			continue // a gutter removed with its table
		}
		text := codeText(pre)
		for c := pre.FirstChild; c != nil; c = pre.FirstChild {
			pre.RemoveChild(c)
		}
		pre.Attr = nil
		code := &html.Node{Type: html.ElementNode, Data: "code", DataAtom: atom.Code}
		if lang := langs[pre]; lang != "" {
			class := "language-" + lang
			code.Attr = []html.Attribute{{Key: "class", Val: class}}
			if !seen[class] {
				seen[class] = true
				classes = append(classes, class)
			}
		}
		code.AppendChild(&html.Node{Type: html.TextNode, Data: text})
		pre.AppendChild(code)
	}
	return classes
}

// codeLang finds the language of the code block pre: on the block or a
// <code> inside it first, then on up to three wrapping elements.
func codeLang(pre *html.Node) string {
	var lang string
	walk(pre, func(n *html.Node) bool {
		if lang != "" {
			return false
		}
		if n.Type == html.ElementNode && (n == pre || n.DataAtom == atom.Code) {
			lang = langOf(n, true)
		}
		return true
	})
	for p, i := pre.Parent, 0; lang == "" && p != nil && i < 3; p, i = p.Parent, i+1 {
		lang = langOf(p, false)
	}
	return lang
}

var (
	// ownPrefixes name the language in a class of <pre> or <code>.
	ownPrefixes = []string{"language-", "lang-"}
	// wrapperPrefixes name it in a class of a wrapping element: Prism,
	// Rouge and MkDocs use "language-x", GitHub "highlight-source-x",
	// Pygments/Sphinx "highlight-x".
	wrapperPrefixes = []string{"language-", "highlight-source-", "highlight-"}
)

// langOf reads a language from one element's attributes. own is true for
// the <pre> or <code> element itself, where a bare class word after
// "sourceCode" (Pandoc) or "brush:" (SyntaxHighlighter) names it too.
func langOf(n *html.Node, own bool) string {
	for _, key := range []string{"data-lang", "data-language", "language"} {
		if v := strings.ToLower(strings.TrimSpace(attr(n, key))); v != "" {
			return cleanLang(v)
		}
	}
	class := attr(n, "class")
	tokens := strings.Fields(strings.ToLower(class))
	for i, t := range tokens {
		prefixes := wrapperPrefixes
		if own {
			prefixes = ownPrefixes
		}
		for _, prefix := range prefixes {
			if rest, ok := strings.CutPrefix(t, prefix); ok {
				return cleanLang(rest)
			}
		}
		if own && i+1 < len(tokens) && (t == "sourcecode" || t == "brush:") {
			return cleanLang(strings.TrimSuffix(tokens[i+1], ";"))
		}
		if own {
			if rest, ok := strings.CutPrefix(t, "brush:"); ok && rest != "" {
				return cleanLang(strings.TrimSuffix(rest, ";"))
			}
		}
	}
	return ""
}

func cleanLang(s string) string {
	if noLang[s] || !validLang.MatchString(s) {
		return ""
	}
	return s
}

// unwrapLineNumberTable replaces a table that lays out a line-number
// gutter beside a code block (Pygments "highlighttable", Chroma "lntable",
// Rouge "rouge-table") with the code block alone.
func unwrapLineNumberTable(pre *html.Node, langs map[*html.Node]string) {
	if pre.Parent == nil {
		return
	}
	var table *html.Node
	for p := pre.Parent; p != nil; p = p.Parent {
		if isElement(p, atom.Table) {
			table = p
			break
		}
		if isElement(p, atom.Body) {
			return
		}
	}
	if table == nil {
		return
	}
	// Every cell must hold a code block or a gutter, and exactly one code
	// block may hold something other than line numbers.
	var code *html.Node
	ok := true
	walk(table, func(n *html.Node) bool {
		if !ok {
			return false
		}
		if isElement(n, atom.Td) || isElement(n, atom.Th) {
			var cellPre *html.Node
			walk(n, func(c *html.Node) bool {
				if isElement(c, atom.Pre) {
					cellPre = c
					return false
				}
				return true
			})
			switch {
			case cellPre == nil:
				ok = strings.TrimSpace(textContent(n)) == "" || isGutter(n)
			case isGutter(n) || onlyDigits(textContent(cellPre)):
				// a gutter
			case code != nil:
				ok = false
			default:
				code = cellPre
			}
			return false
		}
		return true
	})
	if !ok || code == nil || table.Parent == nil {
		return
	}
	walk(table, func(n *html.Node) bool {
		if isElement(n, atom.Pre) && n != code {
			n.Parent.RemoveChild(n)
			return false
		}
		return true
	})
	code.Parent.RemoveChild(code)
	table.Parent.InsertBefore(code, table)
	table.Parent.RemoveChild(table)
}

func isGutter(n *html.Node) bool {
	if n.Type != html.ElementNode {
		return false
	}
	class := attr(n, "class")
	// Every gutter class holds an "l" or a "g", which no rune beyond ASCII
	// lower-cases to: most token classes of highlighters hold neither.
	if !hasLOrG(class) {
		return false
	}
	for i := 0; i < len(class); i++ {
		if class[i] >= utf8.RuneSelf || class[i] == '\v' {
			// strings.Fields splits at \v and Unicode spaces too.
			for _, t := range strings.Fields(class) {
				if lineNumberClasses[strings.ToLower(t)] {
					return true
				}
			}
			return false
		}
	}
	gutter := false
	eachClass(class, func(t string) {
		gutter = gutter || lineNumberClasses[strings.ToLower(t)]
	})
	return gutter
}

// hasLOrG reports whether s holds an ASCII "l" or "g" of either case.
func hasLOrG(s string) bool {
	for i := 0; i < len(s); i++ {
		switch s[i] | 0x20 {
		case 'l', 'g':
			return true
		}
	}
	return false
}

func onlyDigits(s string) bool {
	s = strings.TrimSpace(s)
	if s == "" {
		return false
	}
	for _, r := range s {
		if !(r >= '0' && r <= '9') && r != ' ' && r != '\n' && r != '\t' && r != '\r' {
			return false
		}
	}
	return true
}

// blockInCode reports whether elements of atom a start a new line inside a
// code block.
func blockInCode(a atom.Atom) bool {
	switch a {
	case atom.Div, atom.P, atom.Li, atom.Tr, atom.Table,
		atom.Ul, atom.Ol, atom.Pre, atom.Section:
		return true
	}
	return false
}

// codeText is the plain text of a code block: <br> and block elements
// become line breaks, line-number gutters and buttons are skipped.
func codeText(pre *html.Node) string {
	var b strings.Builder
	newline := func() {
		if b.Len() > 0 && !strings.HasSuffix(b.String(), "\n") {
			b.WriteByte('\n')
		}
	}
	var visit func(n *html.Node)
	visit = func(n *html.Node) {
		switch n.Type {
		case html.TextNode:
			b.WriteString(n.Data)
			return
		case html.ElementNode:
			if n.DataAtom == atom.Br {
				b.WriteByte('\n')
				return
			}
			if n.DataAtom == atom.Button || n.DataAtom == atom.Script || n.DataAtom == atom.Style || isGutter(n) {
				return
			}
		}
		block := n != pre && n.Type == html.ElementNode && blockInCode(n.DataAtom)
		if block {
			newline()
		}
		before := b.Len()
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			visit(c)
		}
		if block {
			if b.Len() == before && before > 0 && (n.DataAtom == atom.Div || n.DataAtom == atom.P || n.DataAtom == atom.Li) {
				// An empty line element is a blank line of the code.
				b.WriteByte('\n')
			}
			newline()
		}
	}
	visit(pre)
	out := strings.TrimRight(b.String(), "\n")
	if strings.IndexByte(out, '\n') < 0 {
		// One line, or lines written an element each with nothing
		// between them (a <span> a line that the page's style shows as
		// a block).
		if lines := elementLines(pre); lines != nil {
			return strings.Join(lines, "\n")
		}
	}
	return out
}

// elementLines reads a code block whose text holds no line break as lines
// written an element each: the children of the <pre>, or of its only
// <code>, are two or more elements of one kind, each with a class word
// "line" (lineElement), and no text but white space. It is nil for any
// other block.
func elementLines(pre *html.Node) []string {
	box := pre
	if only := onlyChild(pre); only != nil && isElement(only, atom.Code) {
		box = only
	}
	var lines []string
	kind := ""
	for c := box.FirstChild; c != nil; c = c.NextSibling {
		switch c.Type {
		case html.TextNode:
			if strings.TrimSpace(c.Data) != "" {
				return nil
			}
			continue
		case html.ElementNode:
		default:
			continue
		}
		if c.DataAtom == atom.Button || isGutter(c) {
			continue
		}
		if kind == "" {
			kind = c.Data
		}
		if c.Data != kind || !lineElement(c) {
			return nil
		}
		lines = append(lines, codeText(c))
	}
	if len(lines) < 2 {
		return nil
	}
	return lines
}

// onlyChild is n's one element child when n has no other child but white
// space and comments; nil otherwise.
func onlyChild(n *html.Node) *html.Node {
	var only *html.Node
	for c := n.FirstChild; c != nil; c = c.NextSibling {
		switch {
		case c.Type == html.TextNode && strings.TrimSpace(c.Data) == "", c.Type == html.CommentNode:
		case c.Type == html.ElementNode && only == nil:
			only = c
		default:
			return nil
		}
	}
	return only
}
