package memory_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/recrawl/recrawl/crawlstate"
	"github.com/recrawl/recrawl/crawlstate/memory"
)

// BenchmarkDue pages through the due queue of a source of 100,000 rows
// with spread schedules, 500 rows a page (and 1, the cost of finding the
// position); one op is one page.
func BenchmarkDue(b *testing.B) {
	ctx := context.Background()
	const rows, page = 100_000, 500
	s := memory.New(crawlstate.Options{})
	defer s.Close()
	ds := make([]crawlstate.Discovered, rows)
	for i := range ds {
		ds[i] = crawlstate.Discovered{URL: fmt.Sprintf("https://docs.example.com/section-%03d/page-%06d", i%500, i)}
	}
	if _, err := s.UpsertDiscovered(ctx, src, t0, ds); err != nil {
		b.Fatal(err)
	}
	rs := make([]crawlstate.Result, 0, rows)
	for i, d := range ds {
		st := crawlstate.Stats{ChangeRate: 0.1, Recent: make([]crawlstate.Check, 8)}
		next := t0.Add(time.Duration((i*7919)%rows) * time.Second)
		rs = append(rs, crawlstate.Result{URL: d.URL, At: t0, Changed: true, ContentHash: "h", ETag: `"e"`,
			Interval: time.Hour, NextCheck: next, Stats: &st, Title: "A page"})
	}
	if err := s.Record(ctx, src, rs); err != nil {
		b.Fatal(err)
	}
	now := t0.Add(rows * time.Second)
	for _, page := range []int{page, 1} {
		b.Run(fmt.Sprintf("page=%d", page), func(b *testing.B) {
			b.ReportAllocs()
			after := crawlstate.Key{}
			for b.Loop() {
				got, err := s.Due(ctx, src, now, after, page)
				if err != nil {
					b.Fatal(err)
				}
				if len(got) < page {
					after = crawlstate.Key{}
					continue
				}
				after = crawlstate.KeyOf(got[len(got)-1])
			}
		})
	}
}
