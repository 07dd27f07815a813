package index_test

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/recrawl/recrawl/index"
	"github.com/recrawl/recrawl/index/indextest"
)

var ctx = context.Background()

func rec(id string, vec []float32, meta ...string) index.Record {
	md := map[string]string{}
	for i := 0; i+1 < len(meta); i += 2 {
		md[meta[i]] = meta[i+1]
	}
	return index.Record{ID: id, Vector: vec, Metadata: md, Text: "text of " + id}
}

func hitIDs(hs []index.Hit) []string {
	out := make([]string, len(hs))
	for i, h := range hs {
		out[i] = h.ID
	}
	return out
}

// smallIndex holds a few 3-dimensional records with known similarities to
// the query [1 0 0].
func smallIndex(t *testing.T) *index.Memory {
	m := index.NewMemory(3)
	require.NoError(t, m.Upsert(ctx, []index.Record{
		rec("a", []float32{1, 0, 0}, "site", "x", "lang", "en"),
		rec("b", []float32{0.9, 0.1, 0}, "site", "x", "lang", "de"),
		rec("c", []float32{0, 1, 0}, "site", "y", "lang", "en"),
		rec("d", []float32{-2, 0, 0}, "site", "y", "lang", "en"),
		rec("e", []float32{3, 0, 0}, "site", "z"), // same direction as a
		rec("zero", []float32{0, 0, 0}, "site", "z"),
	}))
	return m
}

func TestMemoryQuery(t *testing.T) {
	tests := []struct {
		name    string
		vector  []float32
		k       int
		filter  index.Filter
		want    []string
		wantErr func(error) bool
	}{
		{name: "top 3, equal scores by ID", vector: []float32{1, 0, 0}, k: 3, want: []string{"a", "e", "b"}},
		{name: "k above count", vector: []float32{1, 0, 0}, k: 100, want: []string{"a", "e", "b", "c", "zero", "d"}},
		{name: "k zero", vector: []float32{1, 0, 0}, k: 0, want: []string{}},
		{name: "scale does not matter", vector: []float32{0.001, 0, 0}, k: 2, want: []string{"a", "e"}},
		{name: "filter one key", vector: []float32{1, 0, 0}, k: 10, filter: index.Filter{"site": "y"}, want: []string{"c", "d"}},
		{name: "filter all keys must match", vector: []float32{1, 0, 0}, k: 10, filter: index.Filter{"site": "x", "lang": "de"}, want: []string{"b"}},
		{name: "filter on a missing key", vector: []float32{1, 0, 0}, k: 10, filter: index.Filter{"lang": ""}, want: []string{}},
		{name: "filter matching nothing", vector: []float32{1, 0, 0}, k: 10, filter: index.Filter{"site": "none"}, want: []string{}},
		{name: "zero query scores all 0, ordered by ID", vector: []float32{0, 0, 0}, k: 3, want: []string{"a", "b", "c"}},
		{name: "negative k", vector: []float32{1, 0, 0}, k: -1, wantErr: func(err error) bool { return err != nil }},
		{name: "wrong dimensions", vector: []float32{1, 0}, k: 1, wantErr: func(err error) bool {
			var de *index.DimensionError
			return errors.As(err, &de) && de.Want == 3 && de.Got == 2 && de.ID == ""
		}},
		{name: "NaN in the query", vector: []float32{float32(math.NaN()), 0, 0}, k: 1, wantErr: func(err error) bool {
			var re *index.RecordError
			return errors.As(err, &re)
		}},
	}
	m := smallIndex(t)
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			hits, err := m.Query(ctx, tc.vector, tc.k, tc.filter)
			if tc.wantErr != nil {
				require.True(t, tc.wantErr(err), "error %v", err)
				require.Nil(t, hits)
				return
			}
			require.NoError(t, err)
			require.Equal(t, tc.want, hitIDs(hits))
			for _, h := range hits {
				require.Equal(t, "text of "+h.ID, h.Text)
				require.Len(t, h.Vector, 3)
			}
		})
	}

	hits, err := m.Query(ctx, []float32{1, 0, 0}, 100, nil)
	require.NoError(t, err)
	scores := map[string]float32{}
	for _, h := range hits {
		scores[h.ID] = h.Score
	}
	require.InDelta(t, 1, scores["a"], 1e-6)
	require.InDelta(t, 1, scores["e"], 1e-6)
	require.InDelta(t, 0.9/math.Sqrt(0.82), scores["b"], 1e-6)
	require.InDelta(t, 0, scores["c"], 1e-6)
	require.InDelta(t, -1, scores["d"], 1e-6)
	require.Zero(t, scores["zero"])
}

