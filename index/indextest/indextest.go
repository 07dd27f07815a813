// Package indextest is the conformance suite of index.Index: every
// implementation (index.Memory, index/pgvector, one of your own) runs the
// same tests against a fresh index per subtest.
//
// The suite pins the contract the index package documents: upserts
// idempotent by record ID (a later record with the same ID wins, also
// within one call), Delete ignoring unknown IDs, *DimensionError and
// *RecordError for vectors that cannot be stored or queried, metadata
// filters exactly as index.Filter.Match defines them, Query ordered by
// cosine similarity with equal scores ordered by ID, Count, DeleteWhere
// refusing an empty filter, copies in and out, and index.Lister when the
// index has it.
//
// Records in the suite never hold a zero vector (whose cosine is
// undefined; index.Memory scores it 0, index/pgvector refuses it), but a
// zero query vector is asked for: it scores every record 0.
package indextest

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/recrawl/recrawl/index"
)

// Dimensions is the vector length of the indexes the suite asks for.
const Dimensions = 4

// scoreDelta is how far a score may differ from the cosine computed in
// float64: stores may compute in float32.
const scoreDelta = 1e-4

// Factory returns a new, empty index for vectors of Dimensions
// dimensions. It is called once per subtest; it registers any cleanup
// with t.Cleanup.
type Factory func(t *testing.T) index.Index

// Run runs the conformance suite against the indexes newIndex returns.
func Run(t *testing.T, newIndex Factory) {
	t.Helper()
	for _, tc := range []struct {
		name string
		fn   func(t *testing.T, idx index.Index)
	}{
		{"UpsertIsIdempotentByID", testUpsertIdempotent},
		{"UpsertReplaces", testUpsertReplaces},
		{"UpsertValidation", testUpsertValidation},
		{"QueryValidation", testQueryValidation},
		{"Delete", testDelete},
		{"DeleteWhere", testDeleteWhere},
		{"Filters", testFilters},
		{"QueryOrder", testQueryOrder},
		{"QueryMatchesBruteForce", testBruteForce},
		{"ZeroQueryVector", testZeroQuery},
		{"Copies", testCopies},
		{"RoundTrip", testRoundTrip},
		{"Concurrent", testConcurrent},
		{"Lister", testLister},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tc.fn(t, newIndex(t))
		})
	}
}

func rec(id string, vec []float32, meta ...string) index.Record {
	md := map[string]string{}
	for i := 0; i+1 < len(meta); i += 2 {
		md[meta[i]] = meta[i+1]
	}
	return index.Record{ID: id, Vector: vec, Metadata: md, Text: "text of " + id}
}

// nonNil returns s, or an empty slice for nil, so that "none" compares
// equal either way.
func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

func ids(hits []index.Hit) []string {
	out := make([]string, len(hits))
	for i, h := range hits {
		out[i] = h.ID
	}
	return out
}

func count(t *testing.T, idx index.Index) int {
	t.Helper()
	n, err := idx.Count(context.Background())
	require.NoError(t, err)
	return n
}

func all(t *testing.T, idx index.Index, filter index.Filter) []index.Hit {
	t.Helper()
	hits, err := idx.Query(context.Background(), []float32{1, 0, 0, 0}, 1000, filter)
	require.NoError(t, err)
	return hits
}

// small holds records with known similarities to the query [1 0 0 0].
func small(t *testing.T, idx index.Index) {
	t.Helper()
	require.NoError(t, idx.Upsert(context.Background(), []index.Record{
		rec("a", []float32{1, 0, 0, 0}, "site", "x", "lang", "en"),
		rec("b", []float32{0.9, 0.1, 0, 0}, "site", "x", "lang", "de"),
		rec("c", []float32{0, 1, 0, 0}, "site", "y", "lang", "en"),
		rec("d", []float32{-2, 0, 0, 0}, "site", "y", "lang", "en"),
		rec("e", []float32{3, 0, 0, 0}, "site", "z"), // same direction as a
		rec("f", []float32{0, 0, 1, 1}, "site", "z", "lang", ""),
	}))
}

