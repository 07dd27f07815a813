package llmstxt_test

import (
	"errors"
	"fmt"
	"os"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/recrawl/recrawl/llmstxt"
)

func mustParse(t *testing.T, doc string) *llmstxt.File {
	t.Helper()
	f, err := llmstxt.Parse([]byte(doc))
	require.NoError(t, err)
	return f
}

func pageURLs(f *llmstxt.File) []string {
	urls := []string{}
	for _, p := range f.Pages() {
		urls = append(urls, p.URL)
	}
	return urls
}

func TestTitle(t *testing.T) {
	tests := []struct {
		name, doc, want string
	}{
		{"plain", "# Example Docs\n", "Example Docs"},
		{"inline markup", "# The `recrawl` *fast* **lib**\n", "The recrawl fast lib"},
		{"escapes and entities", "# A &amp; B \\*not emphasis\\* &#x41;\n", "A & B *not emphasis* A"},
		{"setext", "Example Docs\n============\n\n> Summary\n", "Example Docs"},
		{"closing hashes", "# Example Docs ##\n", "Example Docs"},
		{"link in title", "# [Example](https://example.com/) Docs\n", "Example Docs"},
		{"first of several H1", "# First\n\n# Second\n", "First"},
		{"after leading comment", "<!-- generated -->\n\n# Example\n", "Example"},
		{"blank lines before", "\n\n\n# Example\n", "Example"},
		{"collapsed spaces", "#   Spaced    out  \n", "Spaced out"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			require.Equal(t, tt.want, mustParse(t, tt.doc).Title)
		})
	}
}

func TestSummary(t *testing.T) {
	tests := []struct {
		name, doc, summary, details string
	}{
		{"one line", "# T\n\n> A short summary.\n\nDetails.\n", "A short summary.", "Details."},
		{"lazy and soft breaks", "# T\n> first line\n> second `code`\nlazy line\n", "first line second code lazy line", ""},
		{"two paragraphs", "# T\n\n> one\n>\n> two\n", "one\n\ntwo", ""},
		{"missing", "# T\n\nJust details.\n\n## S\n", "", "Just details."},
		{"blockquote after details is details", "# T\n\nIntro.\n\n> quoted\n", "", "Intro.\n\n> quoted"},
		{"second blockquote is details", "# T\n\n> sum\n\n> more\n", "sum", "> more"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := mustParse(t, tt.doc)
			require.Equal(t, tt.summary, f.Summary)
			require.Equal(t, tt.details, f.Details)
		})
	}
}

func TestDetailsKeepMarkdownSource(t *testing.T) {
	doc := "# T\n> S\n\n\nSome *emphasis* and a [link](/a).\n\n- item one\n- item two\n\n```go\nx := y[0](1)\n```\n\n---\n\n### Sub heading\n\n    indented code\n\n\n## First section\n- [A](/a)\n"
	f := mustParse(t, doc)
	require.Equal(t, "Some *emphasis* and a [link](/a).\n\n- item one\n- item two\n\n```go\nx := y[0](1)\n```\n\n---\n\n### Sub heading\n\n    indented code", f.Details)
	require.Equal(t, []llmstxt.Link{{Title: "link", URL: "/a"}}, f.Links)
	require.Len(t, f.Sections, 1)

	f = mustParse(t, "# T\n\n    code first\n\n## S\n")
	require.Equal(t, "    code first", f.Details, "the first line keeps its indentation")
}

func TestSections(t *testing.T) {
	doc := `# Site

> Summary

## Docs

- [Intro](/intro.md): Start here
- [API](/api.md)

### Advanced

- [Tuning](/tuning.md): Under an H3, still in Docs

## Empty

Setext section
--------------

- [Setext](/setext.md)

# Later H1

- [Late](/late.md)

## optional

- [Extra](/extra.md)

## Optional extras

- [More](/more.md)
`
	f := mustParse(t, doc)
	type sec struct {
		name     string
		optional bool
		urls     []string
	}
	var got []sec
	for _, s := range f.Sections {
		var urls []string
		for _, l := range s.Links {
			urls = append(urls, l.URL)
		}
		got = append(got, sec{s.Name, s.Optional, urls})
	}
	require.Equal(t, []sec{
		{"Docs", false, []string{"/intro.md", "/api.md", "/tuning.md"}},
		{"Empty", false, nil},
		{"Setext section", false, []string{"/setext.md"}},
		{"Later H1", false, []string{"/late.md"}},
		{"optional", true, []string{"/extra.md"}},
		{"Optional extras", false, []string{"/more.md"}},
	}, got)
	require.Equal(t, "Start here", f.Sections[0].Links[0].Description)
	require.Equal(t, "Under an H3, still in Docs", f.Sections[0].Links[2].Description)
}

