package index_test

import (
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/recrawl/recrawl/index"
)

const benchRecords, benchDims = 100_000, 384

var benchIndex = sync.OnceValue(func() *index.Memory {
	r := rand.New(rand.NewPCG(3, 4))
	m := index.NewMemory(benchDims)
	batch := make([]index.Record, 0, 1000)
	for i := range benchRecords {
		v := make([]float32, benchDims)
		for j := range v {
			v[j] = float32(r.NormFloat64())
		}
		batch = append(batch, index.Record{
			ID:       fmt.Sprintf("rec-%06d", i),
			Vector:   v,
			Metadata: map[string]string{"site": fmt.Sprint(i % 10), "source_url": fmt.Sprintf("https://example.com/p/%d", i/8)},
		})
		if len(batch) == cap(batch) {
			if err := m.Upsert(ctx, batch); err != nil {
				panic(err)
			}
			batch = batch[:0]
		}
	}
	return m
})

// BenchmarkMemoryQuery: exact top-10 over 100,000 records of 384 dimensions.
func BenchmarkMemoryQuery(b *testing.B) {
	m := benchIndex()
	r := rand.New(rand.NewPCG(5, 6))
	q := make([]float32, benchDims)
	for j := range q {
		q[j] = float32(r.NormFloat64())
	}
	for _, bc := range []struct {
		name   string
		filter index.Filter
	}{
		{"all", nil},
		{"filter-10pct", index.Filter{"site": "3"}},
		// One page's records, as the engine lists them after an upsert:
		// answered from the postings of source_url, not by a scan.
		{"filter-one-page", index.Filter{"site": "3", "source_url": "https://example.com/p/4321"}},
	} {
		b.Run(bc.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				hits, err := m.Query(ctx, q, 10, bc.filter)
				if err != nil || len(hits) != 10 && bc.name != "filter-one-page" || len(hits) == 0 {
					b.Fatal(err, len(hits))
				}
			}
		})
	}
}

// BenchmarkSnapshot saves and loads the 100,000-record index as a file.
func BenchmarkSnapshot(b *testing.B) {
	m := benchIndex()
	path := filepath.Join(b.TempDir(), "bench.snap")
	if err := m.SaveFile(ctx, path); err != nil {
		b.Fatal(err)
	}
	st, err := os.Stat(path)
	if err != nil {
		b.Fatal(err)
	}
	b.Run("save", func(b *testing.B) {
		b.SetBytes(st.Size())
		for b.Loop() {
			if err := m.SaveFile(ctx, path); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("load", func(b *testing.B) {
		b.SetBytes(st.Size())
		for b.Loop() {
			if _, err := index.LoadFile(ctx, path); err != nil {
				b.Fatal(err)
			}
		}
	})
}
