//go:build cgo && sqlite_fts5

package sqlitevec_test

import (
	"context"
	"database/sql"
	"fmt"
	"math"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/recrawl/recrawl/crawlstate"
	"github.com/recrawl/recrawl/crawlstate/sqlite"
	"github.com/recrawl/recrawl/embed"
	"github.com/recrawl/recrawl/index"
	"github.com/recrawl/recrawl/index/indextest"
	"github.com/recrawl/recrawl/index/sqlitevec"
)

var ctx = context.Background()

func open(t testing.TB, path string, opts sqlitevec.Options) *sqlitevec.Index {
	t.Helper()
	x, err := sqlitevec.Open(ctx, path, opts)
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, x.Close()) })
	return x
}

func TestConformance(t *testing.T) {
	t.Run("file", func(t *testing.T) {
		indextest.Run(t, func(t *testing.T) index.Index {
			return open(t, filepath.Join(t.TempDir(), "index.sqlite"), sqlitevec.Options{Dimensions: indextest.Dimensions})
		})
	})
	t.Run("memory", func(t *testing.T) {
		indextest.Run(t, func(t *testing.T) index.Index {
			return open(t, ":memory:", sqlitevec.Options{Dimensions: indextest.Dimensions})
		})
	})
}

func TestOpenValidatesOptions(t *testing.T) {
	for _, tc := range []struct {
		name string
		path string
		opts sqlitevec.Options
		want string
	}{
		{"empty path", "", sqlitevec.Options{}, "empty path"},
		{"negative dimensions", "x", sqlitevec.Options{Dimensions: -1}, "-1 dimensions"},
		{"negative busy timeout", "x", sqlitevec.Options{BusyTimeout: -time.Second}, "negative"},
		{"negative read connections", "x", sqlitevec.Options{ReadConns: -1}, "read connections"},
		{"negative candidates", "x", sqlitevec.Options{Candidates: -1}, "candidates"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := sqlitevec.Open(ctx, tc.path, tc.opts)
			require.ErrorContains(t, err, tc.want)
		})
	}
}

// An index keeps its records across a close and a reopen, and refuses
// vectors of another length afterwards, as Open with other dimensions.
func TestReopenKeepsRecordsAndDimensions(t *testing.T) {
	path := filepath.Join(t.TempDir(), "index.sqlite")
	x, err := sqlitevec.Open(ctx, path, sqlitevec.Options{})
	require.NoError(t, err)
	require.NoError(t, x.Upsert(ctx, []index.Record{
		{ID: "a", Vector: []float32{1, 0, 0}, Text: "alpha", Metadata: map[string]string{"k": "v"}},
		{ID: "b", Vector: []float32{0, 1, 0}, Text: "beta"},
	}))
	require.NoError(t, x.Close())

	x = open(t, path, sqlitevec.Options{})
	require.Equal(t, 3, x.Dimensions())
	n, err := x.Count(ctx)
	require.NoError(t, err)
	require.Equal(t, 2, n)
	r, ok, err := x.Get(ctx, "a")
	require.NoError(t, err)
	require.True(t, ok)
	require.Equal(t, index.Record{ID: "a", Vector: []float32{1, 0, 0}, Text: "alpha", Metadata: map[string]string{"k": "v"}}, r)
	var de *index.DimensionError
	require.ErrorAs(t, x.Upsert(ctx, []index.Record{{ID: "c", Vector: []float32{1, 0}}}), &de)

	_, err = sqlitevec.Open(ctx, path, sqlitevec.Options{Dimensions: 4})
	require.ErrorContains(t, err, "3 dimensions, not 4")
}

