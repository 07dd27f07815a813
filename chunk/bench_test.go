package chunk_test

import (
	"testing"

	"github.com/recrawl/recrawl/chunk"
)

// BenchmarkSplit splits a generated 100 KB page (headings, paragraphs,
// lists and code blocks) with the default options.
func BenchmarkSplit(b *testing.B) {
	r := newRand(1)
	var p page
	for len(p.String()) < 100<<10 {
		p = append(p, newPage(r, 10)...)
	}
	src := p.String()[:100<<10]
	b.SetBytes(int64(len(src)))
	b.ReportAllocs()
	var n int
	for b.Loop() {
		n = len(chunk.Split(src, chunk.Options{}))
	}
	b.ReportMetric(float64(n), "chunks")
}