func testUpsertIdempotent(t *testing.T, idx index.Index) {
	ctx := context.Background()
	small(t, idx)
	require.Equal(t, 6, count(t, idx))
	before := all(t, idx, nil)
	small(t, idx)
	require.Equal(t, 6, count(t, idx), "a second upsert of the same IDs adds nothing")
	require.Equal(t, ids(before), ids(all(t, idx, nil)))

	// Within one call a later record with the same ID wins.
	require.NoError(t, idx.Upsert(ctx, []index.Record{
		rec("g", []float32{0, 1, 0, 0}, "v", "first"),
		rec("g", []float32{1, 0, 0, 0}, "v", "second"),
	}))
	require.Equal(t, 7, count(t, idx))
	hits := all(t, idx, index.Filter{"v": "second"})
	require.Equal(t, []string{"g"}, ids(hits))
	require.InDelta(t, 1, hits[0].Score, scoreDelta)
	require.Empty(t, all(t, idx, index.Filter{"v": "first"}))

	require.NoError(t, idx.Upsert(ctx, nil), "an empty upsert is a no-op")
	require.Equal(t, 7, count(t, idx))
}

func testUpsertReplaces(t *testing.T, idx index.Index) {
	ctx := context.Background()
	small(t, idx)
	r := rec("a", []float32{0, 1, 0, 0}, "site", "w")
	r.Text = "replaced"
	require.NoError(t, idx.Upsert(ctx, []index.Record{r}))
	require.Equal(t, 6, count(t, idx))
	require.Empty(t, all(t, idx, index.Filter{"site": "x", "lang": "en"}), "the old metadata is gone")
	hits := all(t, idx, index.Filter{"site": "w"})
	require.Len(t, hits, 1)
	require.Equal(t, "replaced", hits[0].Text)
	require.Equal(t, []float32{0, 1, 0, 0}, hits[0].Vector)
	require.Equal(t, map[string]string{"site": "w"}, hits[0].Metadata)
	require.InDelta(t, 0, hits[0].Score, scoreDelta)
}

func testUpsertValidation(t *testing.T, idx index.Index) {
	ctx := context.Background()
	isDim := func(id string, want, got int) func(error) bool {
		return func(err error) bool {
			var de *index.DimensionError
			return errors.As(err, &de) && de.ID == id && de.Want == want && de.Got == got
		}
	}
	isRecord := func(id string) func(error) bool {
		return func(err error) bool {
			var re *index.RecordError
			return errors.As(err, &re) && re.ID == id
		}
	}
	nan, inf := float32(math.NaN()), float32(math.Inf(1))
	for _, tc := range []struct {
		name    string
		records []index.Record
		is      func(error) bool
	}{
		{"short vector", []index.Record{rec("ok", []float32{1, 0, 0, 0}), rec("short", []float32{1, 0})}, isDim("short", Dimensions, 2)},
		{"long vector", []index.Record{rec("long", []float32{1, 0, 0, 0, 0})}, isDim("long", Dimensions, 5)},
		{"empty vector", []index.Record{rec("ok", []float32{1, 0, 0, 0}), rec("none", nil)}, isDim("none", Dimensions, 0)},
		{"empty ID", []index.Record{rec("ok", []float32{1, 0, 0, 0}), rec("", []float32{1, 0, 0, 0})}, isRecord("")},
		{"NaN", []index.Record{rec("ok", []float32{1, 0, 0, 0}), rec("nan", []float32{1, nan, 0, 0})}, isRecord("nan")},
		{"infinity", []index.Record{rec("inf", []float32{inf, 0, 0, 0})}, isRecord("inf")},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := idx.Upsert(ctx, tc.records)
			require.True(t, tc.is(err), "error %v (%T)", err, err)
			require.Zero(t, count(t, idx), "a refused upsert stores none of its records")
		})
	}
}

