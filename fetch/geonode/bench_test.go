package geonode_test

import (
	"context"
	"testing"

	"github.com/recrawl/recrawl/fetch"
	"github.com/recrawl/recrawl/internal/fakegeonode"
)

// BenchmarkFetch measures one sync extraction end to end on loopback: the
// client, the fake API, the test site and the fake's HTML-to-Markdown
// conversion.
func BenchmarkFetch(b *testing.B) {
	e := newEnv(b, 1, fakegeonode.Options{})
	c := e.client(b)
	req := fetch.Request{URL: e.url(1)}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := c.Fetch(context.Background(), req); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkFetchBatch measures a 100-URL batch end to end (50 items finish
// per poll; two result pages).
func BenchmarkFetchBatch(b *testing.B) {
	e := newEnv(b, 100, fakegeonode.Options{ItemsPerPoll: 50})
	c := e.client(b)
	reqs := pageReqs(e, 100)
	b.ReportAllocs()
	for b.Loop() {
		n := 0
		err := c.FetchBatch(context.Background(), reqs, func(int, *fetch.Response, error) { n++ })
		if err != nil || n != 100 {
			b.Fatal(err, n)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Microseconds())/float64(b.N)/100, "µs/url")
}