func TestMemoryEmpty(t *testing.T) {
	m := index.NewMemory(0)
	hits, err := m.Query(ctx, []float32{1, 2}, 5, nil)
	require.NoError(t, err)
	require.Empty(t, hits)
	n, err := m.Count(ctx)
	require.NoError(t, err)
	require.Zero(t, n)
	require.Zero(t, m.Dimensions())

	// The first record fixes the dimensions.
	require.NoError(t, m.Upsert(ctx, []index.Record{rec("a", []float32{1, 2})}))
	require.Equal(t, 2, m.Dimensions())
	var de *index.DimensionError
	require.ErrorAs(t, m.Upsert(ctx, []index.Record{rec("b", []float32{1, 2, 3})}), &de)
}

func TestMemoryUpsertValidation(t *testing.T) {
	tests := []struct {
		name    string
		records []index.Record
		check   func(t *testing.T, err error)
	}{
		{"empty ID", []index.Record{rec("ok", []float32{1, 0}), rec("", []float32{1, 0})}, func(t *testing.T, err error) {
			var re *index.RecordError
			require.ErrorAs(t, err, &re)
		}},
		{"wrong dimensions", []index.Record{rec("ok", []float32{1, 0}), rec("bad", []float32{1, 0, 0})}, func(t *testing.T, err error) {
			var de *index.DimensionError
			require.ErrorAs(t, err, &de)
			require.Equal(t, index.DimensionError{ID: "bad", Want: 2, Got: 3}, *de)
		}},
		{"NaN", []index.Record{rec("nan", []float32{float32(math.NaN()), 0})}, func(t *testing.T, err error) {
			var re *index.RecordError
			require.ErrorAs(t, err, &re)
			require.Equal(t, "nan", re.ID)
		}},
		{"infinity", []index.Record{rec("inf", []float32{float32(math.Inf(1)), 0})}, func(t *testing.T, err error) {
			var re *index.RecordError
			require.ErrorAs(t, err, &re)
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			m := index.NewMemory(2)
			err := m.Upsert(ctx, tc.records)
			tc.check(t, err)
			n, _ := m.Count(ctx)
			require.Zero(t, n, "a failed upsert stored records")
		})
	}
}

func TestMemoryUpsertReplaces(t *testing.T) {
	m := index.NewMemory(2)
	require.NoError(t, m.Upsert(ctx, []index.Record{rec("a", []float32{1, 0}, "v", "1"), rec("b", []float32{0, 1})}))
	require.NoError(t, m.Upsert(ctx, []index.Record{rec("a", []float32{0, 1}, "v", "2"), rec("a", []float32{0, 2}, "v", "3")}))
	n, _ := m.Count(ctx)
	require.Equal(t, 2, n)
	r, ok, err := m.Get(ctx, "a")
	require.NoError(t, err)
	require.True(t, ok)
	require.Equal(t, []float32{0, 2}, r.Vector, "the last record of a call wins")
	require.Equal(t, "3", r.Metadata["v"])
	hits, _ := m.Query(ctx, []float32{0, 1}, 2, nil)
	require.Equal(t, []string{"a", "b"}, hitIDs(hits))
}

func TestMemoryCopiesInAndOut(t *testing.T) {
	m := index.NewMemory(2)
	in := rec("a", []float32{1, 0}, "k", "v")
	require.NoError(t, m.Upsert(ctx, []index.Record{in}))
	in.Vector[0], in.Metadata["k"] = -1, "changed"

	hits, err := m.Query(ctx, []float32{1, 0}, 1, index.Filter{"k": "v"})
	require.NoError(t, err)
	require.Len(t, hits, 1)
	require.Equal(t, []float32{1, 0}, hits[0].Vector)
	hits[0].Vector[0], hits[0].Metadata["k"] = -1, "changed"

	r, _, _ := m.Get(ctx, "a")
	require.Equal(t, []float32{1, 0}, r.Vector)
	require.Equal(t, map[string]string{"k": "v"}, r.Metadata)
}

