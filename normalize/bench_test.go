package normalize_test

import (
	"testing"

	"github.com/recrawl/recrawl/normalize"
)

var benchURLs = []struct{ name, raw string }{
	{"canonical", "https://docs.example.com/guide/getting-started/install"},
	{"messy", "HTTPS://Docs.Example.com:443/guide/./getting-started/../install/?utm_source=news&b=2&a=1#top"},
	{"query", "https://shop.example.com/search?q=red+shoes&size=42&color=red&page=2&sort=price"},
	{"idn", "https://bücher.example/straße/%7Euser?q=ä"},
}

func BenchmarkURL(b *testing.B) {
	for _, bc := range benchURLs {
		b.Run(bc.name, func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64(len(bc.raw)))
			for b.Loop() {
				if _, err := normalize.URL(bc.raw); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

func BenchmarkResolve(b *testing.B) {
	const base = "https://docs.example.com/guide/getting-started/"
	refs := []struct{ name, ref string }{
		{"relative", "../reference/api.html"},
		{"absolute-path", "/blog/2026/release?ref=nav"},
		{"fragment", "#install"},
	}
	for _, bc := range refs {
		b.Run(bc.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := normalize.Resolve(base, bc.ref); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