func TestOptionalSectionPagesIncluded(t *testing.T) {
	f := mustParse(t, "# T\n\n## Docs\n- [A](/a)\n\n## OPTIONAL\n- [B](/b)\n")
	require.True(t, f.Sections[1].Optional)
	require.Equal(t, []string{"/a", "/b"}, pageURLs(f))
}

func TestURLsKeptAsWritten(t *testing.T) {
	doc := "# T\n\n## S\n" +
		"- [abs](https://Example.com/Docs/../a.md?x=1#frag)\n" +
		"- [root](/docs/a.md)\n" +
		"- [rel](docs/b.md)\n" +
		"- [up](../c.md)\n" +
		"- [proto-relative](//cdn.example.com/d.md)\n" +
		"- [escaped](docs/e\\_f.md)\n" +
		"- [entity](/g?a=1&amp;b=2)\n" +
		"- [angle](<docs/with space.md>)\n" +
		"- [no scheme host](example.com/h.md)\n" +
		"- [title attr](/i.md \"Title attribute\")\n"
	f := mustParse(t, doc)
	var urls []string
	for _, l := range f.Sections[0].Links {
		urls = append(urls, l.URL)
	}
	require.Equal(t, []string{
		"https://Example.com/Docs/../a.md?x=1#frag",
		"/docs/a.md",
		"docs/b.md",
		"../c.md",
		"//cdn.example.com/d.md",
		"docs/e_f.md",
		"/g?a=1&b=2",
		"docs/with space.md",
		"example.com/h.md",
		"/i.md",
	}, urls)
	require.Equal(t, urls, pageURLs(f))
}

func TestListBeforeFirstSection(t *testing.T) {
	doc := "# Supabase Docs\n\n- [Guides](https://supabase.com/llms/guides.txt)\n- [JS](https://supabase.com/llms/js.txt): JavaScript\n"
	f := mustParse(t, doc)
	require.Empty(t, f.Sections)
	require.Equal(t, []llmstxt.Link{
		{Title: "Guides", URL: "https://supabase.com/llms/guides.txt"},
		{Title: "JS", URL: "https://supabase.com/llms/js.txt", Description: "JavaScript"},
	}, f.Links)
	require.Equal(t, []string{"https://supabase.com/llms/guides.txt", "https://supabase.com/llms/js.txt"}, pageURLs(f))
	require.Contains(t, f.Details, "- [Guides](https://supabase.com/llms/guides.txt)")
}

func TestBracketsInTitles(t *testing.T) {
	doc := "# T\n\n## S\n" +
		"- [Joins [SQL]](https://orm.example/joins)\n" +
		"- [Create a Text Completion](/complete): [Legacy] Create a Text Completion.\n" +
		"- [rewrite Optional[T] to T | None](/rewrite.md)\n" +
		"- [Escaped \\] bracket](/esc)\n" +
		"- [![logo](/logo.png) Logo text](/logo-page)\n"
	f := mustParse(t, doc)
	require.Equal(t, []llmstxt.Link{
		{Title: "Joins [SQL]", URL: "https://orm.example/joins"},
		{Title: "Create a Text Completion", URL: "/complete", Description: "[Legacy] Create a Text Completion."},
		{Title: "rewrite Optional[T] to T | None", URL: "/rewrite.md"},
		{Title: "Escaped ] bracket", URL: "/esc"},
		{Title: "logo Logo text", URL: "/logo-page"},
	}, f.Sections[0].Links)
}

func TestCodeAndHTMLAreNotLinks(t *testing.T) {
	doc := "# T\n\n## S\n\n" +
		"```markdown\n- [Fenced](/fenced)\n```\n\n" +
		"~~~\n[Tilde](/tilde)\n~~~\n\n" +
		"    - [Indented](/indented)\n\n" +
		"Inline `[Span](/span)` code.\n\n" +
		"<div>\n<a href=\"/html\">HTML</a> [In HTML block](/html-block)\n</div>\n\n" +
		"Bare URL https://example.com/bare and ![image](/image.png).\n\n" +
		"- [Real](/real)\n"
	f := mustParse(t, doc)
	require.Equal(t, []llmstxt.Link{{Title: "Real", URL: "/real"}}, f.Sections[0].Links)
}