func testQueryValidation(t *testing.T, idx index.Index) {
	ctx := context.Background()
	small(t, idx)
	hits, err := idx.Query(ctx, []float32{1, 0, 0, 0}, 0, nil)
	require.NoError(t, err)
	require.Empty(t, hits, "k == 0 returns nothing")

	hits, err = idx.Query(ctx, []float32{1, 0, 0, 0}, -1, nil)
	require.Error(t, err, "k < 0")
	require.Nil(t, hits)

	hits, err = idx.Query(ctx, []float32{1, 0}, 1, nil)
	var de *index.DimensionError
	require.ErrorAs(t, err, &de)
	require.Equal(t, index.DimensionError{Want: Dimensions, Got: 2}, *de)
	require.Nil(t, hits)

	hits, err = idx.Query(ctx, []float32{float32(math.NaN()), 0, 0, 0}, 1, nil)
	var re *index.RecordError
	require.ErrorAs(t, err, &re)
	require.Nil(t, hits)
}

func testDelete(t *testing.T, idx index.Index) {
	ctx := context.Background()
	small(t, idx)
	require.NoError(t, idx.Delete(ctx, []string{"b", "unknown", "b"}))
	require.Equal(t, 5, count(t, idx))
	require.Equal(t, []string{"a", "e", "c", "f", "d"}, ids(all(t, idx, nil)))
	require.NoError(t, idx.Delete(ctx, nil), "an empty delete is a no-op")
	require.NoError(t, idx.Delete(ctx, []string{"a", "c", "d", "e", "f"}))
	require.Zero(t, count(t, idx))
	require.Empty(t, all(t, idx, nil))
	// A deleted ID can be stored again.
	require.NoError(t, idx.Upsert(ctx, []index.Record{rec("a", []float32{0, 1, 0, 0})}))
	require.Equal(t, 1, count(t, idx))
}

func testDeleteWhere(t *testing.T, idx index.Index) {
	ctx := context.Background()
	small(t, idx)
	for _, f := range []index.Filter{nil, {}} {
		n, err := idx.DeleteWhere(ctx, f)
		require.ErrorIs(t, err, index.ErrEmptyFilter)
		require.Zero(t, n)
	}
	require.Equal(t, 6, count(t, idx))

	n, err := idx.DeleteWhere(ctx, index.Filter{"site": "y"})
	require.NoError(t, err)
	require.Equal(t, 2, n)
	require.Equal(t, []string{"a", "e", "b", "f"}, ids(all(t, idx, nil)))

	n, err = idx.DeleteWhere(ctx, index.Filter{"site": "x", "lang": "de"})
	require.NoError(t, err)
	require.Equal(t, 1, n)
	n, err = idx.DeleteWhere(ctx, index.Filter{"site": "none"})
	require.NoError(t, err)
	require.Zero(t, n)
	n, err = idx.DeleteWhere(ctx, index.Filter{"lang": ""})
	require.NoError(t, err)
	require.Equal(t, 1, n, "an empty value matches a record holding the key with an empty value")
	require.Equal(t, []string{"a", "e"}, ids(all(t, idx, nil)))
}

type filterCase struct {
	name   string
	filter index.Filter
}

// filterCases are filters over the records of small, with what
// index.Filter.Match selects.
var filterCases = []filterCase{
	{"nil", nil},
	{"empty", index.Filter{}},
	{"one key", index.Filter{"site": "y"}},
	{"every key must match", index.Filter{"site": "x", "lang": "de"}},
	{"a key no record has", index.Filter{"missing": "x"}},
	{"an empty value", index.Filter{"lang": ""}},
	{"a value no record has", index.Filter{"site": "none"}},
	{"keys of different records", index.Filter{"site": "z", "lang": "en"}},
	{"case matters", index.Filter{"site": "X"}},
}

