//go:build cgo && sqlite_fts5

package sqlitevec_test

import (
	"fmt"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/recrawl/recrawl/index"
	"github.com/recrawl/recrawl/index/sqlitevec"
)

// pageRecords is one page's records as the engine writes them: 24
// chunks with the pipeline's eleven metadata keys.
func pageRecords(recs []index.Record, page int) []index.Record {
	url := fmt.Sprintf("https://docs.example.com/guide/page-%05d", page)
	out := make([]index.Record, 24)
	for c := range out {
		r := recs[(page*24+c)%len(recs)]
		r.ID = fmt.Sprintf("%s#%d", url, c)
		r.Metadata = map[string]string{
			"source": "docs", "source_url": url, "original_url": url, "fetched_at": "2026-12-01T00:00:00Z",
			"content_hash": fmt.Sprintf("%064d", page), "chunk_ordinal": strconv.Itoa(c), "heading_path": "Guide > Section " + strconv.Itoa(c),
			"char_start": strconv.Itoa(c * 800), "char_end": strconv.Itoa(c*800 + 799), "chunker_version": "chunk/v3", "title": "Page " + strconv.Itoa(page),
		}
		out[c] = r
	}
	return out
}

// BenchmarkUpsertPage: one page's 24 records of 384 dimensions into an
// index that grows, then the listing of its records the engine does.
func BenchmarkUpsertPage(b *testing.B) {
	recs, _, _ := recallCorpus(b, 2400, 384)
	x := open(b, filepath.Join(b.TempDir(), "index.sqlite"), sqlitevec.Options{Dimensions: 384})
	page := 0
	for b.Loop() {
		batch := pageRecords(recs, page)
		if err := x.Upsert(ctx, batch); err != nil {
			b.Fatal(err)
		}
		if _, err := x.IDs(ctx, index.Filter{"source": "docs", "source_url": batch[0].Metadata["source_url"]}, 300); err != nil {
			b.Fatal(err)
		}
		page++
	}
	b.ReportMetric(float64(b.Elapsed().Microseconds())/float64(b.N*24), "µs/record")
}
