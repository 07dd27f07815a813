package quality

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"unicode"

	"golang.org/x/net/html"
	"golang.org/x/text/unicode/norm"
)

// DocCase is one page of the docsites corpus (testdata/docsites, see its
// README.md) with its ground truth.
type DocCase struct {
	Site      string `json:"site"`
	Generator string `json:"generator"`
	File      string `json:"file"`
	CleanFile string `json:"clean_file"`
	URL       string `json:"url"`
	// Title is the page's H1.
	Title string `json:"title"`
	// Headings are [level, text] pairs in document order.
	Headings   [][2]any `json:"headings"`
	CodeBlocks []string `json:"code_blocks"`
	// CodeLangs holds, per code block, the language its HTML names ("" for none).
	CodeLangs []string `json:"code_langs"`
	// Tables are [[header cells], row count] pairs.
	Tables     [][2]any `json:"tables"`
	Text       string   `json:"text"`
	NavPhrases []string `json:"nav_phrases"`

	// Short is true for the pages of short/.
	Short bool `json:"-"`
	// HTML is the page as committed; Dir the directory File is relative to.
	HTML []byte `json:"-"`
	Dir  string `json:"-"`
}

// LoadDocsites reads dir/cases.jsonl and dir/short/cases.jsonl with every
// page's HTML.
func LoadDocsites(dir string) ([]DocCase, error) {
	var out []DocCase
	for _, sub := range []string{"", "short"} {
		d := filepath.Join(dir, sub)
		f, err := os.Open(filepath.Join(d, "cases.jsonl"))
		if err != nil {
			return nil, fmt.Errorf("quality: docsites: %w", err)
		}
		sc := bufio.NewScanner(f)
		sc.Buffer(nil, 64<<20)
		for sc.Scan() {
			var c DocCase
			if err := json.Unmarshal(sc.Bytes(), &c); err != nil {
				f.Close()
				return nil, fmt.Errorf("quality: docsites %s: %w", d, err)
			}
			c.Short = sub != ""
			c.Dir = d
			if c.HTML, err = readGzip(filepath.Join(d, c.File)); err != nil {
				f.Close()
				return nil, fmt.Errorf("quality: docsites: %w", err)
			}
			out = append(out, c)
		}
		err = sc.Err()
		f.Close()
		if err != nil {
			return nil, fmt.Errorf("quality: docsites %s: %w", d, err)
		}
	}
	return out, nil
}

// CleanHTML is the page's ground-truth container with in-container chrome
// removed, as the corpus commits it.
func (c DocCase) CleanHTML() ([]byte, error) {
	return readGzip(filepath.Join(c.Dir, c.CleanFile))
}

// DocScore is one page's scores. A metric that does not apply to the page
// (no code blocks, fewer than two kept headings...) is NaN-free: its
// applies flag is false and its value 0.
type DocScore struct {
	Title, H1, HeadingRecall, LevelOrder, CodeRecall, LangRecall, TableRecall, F1, NavLeak float64

	HasTitle, HasHeadings, HasLevelOrder, HasCode, HasLang, HasTables, HasNav bool
}

// DocMetrics are averages over pages; each metric over the pages where it
// applies.
type DocMetrics struct {
	Pages                                                                     int
	Title, H1, HeadingRecall, LevelOrder, CodeRecall, LangRecall, TableRecall float64
	F1, NavLeak                                                               float64
}

// docText is the visible text of rendered Markdown for the docsites
// metrics: Markdown syntax, link targets and images stripped, NFKC,
// whitespace collapsed.
func docText(n *html.Node) string {
	var b strings.Builder
	var walk func(*html.Node)
	walk = func(n *html.Node) {
		switch n.Type {
		case html.TextNode:
			b.WriteString(n.Data)
			return
		case html.ElementNode:
			if n.Data == "img" {
				return
			}
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			walk(c)
		}
		if n.Type == html.ElementNode {
			b.WriteByte(' ')
		}
	}
	walk(n)
	return normText(b.String())
}

// normText is s after Unicode NFKC with white space collapsed.
func normText(s string) string {
	return strings.Join(strings.Fields(norm.NFKC.String(s)), " ")
}

// fold lower-cases s and folds punctuation to spaces, for comparing
// heading texts and phrases.
func fold(s string) string {
	s = strings.ToLower(norm.NFKC.String(s))
	s = strings.Map(func(r rune) rune {
		if unicode.IsLetter(r) || unicode.IsNumber(r) {
			return r
		}
		return ' '
	}, s)
	return strings.Join(strings.Fields(s), " ")
}

// mdHeading is a heading of the Markdown.
type mdHeading struct {
	level int
	text  string
}

