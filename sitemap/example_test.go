package sitemap_test

import (
	"bytes"
	"compress/gzip"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/recrawl/recrawl/sitemap"
)

func ExampleParse() {
	doc := `<?xml version="1.0" encoding="UTF-8"?>
<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">
  <url>
    <loc>https://www.example.com/</loc>
    <lastmod>2024-05-01</lastmod>
    <changefreq>daily</changefreq>
  </url>
  <url>
    <loc> https://www.example.com/docs?page=2&amp;lang=en </loc>
    <lastmod>2024-04-30T12:00:00+02:00</lastmod>
  </url>
</urlset>`
	kind, err := sitemap.Parse(strings.NewReader(doc), func(e sitemap.Entry) error {
		fmt.Printf("%s lastmod=%s changefreq=%q\n", e.Loc, e.LastMod.Format(time.RFC3339), e.ChangeFreq)
		return nil
	})
	fmt.Println(kind, err)
	// Output:
	// https://www.example.com/ lastmod=2024-05-01T00:00:00Z changefreq="daily"
	// https://www.example.com/docs?page=2&lang=en lastmod=2024-04-30T10:00:00Z changefreq=""
	// urlset <nil>
}

// A Parser sets the limits and sees what was left out. Here a gzipped
// text sitemap goes past a deliberately small size cap.
func ExampleParser_Parse() {
	var body bytes.Buffer
	zw := gzip.NewWriter(&body)
	zw.Write([]byte("https://www.example.com/a\nnot a URL\nhttps://www.example.com/b\n" + strings.Repeat("https://www.example.com/more\n", 100)))
	zw.Close()

	p := sitemap.Parser{
		MaxBytes: 100, // uncompressed
		OnSkip:   func(s *sitemap.SkipError) { fmt.Println("skipped:", s) },
	}
	kind, err := p.Parse(&body, func(e sitemap.Entry) error {
		fmt.Println(e.Loc)
		return nil
	})
	fmt.Println(kind, errors.Is(err, sitemap.ErrTooLarge))
	// Output:
	// https://www.example.com/a
	// skipped: sitemap: line 2: skipped "not a URL": not an absolute http(s) URL
	// https://www.example.com/b
	// https://www.example.com/more
	// text true
}

// HTML served where a sitemap was expected is an error, not an empty
// result.
func ExampleFormatError() {
	_, err := sitemap.Parse(strings.NewReader("<!DOCTYPE html><html><body>Not Found</body></html>"),
		func(sitemap.Entry) error { return nil })
	var fe *sitemap.FormatError
	fmt.Println(errors.As(err, &fe), fe.Format, errors.Is(err, sitemap.ErrNotSitemap))
	// Output: true HTML true
}
