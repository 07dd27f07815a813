package pgvector_test

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"math"
	mrand "math/rand/v2"
	"os"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/require"

	"github.com/recrawl/recrawl/index"
	"github.com/recrawl/recrawl/index/indextest"
	"github.com/recrawl/recrawl/index/pgvector"
)

const dsnVar = "RECRAWL_TEST_POSTGRES_DSN"

var (
	poolOnce sync.Once
	pool     *pgxpool.Pool
	poolErr  error
)

// testDSN returns the test database, or skips the test when none is set.
func testDSN(t *testing.T) string {
	t.Helper()
	dsn := os.Getenv(dsnVar)
	if dsn == "" {
		t.Skip(dsnVar + " is not set: run .ci/postgres.sh to run these tests against a throwaway PostgreSQL with pgvector")
	}
	return dsn
}

// testPool returns the pool all tests of the package share.
func testPool(t *testing.T) *pgxpool.Pool {
	t.Helper()
	dsn := testDSN(t)
	poolOnce.Do(func() { pool, poolErr = pgxpool.New(context.Background(), dsn) })
	require.NoError(t, poolErr)
	return pool
}

// testSchema returns a schema of the test's own, dropped after it.
func testSchema(t *testing.T) string {
	t.Helper()
	p := testPool(t)
	b := make([]byte, 6)
	_, _ = rand.Read(b)
	schema := "recrawl_test_" + hex.EncodeToString(b)
	t.Cleanup(func() {
		_, err := p.Exec(context.Background(), `DROP SCHEMA IF EXISTS `+pgx.Identifier{schema}.Sanitize()+` CASCADE`)
		require.NoError(t, err)
	})
	return schema
}

func TestMain(m *testing.M) {
	code := m.Run()
	if pool != nil {
		pool.Close()
	}
	os.Exit(code)
}

func TestConformance(t *testing.T) {
	t.Parallel()
	p := testPool(t)
	indextest.Run(t, func(t *testing.T) index.Index {
		x, err := pgvector.OpenPool(context.Background(), p, pgvector.Options{Dimensions: indextest.Dimensions, Schema: testSchema(t)})
		require.NoError(t, err)
		t.Cleanup(x.Close)
		return x
	})
}

func TestOpenValidatesOptions(t *testing.T) {
	t.Parallel()
	p := testPool(t)
	for _, tc := range []struct {
		name string
		opts pgvector.Options
	}{
		{"no dimensions", pgvector.Options{}},
		{"negative dimensions", pgvector.Options{Dimensions: -1}},
		{"upper case name", pgvector.Options{Dimensions: 4, Name: "Docs"}},
		{"name with a quote", pgvector.Options{Dimensions: 4, Name: `a"b`}},
		{"long name", pgvector.Options{Dimensions: 4, Name: "a123456789a123456789a123456789a1234567890"}},
		{"ef_search too large", pgvector.Options{Dimensions: 4, EfSearch: 1001}},
		{"ef_search negative", pgvector.Options{Dimensions: 4, EfSearch: -1}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := pgvector.OpenPool(context.Background(), p, tc.opts)
			require.Error(t, err)
		})
	}
}

func TestReopenKeepsRecordsAndChecksDimensions(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	schema := testSchema(t)
	dsn := testDSN(t)
	x, err := pgvector.Open(ctx, dsn, pgvector.Options{Dimensions: 3, Name: "docs", Schema: schema})
	require.NoError(t, err)
	require.NoError(t, x.Upsert(ctx, []index.Record{{ID: "a", Vector: []float32{1, 2, 3}, Text: "kept"}}))
	x.Close()

	x, err = pgvector.Open(ctx, dsn, pgvector.Options{Dimensions: 3, Name: "docs", Schema: schema})
	require.NoError(t, err)
	defer x.Close()
	hits, err := x.Query(ctx, []float32{1, 2, 3}, 1, nil)
	require.NoError(t, err)
	require.Len(t, hits, 1)
	require.Equal(t, "kept", hits[0].Text)

	_, err = pgvector.Open(ctx, dsn, pgvector.Options{Dimensions: 4, Name: "docs", Schema: schema})
	var de *index.DimensionError
	require.ErrorAs(t, err, &de)
	require.Equal(t, index.DimensionError{Want: 3, Got: 4}, *de)

	// Another name is another table.
	other, err := pgvector.Open(ctx, dsn, pgvector.Options{Dimensions: 4, Name: "other", Schema: schema})
	require.NoError(t, err)
	defer other.Close()
	n, err := other.Count(ctx)
	require.NoError(t, err)
	require.Zero(t, n)

	// Each migration of each table was applied once.
	rows, err := testPool(t).Query(ctx, `SELECT index_table, version FROM `+pgx.Identifier{schema, "recrawl_index_migrations"}.Sanitize()+` ORDER BY 1, 2`)
	require.NoError(t, err)
	applied, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (string, error) {
		var table string
		var v int
		err := r.Scan(&table, &v)
		return fmt.Sprintf("%s %d", table, v), err
	})
	require.NoError(t, err)
	require.Equal(t, []string{"recrawl_index_docs 1", "recrawl_index_docs 2", "recrawl_index_docs 3",
		"recrawl_index_other 1", "recrawl_index_other 2", "recrawl_index_other 3"}, applied)
}