func TestMemoryDelete(t *testing.T) {
	m := smallIndex(t)
	require.NoError(t, m.Delete(ctx, []string{"b", "unknown", "b"}))
	n, _ := m.Count(ctx)
	require.Equal(t, 5, n)
	_, ok, _ := m.Get(ctx, "b")
	require.False(t, ok)
	// Records moved into freed slots keep their own data.
	for _, id := range []string{"a", "c", "d", "e", "zero"} {
		r, ok, err := m.Get(ctx, id)
		require.NoError(t, err)
		require.True(t, ok, id)
		require.Equal(t, id, r.ID)
		require.Equal(t, "text of "+id, r.Text)
	}

	_, err := m.DeleteWhere(ctx, nil)
	require.ErrorIs(t, err, index.ErrEmptyFilter)
	_, err = m.DeleteWhere(ctx, index.Filter{})
	require.ErrorIs(t, err, index.ErrEmptyFilter)

	removed, err := m.DeleteWhere(ctx, index.Filter{"site": "y"})
	require.NoError(t, err)
	require.Equal(t, 2, removed)
	hits, _ := m.Query(ctx, []float32{1, 0, 0}, 10, nil)
	require.Equal(t, []string{"a", "e", "zero"}, hitIDs(hits))

	removed, err = m.DeleteWhere(ctx, index.Filter{"site": "none"})
	require.NoError(t, err)
	require.Zero(t, removed)
}

func TestMemoryCanceledContext(t *testing.T) {
	m := smallIndex(t)
	c, cancel := context.WithCancel(ctx)
	cancel()
	require.ErrorIs(t, m.Upsert(c, []index.Record{rec("x", []float32{1, 1, 1})}), context.Canceled)
	require.ErrorIs(t, m.Delete(c, []string{"a"}), context.Canceled)
	_, err := m.DeleteWhere(c, index.Filter{"site": "x"})
	require.ErrorIs(t, err, context.Canceled)
	_, err = m.Query(c, []float32{1, 0, 0}, 1, nil)
	require.ErrorIs(t, err, context.Canceled)
	_, err = m.Count(c)
	require.ErrorIs(t, err, context.Canceled)
	n, _ := m.Count(ctx)
	require.Equal(t, 6, n, "a canceled call changed the index")
}

// Vectors whose float32 products overflow still score correctly.
func TestMemoryExtremeMagnitudes(t *testing.T) {
	m := index.NewMemory(2)
	require.NoError(t, m.Upsert(ctx, []index.Record{
		rec("huge", []float32{3e38, 3e38}),
		rec("tiny", []float32{1e-40, 0}),
	}))
	hits, err := m.Query(ctx, []float32{3e38, 0}, 2, nil)
	require.NoError(t, err)
	require.Equal(t, []string{"tiny", "huge"}, hitIDs(hits))
	require.InDelta(t, 1, hits[0].Score, 1e-6)
	require.InDelta(t, math.Sqrt(0.5), hits[1].Score, 1e-6)
}

type want struct {
	id    string
	score float64
}

// bruteForce is the reference: every record scored in float64, sorted.
func bruteForce(records map[string]index.Record, q []float32, k int, f index.Filter) []want {
	var all []want
	for _, r := range records {
		if !f.Match(r.Metadata) {
			continue
		}
		var d, na, nb float64
		for i := range q {
			d += float64(q[i]) * float64(r.Vector[i])
			na += float64(q[i]) * float64(q[i])
			nb += float64(r.Vector[i]) * float64(r.Vector[i])
		}
		s := 0.0
		if na > 0 && nb > 0 {
			s = d / math.Sqrt(na*nb)
		}
		all = append(all, want{r.ID, s})
	}
	slices.SortFunc(all, func(a, b want) int {
		if c := cmp.Compare(b.score, a.score); c != 0 {
			return c
		}
		return cmp.Compare(a.id, b.id)
	})
	return all[:min(k, len(all))]
}

