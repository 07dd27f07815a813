package pgvector_test

import (
	"context"
	"fmt"
	"os"

	"github.com/jackc/pgx/v5/pgxpool"

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

// OpenPool shares a pool the program already has (with its own settings)
// between the index and other work; Close leaves the pool open. Several
// indexes of different models live side by side under their names.
func ExampleOpenPool() {
	ctx := context.Background()
	pool, err := pgxpool.New(ctx, os.Getenv("RECRAWL_TEST_POSTGRES_DSN"))
	if err != nil {
		fmt.Println(err)
		return
	}
	defer pool.Close()
	small, err := pgvector.OpenPool(ctx, pool, pgvector.Options{Dimensions: 384, Name: "minilm"})
	if err != nil {
		fmt.Println(err)
		return
	}
	large, err := pgvector.OpenPool(ctx, pool, pgvector.Options{Dimensions: 1536, Name: "openai_small", EfSearch: 100})
	if err != nil {
		fmt.Println(err)
		return
	}
	n, _ := small.Count(ctx)
	m, _ := large.Count(ctx)
	fmt.Println(n, m)
}
