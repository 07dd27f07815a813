package extract

import (
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"
	"unicode/utf8"

	"github.com/JohannesKaufmann/html-to-markdown/v2/converter"
	"github.com/stretchr/testify/require"
	"golang.org/x/net/html"
)

// sharedCorpus is the project's shared corpus of real pages
// (../shared/corpus from the repository root); tests that read it skip
// what is missing.
const sharedCorpus = "../../shared/corpus"

var (
	libraryConverters      = sync.Pool{New: func() any { return libraryMarkdown(true) }}
	libraryPlainConverters = sync.Pool{New: func() any { return libraryMarkdown(false) }}
)

// libraryConvert is convert with the library's converters, which escape
// with the library's EscapeContent.
func libraryConvert(root *html.Node, opts ...converter.ConvertOptionFunc) ([]byte, error) {
	dropBlockSpace(root)
	pool := &libraryPlainConverters
	if holdsTable(root) {
		pool = &libraryConverters
	}
	return convertWith(pool, root, opts...)
}

// wholeTree converts the whole parsed body with the converter, with or
// without the table plugin, that mk makes.
func wholeTree(t testing.TB, mk func(bool) *converter.Converter, tables bool, body []byte) ([]byte, error) {
	t.Helper()
	doc, err := html.Parse(bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	return mk(tables).ConvertNode(doc, converter.WithDomain("https://example.com/a/b"))
}

// requireSameMarkdown requires the same Markdown of body from the
// library's converters and the package's: of the whole tree, with and
// without the table plugin, and from fromHTML.
func requireSameMarkdown(t testing.TB, name string, body []byte, pageURL string, opts Options) {
	t.Helper()
	for _, tables := range []bool{true, false} {
		want, wantErr := wholeTree(t, libraryMarkdown, tables, body)
		got, err := wholeTree(t, newMarkdown, tables, body)
		require.Equal(t, wantErr, err, "%s (tables %v)", name, tables)
		if !bytes.Equal(want, got) {
			require.Equal(t, string(want), string(got), "%s (tables %v)", name, tables)
		}
	}
	want, wantErr := fromHTML(body, pageURL, opts, libraryConvert)
	got, err := fromHTML(body, pageURL, opts, convert)
	require.Equal(t, wantErr, err, name)
	require.Equal(t, want, got, name)
}

// escapeCases are hand-written pages with Markdown characters everywhere.
var escapeCases = []string{
	"<p>*_-+.>|$#=[]()!~`\"'\\ and &lt;tag&gt; &amp; &quot; &#39;</p>",
	"<p>a\x00b <b>\x00</b> é*ü _ü_ 日本*語 [日]本 \xff*\xfe \xe2\x82*</p>",
	"<p>1. not a list</p><p>- not a list</p><p># not a heading</p><p>+ plus</p><p>> quote</p>",
	"<p>1) paren</p><p>10. ten</p><p>=== </p><p>---</p><p>***</p><p>___</p><p>~~~</p><p>```</p>",
	"<ul><li>1. item</li><li>- dash</li><li># hash</li><li>* star</li><li><p>2. para</p><p>- second</p></li></ul>",
	"<ol start=\"3\"><li>a*b</li><li><ul><li>nested [x]</li><li>deeper<ol><li>1. x</li></ol></li></ul></li></ol>",
	"<p><a href=\"/x\">link [with] brackets] and *stars*</a> <a href=\"/y\"><b>b]</b> ]]</a></p>",
	"<p><a href=\"/x\" title=\"t [a] &quot;q&quot;\">a\\]b</a> <a href=\"\">empty href *x*</a> <a href=\"/z\"> </a></p>",
	"<p><a href=\"/x\"><img src=\"/i.png\" alt=\"alt [x] *y*\"> caption_1</a></p>",
	"<table><tr><th>a|b</th><th>*c*</th></tr><tr><td>1|2</td><td>- x</td></tr><tr><td>`q`</td><td><a href=\"/l\">l|]</a></td></tr></table>",
	"<table><caption>cap | *x*</caption><thead><tr><td>h_1</td></tr></thead><tbody><tr><td rowspan=2>1. a<br>- b</td></tr><tr><td># c</td></tr></tbody></table>",
	"<h1>Title *with* _marks_ #1</h1><h2>=== under</h2><h3># hash</h3><h4>a<br>b</h4><h5>[x](y)</h5><h6>-</h6>",
	"<p>code <code>a*b_c `d` [e]</code> and <kbd>Ctrl+C</kbd> <var>x_1</var> <samp>$ ls</samp> <tt>|</tt></p>",
	"<pre><code class=\"language-go\">func f() { x := a*b; _ = [1]int{} // #comment\n\tif x > 1 { return `s` }\n}</code></pre>",
	"<pre>plain *pre* _text_\n# not heading\n1. not list</pre><pre><b>bold</b> in pre</pre>",
	"<blockquote><p>> quoted *text*</p><blockquote><p>nested # x</p></blockquote><ul><li>- li</li></ul></blockquote>",
	"<p>line one<br>line two *x*<br><br>- line three</p><p>trailing  <br></p>",
	"<div>text\\ back\\\\slash \\* \\_ $ $$ 100% ~tilde~ \"quotes\" 'single'</div>",
	"<p><em>em *x*</em><strong>strong _y_</strong><i> i </i><b>b</b>**not**__bold__</p>",
	"<p>a</p>\n<p>!<a href=\"/x\">[not an image]</a>(x) ![alt](src)</p>",
	"<dl><dt>term *</dt><dd>def [x]</dd></dl><details><summary>s #</summary>d _</details>",
	"<p>&lt;script&gt;alert(1)&lt;/script&gt; &gt; &lt; a<b>c>d</b></p>",
	"<article><h1>T</h1><section><h2>S_</h2><p>x.</p><hr><p>-- y</p></section></article>",
	"<ul><li><a href=\"/a\">a</a> | <a href=\"/b\">b</a></li><li><code>c</code>.</li></ul>",
	"<p>" + strings.Repeat("*_[]()#", 300) + "</p>",
}

// TestFastEscapeKeepsMarkdown: the package's converters give the bytes of
// the library's stock converters on the hand-written escapeCases, on every
// HTML file of the shared corpus (docsites pages, containers and clean
// containers; the article benchmark: 970 distinct files) and of the
// package's testdata (771, of which 22 are not in the shared corpus): the
// whole tree with and without the table plugin, and FromHTML. Race builds
// and -short check every fourth file.
func TestFastEscapeKeepsMarkdown(t *testing.T) {
	for i, s := range escapeCases {
		requireSameMarkdown(t, fmt.Sprintf("escapeCases[%d]", i), []byte(s), "https://example.com/a/", Options{})
		requireSameMarkdown(t, fmt.Sprintf("escapeCases[%d] in a page", i), []byte("<html><body><main><h1>Page</h1>"+s+"</main></body></html>"), "https://example.com/a/", Options{})
	}
	files := escapeCorpus(t)
	least := 750 // testdata alone
	if _, err := os.Stat(sharedCorpus); err == nil {
		least = 950
	}
	require.Greater(t, len(files), least)
	for i, f := range files {
		if (raceBuild || testing.Short()) && i%4 != 0 {
			continue
		}
		requireSameMarkdown(t, f.name, f.html, f.url, Options{})
	}
}

// corpusFile is an HTML file for TestFastEscapeKeepsMarkdown.
type corpusFile struct {
	name, url string
	html      []byte
}

// escapeCorpus reads, once each by content, the HTML files (.html or
// .html.gz) of the shared corpus's docsites and extraction folders and of
// testdata, with the page URL the corpus gives where it gives one.
func escapeCorpus(t *testing.T) []corpusFile {
	t.Helper()
	urls := map[string]string{} // by absolute file path
	for _, dir := range []string{
		filepath.Join(sharedCorpus, "docsites"), filepath.Join(sharedCorpus, "docsites", "short"),
		filepath.Join("testdata", "docsites"), filepath.Join("testdata", "docsites", "short"),
	} {
		readCaseURLs(t, dir, urls)
	}
	for _, dir := range []string{filepath.Join(sharedCorpus, "extraction"), filepath.Join("testdata", "benchmark")} {
		readTruthURLs(t, dir, urls)
	}
	seen := map[[32]byte]bool{}
	var files []corpusFile
	for _, root := range []string{filepath.Join(sharedCorpus, "docsites"), filepath.Join(sharedCorpus, "extraction"), "testdata"} {
		if _, err := os.Stat(root); err != nil {
			t.Logf("skipping %s: %v", root, err)
			continue
		}
		err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() || !(strings.HasSuffix(p, ".html") || strings.HasSuffix(p, ".html.gz")) {
				return err
			}
			body, err := readMaybeGzip(p)
			if err != nil {
				return err
			}
			sum := sha256.Sum256(body)
			if seen[sum] {
				return nil
			}
			seen[sum] = true
			abs, _ := filepath.Abs(p)
			u := urls[abs]
			if u == "" {
				u = "https://docs.example.org/guide/page.html"
			}
			files = append(files, corpusFile{p, u, body})
			return nil
		})
		require.NoError(t, err)
	}
	sort.Slice(files, func(i, j int) bool { return files[i].name < files[j].name })
	return files
}