// parsedMarkdown is what the metrics read from the Markdown.
type parsedMarkdown struct {
	headings []mdHeading
	code     []string   // fenced code text, white space removed
	langs    []string   // each fence's language
	tables   [][]string // first row cells, normalised
	text     string
}

func parseMarkdown(md string) parsedMarkdown {
	var out parsedMarkdown
	var buf bytes.Buffer
	if err := markdown.Convert([]byte(md), &buf); err != nil {
		out.text = normText(md)
		return out
	}
	doc, err := html.Parse(&buf)
	if err != nil {
		out.text = normText(md)
		return out
	}
	var walk func(*html.Node)
	walk = func(n *html.Node) {
		if n.Type == html.ElementNode {
			switch n.Data {
			case "h1", "h2", "h3", "h4", "h5", "h6":
				out.headings = append(out.headings, mdHeading{level: int(n.Data[1] - '0'), text: docText(n)})
				return
			case "pre":
				out.code = append(out.code, noSpace(rawText(n)))
				out.langs = append(out.langs, codeLang(n))
				return
			case "table":
				out.tables = append(out.tables, headRow(n))
			}
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			walk(c)
		}
	}
	walk(doc)
	out.text = docText(doc)
	return out
}

// headRow is the cells of a pipe table's header row; when that row says
// nothing of the columns (its cells all empty, or one spanning caption
// mirrored into each), the first row that does, as a table without header
// cells has its first row of data there.
func headRow(table *html.Node) []string {
	var rows [][]string
	var walk func(*html.Node)
	walk = func(n *html.Node) {
		if len(rows) >= 2 {
			return
		}
		if n.Type == html.ElementNode && n.Data == "tr" {
			var cells []string
			for c := n.FirstChild; c != nil; c = c.NextSibling {
				if c.Type == html.ElementNode && (c.Data == "th" || c.Data == "td") {
					cells = append(cells, docText(c))
				}
			}
			rows = append(rows, cells)
			return
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			walk(c)
		}
	}
	walk(table)
	if len(rows) == 0 {
		return nil
	}
	if len(rows) > 1 && uninformative(rows[0]) {
		return rows[1]
	}
	return rows[0]
}

func uninformative(cells []string) bool {
	for _, c := range cells {
		if c != "" && c != cells[0] {
			return false
		}
	}
	return len(cells) == 0 || cells[0] == "" || len(cells) > 1
}

func rawText(n *html.Node) string {
	var b strings.Builder
	var walk func(*html.Node)
	walk = func(n *html.Node) {
		if n.Type == html.TextNode {
			b.WriteString(n.Data)
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			walk(c)
		}
	}
	walk(n)
	return norm.NFKC.String(b.String())
}

func noSpace(s string) string {
	return strings.Map(func(r rune) rune {
		if unicode.IsSpace(r) {
			return -1
		}
		return r
	}, s)
}

// codeLang is the language goldmark wrote for a fence's info string.
func codeLang(pre *html.Node) string {
	for c := pre.FirstChild; c != nil; c = c.NextSibling {
		if c.Type == html.ElementNode && c.Data == "code" {
			for _, a := range c.Attr {
				if a.Key == "class" {
					for _, t := range strings.Fields(a.Val) {
						if l, ok := strings.CutPrefix(t, "language-"); ok {
							return l
						}
					}
				}
			}
		}
	}
	return ""
}

