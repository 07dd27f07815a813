package postgres_test

import (
	"context"
	"fmt"
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
