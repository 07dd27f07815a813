package extract_test

import (
	"errors"
	"fmt"

	"github.com/recrawl/recrawl/extract"
)

const examplePage = `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>Install | Acme Docs</title>
<link rel="canonical" href="/docs/install">
</head>
<body>
<nav><a href="/docs/">Docs home</a> <a href="/blog/">Blog</a></nav>
<main><article>
<h1>Install</h1>
<p>Acme ships as a single binary for Linux, macOS and Windows. Download it, put it on your PATH,
and check that the shell finds it. The installer script below does all three steps for you and
verifies the checksum of the download before it writes anything to disk.</p>
<div class="language-bash highlight"><pre><span></span><code><span class="nb">curl</span> -fsSL https://acme.example/install.sh <span class="p">|</span> sh
acme --version</code></pre></div>
<p>Each release is built for the platforms in the table; see <a href="upgrade">Upgrading</a> for older ones.</p>
<table><thead><tr><th>OS</th><th>Architectures</th></tr></thead>
<tbody><tr><td>Linux</td><td>amd64, arm64</td></tr><tr><td>macOS</td><td>arm64</td></tr></tbody></table>
</article></main>
<footer>© 2025 Acme</footer>
</body>
</html>`

func ExampleFromHTML() {
	doc, err := extract.FromHTML([]byte(examplePage), "https://acme.example/docs/install?ref=nav")
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("title:", doc.Title)
	fmt.Println("canonical:", doc.Canonical)
	fmt.Println("links:", doc.Links)
	fmt.Println(doc.Markdown)
	// Output:
	// title: Install | Acme Docs
	// canonical: https://acme.example/docs/install
	// links: [https://acme.example/docs/ https://acme.example/blog/ https://acme.example/docs/upgrade]
	// # Install
	//
	// Acme ships as a single binary for Linux, macOS and Windows. Download it, put it on your PATH, and check that the shell finds it. The installer script below does all three steps for you and verifies the checksum of the download before it writes anything to disk.
	//
	// ```bash
	// curl -fsSL https://acme.example/install.sh | sh
	// acme --version
	// ```
	//
	// Each release is built for the platforms in the table; see [Upgrading](https://acme.example/docs/upgrade) for older ones.
	//
	// | OS | Architectures |
	// |---|---|
	// | Linux | amd64, arm64 |
	// | macOS | arm64 |
}

func ExampleFromHTML_scriptRendered() {
	shell := `<!doctype html><html><head><title>Dashboard</title>
<script defer src="/static/js/main.js"></script></head>
<body><noscript>You need to enable JavaScript to run this app.</noscript><div id="root"></div></body></html>`
	_, err := extract.FromHTML([]byte(shell), "https://app.example/dashboard")
	fmt.Println(errors.Is(err, extract.ErrScriptRendered))
	// Output: true
}

func ExampleFromHTMLWithType() {
	// "Grüße aus Köln" in ISO-8859-1; only the response header says so.
	body := []byte("<title>Gr\xfc\xdfe aus K\xf6ln</title><p>Der Dom ist 157 Meter hoch.</p>")
	doc, err := extract.FromHTMLWithType(body, "https://example.de/", "text/html; charset=iso-8859-1")
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(doc.Title)
	fmt.Println(doc.Markdown)
	// Output:
	// Grüße aus Köln
	// Der Dom ist 157 Meter hoch.
}

func ExampleFromHTMLWithOptions() {
	body := []byte(examplePage)
	_, err := extract.FromHTMLWithOptions(body, "https://acme.example/docs/install", extract.Options{MaxBytes: 1024})
	var tooLarge *extract.TooLargeError
	if errors.As(err, &tooLarge) {
		fmt.Printf("rejected: %d bytes, cap %d\n", tooLarge.Size, tooLarge.Limit)
	}
	// Output: rejected: 1063 bytes, cap 1024
}

func ExampleDocPath() {
	fmt.Println(extract.DocPath("https://docs.example.com/guides/install", "text/html; charset=utf-8"))
	fmt.Println(extract.DocPath("https://docs.example.com/guides/", "text/html"))
	fmt.Println(extract.DocPath("https://docs.example.com/files/report.pdf", "application/pdf"))
	fmt.Println(extract.DocPath("https://docs.example.com/search?q=retry", "text/html"))
	fmt.Println(extract.DocPath("https://docs.example.com/../../etc/passwd", "text/plain"))
	// Output:
	// docs.example.com/guides/install.md
	// docs.example.com/guides/index.md
	// docs.example.com/files/report.pdf.pdf
	// docs.example.com/search~q7bc47487a60c1b0a.md
	// docs.example.com/etc/passwd.txt
}

// A rule of one's own for a documentation site no built-in rule knows: it
// recognises the page by its markup, names the content container and the
// chrome inside it. The title becomes the first line; the site's sidebar
// and the edit link stay out.
func ExampleRule() {
	page := `<html><head><title>Retries · Harbor Docs</title></head><body>
<div class="hb-sidebar"><a href="/docs/install">Install</a> <a href="/docs/retries">Retries</a></div>
<div class="hb-page"><div class="hb-edit"><a href="https://github.com/harbor/docs/edit/main/retries.md">Edit this page</a></div>
<h2>Backoff</h2><p>A failed job waits twice as long before each new attempt.</p>
<pre class="hb-code" data-lang="yaml">retry:
  max: 5</pre></div></body></html>`
	harbor := extract.Rule{
		Name:    "harbor-docs",
		Markers: []string{"div.hb-page"},
		Content: []string{"div.hb-page"},
		Remove:  []string{".hb-edit"},
	}
	doc, err := extract.FromHTMLWithOptions([]byte(page), "https://harbor.example/docs/retries",
		extract.Options{Rules: []extract.Rule{harbor}})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(doc.Markdown)
	// Output:
	// # Retries
	//
	// ## Backoff
	//
	// A failed job waits twice as long before each new attempt.
	//
	// ```yaml
	// retry:
	//   max: 5
	// ```
}