func testFilters(t *testing.T, idx index.Index) {
	ctx := context.Background()
	small(t, idx)
	// Values that a store could mistake for other JSON or SQL.
	odd := []index.Record{
		rec("q1", []float32{0, 0, 0, 1}, "odd", `"quoted"`, "n", "1"),
		rec("q2", []float32{0, 0, 1, 0}, "odd", `it's`, "n", "01"),
		rec("q3", []float32{0, 1, 1, 0}, "odd", `%_*`, "unicode", "größe ✓"),
		rec("q4", []float32{1, 1, 1, 0}, "odd", `{"a":1}`, "n", "true"),
	}
	require.NoError(t, idx.Upsert(ctx, odd))
	stored := all(t, idx, nil)
	cases := append(slices.Clone(filterCases),
		filterCase{"a quoted value", index.Filter{"odd": `"quoted"`}},
		filterCase{"a number-like value is a string", index.Filter{"n": "1"}},
		filterCase{"a wildcard-like value is literal", index.Filter{"odd": "%"}},
		filterCase{"unicode", index.Filter{"unicode": "größe ✓"}},
		filterCase{"a JSON-like value is a string", index.Filter{"odd": `{"a":1}`}},
	)
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var want []string
			for _, h := range stored {
				if tc.filter.Match(h.Metadata) {
					want = append(want, h.ID)
				}
			}
			got := ids(all(t, idx, tc.filter))
			slices.Sort(got)
			slices.Sort(want)
			require.Equal(t, nonNil(want), nonNil(got))
		})
	}
}

func testQueryOrder(t *testing.T, idx index.Index) {
	ctx := context.Background()
	small(t, idx)
	for _, tc := range []struct {
		name   string
		vector []float32
		k      int
		filter index.Filter
		want   []string
	}{
		{"top 3, equal scores by ID", []float32{1, 0, 0, 0}, 3, nil, []string{"a", "e", "b"}},
		{"k above count", []float32{1, 0, 0, 0}, 100, nil, []string{"a", "e", "b", "c", "f", "d"}},
		{"opposite direction", []float32{-1, 0, 0, 0}, 1, nil, []string{"d"}},
		{"filtered", []float32{1, 0, 0, 0}, 10, index.Filter{"lang": "en"}, []string{"a", "c", "d"}},
		{"filtered to fewer than k", []float32{0, 1, 0, 0}, 2, index.Filter{"site": "y"}, []string{"c", "d"}},
		{"filter matching nothing", []float32{1, 0, 0, 0}, 10, index.Filter{"site": "none"}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			hits, err := idx.Query(ctx, tc.vector, tc.k, tc.filter)
			require.NoError(t, err)
			require.Equal(t, nonNil(tc.want), ids(hits))
		})
	}

	// Scale does not matter. (a and e score 1 up to rounding, so their
	// order is the store's.)
	hits, err := idx.Query(ctx, []float32{0.001, 0, 0, 0}, 2, nil)
	require.NoError(t, err)
	require.ElementsMatch(t, []string{"a", "e"}, ids(hits))
	for _, h := range hits {
		require.InDelta(t, 1, h.Score, scoreDelta)
	}

	want := map[string]float64{"a": 1, "e": 1, "b": 0.9 / math.Sqrt(0.82), "c": 0, "f": 0, "d": -1}
	for _, h := range all(t, idx, nil) {
		require.InDelta(t, want[h.ID], h.Score, scoreDelta, h.ID)
	}

	// Identical vectors tie exactly: ordered by ID, as bytes.
	same := []float32{0.3, 0.4, 0.5, 0.6}
	var tied []index.Record
	for _, id := range []string{"t-e", "t-B", "t-d", "t-a", "t-c", "t-é"} {
		tied = append(tied, rec(id, same, "tie", "1"))
	}
	require.NoError(t, idx.Upsert(ctx, tied))
	hits, err = idx.Query(ctx, same, 4, index.Filter{"tie": "1"})
	require.NoError(t, err)
	require.Equal(t, []string{"t-B", "t-a", "t-c", "t-d"}, ids(hits))
	hits, err = idx.Query(ctx, same, 10, index.Filter{"tie": "1"})
	require.NoError(t, err)
	require.Equal(t, []string{"t-B", "t-a", "t-c", "t-d", "t-e", "t-é"}, ids(hits))
}

// cosine64 is the cosine similarity in float64.
func cosine64(a, b []float32) float64 {
	var dot, na, nb float64
	for i := range a {
		dot += float64(a[i]) * float64(b[i])
		na += float64(a[i]) * float64(a[i])
		nb += float64(b[i]) * float64(b[i])
	}
	return dot / math.Sqrt(na*nb)
}