func TestConcurrentOpensMigrateOnce(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	schema := testSchema(t)
	p := testPool(t)
	var wg sync.WaitGroup
	errs := make([]error, 6)
	for i := range errs {
		wg.Go(func() {
			x, err := pgvector.OpenPool(ctx, p, pgvector.Options{Dimensions: 8, Schema: schema})
			if err == nil {
				err = x.Upsert(ctx, []index.Record{{ID: fmt.Sprint(i), Vector: []float32{1, 0, 0, 0, 0, 0, 0, float32(i)}}})
			}
			errs[i] = err
		})
	}
	wg.Wait()
	require.NoError(t, errors.Join(errs...))
	x, err := pgvector.OpenPool(ctx, p, pgvector.Options{Dimensions: 8, Schema: schema})
	require.NoError(t, err)
	n, err := x.Count(ctx)
	require.NoError(t, err)
	require.Equal(t, len(errs), n)
}

func TestTableAndIndexes(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	schema := testSchema(t)
	p := testPool(t)
	_, err := pgvector.OpenPool(ctx, p, pgvector.Options{Dimensions: 4, Name: "docs", Schema: schema})
	require.NoError(t, err)
	rows, err := p.Query(ctx, `SELECT indexdef FROM pg_indexes WHERE schemaname = $1 AND tablename = 'recrawl_index_docs' ORDER BY indexname`, schema)
	require.NoError(t, err)
	defs, err := pgx.CollectRows(rows, pgx.RowTo[string])
	require.NoError(t, err)
	require.Len(t, defs, 3)
	require.Contains(t, defs[0], "USING hnsw (embedding vector_cosine_ops)")
	require.Contains(t, defs[1], "USING gin (metadata jsonb_path_ops)")
	require.Contains(t, defs[2], "(id)") // the primary key
}

// PostgreSQL cannot store NUL bytes or invalid UTF-8 in text or JSONB, and
// the cosine of a zero vector is undefined: such records are refused
// before anything is written.
func TestRefusesWhatPostgreSQLCannotStore(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	x, err := pgvector.OpenPool(ctx, testPool(t), pgvector.Options{Dimensions: 2, Schema: testSchema(t)})
	require.NoError(t, err)
	ok := index.Record{ID: "ok", Vector: []float32{1, 0}}
	for _, tc := range []struct {
		name string
		rec  index.Record
	}{
		{"zero vector", index.Record{ID: "z", Vector: []float32{0, 0}}},
		{"NUL in the text", index.Record{ID: "n", Vector: []float32{1, 0}, Text: "a\x00b"}},
		{"NUL in the ID", index.Record{ID: "a\x00b", Vector: []float32{1, 0}}},
		{"invalid UTF-8 in a value", index.Record{ID: "u", Vector: []float32{1, 0}, Metadata: map[string]string{"k": "\xff"}}},
		{"invalid UTF-8 in a key", index.Record{ID: "u", Vector: []float32{1, 0}, Metadata: map[string]string{"\xff": "v"}}},
		{"NUL in a value", index.Record{ID: "u", Vector: []float32{1, 0}, Metadata: map[string]string{"k": "\x00"}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := x.Upsert(ctx, []index.Record{ok, tc.rec})
			var re *index.RecordError
			require.ErrorAs(t, err, &re)
			require.Equal(t, tc.rec.ID, re.ID)
			n, err := x.Count(ctx)
			require.NoError(t, err)
			require.Zero(t, n)
		})
	}
}