// Query agrees with a brute-force reference over random data, random
// upserts and deletes, random filters and k.
func TestMemoryMatchesBruteForce(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	const dims = 16
	m := index.NewMemory(dims)
	ref := map[string]index.Record{}
	randVec := func() []float32 {
		v := make([]float32, dims)
		for i := range v {
			v[i] = float32(r.NormFloat64())
		}
		return v
	}
	sites := []string{"a", "b", "c"}
	for round := range 20 {
		var batch []index.Record
		for range 100 {
			id := fmt.Sprintf("r%04d", r.IntN(1500))
			rc := rec(id, randVec(), "site", sites[r.IntN(3)], "round", fmt.Sprint(round%4))
			batch = append(batch, rc)
		}
		require.NoError(t, m.Upsert(ctx, batch))
		for _, rc := range batch {
			ref[rc.ID] = rc
		}
		var del []string
		for range 20 {
			del = append(del, fmt.Sprintf("r%04d", r.IntN(1500)))
		}
		require.NoError(t, m.Delete(ctx, del))
		for _, id := range del {
			delete(ref, id)
		}
		if round%5 == 4 {
			f := index.Filter{"site": sites[r.IntN(3)], "round": fmt.Sprint(r.IntN(4))}
			n, err := m.DeleteWhere(ctx, f)
			require.NoError(t, err)
			expect := 0
			for id, rc := range ref {
				if f.Match(rc.Metadata) {
					delete(ref, id)
					expect++
				}
			}
			require.Equal(t, expect, n)
		}
		n, _ := m.Count(ctx)
		require.Equal(t, len(ref), n)

		for range 10 {
			q := randVec()
			k := 1 + r.IntN(30)
			var f index.Filter
			switch r.IntN(3) {
			case 1:
				f = index.Filter{"site": sites[r.IntN(3)]}
			case 2:
				f = index.Filter{"site": sites[r.IntN(3)], "round": fmt.Sprint(r.IntN(4))}
			}
			got, err := m.Query(ctx, q, k, f)
			require.NoError(t, err)
			exp := bruteForce(ref, q, k, f)
			require.Len(t, got, len(exp))
			for i := range exp {
				require.InDelta(t, exp[i].score, got[i].Score, 1e-5)
				// IDs agree except where float32 rounding reorders near-ties.
				if got[i].ID != exp[i].id {
					own := bruteForce(map[string]index.Record{got[i].ID: ref[got[i].ID]}, q, 1, nil)
					require.InDelta(t, exp[i].score, own[0].score, 1e-5, "rank %d: %s instead of %s", i, got[i].ID, exp[i].id)
				}
				require.True(t, f.Match(got[i].Metadata))
			}
		}
	}
}

func TestMemoryConcurrent(t *testing.T) {
	m := index.NewMemory(8)
	var wg sync.WaitGroup
	for w := range 4 {
		wg.Go(func() {
			r := rand.New(rand.NewPCG(uint64(w), 7))
			for i := range 200 {
				v := make([]float32, 8)
				for j := range v {
					v[j] = r.Float32()
				}
				id := fmt.Sprintf("w%d-%d", w, i%50)
				assert.NoError(t, m.Upsert(ctx, []index.Record{rec(id, v, "w", fmt.Sprint(w))}))
				_, err := m.Query(ctx, v, 5, index.Filter{"w": fmt.Sprint(w)})
				assert.NoError(t, err)
				if i%10 == 0 {
					assert.NoError(t, m.Delete(ctx, []string{id}))
				}
				if i%50 == 49 {
					_, err := m.DeleteWhere(ctx, index.Filter{"w": fmt.Sprint(w)})
					assert.NoError(t, err)
				}
			}
		})
	}
	wg.Go(func() {
		for range 20 {
			_, err := m.Count(ctx)
			assert.NoError(t, err)
			assert.NoError(t, m.SaveFile(ctx, t.TempDir()+"/snap"))
		}
	})
	wg.Wait()
}