func randomVector(rng *rand.Rand) []float32 {
	v := make([]float32, Dimensions)
	for {
		var norm float32
		for i := range v {
			v[i] = float32(rng.NormFloat64())
			norm += v[i] * v[i]
		}
		if norm > 1e-3 {
			return v
		}
	}
}

// testBruteForce compares queries over random records with a brute-force
// ranking. Scores within scoreDelta of the k-th score may be exchanged
// (stores differ in precision); every other record must be in or out of
// the top k exactly as the brute force says.
func testBruteForce(t *testing.T, idx index.Index) {
	ctx := context.Background()
	rng := rand.New(rand.NewPCG(15, 4))
	const n = 300
	records := make([]index.Record, n)
	for i := range records {
		records[i] = rec(fmt.Sprintf("r%03d", i), randomVector(rng), "group", fmt.Sprint(i%3), "odd", fmt.Sprint(i%2 == 1))
	}
	// In batches, as the engine writes a page at a time.
	for b := 0; b < n; b += 50 {
		require.NoError(t, idx.Upsert(ctx, records[b:b+50]))
	}
	require.Equal(t, n, count(t, idx))
	filters := []index.Filter{nil, {"group": "1"}, {"group": "2", "odd": "true"}}
	for q := range 30 {
		vector := randomVector(rng)
		filter := filters[q%len(filters)]
		k := []int{1, 5, 10, 25}[q%4]
		type scored struct {
			id    string
			score float64
		}
		var want []scored
		for _, r := range records {
			if filter.Match(r.Metadata) {
				want = append(want, scored{r.ID, cosine64(vector, r.Vector)})
			}
		}
		slices.SortFunc(want, func(a, b scored) int {
			return cmp.Or(cmp.Compare(b.score, a.score), cmp.Compare(a.id, b.id))
		})
		hits, err := idx.Query(ctx, vector, k, filter)
		require.NoError(t, err)
		require.Len(t, hits, min(k, len(want)), "query %d", q)
		byID := map[string]float64{}
		for _, w := range want {
			byID[w.id] = w.score
		}
		got := map[string]bool{}
		for i, h := range hits {
			got[h.ID] = true
			exact, ok := byID[h.ID]
			require.True(t, ok, "query %d: hit %s does not match the filter", q, h.ID)
			require.InDelta(t, exact, h.Score, scoreDelta, "query %d: score of %s", q, h.ID)
			if i > 0 {
				prev := hits[i-1]
				require.True(t, prev.Score > h.Score || prev.Score == h.Score && prev.ID < h.ID,
					"query %d: hits out of order at %d: %s %v, %s %v", q, i, prev.ID, prev.Score, h.ID, h.Score)
			}
		}
		kth := want[min(k, len(want))-1].score
		for i, w := range want {
			if math.Abs(w.score-kth) <= scoreDelta {
				continue
			}
			require.Equal(t, i < k, got[w.id], "query %d: %s (score %v, rank %d) in the top %d", q, w.id, w.score, i, k)
		}
	}
}

func testZeroQuery(t *testing.T, idx index.Index) {
	small(t, idx)
	hits, err := idx.Query(context.Background(), make([]float32, Dimensions), 3, nil)
	require.NoError(t, err)
	require.Equal(t, []string{"a", "b", "c"}, ids(hits), "every score is 0, so the order is by ID")
	for _, h := range hits {
		require.Zero(t, h.Score)
	}
	hits, err = idx.Query(context.Background(), make([]float32, Dimensions), 10, index.Filter{"site": "y"})
	require.NoError(t, err)
	require.Equal(t, []string{"c", "d"}, ids(hits))
}

func testCopies(t *testing.T, idx index.Index) {
	ctx := context.Background()
	in := rec("a", []float32{1, 0, 0, 0}, "k", "v")
	require.NoError(t, idx.Upsert(ctx, []index.Record{in}))
	in.Vector[0], in.Metadata["k"], in.Text = -1, "changed", "changed"

	hits := all(t, idx, index.Filter{"k": "v"})
	require.Len(t, hits, 1)
	require.Equal(t, []float32{1, 0, 0, 0}, hits[0].Vector)
	require.Equal(t, "text of a", hits[0].Text)
	hits[0].Vector[0], hits[0].Metadata["k"] = -1, "changed"

	hits = all(t, idx, nil)
	require.Len(t, hits, 1)
	require.Equal(t, []float32{1, 0, 0, 0}, hits[0].Vector)
	require.Equal(t, map[string]string{"k": "v"}, hits[0].Metadata)
}