func TestDescriptions(t *testing.T) {
	doc := "# T\n\n## S\n" +
		"- [Colon](/1): after a colon\n" +
		"- [Dash](/2) - after a dash\n" +
		"- [Em dash](/3) — after an em dash\n" +
		"- [None](/4)\n" +
		"- [Glued](/5):no space\n" +
		"- [Markup](/6): with `code`, *emphasis* and &amp;\n" +
		"- [Wrapped](/7): first line\n  continues here\n" +
		"- **[Bold](/8)**: bold link\n" +
		"- [Inner](/9): see [Other](/10) too\n" +
		"- Topic:\n  - [Nested](/11): nested item\n" +
		"- Prose first, then [Mid](/12): not an entry\n" +
		"- <https://example.com/auto>: autolink entry\n" +
		"- [Hyphenated](/13) -5 stays\n" +
		"\n" +
		"[Para one](/14): first line\n[Para two](/15) second line\nmore for two\n" +
		"-[Stray bullet](/16): no space after the bullet\n"
	f := mustParse(t, doc)
	require.Equal(t, []llmstxt.Link{
		{Title: "Colon", URL: "/1", Description: "after a colon"},
		{Title: "Dash", URL: "/2", Description: "after a dash"},
		{Title: "Em dash", URL: "/3", Description: "after an em dash"},
		{Title: "None", URL: "/4"},
		{Title: "Glued", URL: "/5", Description: "no space"},
		{Title: "Markup", URL: "/6", Description: "with code, emphasis and &"},
		{Title: "Wrapped", URL: "/7", Description: "first line continues here"},
		{Title: "Bold", URL: "/8", Description: "bold link"},
		{Title: "Inner", URL: "/9", Description: "see Other too"},
		{Title: "Other", URL: "/10"},
		{Title: "Nested", URL: "/11", Description: "nested item"},
		{Title: "Mid", URL: "/12"},
		{Title: "https://example.com/auto", URL: "https://example.com/auto", Description: "autolink entry"},
		{Title: "Hyphenated", URL: "/13", Description: "-5 stays"},
		{Title: "Para one", URL: "/14", Description: "first line"},
		{Title: "Para two", URL: "/15", Description: "second line more for two"},
		{Title: "Stray bullet", URL: "/16", Description: "no space after the bullet"},
	}, f.Sections[0].Links)
}

func TestReferenceLinksAndAutolinks(t *testing.T) {
	doc := "# T\n\n## S\n" +
		"- [Full][guide]: full reference\n" +
		"- [Collapsed][]\n" +
		"- [Shortcut]\n" +
		"- [Undefined][nowhere]\n" +
		"- <https://example.com/auto>\n" +
		"- <team@example.com>\n" +
		"\n[guide]: /guide.md \"Guide\"\n[collapsed]: /collapsed.md\n[shortcut]: <https://example.com/short cut>\n"
	f := mustParse(t, doc)
	require.Equal(t, []llmstxt.Link{
		{Title: "Full", URL: "/guide.md", Description: "full reference"},
		{Title: "Collapsed", URL: "/collapsed.md"},
		{Title: "Shortcut", URL: "https://example.com/short cut"},
		{Title: "https://example.com/auto", URL: "https://example.com/auto"},
		{Title: "team@example.com", URL: "mailto:team@example.com"},
	}, f.Sections[0].Links)
	require.Equal(t, []string{"/guide.md", "/collapsed.md", "https://example.com/short cut", "https://example.com/auto"}, pageURLs(f))
}