// ScoreDoc scores one page given the title and Markdown an extractor
// returned, with the metrics of the corpus README.
func ScoreDoc(c DocCase, title, md string) DocScore {
	p := parseMarkdown(md)
	var s DocScore

	// title and h1.
	want := fold(c.Title)
	s.HasTitle = want != ""
	if s.HasTitle && len(p.headings) > 0 && fold(p.headings[0].text) == want {
		s.H1, s.Title = 1, 1
	}
	if s.Title == 0 && want != "" {
		if fold(title) == want {
			s.Title = 1
		}
		for _, part := range titleParts(title) {
			if fold(part) == want {
				s.Title = 1
			}
		}
	}

	// heading recall and level order.
	if len(c.Headings) > 0 {
		s.HasHeadings = true
		used := make([]bool, len(p.headings))
		type kept struct{ truth, got int }
		var keep []kept
		for _, h := range c.Headings {
			lvl, text := headingOf(h)
			ft := fold(text)
			for j, mh := range p.headings {
				if !used[j] && fold(mh.text) == ft {
					used[j] = true
					keep = append(keep, kept{lvl, mh.level})
					break
				}
			}
		}
		s.HeadingRecall = float64(len(keep)) / float64(len(c.Headings))
		if len(keep) >= 2 {
			s.HasLevelOrder = true
			same := 0
			for i := 1; i < len(keep); i++ {
				if cmp(keep[i].truth, keep[i-1].truth) == cmp(keep[i].got, keep[i-1].got) {
					same++
				}
			}
			s.LevelOrder = float64(same) / float64(len(keep)-1)
		}
	}

	// code blocks and their languages.
	if len(c.CodeBlocks) > 0 {
		s.HasCode = true
		langs := p.langs
		found, withLang, langOK := 0, 0, 0
		for i, block := range c.CodeBlocks {
			at := findCode(noSpace(norm.NFKC.String(block)), p.code)
			if at >= 0 {
				found++
			}
			if i < len(c.CodeLangs) && c.CodeLangs[i] != "" {
				withLang++
				if at >= 0 && at < len(langs) && strings.EqualFold(langs[at], c.CodeLangs[i]) {
					langOK++
				}
			}
		}
		s.CodeRecall = float64(found) / float64(len(c.CodeBlocks))
		if withLang > 0 {
			s.HasLang = true
			s.LangRecall = float64(langOK) / float64(withLang)
		}
	}

	// tables.
	if len(c.Tables) > 0 {
		s.HasTables = true
		used := make([]bool, len(p.tables))
		found := 0
		for _, t := range c.Tables {
			head := tableHead(t)
			for j, mt := range p.tables {
				if !used[j] && equalCells(head, mt) {
					used[j] = true
					found++
					break
				}
			}
		}
		s.TableRecall = float64(found) / float64(len(c.Tables))
	}

	s.F1 = tokenF1(normText(c.Text), p.text)

	if len(c.NavPhrases) > 0 {
		s.HasNav = true
		text := " " + fold(p.text) + " "
		leaked := 0
		for _, ph := range c.NavPhrases {
			if f := fold(ph); f != "" && strings.Contains(text, " "+f+" ") {
				leaked++
			}
		}
		s.NavLeak = float64(leaked) / float64(len(c.NavPhrases))
	}
	return s
}

func cmp(a, b int) int {
	switch {
	case a > b:
		return 1
	case a < b:
		return -1
	}
	return 0
}

// titleSeparators split "Page - Site" titles into their parts.
var titleSeparators = []string{" - ", " | ", " — ", " – ", " · ", " :: ", " » ", " : "}

func titleParts(t string) []string {
	parts := []string{t}
	for _, sep := range titleSeparators {
		var next []string
		for _, p := range parts {
			next = append(next, strings.Split(p, sep)...)
		}
		parts = next
	}
	return parts
}

func headingOf(h [2]any) (int, string) {
	lvl, _ := h[0].(float64)
	text, _ := h[1].(string)
	return int(lvl), text
}

func tableHead(t [2]any) []string {
	raw, _ := t[0].([]any)
	out := make([]string, len(raw))
	for i, c := range raw {
		s, _ := c.(string)
		out[i] = normText(s)
	}
	return out
}

func equalCells(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if normText(a[i]) != normText(b[i]) {
			return false
		}
	}
	return true
}

// findCode returns the index of the first fenced block that contains
// block, or covers at least 90% of its characters in order (longest common
// subsequence); -1 when none does.
func findCode(block string, fences []string) int {
	if block == "" {
		return -1
	}
	for i, f := range fences {
		if strings.Contains(f, block) {
			return i
		}
	}
	want := []rune(block)
	for i, f := range fences {
		fr := []rune(f)
		if float64(len(fr)) < 0.9*float64(len(want)) {
			continue
		}
		if float64(lcs(want, fr)) >= 0.9*float64(len(want)) {
			return i
		}
	}
	return -1
}

// lcs is the length of the longest common subsequence of a and b, computed
// bit-parallel (Hyyrö 2004) in O(len(a)·len(b)/64).
func lcs(a, b []rune) int {
	words := (len(a) + 63) / 64
	masks := map[rune][]uint64{}
	for i, r := range a {
		m := masks[r]
		if m == nil {
			m = make([]uint64, words)
			masks[r] = m
		}
		m[i/64] |= 1 << (i % 64)
	}
	v := make([]uint64, words)
	for i := range v {
		v[i] = ^uint64(0)
	}
	for _, r := range b {
		m := masks[r]
		if m == nil {
			continue
		}
		var carry uint64
		for k := range words {
			u := v[k] & m[k]
			sum := v[k] + u
			c1 := uint64(0)
			if sum < v[k] {
				c1 = 1
			}
			sum2 := sum + carry
			if sum2 < sum {
				c1 = 1
			}
			carry = c1
			v[k] = sum2 | (v[k] - u)
		}
	}
	n := 0
	for i, w := range v {
		for bit := 0; bit < 64 && i*64+bit < len(a); bit++ {
			if w&(1<<bit) == 0 {
				n++
			}
		}
	}
	return n
}