// readCaseURLs adds to urls the page URL of each file of dir/cases.jsonl
// (page, container and clean container), if that exists.
func readCaseURLs(t *testing.T, dir string, urls map[string]string) {
	b, err := os.ReadFile(filepath.Join(dir, "cases.jsonl"))
	if err != nil {
		return
	}
	for _, line := range bytes.Split(b, []byte("\n")) {
		if len(bytes.TrimSpace(line)) == 0 {
			continue
		}
		var c struct {
			File          string `json:"file"`
			ContainerFile string `json:"container_file"`
			CleanFile     string `json:"clean_file"`
			URL           string `json:"url"`
		}
		require.NoError(t, json.Unmarshal(line, &c))
		for _, f := range []string{c.File, c.ContainerFile, c.CleanFile} {
			if f != "" {
				abs, _ := filepath.Abs(filepath.Join(dir, f))
				urls[abs] = c.URL
			}
		}
	}
}

// readTruthURLs adds to urls the URL of each page of an article benchmark
// folder (dir/html/<id>.html.gz, dir/ground-truth.json[.gz]), if it exists.
func readTruthURLs(t *testing.T, dir string, urls map[string]string) {
	b, err := readMaybeGzip(filepath.Join(dir, "ground-truth.json"))
	if err != nil {
		if b, err = readMaybeGzip(filepath.Join(dir, "ground-truth.json.gz")); err != nil {
			return
		}
	}
	var truth map[string]struct {
		URL string `json:"url"`
	}
	require.NoError(t, json.Unmarshal(b, &truth))
	for id, e := range truth {
		abs, _ := filepath.Abs(filepath.Join(dir, "html", id+".html.gz"))
		urls[abs] = e.URL
	}
}

