package pgvector_test

import (
	"context"
	"fmt"
	"os"

	"github.com/recrawl/recrawl/index"
	"github.com/recrawl/recrawl/index/pgvector"
)

// Open creates the index's table on first use; the same call opens it
// afterwards, from any number of processes. The index is a
// recrawl.Config.Index as it is, and answers queries for users. (The
// example needs a server, so it is compiled but not run.)
func ExampleOpen() {
	ctx := context.Background()
	x, err := pgvector.Open(ctx, os.Getenv("RECRAWL_TEST_POSTGRES_DSN"), pgvector.Options{Dimensions: 3, Name: "docs"})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer x.Close()
	err = x.Upsert(ctx, []index.Record{
		{ID: "a", Vector: []float32{1, 0, 0}, Text: "install", Metadata: map[string]string{"source_url": "https://example.com/install"}},
		{ID: "b", Vector: []float32{0, 1, 0}, Text: "configure", Metadata: map[string]string{"source_url": "https://example.com/config"}},
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	hits, err := x.Query(ctx, []float32{0.9, 0.1, 0}, 1, index.Filter{"source_url": "https://example.com/install"})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("%s %.2f\n", hits[0].Text, hits[0].Score)
}