func TestPagesDedupAndFilter(t *testing.T) {
	doc := "# T [home](/)\n\n> See [intro](/intro.md).\n\nDetails link [intro again](/intro.md#part-2).\n\n" +
		"## Docs\n" +
		"- [Intro](/intro.md): duplicate of the summary link\n" +
		"- [API](https://example.com/api)\n" +
		"- [API again](https://example.com/api)\n" +
		"- [Anchor](#top)\n" +
		"- [Empty]()\n" +
		"- [Mail](mailto:hi@example.com)\n" +
		"- [Phone](tel:+123)\n" +
		"- [Script](javascript:alert(1))\n" +
		"- [FTP](ftp://example.com/file)\n" +
		"- [Upper](HTTPS://EXAMPLE.COM/UP)\n" +
		"## Optional\n" +
		"- [API once more](https://example.com/api#x)\n" +
		"- [Extra](extra.md)\n"
	f := mustParse(t, doc)
	require.Equal(t, []llmstxt.Link{
		{Title: "home", URL: "/"},
		{Title: "intro", URL: "/intro.md"},
		{Title: "API", URL: "https://example.com/api"},
		{Title: "Upper", URL: "HTTPS://EXAMPLE.COM/UP"},
		{Title: "Extra", URL: "extra.md"},
	}, f.Pages())
	// The section keeps every link, pages or not.
	require.Len(t, f.Sections[0].Links, 10)
	require.Len(t, f.Links, 3)
}

func TestPagesOfHandBuiltFile(t *testing.T) {
	f := &llmstxt.File{
		Title:    "Hand built",
		Sections: []llmstxt.Section{{Name: "A", Links: []llmstxt.Link{{URL: "/x"}, {URL: "/x"}, {URL: "/y"}}}},
	}
	require.Equal(t, []llmstxt.Link{{URL: "/x"}, {URL: "/y"}}, f.Pages())
	require.Empty(t, (&llmstxt.File{Title: "Empty"}).Pages())
}

func TestNoTitle(t *testing.T) {
	tests := []struct {
		name, doc, msg string
	}{
		{"empty", "", "empty"},
		{"white space", " \n\n\t\n", "empty"},
		{"only H2", "## Docs\n\n- [A](/a)\n", "no top-level '# Title'"},
		{"prose", "Just some text with [a link](/a).\n", "no top-level '# Title'"},
		{"H1 inside blockquote", "> # Quoted\n", "no top-level '# Title'"},
		{"H1 inside list", "- # Listed\n", "no top-level '# Title'"},
		{"H1 in code", "```\n# Code\n```\n", "no top-level '# Title'"},
		{"hash without space", "#NoSpace\n", "no top-level '# Title'"},
		{"empty H1", "#\n\n## Docs\n", "H1 heading is empty"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f, err := llmstxt.Parse([]byte(tt.doc))
			require.Nil(t, f)
			require.ErrorIs(t, err, llmstxt.ErrNoTitle)
			require.NotErrorIs(t, err, llmstxt.ErrHTML)
			var fe *llmstxt.FormatError
			require.ErrorAs(t, err, &fe)
			require.Contains(t, err.Error(), tt.msg)
		})
	}
}

func TestHTMLInput(t *testing.T) {
	tests := []struct {
		name, doc string
	}{
		{"doctype page", "<!DOCTYPE html>\n<html lang=\"en\">\n<head><title>Docs</title></head>\n<body><h1>Docs</h1><a href=\"/a\">A</a></body>\n</html>\n"},
		{"html page with a Markdown-looking line", "<html>\n<body>\n\n# Not a title\n\n</body>\n</html>\n"},
		{"lowercase doctype after blank lines", "\n\n<!doctype html><title>x</title>\n"},
		{"div soup", "<div class=\"page\">\n<p>Hello</p>\n</div>\n"},
		{"with BOM", "\xef\xbb\xbf<!DOCTYPE html><html></html>"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := llmstxt.Parse([]byte(tt.doc))
			require.ErrorIs(t, err, llmstxt.ErrHTML)
			require.ErrorIs(t, err, llmstxt.ErrNoTitle, "an HTML page also has no title")
			require.Contains(t, err.Error(), "HTML")
		})
	}
	// An llms.txt may carry inline or block HTML and still be one.
	f := mustParse(t, "<!-- built by docgen -->\n# Docs\n\n<details><summary>More</summary>\n\n- [A](/a)\n\n</details>\n")
	require.Equal(t, "Docs", f.Title)
	require.Equal(t, []string{"/a"}, pageURLs(f))
}