// The state and the index share one file, whichever opens it first, and
// write to it at once: every write lands, and the file stays sound.
func TestSharesTheStateFile(t *testing.T) {
	for _, order := range []string{"state first", "index first"} {
		t.Run(order, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "crawl.sqlite")
			var st *sqlite.State
			var x *sqlitevec.Index
			var err error
			if order == "index first" {
				x = open(t, path, sqlitevec.Options{Dimensions: 8})
			}
			st, err = sqlite.Open(ctx, path)
			require.NoError(t, err)
			t.Cleanup(func() { require.NoError(t, st.Close()) })
			if x == nil {
				x = open(t, path, sqlitevec.Options{Dimensions: 8})
			}

			var wg sync.WaitGroup
			errs := make(chan error, 2)
			now := time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)
			wg.Go(func() {
				for i := range 50 {
					urls := make([]crawlstate.Discovered, 20)
					for j := range urls {
						urls[j] = crawlstate.Discovered{URL: fmt.Sprintf("https://docs.example.com/p/%d/%d", i, j)}
					}
					if _, err := st.UpsertDiscovered(ctx, "docs", now, urls); err != nil {
						errs <- err
						return
					}
				}
			})
			wg.Go(func() {
				for i := range 50 {
					recs := make([]index.Record, 20)
					for j := range recs {
						v := make([]float32, 8)
						v[j%8] = 1
						recs[j] = index.Record{ID: fmt.Sprintf("%d-%d", i, j), Vector: v, Text: "chunk text", Metadata: map[string]string{"page": fmt.Sprint(i)}}
					}
					if err := x.Upsert(ctx, recs); err != nil {
						errs <- err
						return
					}
				}
			})
			wg.Wait()
			close(errs)
			for err := range errs {
				require.NoError(t, err)
			}
			total, _, err := st.Count(ctx, "docs")
			require.NoError(t, err)
			require.Equal(t, 1000, total)
			n, err := x.Count(ctx)
			require.NoError(t, err)
			require.Equal(t, 1000, n)

			db, err := sql.Open("sqlite3", "file:"+path+"?mode=ro")
			require.NoError(t, err)
			defer db.Close()
			var res string
			require.NoError(t, db.QueryRow(`PRAGMA integrity_check`).Scan(&res))
			require.Equal(t, "ok", res)
			hits, err := x.Search(ctx, sqlitevec.SearchQuery{Text: "chunk", K: 5, Filter: index.Filter{"page": "7"}})
			require.NoError(t, err)
			require.Len(t, hits, 5)
		})
	}
}

// A replaced or deleted record leaves nothing behind: its keyword entry,
// its signature and the metadata values no other record holds are gone
// (FTS5's integrity-check compares the keyword index with the texts).
func TestWritesLeaveNoResidue(t *testing.T) {
	path := filepath.Join(t.TempDir(), "index.sqlite")
	x := open(t, path, sqlitevec.Options{Dimensions: 8})
	v := func(i int) []float32 {
		out := make([]float32, 8)
		out[i%8], out[(i+3)%8] = 1, 0.5
		return out
	}
	for i := range 30 {
		require.NoError(t, x.Upsert(ctx, []index.Record{{ID: fmt.Sprint(i), Vector: v(i), Text: fmt.Sprintf("version one of chunk %d", i),
			Metadata: map[string]string{"page": fmt.Sprint(i / 10), "hash": "h1-" + fmt.Sprint(i)}}}))
	}
	for i := range 30 {
		require.NoError(t, x.Upsert(ctx, []index.Record{{ID: fmt.Sprint(i), Vector: v(i + 1), Text: fmt.Sprintf("second edition of chunk %d", i),
			Metadata: map[string]string{"page": fmt.Sprint(i / 10), "hash": "h2-" + fmt.Sprint(i)}}}))
	}
	require.NoError(t, x.Delete(ctx, []string{"0", "1", "2"}))
	n, err := x.DeleteWhere(ctx, index.Filter{"page": "2"})
	require.NoError(t, err)
	require.Equal(t, 10, n)

	db, err := sql.Open("sqlite3", "file:"+path)
	require.NoError(t, err)
	defer db.Close()
	_, err = db.Exec(`INSERT INTO index_text (index_text, rank) VALUES ('integrity-check', 1)`)
	require.NoError(t, err, "FTS5 integrity-check against the texts")
	count := func(q string) int {
		var n int
		require.NoError(t, db.QueryRow(q).Scan(&n))
		return n
	}
	require.Equal(t, 17, count(`SELECT count(*) FROM index_records`))
	require.Equal(t, 17, count(`SELECT count(*) FROM index_signatures`))
	require.Equal(t, 17*2, count(`SELECT count(*) FROM index_postings`))
	require.Equal(t, 2+17, count(`SELECT count(*) FROM index_values`), "two pages and 17 hashes: no value of a replaced or deleted record is left")
	require.Zero(t, count(`SELECT count(*) FROM index_text WHERE index_text MATCH 'version'`), "the first texts are out of the keyword index")
	require.Equal(t, 17, count(`SELECT count(*) FROM index_text WHERE index_text MATCH 'edition'`))
}

