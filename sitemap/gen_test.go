package sitemap_test

import (
	"bytes"
	"fmt"
	"io"
	"time"
)

// genEntry writes the i-th generated <url> element.
func genEntry(buf *bytes.Buffer, i int) {
	mod := time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC).Add(time.Duration(i) * time.Minute)
	fmt.Fprintf(buf, "  <url>\n    <loc>https://www.example.com/docs/section-%d/page-%d.html</loc>\n    <lastmod>%s</lastmod>\n    <changefreq>weekly</changefreq>\n    <priority>0.%d</priority>\n  </url>\n",
		i/100, i, mod.Format(time.RFC3339), i%10)
}

const (
	genHead = `<?xml version="1.0" encoding="UTF-8"?>` + "\n" + `<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">` + "\n"
	genTail = "</urlset>\n"
)

// genSitemap returns a url set of n entries, each with lastmod, changefreq
// and priority.
func genSitemap(n int) []byte {
	var buf bytes.Buffer
	buf.WriteString(genHead)
	for i := range n {
		genEntry(&buf, i)
	}
	buf.WriteString(genTail)
	return buf.Bytes()
}

// genReader produces the same document as genSitemap(n) on demand, so a
// test can stream a large sitemap without holding it in memory.
type genReader struct {
	n, next int
	buf     bytes.Buffer
	done    bool
}

func newGenReader(n int) *genReader {
	g := &genReader{n: n}
	g.buf.WriteString(genHead)
	return g
}

func (g *genReader) Read(p []byte) (int, error) {
	for g.buf.Len() < len(p) && !g.done {
		if g.next < g.n {
			genEntry(&g.buf, g.next)
			g.next++
		} else {
			g.buf.WriteString(genTail)
			g.done = true
		}
	}
	if g.buf.Len() == 0 {
		return 0, io.EOF
	}
	return g.buf.Read(p)
}