func TestEncodingsAndLineEndings(t *testing.T) {
	crlf := "\xef\xbb\xbf# Title\r\n\r\n> Summary\r\n\r\nDetails\r\n\r\n## Docs\r\n\r\n- [A](/a): desc\r\n- [B](/b)\r\n"
	f := mustParse(t, crlf)
	require.Equal(t, "Title", f.Title)
	require.Equal(t, "Summary", f.Summary)
	require.Equal(t, "Details", f.Details)
	require.Equal(t, []llmstxt.Link{{Title: "A", URL: "/a", Description: "desc"}, {Title: "B", URL: "/b"}}, f.Sections[0].Links)

	latin1 := "# Caf\xe9\n\n- [Men\xfc](/menu)\n"
	f = mustParse(t, latin1)
	require.Equal(t, "Caf\xe9", f.Title, "invalid UTF-8 is kept, not rejected")
	require.Equal(t, []string{"/menu"}, pageURLs(f))
}

func TestConcurrentParse(t *testing.T) {
	paths := corpus(t)
	want := make(map[string]int)
	for _, p := range paths {
		data, err := os.ReadFile(p)
		require.NoError(t, err)
		f, err := llmstxt.Parse(data)
		require.NoError(t, err)
		want[p] = len(f.Pages())
	}
	var wg sync.WaitGroup
	errs := make(chan error, len(paths)*4)
	for range 4 {
		for _, p := range paths {
			wg.Go(func() {
				data, err := os.ReadFile(p)
				if err == nil {
					var f *llmstxt.File
					f, err = llmstxt.Parse(data)
					if err == nil && len(f.Pages()) != want[p] {
						err = errors.New(p + ": page count differs between runs")
					}
				}
				if err != nil {
					errs <- err
				}
			})
		}
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		require.NoError(t, err)
	}
}

func TestDeepInlineNesting(t *testing.T) {
	// Nested emphasis makes a deep inline tree; the walk is iterative, so
	// depth costs no stack.
	n := 50000
	doc := "# T\n\n## S\n\n" + strings.Repeat("**", n) + "[deep](/deep)" + strings.Repeat("**", n) + "\n\n" +
		"- [" + strings.Repeat("![", 10) + "img" + strings.Repeat("](/i.png)", 10) + "](/page): images in the title\n"
	f := mustParse(t, doc)
	require.Equal(t, []string{"/deep", "/page"}, pageURLs(f))
	require.Equal(t, llmstxt.Link{Title: "img", URL: "/page", Description: "images in the title"}, f.Sections[0].Links[1])
}

// A file over 1 MiB is parsed in pieces; a reference used in one piece and
// defined in a blockquote of another (nested, indented, or in a list item)
// still resolves, as in a file of a few bytes, and what is not a definition
// in the whole file (a quoted paragraph's continuation, quoted code) is
// not one in pieces either.
func TestReferenceDefinedInABlockquoteOfALargeFile(t *testing.T) {
	var b strings.Builder
	b.WriteString("# T\n\n## Docs\n\n- [Quoted][bq]: defined in a quote\n- [Nested][nq]\n- [Indented][iq]\n" +
		"- [Continued][cont]\n- [Code][code]\n")
	for i := 0; b.Len() < 1<<20+1000; i++ {
		fmt.Fprintf(&b, "- [Page %d](/p/%d): filler\n", i, i)
	}
	b.WriteString("\n## More\n\n> A note.\n>\n> [bq]: /quoted.md \"Quoted\"\n\n" +
		"> > [nq]: /nested.md\n\n   > [iq]:\n   > /indented.md\n\n" +
		"> a paragraph\n> [cont]: /not-a-definition.md\n\n" +
		"> ```\n>\n> [code]: /not-code.md\n> ```\n\n- [Last](/last.md)\n")
	doc := b.String()
	require.Greater(t, len(doc), 1<<20, "large enough to be parsed in pieces")
	f := mustParse(t, doc)
	links := f.Sections[0].Links
	require.Equal(t, llmstxt.Link{Title: "Quoted", URL: "/quoted.md", Description: "defined in a quote"}, links[0])
	require.Equal(t, llmstxt.Link{Title: "Nested", URL: "/nested.md"}, links[1])
	require.Equal(t, llmstxt.Link{Title: "Indented", URL: "/indented.md"}, links[2])
	require.NotEqual(t, "/not-a-definition.md", links[3].URL)
	require.NotContains(t, pageURLs(f), "/not-a-definition.md")
	require.NotContains(t, pageURLs(f), "/not-code.md")
	small := mustParse(t, "# T\n\n## Docs\n\n- [Quoted][bq]\n\n> [bq]: /quoted.md\n")
	require.Equal(t, "/quoted.md", small.Sections[0].Links[0].URL, "the small file agrees")
}