// tokenF1 is the bag-of-words F1 of pred against truth (tokens as in
// Tokens, lower-cased).
func tokenF1(truth, pred string) float64 {
	tt, pt := bag(truth), bag(pred)
	var nt, np, both int
	for w, n := range tt {
		nt += n
		both += min(n, pt[w])
	}
	for _, n := range pt {
		np += n
	}
	if nt == 0 && np == 0 {
		return 1
	}
	if both == 0 {
		return 0
	}
	p, r := float64(both)/float64(np), float64(both)/float64(nt)
	return 2 * p * r / (p + r)
}

func bag(s string) map[string]int {
	out := map[string]int{}
	for _, t := range Tokens(strings.ToLower(s)) {
		out[t]++
	}
	return out
}

// SummarizeDocs averages scores per generator and over all pages ("all"
// key), each metric over the pages where it applies: title and h1 where
// the page has an H1, token F1 everywhere.
func SummarizeDocs(cases []DocCase, scores []DocScore) map[string]DocMetrics {
	type acc struct {
		n   int
		sum [9]float64
		cnt [9]int
	}
	groups := map[string]*acc{}
	add := func(key string, s DocScore) {
		a := groups[key]
		if a == nil {
			a = &acc{}
			groups[key] = a
		}
		a.n++
		vals := [9]float64{s.Title, s.H1, s.HeadingRecall, s.LevelOrder, s.CodeRecall, s.LangRecall, s.TableRecall, s.F1, s.NavLeak}
		ok := [9]bool{s.HasTitle, s.HasTitle, s.HasHeadings, s.HasLevelOrder, s.HasCode, s.HasLang, s.HasTables, true, s.HasNav}
		for i := range vals {
			if ok[i] {
				a.sum[i] += vals[i]
				a.cnt[i]++
			}
		}
	}
	for i, c := range cases {
		add(c.Generator, scores[i])
		add("all", scores[i])
	}
	out := map[string]DocMetrics{}
	for k, a := range groups {
		var m [9]float64
		for i := range m {
			if a.cnt[i] > 0 {
				m[i] = a.sum[i] / float64(a.cnt[i])
			} else {
				m[i] = 1 // nothing to find: nothing lost
				if i == 8 {
					m[i] = 0
				}
			}
		}
		out[k] = DocMetrics{Pages: a.n, Title: m[0], H1: m[1], HeadingRecall: m[2], LevelOrder: m[3],
			CodeRecall: m[4], LangRecall: m[5], TableRecall: m[6], F1: m[7], NavLeak: m[8]}
	}
	return out
}

// FormatDocMetrics renders metrics as a Markdown table, generators sorted,
// "all" last.
func FormatDocMetrics(ms map[string]DocMetrics) string {
	keys := make([]string, 0, len(ms))
	for k := range ms {
		if k != "all" {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	if _, ok := ms["all"]; ok {
		keys = append(keys, "all")
	}
	var b strings.Builder
	b.WriteString("| generator | pages | title | h1 | headings | level order | code | lang | tables | token F1 | nav leak |\n|---|---|---|---|---|---|---|---|---|---|---|\n")
	for _, k := range keys {
		m := ms[k]
		fmt.Fprintf(&b, "| %s | %d | %.3f | %.3f | %.3f | %.3f | %.3f | %.3f | %.3f | %.3f | %.3f |\n",
			k, m.Pages, m.Title, m.H1, m.HeadingRecall, m.LevelOrder, m.CodeRecall, m.LangRecall, m.TableRecall, m.F1, m.NavLeak)
	}
	return b.String()
}

// CaseOf is a DocCase for a page a test writes the truth of by hand: the
// title, headings as [level, text] pairs (level an int), code blocks,
// tables by their header cells and nav phrases.
func CaseOf(title string, headings [][2]any, code []string, tables [][]string, nav []string) DocCase {
	c := DocCase{Title: title, CodeBlocks: code, NavPhrases: nav}
	for _, h := range headings {
		level, _ := h[0].(int)
		c.Headings = append(c.Headings, [2]any{float64(level), h[1]})
	}
	for _, t := range tables {
		cells := make([]any, len(t))
		for i, s := range t {
			cells[i] = s
		}
		c.Tables = append(c.Tables, [2]any{cells, 0.0})
	}
	return c
}