// readMaybeGzip reads p, gunzipped when its name ends in .gz.
func readMaybeGzip(p string) ([]byte, error) {
	b, err := os.ReadFile(p)
	if err != nil || !strings.HasSuffix(p, ".gz") {
		return b, err
	}
	zr, err := gzip.NewReader(bytes.NewReader(b))
	if err != nil {
		return nil, err
	}
	return io.ReadAll(zr)
}

// FuzzFastEscapeKeepsMarkdown: on any input, the package's converters give
// the bytes of the library's stock converters.
func FuzzFastEscapeKeepsMarkdown(f *testing.F) {
	for _, s := range escapeCases {
		f.Add([]byte(s))
	}
	for _, name := range []string{"article", "links", "sphinx", "mkdocs"} {
		body, err := os.ReadFile(filepath.Join("testdata", "golden", name+".html"))
		require.NoError(f, err)
		f.Add(body)
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		requireSameMarkdown(t, "", body, "https://example.com/a/", Options{MaxBytes: 1 << 16})
	})
}

// libraryEscape is the library's EscapeContent of a converter made by
// libraryMarkdown, captured from a conversion.
var libraryEscape = sync.OnceValue(func() func([]byte) []byte {
	c := libraryMarkdown(true)
	var ctx converter.Context
	c.Register.PreRenderer(func(c converter.Context, _ *html.Node) { ctx = c }, converter.PriorityEarly)
	if _, err := c.ConvertString("<p>x</p>"); err != nil {
		panic(err)
	}
	return ctx.EscapeContent
})

// TestEscapeMarkdownIsLibrarys: escapeMarkdown gives what the library's
// EscapeContent gives for every byte alone, every rune in UTF-8, and
// strings of them mixed with NUL and invalid UTF-8.
func TestEscapeMarkdownIsLibrarys(t *testing.T) {
	lib := libraryEscape()
	require.Equal(t, lib([]byte{}), escapeMarkdown([]byte{}))
	for b := 0; b < 256; b++ {
		in := []byte{byte(b)}
		require.Equal(t, lib(in), escapeMarkdown(in), "byte %#x", b)
	}
	// Every rune, encoded: the library decodes a rune at each byte, so
	// this checks that no rune beyond ASCII is registered.
	var all []byte
	for r := rune(0); r <= utf8.MaxRune; r++ {
		all = utf8.AppendRune(all, r)
	}
	require.True(t, bytes.Equal(lib(all), escapeMarkdown(all)))
	for _, s := range escapeCases {
		require.Equal(t, lib([]byte(s)), escapeMarkdown([]byte(s)), s)
	}
	mixed := []byte("\x00a*\x00\xff_\xc3\xa9\xc3|\xe6\x97\xa5\\\x00")
	require.Equal(t, lib(mixed), escapeMarkdown(mixed))
}

// FuzzEscapeMarkdown: escapeMarkdown gives what the library's
// EscapeContent gives, on any bytes.
func FuzzEscapeMarkdown(f *testing.F) {
	for _, s := range escapeCases {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		lib := libraryEscape()(append([]byte(nil), b...))
		require.True(t, bytes.Equal(lib, escapeMarkdown(b)), "%q: %q, want %q", b, escapeMarkdown(b), lib)
	})
}

// TestFastEscapeReachesText: every text node the text transformers see,
// inside links, lists, tables, headings, quotes and emphasis alike, sees a
// fastEscapeContext (else it is escaped with the library's lock again: the
// same Markdown, only slower).
func TestFastEscapeReachesText(t *testing.T) {
	for _, tables := range []bool{true, false} {
		c := newMarkdown(tables)
		var fast, slow []string
		c.Register.TextTransformer(func(ctx converter.Context, content string) string {
			if _, ok := ctx.(fastEscapeContext); ok {
				fast = append(fast, content)
			} else {
				slow = append(slow, content)
			}
			return content
		}, converter.PriorityLate+1)
		_, err := c.ConvertString(strings.Join(escapeCases, "\n"))
		require.NoError(t, err)
		require.Empty(t, slow)
		require.Greater(t, len(fast), 50)
	}
}
