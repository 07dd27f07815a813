package main

import (
	"cmp"
	"context"
	"database/sql"
	"encoding/binary"
	"errors"
	"math"
	"math/rand/v2"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/recrawl/recrawl/embed"
	"github.com/recrawl/recrawl/index"
	"github.com/recrawl/recrawl/index/sqlitevec"
)

// The pipeline-sqlitevec scenario: the pipeline-cold run with the index
// in the state's SQLite file (index/sqlitevec), then queries over what
// it indexed. It needs a build with cgo and -tags sqlite_fts5; without,
// the scenario is left out (and -only naming it is an error).

// sqlitevecAvailable reports whether this build can open the index.
func sqlitevecAvailable() bool {
	_, err := sqlitevec.Open(context.Background(), ":memory:", sqlitevec.Options{})
	return !errors.Is(err, sqlitevec.ErrUnavailable)
}

// Queries measures the queries of pipeline-sqlitevec.
type Queries struct {
	Queries     int     `json:"queries"`        // timed queries of each kind
	SearchP50MS float64 `json:"search_p50_ms"`  // hybrid Search, k 10
	SearchP99MS float64 `json:"search_p99_ms"`  //
	QueryP50MS  float64 `json:"query_p50_ms"`   // vector-only Query, k 10, on the recall queries
	QueryP99MS  float64 `json:"query_p99_ms"`   //
	Recall10    float64 `json:"query_recall10"` // Query's recall@10 against exact search
	RecallOf    int     `json:"recall_queries"` // queries the recall is measured on
	FileBytes   int64   `json:"file_bytes"`     // the SQLite file with its WAL, state included
}

func (b *bench) pipelineSQLite() (Measure, error) {
	const name = "pipeline-sqlitevec"
	path := b.statePath(name)
	var idx *sqlitevec.Index
	m, err := b.pipeline(name, func() (pipelineIndex, error) {
		var err error
		idx, err = sqlitevec.Open(context.Background(), path, sqlitevec.Options{Dimensions: pipelineDims})
		return idx, err
	})
	if err != nil {
		if idx != nil {
			idx.Close()
		}
		return m, err
	}
	emb, err := embed.NewHashing(pipelineDims)
	b.vecIndex, b.vecPath, b.vecEmbed = idx, path, emb
	return m, err
}

// queries times hybrid and vector-only queries over the index the
// scenario built: n queries of each kind, each a few consecutive words
// of a random chunk, embedded as the engine embeds chunks; and measures
// Query's recall@10 against an exact scan on some of them.
func (b *bench) queries(ctx context.Context, n, recallOf int) (Queries, error) {
	x, emb := b.vecIndex, b.vecEmbed
	ids, err := x.IDs(ctx, nil, math.MaxInt32)
	if err != nil {
		return Queries{}, err
	}
	rng := rand.New(rand.NewPCG(uint64(b.round), 31))
	texts := make([]string, 0, n)
	var vecs [][]float32
	for len(texts) < n {
		r, ok, err := x.Get(ctx, ids[rng.IntN(len(ids))])
		if err != nil {
			return Queries{}, err
		}
		words := strings.Fields(r.Text)
		if !ok || len(words) < 8 {
			continue
		}
		w := 3 + rng.IntN(4)
		s := rng.IntN(len(words) - w)
		text := strings.Join(words[s:s+w], " ")
		v, err := emb.Embed(ctx, []string{text})
		if err != nil {
			return Queries{}, err
		}
		if slices.ContainsFunc(v[0], func(f float32) bool { return f != 0 }) { // words, not only punctuation
			texts, vecs = append(texts, text), append(vecs, v[0])
		}
	}
	q := Queries{Queries: n, RecallOf: recallOf}
	timeN := func(n int, f func(i int) error) ([]time.Duration, error) {
		for i := range min(20, n) { // warm the page cache and the connections
			if err := f(i); err != nil {
				return nil, err
			}
		}
		ds := make([]time.Duration, n)
		for i := range n {
			t0 := time.Now()
			if err := f(i); err != nil {
				return nil, err
			}
			ds[i] = time.Since(t0)
		}
		slices.Sort(ds)
		return ds, nil
	}
	pct := func(ds []time.Duration, p float64) float64 {
		return float64(ds[min(len(ds)-1, int(p*float64(len(ds))))]) / 1e6
	}
	ds, err := timeN(n, func(i int) error {
		_, err := x.Search(ctx, sqlitevec.SearchQuery{Text: texts[i], Vector: vecs[i], K: 10})
		return err
	})
	if err != nil {
		return q, err
	}
	q.SearchP50MS, q.SearchP99MS = pct(ds, 0.5), pct(ds, 0.99)
	// Query scans every vector: timed on the recall queries only.
	got := make([][]index.Hit, recallOf)
	ds, err = timeN(recallOf, func(i int) error {
		got[i], err = x.Query(ctx, vecs[i], 10, nil)
		return err
	})
	if err != nil {
		return q, err
	}
	q.QueryP50MS, q.QueryP99MS = pct(ds, 0.5), pct(ds, 0.99)
	if q.Recall10, err = recall(ctx, b.vecPath, vecs[:recallOf], got[:recallOf], 10); err != nil {
		return q, err
	}
	for _, p := range []string{b.vecPath, b.vecPath + "-wal"} {
		if st, err := os.Stat(p); err == nil {
			q.FileBytes += st.Size()
		}
	}
	return q, nil
}

