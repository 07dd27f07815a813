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

// Past ExactLimit matching records Query finds candidates by signature
// and reranks them; against exact search its recall@10 stays high, with
// and without a filter.
func TestRecall(t *testing.T) {
	if testing.Short() {
		t.Skip("12,000 records: not in -short")
	}
	const n, dims, queries, k = 3 * sqlitevec.ExactLimit, 384, 60, 10
	recs, emb, p := recallCorpus(t, n, dims)
	x := open(t, filepath.Join(t.TempDir(), "index.sqlite"), sqlitevec.Options{Dimensions: dims})
	for b := 0; b < n; b += 500 {
		require.NoError(t, x.Upsert(ctx, recs[b:min(n, b+500)]))
	}
	for _, filter := range []index.Filter{nil, {"site": "0"}} {
		found, total := 0, 0
		for q := range queries {
			// A query is a few words of some chunk, with a word of noise.
			words := strings.Fields(recs[p.rng.IntN(n)].Text)
			start := p.rng.IntN(len(words) - 8)
			text := strings.Join(words[start:start+6], " ") + " " + p.text(1)
			v, err := emb.Embed(ctx, []string{text})
			require.NoError(t, err)
			type sc struct {
				id    string
				score float64
			}
			var exact []sc
			for _, r := range recs {
				if filter.Match(r.Metadata) {
					exact = append(exact, sc{r.ID, cosine(v[0], r.Vector)})
				}
			}
			slices.SortFunc(exact, func(a, b sc) int { return cmp.Or(cmp.Compare(b.score, a.score), cmp.Compare(a.id, b.id)) })
			want := map[string]bool{}
			for _, e := range exact[:k] {
				want[e.id] = true
			}
			hits, err := x.Query(ctx, v[0], k, filter)
			require.NoError(t, err)
			require.Len(t, hits, k, "query %d", q)
			for i, h := range hits {
				if want[h.ID] {
					found++
				}
				require.True(t, filter.Match(h.Metadata))
				require.InDelta(t, cosine(v[0], h.Vector), float64(h.Score), 1e-6)
				if i > 0 {
					require.GreaterOrEqual(t, hits[i-1].Score, h.Score)
				}
			}
			total += k
		}
		recall := float64(found) / float64(total)
		t.Logf("recall@%d over %d records of %d dimensions, filter %v: %.3f", k, n, dims, filter, recall)
		require.GreaterOrEqual(t, recall, 0.95, "filter %v", filter)
	}
}