func TestSearch(t *testing.T) {
	x := open(t, filepath.Join(t.TempDir(), "index.sqlite"), sqlitevec.Options{})
	emb, err := embed.NewHashing(64)
	require.NoError(t, err)
	texts := map[string]string{
		"install":   "Install the command line tool with the package manager, then run it once.",
		"configure": "Configure the crawler: the user agent, the request delay and the page cap.",
		"webhook":   "Alerts go to a signed webhook; the receiver checks the HMAC signature.",
		"schedule":  "The scheduler estimates each page's change rate from its history.",
		"schedule2": "A schedule decides when to look again; pages that change often are checked often.",
		"unrelated": "Bananas are yellow and grow in bunches.",
	}
	var recs []index.Record
	for _, id := range slices.Sorted(func(yield func(string) bool) {
		for k := range texts {
			if !yield(k) {
				return
			}
		}
	}) {
		v, err := emb.Embed(ctx, []string{texts[id]})
		require.NoError(t, err)
		site := "docs"
		if id == "unrelated" {
			site = "fruit"
		}
		recs = append(recs, index.Record{ID: id, Vector: v[0], Text: texts[id], Metadata: map[string]string{"site": site}})
	}
	require.NoError(t, x.Upsert(ctx, recs))
	embedQ := func(q string) []float32 {
		v, err := emb.Embed(ctx, []string{q})
		require.NoError(t, err)
		return v[0]
	}
	ids := func(hits []sqlitevec.Hit) []string {
		var out []string
		for _, h := range hits {
			out = append(out, h.ID)
		}
		return out
	}

	t.Run("keywords alone, stemmed", func(t *testing.T) {
		hits, err := x.Search(ctx, sqlitevec.SearchQuery{Text: "signatures webhooks", K: 3})
		require.NoError(t, err)
		require.Equal(t, []string{"webhook"}, ids(hits))
		require.Equal(t, 1, hits[0].TextRank)
		require.Zero(t, hits[0].VectorRank)
		require.InDelta(t, 1.0/61, hits[0].Fused, 1e-12)
		require.Zero(t, hits[0].Score, "no query vector, no cosine")
	})
	t.Run("hybrid: in both lists first", func(t *testing.T) {
		q := "how often does the scheduler check a page"
		hits, err := x.Search(ctx, sqlitevec.SearchQuery{Text: q, Vector: embedQ(q), K: 3})
		require.NoError(t, err)
		require.Len(t, hits, 3)
		require.Contains(t, []string{"schedule", "schedule2"}, hits[0].ID)
		require.Positive(t, hits[0].VectorRank)
		require.Positive(t, hits[0].TextRank)
		for i := 1; i < len(hits); i++ {
			require.GreaterOrEqual(t, hits[i-1].Fused, hits[i].Fused)
		}
		want := 1/float64(sqlitevec.RRFConstant+hits[0].VectorRank) + 1/float64(sqlitevec.RRFConstant+hits[0].TextRank)
		require.InDelta(t, want, hits[0].Fused, 1e-12)
		require.InDelta(t, cosine(embedQ(q), hits[0].Vector), float64(hits[0].Score), 1e-6)
	})
	t.Run("filtered", func(t *testing.T) {
		hits, err := x.Search(ctx, sqlitevec.SearchQuery{Text: "bananas yellow", Vector: embedQ("bananas"), K: 10, Filter: index.Filter{"site": "docs"}})
		require.NoError(t, err)
		require.NotContains(t, ids(hits), "unrelated")
		hits, err = x.Search(ctx, sqlitevec.SearchQuery{Text: "bananas", K: 10, Filter: index.Filter{"site": "nowhere"}})
		require.NoError(t, err)
		require.Empty(t, hits)
	})
	t.Run("operators are words", func(t *testing.T) {
		for _, q := range []string{`"unbalanced`, `NEAR(a b)`, `text:install*`, `-install OR AND NOT`, `^`, `***`} {
			_, err := x.Search(ctx, sqlitevec.SearchQuery{Text: q, K: 3})
			require.NoError(t, err, q)
		}
	})
	t.Run("bad queries", func(t *testing.T) {
		_, err := x.Search(ctx, sqlitevec.SearchQuery{Text: "install", K: sqlitevec.MaxK + 1})
		require.ErrorContains(t, err, "k is 1001")
		_, err = x.Search(ctx, sqlitevec.SearchQuery{Text: "  ", K: 3})
		require.ErrorContains(t, err, "neither text nor a vector")
		var de *index.DimensionError
		_, err = x.Search(ctx, sqlitevec.SearchQuery{Vector: []float32{1, 2}, K: 3})
		require.ErrorAs(t, err, &de)
		var re *index.RecordError
		_, err = x.Search(ctx, sqlitevec.SearchQuery{Vector: slices.Repeat([]float32{float32(math.NaN())}, 64), K: 3})
		require.ErrorAs(t, err, &re)
	})
}

