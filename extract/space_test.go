package extract

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/JohannesKaufmann/html-to-markdown/v2/converter"
	"github.com/stretchr/testify/require"
	"golang.org/x/net/html"

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

// tableConvert is convert with the converter that has the table plugin,
// whatever the tree holds.
func tableConvert(root *html.Node, opts ...converter.ConvertOptionFunc) ([]byte, error) {
	dropBlockSpace(root)
	return convertWith(&converters, root, opts...)
}

// Converting a tree without <table> or <tr> without the table plugin
// changes no Markdown: on every page of the docsites corpus, the article
// benchmark and the golden and rule test pages, FromHTML gives what the
// converter with the table plugin gives. Race builds and -short check
// every fourth page.
func TestPlainConverterKeepsMarkdown(t *testing.T) {
	pages := spacePages(t)
	require.Greater(t, len(pages), 480)
	plain := 0
	for i, p := range pages {
		if (raceBuild || testing.Short()) && i%4 != 0 {
			continue
		}
		want, wantErr := fromHTML(p.html, p.url, Options{}, tableConvert)
		got, err := fromHTML(p.html, p.url, Options{}, func(root *html.Node, opts ...converter.ConvertOptionFunc) ([]byte, error) {
			if !holdsTable(root) {
				plain++
			}
			return convert(root, opts...)
		})
		require.Equal(t, wantErr, err, p.name)
		require.Equal(t, want, got, p.name)
	}
	require.Greater(t, plain, 50, "few pages were converted without the table plugin")
}

// FuzzPlainConverter: on any input, FromHTML gives what the converter with
// the table plugin gives.
func FuzzPlainConverter(f *testing.F) {
	for _, s := range []string{
		"<p>a | b</p><ul><li>x|y</li></ul>",
		"<table><tr><td>1</td><td>2</td></tr></table><p>c | d</p>",
		"<div><span>tr</span><p>table</p></div>",
		"<svg><table><tr><td>x</td></tr></table></svg><p>y</p>",
		"<template><tr><td>t</td></tr></template><p>z</p>",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		want, wantErr := fromHTML(body, "https://example.com/a/", Options{MaxBytes: 1 << 16}, tableConvert)
		got, err := fromHTML(body, "https://example.com/a/", Options{MaxBytes: 1 << 16}, convert)
		require.Equal(t, wantErr, err)
		require.Equal(t, want, got)
	})
}
