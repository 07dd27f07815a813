//go:build cgo && sqlite_fts5

package sqlitevec_test

import (
	"cmp"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/recrawl/recrawl/embed"
	"github.com/recrawl/recrawl/index"
	"github.com/recrawl/recrawl/index/sqlitevec"
)

// prose makes chunk-like texts: words of a Zipf-like vocabulary, so that
// chunks share common words and differ in rare ones, as documentation
// does.
type prose struct {
	rng   *rand.Rand
	vocab []string
}

func newProse(seed uint64) *prose {
	p := &prose{rng: rand.New(rand.NewPCG(seed, 7))}
	p.vocab = make([]string, 5000)
	for i := range p.vocab {
		var b strings.Builder
		for range 3 + p.rng.IntN(8) {
			b.WriteByte(byte('a' + p.rng.IntN(26)))
		}
		p.vocab[i] = b.String()
	}
	return p
}

func (p *prose) text(words int) string {
	var b strings.Builder
	for range words {
		f := p.rng.Float64()
		b.WriteString(p.vocab[int(float64(len(p.vocab))*f*f*f)])
		b.WriteByte(' ')
	}
	return b.String()
}

// recallCorpus is n records of hashing-embedder vectors (the engine's
// offline default) of prose chunks, in two sites.
func recallCorpus(t testing.TB, n, dims int) ([]index.Record, *embed.Hashing, *prose) {
	t.Helper()
	emb, err := embed.NewHashing(dims)
	require.NoError(t, err)
	p := newProse(1)
	texts := make([]string, n)
	for i := range texts {
		texts[i] = p.text(60 + p.rng.IntN(120))
	}
	vecs, err := emb.Embed(ctx, texts)
	require.NoError(t, err)
	recs := make([]index.Record, n)
	for i := range recs {
		recs[i] = index.Record{ID: fmt.Sprintf("r%06d", i), Vector: vecs[i], Text: texts[i],
			Metadata: map[string]string{"site": fmt.Sprint(i % 4 / 3), "page": fmt.Sprint(i / 20)}}
	}
	return recs, emb, p
}

// Over more records than ExactLimit, Query stays exact (its recall@10
// against a brute force in Go is 1, with and without a filter), and
// Search by vector alone, whose candidates then come from the records'
// signatures, keeps the recall TestRecall logs (BENCHMARKS.md quotes it)
// above a floor; with the query's words too, the keyword matches join the
// candidates.
func TestRecall(t *testing.T) {
	if testing.Short() {
		t.Skip("12,000 records: not in -short")
	}
	const n, dims, queries, k = 12 * sqlitevec.ExactLimit, 384, 60, 10
	recs, emb, p := recallCorpus(t, n, dims)
	x := open(t, filepath.Join(t.TempDir(), "index.sqlite"), sqlitevec.Options{Dimensions: dims})
	for b := 0; b < n; b += 500 {
		require.NoError(t, x.Upsert(ctx, recs[b:min(n, b+500)]))
	}
	type query struct {
		text   string
		vector []float32
		want   map[string]bool // the exact top k
		kth    float64         // the k-th score: a record scoring as much ties with it
	}
	vecOf := map[string][]float32{}
	for _, r := range recs {
		vecOf[r.ID] = r.Vector
	}
	exactTop := func(v []float32, filter index.Filter) (map[string]bool, float64) {
		type sc struct {
			id    string
			score float64
		}
		var exact []sc
		for _, r := range recs {
			if filter.Match(r.Metadata) {
				exact = append(exact, sc{r.ID, cosine(v, r.Vector)})
			}
		}
		slices.SortFunc(exact, func(a, b sc) int { return cmp.Or(cmp.Compare(b.score, a.score), cmp.Compare(a.id, b.id)) })
		want := map[string]bool{}
		for _, e := range exact[:k] {
			want[e.id] = true
		}
		return want, exact[k-1].score
	}
	for _, filter := range []index.Filter{nil, {"site": "0"}} {
		var qs []query
		for range queries {
			// A query is a few words of some chunk, with a word of noise.
			words := strings.Fields(recs[p.rng.IntN(n)].Text)
			start := p.rng.IntN(len(words) - 8)
			text := strings.Join(words[start:start+6], " ") + " " + p.text(1)
			v, err := emb.Embed(ctx, []string{text})
			require.NoError(t, err)
			want, kth := exactTop(v[0], filter)
			qs = append(qs, query{text, v[0], want, kth})
		}
		recall := func(hits func(q query) []string) float64 {
			found := 0
			for _, q := range qs {
				for _, id := range hits(q) {
					if q.want[id] || cosine(q.vector, vecOf[id]) >= q.kth-1e-6 {
						found++
					}
				}
			}
			return float64(found) / float64(k*len(qs))
		}
		byQuery := recall(func(q query) []string {
			hits, err := x.Query(ctx, q.vector, k, filter)
			require.NoError(t, err)
			require.Len(t, hits, k)
			var ids []string
			for i, h := range hits {
				require.True(t, filter.Match(h.Metadata))
				require.InDelta(t, cosine(q.vector, h.Vector), float64(h.Score), 1e-6)
				if i > 0 {
					require.GreaterOrEqual(t, hits[i-1].Score, h.Score)
				}
				ids = append(ids, h.ID)
			}
			return ids
		})
		search := func(text string) func(q query) []string {
			return func(q query) []string {
				hits, err := x.Search(ctx, sqlitevec.SearchQuery{Text: text, Vector: q.vector, K: k, Filter: filter})
				require.NoError(t, err)
				var ids []string
				for _, h := range hits {
					require.True(t, filter.Match(h.Metadata))
					if h.VectorRank > 0 {
						ids = append(ids, h.ID)
					}
				}
				return ids
			}
		}
		byVector := recall(search(""))
		t.Logf("recall@%d over %d records of %d dimensions (hashing embedder), filter %v: Query %.3f, Search by vector %.3f", k, n, dims, filter, byQuery, byVector)
		require.Equal(t, 1.0, byQuery, "Query is exact")
		require.GreaterOrEqual(t, byVector, 0.25, "Search's signature candidates")
	}
}
