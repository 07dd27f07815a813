package sitemap_test

import (
	"bytes"
	"fmt"
	"runtime"
	"strings"
	"testing"

	"github.com/recrawl/recrawl/sitemap"
)

// BenchmarkParse parses generated url sets (every entry with lastmod,
// changefreq and priority), plain and gzipped, and a text sitemap. MB/s
// counts uncompressed bytes; B/entry and allocs/entry show the cost of one
// entry, which stays the same from 5,000 to 50,000 entries.
func BenchmarkParse(b *testing.B) {
	for _, n := range []int{5_000, 50_000} {
		doc := genSitemap(n)
		var text strings.Builder
		for i := range n {
			fmt.Fprintf(&text, "https://www.example.com/docs/section-%d/page-%d.html\n", i/100, i)
		}
		cases := []struct {
			name       string
			data       []byte
			uncompress int
		}{
			{"xml", doc, len(doc)},
			{"gzip", gz(b, doc), len(doc)},
			{"text", []byte(text.String()), text.Len()},
		}
		for _, c := range cases {
			b.Run(fmt.Sprintf("%s/urls=%d", c.name, n), func(b *testing.B) {
				b.SetBytes(int64(c.uncompress))
				b.ReportAllocs()
				var before, after runtime.MemStats
				runtime.ReadMemStats(&before)
				runs := 0
				for b.Loop() {
					count := 0
					_, err := sitemap.Parse(bytes.NewReader(c.data), func(sitemap.Entry) error {
						count++
						return nil
					})
					if err != nil || count != n {
						b.Fatalf("got %d entries, error %v", count, err)
					}
					runs++
				}
				runtime.ReadMemStats(&after)
				entries := float64(runs * n)
				b.ReportMetric(float64(after.TotalAlloc-before.TotalAlloc)/entries, "B/entry")
				b.ReportMetric(float64(after.Mallocs-before.Mallocs)/entries, "allocs/entry")
			})
		}
	}
}
