//go:build cgo && sqlite_fts5

package sqlitevec_test

import (
	"context"
	"fmt"
	"log"
	"os"
	"path/filepath"

	"github.com/recrawl/recrawl/crawlstate/sqlite"
	"github.com/recrawl/recrawl/embed"
	"github.com/recrawl/recrawl/index"
	"github.com/recrawl/recrawl/index/sqlitevec"
)

// The index in the state's file: open the state, then the index on the
// same path, and give both to recrawl.Config (State, Index).
func ExampleOpen() {
	ctx := context.Background()
	dir, _ := os.MkdirTemp("", "sqlitevec-example-")
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "crawl.sqlite")
	state, err := sqlite.Open(ctx, path)
	if err != nil {
		log.Fatal(err)
	}
	defer state.Close()
	idx, err := sqlitevec.Open(ctx, path, sqlitevec.Options{Dimensions: 384})
	if err != nil {
		log.Fatal(err)
	}
	defer idx.Close()
	n, _ := idx.Count(ctx)
	fmt.Println(idx.Dimensions(), n)
	// Output: 384 0
}

// A hybrid search: the words of the query and its vector, fused.
func ExampleIndex_Search() {
	ctx := context.Background()
	idx, err := sqlitevec.Open(ctx, ":memory:", sqlitevec.Options{})
	if err != nil {
		log.Fatal(err)
	}
	defer idx.Close()
	emb, _ := embed.NewHashing(64)
	texts := map[string]string{
		"install#0": "Install the tool with the package manager.",
		"config#0":  "The upload timeout is 60 seconds; set upload_timeout to change it.",
		"faq#0":     "Math blocks are passed through as code.",
	}
	for id, text := range texts {
		v, _ := emb.Embed(ctx, []string{text})
		if err := idx.Upsert(ctx, []index.Record{{ID: id, Vector: v[0], Text: text, Metadata: map[string]string{"site": "docs"}}}); err != nil {
			log.Fatal(err)
		}
	}
	q := "how long is the upload timeout"
	v, _ := emb.Embed(ctx, []string{q})
	hits, err := idx.Search(ctx, sqlitevec.SearchQuery{Text: q, Vector: v[0], K: 1, Filter: index.Filter{"site": "docs"}})
	if err != nil {
		log.Fatal(err)
	}
	for _, h := range hits {
		fmt.Printf("%s vector rank %d, keyword rank %d\n", h.ID, h.VectorRank, h.TextRank)
	}
	// Output: config#0 vector rank 1, keyword rank 1
}