// recall compares hits with an exact scan of every vector in the file.
func recall(ctx context.Context, path string, vecs [][]float32, hits [][]index.Hit, k int) (float64, error) {
	db, err := sql.Open("sqlite3", "file:"+path+"?mode=ro")
	if err != nil {
		return 0, err
	}
	defer db.Close()
	rows, err := db.QueryContext(ctx, `SELECT r.id, v.vector FROM index_records r JOIN index_vectors v ON v.rowid = r.rowid`)
	if err != nil {
		return 0, err
	}
	defer rows.Close()
	type sc struct {
		id    string
		score float64
	}
	best := make([][]sc, len(vecs))
	var id string
	var blob []byte
	v := make([]float32, len(vecs[0]))
	for rows.Next() {
		if err := rows.Scan(&id, &blob); err != nil {
			return 0, err
		}
		for i := range v {
			v[i] = math.Float32frombits(binary.LittleEndian.Uint32(blob[4*i:]))
		}
		for qi, q := range vecs {
			var d, a, bb float64
			for i := range q {
				d += float64(q[i]) * float64(v[i])
				a += float64(q[i]) * float64(q[i])
				bb += float64(v[i]) * float64(v[i])
			}
			s := sc{id, d / math.Sqrt(a*bb)}
			if len(best[qi]) < k || s.score > best[qi][k-1].score {
				best[qi] = append(best[qi], s)
				slices.SortFunc(best[qi], func(x, y sc) int { return cmp.Or(cmp.Compare(y.score, x.score), cmp.Compare(x.id, y.id)) })
				best[qi] = best[qi][:min(k, len(best[qi]))]
			}
		}
	}
	if err := rows.Err(); err != nil {
		return 0, err
	}
	// Records that tie with the k-th are as right as it: a hit counts
	// when its exact score reaches the k-th's.
	found := 0
	for qi, q := range vecs {
		kth := best[qi][len(best[qi])-1].score
		for _, h := range hits[qi] {
			var d, a, bb float64
			for i := range q {
				d += float64(q[i]) * float64(h.Vector[i])
				a += float64(q[i]) * float64(q[i])
				bb += float64(h.Vector[i]) * float64(h.Vector[i])
			}
			if d/math.Sqrt(a*bb) >= kth-1e-6 {
				found++
			}
		}
	}
	return float64(found) / float64(k*len(vecs)), nil
}