func testRoundTrip(t *testing.T, idx index.Index) {
	ctx := context.Background()
	v := []float32{1.0000001, -3.4028235e38 / 4, 1e-30, 0.1}
	long := make([]byte, 20000)
	for i := range long {
		long[i] = "abcdefgh "[i%9]
	}
	records := []index.Record{
		{ID: "exact", Vector: v, Text: "Größe, 日本語, \"quotes\", 'apostrophes', \\ and\nnewlines", Metadata: map[string]string{
			"source_url": "https://example.com/a?b=c&d=e#f", "heading_path": "Guide > Install", "empty": "",
		}},
		{ID: "bare", Vector: []float32{0, 0, 0, 1}},
		{ID: "long", Vector: []float32{0, 0, 1, 0}, Text: string(long)},
		{ID: "https://example.com/ids may hold anything ✓", Vector: []float32{0, 1, 0, 0}},
	}
	require.NoError(t, idx.Upsert(ctx, records))
	hits := all(t, idx, nil)
	require.Len(t, hits, len(records))
	got := map[string]index.Hit{}
	for _, h := range hits {
		got[h.ID] = h
	}
	for _, r := range records {
		h, ok := got[r.ID]
		require.True(t, ok, r.ID)
		require.Equal(t, r.Vector, h.Vector, "vectors round-trip bit for bit")
		require.Equal(t, r.Text, h.Text)
		if len(r.Metadata) == 0 {
			require.Empty(t, h.Metadata)
		} else {
			require.Equal(t, r.Metadata, h.Metadata)
		}
	}
}

func testConcurrent(t *testing.T, idx index.Index) {
	ctx := context.Background()
	small(t, idx)
	var wg sync.WaitGroup
	errs := make(chan error, 64)
	for w := range 4 {
		wg.Go(func() {
			rng := rand.New(rand.NewPCG(uint64(w), 1))
			for i := range 10 {
				id := fmt.Sprintf("w%d-%d", w, i)
				if err := idx.Upsert(ctx, []index.Record{rec(id, randomVector(rng), "w", fmt.Sprint(w))}); err != nil {
					errs <- err
					return
				}
				if _, err := idx.Query(ctx, randomVector(rng), 3, nil); err != nil {
					errs <- err
					return
				}
				if i%3 == 0 {
					if err := idx.Delete(ctx, []string{id}); err != nil {
						errs <- err
						return
					}
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		require.NoError(t, err)
	}
	// Each writer deleted 4 of its 10 records.
	require.Equal(t, 6+4*6, count(t, idx))
	require.Len(t, all(t, idx, index.Filter{"w": "2"}), 6)
}

func testLister(t *testing.T, idx index.Index) {
	l, ok := idx.(index.Lister)
	if !ok {
		t.Skipf("%T does not implement index.Lister", idx)
	}
	ctx := context.Background()
	small(t, idx)
	for _, tc := range []struct {
		name   string
		filter index.Filter
		limit  int
		want   []string
	}{
		{"every record, in ID order", nil, 100, []string{"a", "b", "c", "d", "e", "f"}},
		{"limited", nil, 2, []string{"a", "b"}},
		{"zero limit", nil, 0, nil},
		{"filtered", index.Filter{"lang": "en"}, 100, []string{"a", "c", "d"}},
		{"filtered and limited", index.Filter{"lang": "en"}, 2, []string{"a", "c"}},
		{"an empty value", index.Filter{"lang": ""}, 100, []string{"f"}},
		{"nothing", index.Filter{"site": "none"}, 100, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := l.IDs(ctx, tc.filter, tc.limit)
			require.NoError(t, err)
			require.Equal(t, nonNil(tc.want), nonNil(got))
		})
	}
	_, err := l.IDs(ctx, nil, -1)
	require.Error(t, err, "limit < 0")
}
