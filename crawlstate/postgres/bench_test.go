package postgres_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/recrawl/recrawl/crawlstate"
	"github.com/recrawl/recrawl/crawlstate/postgres"
)

// BenchmarkTouchListed measures marking seen the 2,000 URLs of a sitemap
// file that answered 304, in a source of 100k rows listed by 50 stored
// documents, then the run's MarkMissing over the source, as a run whose
// sitemaps did not change makes them: the documents are stamped, the rows
// counted, not written.
func BenchmarkTouchListed(b *testing.B) {
	const n, per = 100_000, 2000
	p := testPool(b)
	ctx := context.Background()
	s, err := postgres.OpenPool(ctx, p, postgres.WithSchema(testSchema(b, p)))
	require.NoError(b, err)
	defer s.Close()
	t0 := time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC)
	file := func(k int) string { return fmt.Sprintf("https://ex.com/sitemap-%02d.xml", k) }
	ds := make([]crawlstate.Discovered, n)
	for i := range ds {
		ds[i] = crawlstate.Discovered{URL: fmt.Sprintf("https://ex.com/docs/section-%02d/page-%06d", i/per, i), Via: file(i / per)}
	}
	_, err = s.UpsertDiscovered(ctx, "docs", t0, ds)
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

// benchURLs returns n URLs shaped like a documentation site's, in an
// order unrelated to their sort order, each with a lastmod.
func benchURLs(n int, lastmod time.Time) []crawlstate.Discovered {
	ds := make([]crawlstate.Discovered, n)
	for i := range ds {
		k := (i * 7919) % n // a permutation when n is not a multiple of 7919
		u := fmt.Sprintf("https://docs.example.com/section-%03d/page-%07d", k%500, k)
		ds[i] = crawlstate.Discovered{URL: u, OriginalURL: u + "/", LastMod: lastmod.Add(time.Duration(k) * time.Second),
			Via: fmt.Sprintf("https://docs.example.com/sitemaps/sitemap-%03d.xml", k/2000)}
	}
	return ds
}

// BenchmarkUpsertDiscovered measures one discovery run of 100k URLs, one
// UpsertDiscovered call (one transaction): new, every URL new to a fresh
// schema; reupsert, the same URLs again with nothing moved (the steady
// state).
func BenchmarkUpsertDiscovered(b *testing.B) {
	const n = 100_000
	p := testPool(b)
	ctx := context.Background()
	t0 := time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC)
	ds := benchURLs(n, t0)
	b.Run("new-100k", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			b.StopTimer()
			s, err := postgres.OpenPool(ctx, p, postgres.WithSchema(testSchema(b, p)))
			require.NoError(b, err)
			b.StartTimer()
			st, err := s.UpsertDiscovered(ctx, "docs", t0, ds)
			require.NoError(b, err)
			require.Equal(b, n, st.New)
		}
	})
	b.Run("reupsert-100k", func(b *testing.B) {
		s, err := postgres.OpenPool(ctx, p, postgres.WithSchema(testSchema(b, p)))
		require.NoError(b, err)
		_, err = s.UpsertDiscovered(ctx, "docs", t0, ds)
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
	p := testPool(b)
	ctx := context.Background()
	s, err := postgres.OpenPool(ctx, p, postgres.WithSchema(testSchema(b, p)))
	require.NoError(b, err)
	t0 := time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC)
	ds := benchURLs(n, t0)
	_, err = s.UpsertDiscovered(ctx, "docs", t0, ds)
	require.NoError(b, err)
	links := make([]string, 40)
	for i := range links {
		links[i] = fmt.Sprintf("https://docs.example.com/section-%03d/page-%07d", i, i*31)
	}
	text := strings.Repeat("The widget pipeline reads its settings from the environment. ", 17)[:1024]
	full := func(i int) crawlstate.Result {
		u := ds[i%n].URL
		at := t0.Add(time.Duration(i) * time.Second)
		chunks := make([]crawlstate.Chunk, 12)
		for j := range chunks {
			chunks[j] = crawlstate.Chunk{Ordinal: j, TextHash: fmt.Sprintf("%064x", i*12+j), RecordID: fmt.Sprintf("rec-%d-%d", i, j),
				HeadingPath: "Guide > Configure", Start: j * 1024, End: (j + 1) * 1024, Text: text}
		}
		recent := make([]crawlstate.Check, 32)
		for j := range recent {
			recent[j] = crawlstate.Check{Elapsed: time.Duration(20+(i+j)%30) * time.Hour, Changed: (i+j)%5 == 0}
		}
		return crawlstate.Result{URL: u, At: at, Changed: true, ContentHash: fmt.Sprintf("%064x", i),
			ETag: `"e"`, Interval: time.Hour, NextCheck: at.Add(time.Hour),
			Stats: &crawlstate.Stats{LastChanged: at, Elapsed: 800 * time.Hour, Recent: recent, ChangeRate: 0.2, Weight: 1.5},
			Title: "Configure", Canonical: u, Links: links, Chunks: chunks, ReplaceChunks: true,
			Alert: &crawlstate.Alert{ID: fmt.Sprintf("alert-%d", i), URL: u, Kind: "changed", CreatedAt: at,
				Payload: []byte(`{"kind":"changed"}`)}}
	}
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