func cosine(a, b []float32) float64 {
	var d, na, nb float64
	for i := range a {
		d += float64(a[i]) * float64(b[i])
		na += float64(a[i]) * float64(a[i])
		nb += float64(b[i]) * float64(b[i])
	}
	return d / math.Sqrt(na*nb)
}

func TestCanceledContext(t *testing.T) {
	x := open(t, filepath.Join(t.TempDir(), "index.sqlite"), sqlitevec.Options{Dimensions: 2})
	c, cancel := context.WithCancel(ctx)
	cancel()
	require.ErrorIs(t, x.Upsert(c, []index.Record{{ID: "a", Vector: []float32{1, 0}}}), context.Canceled)
	require.ErrorIs(t, x.Delete(c, []string{"a"}), context.Canceled)
	_, err := x.Query(c, []float32{1, 0}, 1, nil)
	require.ErrorIs(t, err, context.Canceled)
	_, err = x.DeleteWhere(c, index.Filter{"k": "v"})
	require.ErrorIs(t, err, context.Canceled)
	_, err = x.Search(c, sqlitevec.SearchQuery{Text: "a", K: 1})
	require.ErrorIs(t, err, context.Canceled)
	n, err := x.Count(ctx)
	require.NoError(t, err)
	require.Zero(t, n)
}

func TestStringsRoundTrip(t *testing.T) {
	x := open(t, filepath.Join(t.TempDir(), "index.sqlite"), sqlitevec.Options{Dimensions: 2})
	odd := index.Record{ID: "nul\x00id", Vector: []float32{1, 0}, Text: "a\x00b \xff invalid", Metadata: map[string]string{"k\x00": "v\x00\xfe"}}
	require.NoError(t, x.Upsert(ctx, []index.Record{odd}))
	got, ok, err := x.Get(ctx, odd.ID)
	require.NoError(t, err)
	require.True(t, ok)
	require.Equal(t, odd, got)
	ids, err := x.IDs(ctx, index.Filter{"k\x00": "v\x00\xfe"}, 10)
	require.NoError(t, err)
	require.Equal(t, []string{odd.ID}, ids)
}

// More records tie at the k-th place than Query ranks again past it:
// the tie is still broken by ID.
func TestQueryBreaksWideTiesByID(t *testing.T) {
	x := open(t, filepath.Join(t.TempDir(), "index.sqlite"), sqlitevec.Options{Dimensions: 3})
	var recs []index.Record
	for i := range 60 {
		recs = append(recs, index.Record{ID: fmt.Sprintf("tie-%02d", 59-i), Vector: []float32{1, 1, 0}})
	}
	recs = append(recs, index.Record{ID: "best", Vector: []float32{1, 0.9, 0}}, index.Record{ID: "far", Vector: []float32{0, 0, 1}})
	require.NoError(t, x.Upsert(ctx, recs))
	hits, err := x.Query(ctx, []float32{1, 1, 0}, 5, nil)
	require.NoError(t, err)
	var got []string
	for _, h := range hits {
		got = append(got, h.ID)
	}
	require.Equal(t, []string{"tie-00", "tie-01", "tie-02", "tie-03", "tie-04"}, got)
}
