package extract

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/recrawl/recrawl/extract/internal/quality"
)

// spacePage is a page for the dropBlockSpace tests.
type spacePage struct {
	name, url string
	html      []byte
}

func spacePages(t *testing.T) []spacePage {
	t.Helper()
	var pages []spacePage
	docs, err := quality.LoadDocsites(filepath.Join("testdata", "docsites"))
	require.NoError(t, err)
	for _, c := range docs {
		pages = append(pages, spacePage{c.Site + "/" + c.File, c.URL, c.HTML})
	}
	articles, err := quality.LoadCorpus(filepath.Join("testdata", "benchmark"))
	require.NoError(t, err)
	for _, p := range articles {
		pages = append(pages, spacePage{"article/" + p.ID, p.URL, p.HTML})
	}
	for _, glob := range []string{"golden/*.html", "rules/*.html"} {
		files, err := filepath.Glob(filepath.Join("testdata", glob))
		require.NoError(t, err)
		for _, f := range files {
			b, err := os.ReadFile(f)
			require.NoError(t, err)
			pages = append(pages, spacePage{f, "https://docs.example.org/guide/page.html", b})
		}
	}
	return pages
}

// Dropping white space next to blocks before converting changes no
// Markdown: on every page of the docsites corpus (284), the article
// benchmark (181) and the golden and rule test pages, FromHTML gives what
// converting without dropBlockSpace gives. Race builds and -short check
// every fourth page.
func TestDropBlockSpaceKeepsMarkdown(t *testing.T) {
	pages := spacePages(t)
	require.Greater(t, len(pages), 480)
	for i, p := range pages {
		if (raceBuild || testing.Short()) && i%4 != 0 {
			continue
		}
		want, wantErr := fromHTML(p.html, p.url, Options{}, markdownOf)
		got, err := FromHTML(p.html, p.url)
		require.Equal(t, wantErr, err, p.name)
		require.Equal(t, want, got, p.name)
	}
}

// FuzzDropBlockSpace: on any input, FromHTML gives what converting without
// dropBlockSpace gives.
func FuzzDropBlockSpace(f *testing.F) {
	for _, s := range []string{
		"<div> <p>a</p> <p> b <em>c</em> </p>\n<ul> <li> x </li>\n <li><code> y </code> </li></ul> tail </div>",
		"<p>a <b>b</b> <i>c</i>\t<!-- c --> <div> d</div>  e<br> <span> f </span></p>",
		"<table> <tr> <td> 1 </td> <td> <pre> 2\n 3 </pre> </td></tr></table> <blockquote> <p> q </p> </blockquote>",
		"<article><h1> T </h1>\r\n<section> <h2>S</h2> <p>x</p></section> <details> <summary> s </summary> d </details></article>",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		want, wantErr := fromHTML(body, "https://example.com/a/", Options{MaxBytes: 1 << 16}, markdownOf)
		got, err := fromHTML(body, "https://example.com/a/", Options{MaxBytes: 1 << 16}, convert)
		require.Equal(t, wantErr, err)
		require.Equal(t, want, got)
	})
}
