package postgres_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/require"

	"github.com/recrawl/recrawl/crawlstate"
	"github.com/recrawl/recrawl/crawlstate/internal/benchdata"
	"github.com/recrawl/recrawl/crawlstate/postgres"
)

// benchT0 is the benchmarks' first instant.
var benchT0 = time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC)

// benchState opens a State in a schema of the benchmark's own.
func benchState(b *testing.B, p *pgxpool.Pool) *postgres.State {
	s, err := postgres.OpenPool(context.Background(), p, postgres.WithSchema(testSchema(b, p)))
	require.NoError(b, err)
	return s
}

// BenchmarkTouchListed measures marking seen the 2,000 URLs of a sitemap
// file that answered 304, in a source of 100k rows listed by 50 stored
// documents, then the run's MarkMissing over the source, as a run whose
// sitemaps did not change makes them: the documents are stamped, the rows
// counted, not written.
func BenchmarkTouchListed(b *testing.B) {
	const n, per = 100_000, 2000
	ctx := context.Background()
	s := benchState(b, testPool(b))
	defer s.Close()
	t0 := benchT0
	file := func(k int) string { return fmt.Sprintf("https://ex.com/sitemap-%02d.xml", k) }
	ds := make([]crawlstate.Discovered, n)
	for i := range ds {
		ds[i] = crawlstate.Discovered{URL: fmt.Sprintf("https://ex.com/docs/section-%02d/page-%06d", i/per, i), Via: file(i / per)}
	}
	_, err := s.UpsertDiscovered(ctx, "docs", t0, ds)
	require.NoError(b, err)
	for k := range n / per {
		require.NoError(b, s.PutDocument(ctx, "docs", crawlstate.Document{URL: file(k), Entries: per, FetchedAt: t0}))
	}
	b.Run("sitemap-2000", func(b *testing.B) {
		for i := 0; b.Loop(); i++ {
			c, err := s.TouchListed(ctx, "docs", file(i%(n/per)), t0.Add(time.Duration(i+1)*time.Minute))
			require.NoError(b, err)
			require.Equal(b, per, c)
		}
	})
	b.Run("run-100k", func(b *testing.B) {
		for i := 0; b.Loop(); i++ {
			run := t0.Add(time.Duration(i+1) * time.Hour)
			for k := range n / per {
				_, err := s.TouchListed(ctx, "docs", file(k), run)
				require.NoError(b, err)
			}
			missing, err := s.MarkMissing(ctx, "docs", run, run, 3)
			require.NoError(b, err)
			require.Zero(b, missing)
		}
	})
}

// BenchmarkUpsertDiscovered measures one discovery run of 100k URLs, one
// UpsertDiscovered call (one transaction): new, every URL new to a fresh
// schema; reupsert, the same URLs again with nothing moved (the steady
// state).
func BenchmarkUpsertDiscovered(b *testing.B) {
	const n = 100_000
	p := testPool(b)
	ctx := context.Background()
	t0 := benchT0
	ds := benchdata.URLs(n, t0)
	b.Run("new-100k", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			b.StopTimer()
			s := benchState(b, p)
			b.StartTimer()
			st, err := s.UpsertDiscovered(ctx, "docs", t0, ds)
			require.NoError(b, err)
			require.Equal(b, n, st.New)
		}
	})
	b.Run("reupsert-100k", func(b *testing.B) {
		s := benchState(b, p)
		_, err := s.UpsertDiscovered(ctx, "docs", t0, ds)
		require.NoError(b, err)
		b.ReportAllocs()
		for i := 0; b.Loop(); i++ {
			st, err := s.UpsertDiscovered(ctx, "docs", t0.Add(time.Duration(i+1)*time.Hour), ds)
			require.NoError(b, err)
			require.Equal(b, n, st.Seen)
		}
	})
}

// BenchmarkRecord measures storing a batch of 100 fetch results in one
// transaction: 304s without statistics (not-modified) and changed pages
// as the engine records them, with statistics, 40 links, 12 chunks of
// 1 KiB and an alert (full).
func BenchmarkRecord(b *testing.B) {
	const n, size = 10_000, 100
	ctx := context.Background()
	s := benchState(b, testPool(b))
	t0 := benchT0
	ds := benchdata.URLs(n, t0)
	_, err := s.UpsertDiscovered(ctx, "docs", t0, ds)
	require.NoError(b, err)
	full := func(i int) crawlstate.Result { return benchdata.Changed(ds[i%n].URL, i, t0) }
	notModified := func(i int) crawlstate.Result {
		at := t0.Add(time.Duration(i) * time.Second)
		return crawlstate.Result{URL: ds[i%n].URL, At: at, NotModified: true, Interval: time.Hour, NextCheck: at.Add(time.Hour)}
	}
	for _, tc := range []struct {
		name   string
		result func(int) crawlstate.Result
	}{{"not-modified-100", notModified}, {"full-100", full}} {
		b.Run(tc.name, func(b *testing.B) {
			b.ReportAllocs()
			rs := make([]crawlstate.Result, size)
			for i := 0; b.Loop(); i++ {
				for j := range rs {
					rs[j] = tc.result(i*size + j)
				}
				require.NoError(b, s.Record(ctx, "docs", rs))
			}
			b.ReportMetric(float64(size)*float64(b.N)/b.Elapsed().Seconds(), "results/s")
		})
	}
}