// embeddingLike returns n random unit-ish vectors with a shared component,
// as embeddings of one corpus have.
func embeddingLike(r *rand.Rand, n, dims int) [][]float32 {
	common := make([]float32, dims)
	for i := range common {
		common[i] = float32(r.NormFloat64())
	}
	out := make([][]float32, n)
	for k := range out {
		v := make([]float32, dims)
		for i := range v {
			v[i] = 0.3*common[i] + float32(r.NormFloat64())
		}
		out[k] = v
	}
	return out
}

func TestMemoryInt8Recall(t *testing.T) {
	const n, dims, k, queries = 5000, 384, 10, 40
	r := rand.New(rand.NewPCG(1, 2))
	vecs := embeddingLike(r, n, dims)
	exact, q8 := index.NewMemory(dims), index.NewMemoryInt8(dims)
	recs := make([]index.Record, n)
	for i, v := range vecs {
		recs[i] = rec(fmt.Sprintf("r%05d", i), v, "n", fmt.Sprint(i%7))
	}
	require.NoError(t, exact.Upsert(ctx, recs))
	require.NoError(t, q8.Upsert(ctx, recs))
	found, maxDiff := 0, 0.0
	for _, q := range embeddingLike(r, queries, dims) {
		want, err := exact.Query(ctx, q, k, nil)
		require.NoError(t, err)
		got, err := q8.Query(ctx, q, k, nil)
		require.NoError(t, err)
		in := map[string]float32{}
		for _, h := range want {
			in[h.ID] = h.Score
		}
		for _, h := range got {
			if s, ok := in[h.ID]; ok {
				found++
				maxDiff = max(maxDiff, math.Abs(float64(s-h.Score)))
			}
		}
	}
	recall := float64(found) / (queries * k)
	t.Logf("int8 recall@%d = %.3f, largest score difference %.4f", k, recall, maxDiff)
	require.GreaterOrEqual(t, recall, 0.95, "the documented recall cost")
	require.Less(t, maxDiff, 0.01)

	// Filters, deletes and snapshots work as for float32 storage.
	hits, err := q8.Query(ctx, vecs[3], 1, index.Filter{"n": "3"})
	require.NoError(t, err)
	require.Equal(t, "r00003", hits[0].ID)
	require.InDelta(t, 1, hits[0].Score, 0.001)
	got, ok, err := q8.Get(ctx, "r00003")
	require.NoError(t, err)
	require.True(t, ok)
	for i, x := range got.Vector {
		require.InDelta(t, vecs[3][i], x, 0.05, "dequantised")
	}
	require.NoError(t, q8.Delete(ctx, []string{"r00003"}))
	_, ok, _ = q8.Get(ctx, "r00003")
	require.False(t, ok)
	path := t.TempDir() + "/q8.snap"
	require.NoError(t, q8.SaveFile(ctx, path))
	loaded, err := index.LoadFile(ctx, path)
	require.NoError(t, err)
	c, _ := loaded.Count(ctx)
	require.Equal(t, n-1, c)
	l, _, _ := loaded.Get(ctx, "r00004")
	g, _, _ := q8.Get(ctx, "r00004")
	require.Equal(t, g.Vector, l.Vector, "a snapshot keeps the dequantised vectors")
}