func TestCanceledContext(t *testing.T) {
	t.Parallel()
	x, err := pgvector.OpenPool(context.Background(), testPool(t), pgvector.Options{Dimensions: 2, Schema: testSchema(t)})
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	require.ErrorIs(t, x.Upsert(ctx, []index.Record{{ID: "a", Vector: []float32{1, 0}}}), context.Canceled)
	require.ErrorIs(t, x.Delete(ctx, []string{"a"}), context.Canceled)
	_, err = x.Query(ctx, []float32{1, 0}, 1, nil)
	require.ErrorIs(t, err, context.Canceled)
	_, err = x.Count(ctx)
	require.ErrorIs(t, err, context.Canceled)
	_, err = x.IDs(ctx, nil, 1)
	require.ErrorIs(t, err, context.Canceled)
	_, err = x.DeleteWhere(ctx, index.Filter{"k": "v"})
	require.ErrorIs(t, err, context.Canceled)
}

// On a table large enough for the planner to prefer it, Query goes
// through the HNSW index, and its recall against exact search stays high.
func TestRecall(t *testing.T) {
	if testing.Short() {
		t.Skip("10,000 records: not in -short")
	}
	t.Parallel()
	ctx := context.Background()
	p := testPool(t)
	schema := testSchema(t)
	const n, dims, queries, k = 10000, 16, 50, 10
	x, err := pgvector.OpenPool(ctx, p, pgvector.Options{Dimensions: dims, Name: "recall", Schema: schema})
	require.NoError(t, err)
	rng := mrand.New(mrand.NewPCG(10, 10))
	vec := func() []float32 {
		v := make([]float32, dims)
		for i := range v {
			v[i] = float32(rng.NormFloat64())
		}
		return v
	}
	records := make([]index.Record, n)
	for i := range records {
		records[i] = index.Record{ID: fmt.Sprintf("r%05d", i), Vector: vec(), Metadata: map[string]string{"group": fmt.Sprint(i % 4)}}
	}
	for b := 0; b < n; b += 1000 {
		require.NoError(t, x.Upsert(ctx, records[b:b+1000]))
	}
	_, err = p.Exec(ctx, `ANALYZE `+pgx.Identifier{schema, "recrawl_index_recall"}.Sanitize())
	require.NoError(t, err)

	q := "[" + fmt.Sprint(records[0].Vector[0])
	for _, f := range records[0].Vector[1:] {
		q += "," + fmt.Sprint(f)
	}
	q += "]"
	rows, err := p.Query(ctx, `EXPLAIN SELECT id FROM `+pgx.Identifier{schema, "recrawl_index_recall"}.Sanitize()+
		` WHERE metadata @> '{}' ORDER BY embedding <=> $1::vector LIMIT 10`, q)
	require.NoError(t, err)
	lines, err := pgx.CollectRows(rows, pgx.RowTo[string])
	require.NoError(t, err)
	plan := strings.Join(lines, "\n")
	require.Contains(t, plan, "recall_embedding", "the query plan uses the HNSW index")

	found, total := 0, 0
	for range queries {
		qv := vec()
		exact := slices.Clone(records)
		cos := func(v []float32) float64 {
			var d, a, b float64
			for i := range v {
				d += float64(v[i]) * float64(qv[i])
				a += float64(v[i]) * float64(v[i])
				b += float64(qv[i]) * float64(qv[i])
			}
			return d / math.Sqrt(a*b)
		}
		slices.SortFunc(exact, func(a, b index.Record) int {
			ca, cb := cos(a.Vector), cos(b.Vector)
			switch {
			case ca > cb:
				return -1
			case ca < cb:
				return 1
			}
			return 0
		})
		want := map[string]bool{}
		for _, r := range exact[:k] {
			want[r.ID] = true
		}
		hits, err := x.Query(ctx, qv, k, nil)
		require.NoError(t, err)
		require.Len(t, hits, k)
		for _, h := range hits {
			if want[h.ID] {
				found++
			}
		}
		total += k
	}
	recall := float64(found) / float64(total)
	t.Logf("recall@%d over %d records of %d dimensions: %.3f", k, n, dims, recall)
	require.GreaterOrEqual(t, recall, 0.95)
}
