package pgvector_test

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/recrawl/recrawl"
	"github.com/recrawl/recrawl/clock"
	"github.com/recrawl/recrawl/crawlstate/sqlite"
	"github.com/recrawl/recrawl/discover"
	"github.com/recrawl/recrawl/embed"
	"github.com/recrawl/recrawl/index"
	"github.com/recrawl/recrawl/index/pgvector"
	"github.com/recrawl/recrawl/internal/testsite"
)

// The engine indexes a site into pgvector: one record per stored chunk,
// a changed page's old records replaced, a gone page's removed.
func TestEngineIndexesIntoPgvector(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	x, err := pgvector.OpenPool(ctx, testPool(t), pgvector.Options{Dimensions: 32, Schema: testSchema(t)})
	require.NoError(t, err)
	clk := clock.NewAutoFake(time.Date(2026, 12, 1, 6, 0, 0, 0, time.UTC))
	site := testsite.New(testsite.Options{Pages: 6, Clock: clk})
	defer site.Close()
	st, err := sqlite.Open(context.Background(), filepath.Join(t.TempDir(), "state.sqlite"))
	require.NoError(t, err)
	defer st.Close()
	emb, err := embed.NewHashing(32)
	require.NoError(t, err)
	limits := recrawl.DefaultLimits()
	limits.RequestDelay = 0
	eng, err := recrawl.New(recrawl.Config{State: st, Clock: clk, Embedder: emb, Index: x, Limits: &limits})
	require.NoError(t, err)
	src := discover.Sitemap{URL: site.SitemapURL()}

	// stored is the record IDs of every stored chunk list, sorted.
	stored := func() []string {
		var ids []string
		for _, p := range site.Paths() {
			chunks, err := st.Chunks(ctx, src.Name(), site.PageURL(p))
			require.NoError(t, err)
			for _, c := range chunks {
				ids = append(ids, c.RecordID)
			}
		}
		return ids
	}
	indexed := func() []string {
		ids, err := x.IDs(ctx, nil, 100000)
		require.NoError(t, err)
		return ids
	}

	rep, err := eng.Run(ctx, src)
	require.NoError(t, err)
	require.Equal(t, 6, rep.New)
	require.NotEmpty(t, indexed())
	require.ElementsMatch(t, stored(), indexed())

	paths := site.Paths()
	site.SetContent(paths[0], "<h2>Rewritten</h2><p>The first page now says something else entirely, at length.</p>")
	site.Delete(paths[1], 410)
	clk.Advance(25 * time.Hour)
	rep, err = eng.Run(ctx, src)
	require.NoError(t, err)
	require.Equal(t, 1, rep.Changed)
	require.Equal(t, 1, rep.Gone)
	require.ElementsMatch(t, stored(), indexed())
	gone, err := x.IDs(ctx, index.Filter{"source_url": site.PageURL(paths[1])}, 10)
	require.NoError(t, err)
	require.Empty(t, gone)

	q, err := emb.Embed(ctx, []string{"The first page now says something else entirely"})
	require.NoError(t, err)
	hits, err := x.Query(ctx, q[0], 1, nil)
	require.NoError(t, err)
	require.Equal(t, site.PageURL(paths[0]), hits[0].Metadata["source_url"])
}