// The vectors live in blocks: an index grown past a block and shrunk back
// keeps every record intact.
func TestMemoryBlocksGrowAndShrink(t *testing.T) {
	for _, m := range []*index.Memory{index.NewMemory(8), index.NewMemoryInt8(8)} {
		r := rand.New(rand.NewPCG(3, 4))
		const n = 2500 // past two blocks
		vecs := embeddingLike(r, n, 8)
		for i, v := range vecs {
			require.NoError(t, m.Upsert(ctx, []index.Record{rec(fmt.Sprint(i), v, "page", fmt.Sprint(i/10), "even", fmt.Sprint(i%2 == 0))}))
		}
		removed, err := m.DeleteWhere(ctx, index.Filter{"even": "true"})
		require.NoError(t, err)
		require.Equal(t, n/2, removed)
		var ids []string
		for i := 1; i < n; i += 2 {
			if i > 1500 {
				ids = append(ids, fmt.Sprint(i))
			}
		}
		require.NoError(t, m.Delete(ctx, ids))
		c, _ := m.Count(ctx)
		require.Equal(t, n/2-len(ids), c)
		for i := 1; i <= 1500; i += 2 {
			got, ok, err := m.Get(ctx, fmt.Sprint(i))
			require.NoError(t, err)
			require.True(t, ok, i)
			require.Equal(t, map[string]string{"page": fmt.Sprint(i / 10), "even": "false"}, got.Metadata)
			for j, x := range got.Vector {
				require.InDelta(t, vecs[i][j], x, 0.05)
			}
			hits, err := m.Query(ctx, vecs[i], 1, index.Filter{"page": fmt.Sprint(i / 10)})
			require.NoError(t, err)
			require.Equal(t, fmt.Sprint(i), hits[0].ID)
		}
		// Grow again over the freed blocks.
		for i := n; i < n+1500; i++ {
			require.NoError(t, m.Upsert(ctx, []index.Record{rec(fmt.Sprint(i), vecs[i%n], "page", "new")}))
		}
		c, _ = m.Count(ctx)
		require.Equal(t, n/2-len(ids)+1500, c)
	}
}

// Filtered queries and deletes answer from postings once a filter key has
// been used: after any mix of upserts (changing a record's metadata too),
// deletes and filtered deletes, every filter finds exactly the records a
// scan of a model finds.
func TestMemoryFilterPostings(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 14))
	m := index.NewMemory(2)
	model := map[string]map[string]string{}
	pick := func(n int) string { return fmt.Sprint(rng.IntN(n)) }
	randomFilter := func() index.Filter {
		f := index.Filter{}
		if rng.IntN(3) > 0 {
			f["url"] = "u" + pick(20)
		}
		if rng.IntN(2) == 0 {
			f["source"] = "s" + pick(2)
		}
		if len(f) == 0 {
			f["source"] = "s0"
		}
		return f
	}
	matches := func(f index.Filter) []string {
		var ids []string
		for id, md := range model {
			if f.Match(md) {
				ids = append(ids, id)
			}
		}
		slices.Sort(ids)
		return ids
	}
	for step := range 3000 {
		switch op := rng.IntN(10); {
		case op < 5:
			var recs []index.Record
			for range 1 + rng.IntN(3) {
				id := "r" + pick(60)
				md := map[string]string{"source": "s" + pick(2), "url": "u" + pick(20)}
				if rng.IntN(4) == 0 {
					delete(md, "url")
				}
				recs = append(recs, index.Record{ID: id, Vector: []float32{1, float32(rng.IntN(5))}, Metadata: md})
				model[id] = md
			}
			require.NoError(t, m.Upsert(ctx, recs))
		case op < 7:
			id := "r" + pick(60)
			require.NoError(t, m.Delete(ctx, []string{id}))
			delete(model, id)
		case op < 8:
			f := randomFilter()
			want := matches(f)
			n, err := m.DeleteWhere(ctx, f)
			require.NoError(t, err)
			require.Equal(t, len(want), n, "step %d: DeleteWhere(%v)", step, f)
			for _, id := range want {
				delete(model, id)
			}
		default:
			f := randomFilter()
			hits, err := m.Query(ctx, []float32{1, 1}, 1000, f)
			require.NoError(t, err)
			var got []string
			for _, h := range hits {
				got = append(got, h.ID)
			}
			slices.Sort(got)
			require.Equal(t, matches(f), got, "step %d: Query(%v)", step, f)
			ids, err := m.IDs(ctx, f, 1000)
			require.NoError(t, err)
			require.Equal(t, matches(f), ids, "step %d: IDs(%v)", step, f)
			limited, err := m.IDs(ctx, f, 2)
			require.NoError(t, err)
			require.Equal(t, matches(f)[:min(2, len(got))], limited, "step %d: IDs(%v, 2)", step, f)
		}
		n, err := m.Count(ctx)
		require.NoError(t, err)
		require.Equal(t, len(model), n)
	}
}

func TestMemoryIDs(t *testing.T) {
	m := smallIndex(t)
	ids, err := m.IDs(ctx, nil, 10)
	require.NoError(t, err)
	require.Equal(t, []string{"a", "b", "c", "d", "e", "zero"}, ids, "an empty filter lists every record")
	ids, err = m.IDs(ctx, index.Filter{"site": "y", "lang": "en"}, 10)
	require.NoError(t, err)
	require.Equal(t, []string{"c", "d"}, ids)
	ids, err = m.IDs(ctx, index.Filter{"site": "nowhere"}, 10)
	require.NoError(t, err)
	require.Empty(t, ids)
	ids, err = m.IDs(ctx, index.Filter{"site": "x"}, 0)
	require.NoError(t, err)
	require.Empty(t, ids)
	_, err = m.IDs(ctx, nil, -1)
	require.Error(t, err)
	canceled, cancel := context.WithCancel(ctx)
	cancel()
	_, err = m.IDs(canceled, nil, 10)
	require.ErrorIs(t, err, context.Canceled)
}

// Texts come back as stored whatever their packing: empty, short,
// compressible prose, incompressible bytes, invalid UTF-8; through Get,
// Query and a snapshot.
func TestMemoryTexts(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 8))
	noise := make([]byte, 3000)
	for i := range noise {
		noise[i] = byte(rng.UintN(256))
	}
	prose := strings.Repeat("The widget pipeline reads its configuration from the environment. ", 40)
	texts := map[string]string{
		"empty": "", "short": "Install on Linux", "prose": prose, "noise": string(noise),
		"edge": strings.Repeat("x", 127), "edge2": strings.Repeat("y", 128), "nul": "\x00\x01" + prose,
	}
	m := index.NewMemory(2)
	var recs []index.Record
	for id, text := range texts {
		recs = append(recs, index.Record{ID: id, Vector: []float32{1, float32(len(text))}, Text: text})
	}
	require.NoError(t, m.Upsert(ctx, recs))
	check := func(m *index.Memory) {
		for id, want := range texts {
			r, ok, err := m.Get(ctx, id)
			require.NoError(t, err)
			require.True(t, ok)
			require.Equal(t, want, r.Text, id)
		}
		hits, err := m.Query(ctx, []float32{1, 1}, len(texts), nil)
		require.NoError(t, err)
		require.Len(t, hits, len(texts))
		for _, h := range hits {
			require.Equal(t, texts[h.ID], h.Text, h.ID)
		}
	}
	check(m)
	path := filepath.Join(t.TempDir(), "texts.snap")
	require.NoError(t, m.SaveFile(ctx, path))
	loaded, err := index.LoadFile(ctx, path)
	require.NoError(t, err)
	check(loaded)
	// A replaced text replaces the packed one.
	texts["prose"] = "now short"
	require.NoError(t, m.Upsert(ctx, []index.Record{{ID: "prose", Vector: []float32{1, 0}, Text: "now short"}}))
	check(m)
}

func TestMemoryConformance(t *testing.T) {
	indextest.Run(t, func(*testing.T) index.Index { return index.NewMemory(indextest.Dimensions) })
}

// Texts packed before and after the index has its dictionary, raw and
// compressed, round-trip through Get, Query and a snapshot.
func TestMemoryTextsAcrossTheDictionary(t *testing.T) {
	m := index.NewMemory(2)
	var want []index.Record
	for i := range 60 {
		text := strings.Repeat(fmt.Sprintf("chunk %d of the guide says how to configure the crawler. ", i), 1+i%12)
		if i%7 == 0 {
			text = fmt.Sprintf("short %d", i) // too short to compress
		}
		want = append(want, index.Record{ID: fmt.Sprintf("r%02d", i), Vector: []float32{1, float32(i)}, Text: text})
	}
	require.NoError(t, m.Upsert(ctx, want))
	path := filepath.Join(t.TempDir(), "m.snap")
	require.NoError(t, m.SaveFile(ctx, path))
	loaded, err := index.LoadFile(ctx, path)
	require.NoError(t, err)
	for _, idx := range []*index.Memory{m, loaded} {
		for _, r := range want {
			got, ok, err := idx.Get(ctx, r.ID)
			require.NoError(t, err)
			require.True(t, ok)
			require.Equal(t, r.Text, got.Text, r.ID)
		}
	}
}
