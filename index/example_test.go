package index_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log"
	"os"
	"path/filepath"
	"strings"

	"github.com/recrawl/recrawl/index"
)

func ExampleMemory() {
	ctx := context.Background()
	idx := index.NewMemory(3)
	err := idx.Upsert(ctx, []index.Record{
		{ID: "install#0", Vector: []float32{1, 0, 0}, Text: "Install on Linux", Metadata: map[string]string{"source_url": "https://example.com/install"}},
		{ID: "install#1", Vector: []float32{0.8, 0.6, 0}, Text: "Install on Windows", Metadata: map[string]string{"source_url": "https://example.com/install"}},
		{ID: "faq#0", Vector: []float32{0, 0, 1}, Text: "Frequently asked", Metadata: map[string]string{"source_url": "https://example.com/faq"}},
	})
	if err != nil {
		log.Fatal(err)
	}
	hits, err := idx.Query(ctx, []float32{1, 0.1, 0}, 2, index.Filter{"source_url": "https://example.com/install"})
	if err != nil {
		log.Fatal(err)
	}
	for _, h := range hits {
		fmt.Printf("%s %.3f %q\n", h.ID, h.Score, h.Text)
	}
	removed, _ := idx.DeleteWhere(ctx, index.Filter{"source_url": "https://example.com/install"})
	n, _ := idx.Count(ctx)
	fmt.Println("removed", removed, "left", n)
	// Output:
	// install#0 0.995 "Install on Linux"
	// install#1 0.856 "Install on Windows"
	// removed 2 left 1
}

func ExampleMemory_IDs() {
	ctx := context.Background()
	idx := index.NewMemory(2)
	_ = idx.Upsert(ctx, []index.Record{
		{ID: "install#1", Vector: []float32{1, 0}, Metadata: map[string]string{"source_url": "https://example.com/install"}},
		{ID: "install#0", Vector: []float32{0, 1}, Metadata: map[string]string{"source_url": "https://example.com/install"}},
		{ID: "faq#0", Vector: []float32{1, 1}, Metadata: map[string]string{"source_url": "https://example.com/faq"}},
	})
	// The records of one page, without copying their vectors or texts.
	ids, err := idx.IDs(ctx, index.Filter{"source_url": "https://example.com/install"}, 100)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(ids)
	// Output:
	// [install#0 install#1]
}

func ExampleMemory_SaveFile() {
	ctx := context.Background()
	dir, err := os.MkdirTemp("", "index-example")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "vectors.snap")

	idx := index.NewMemory(2)
	_ = idx.Upsert(ctx, []index.Record{{ID: "a", Vector: []float32{1, 0}}, {ID: "b", Vector: []float32{0, 1}}})
	if err := idx.SaveFile(ctx, path); err != nil {
		log.Fatal(err)
	}

	restored, err := index.LoadFile(ctx, path) // after a restart
	if err != nil {
		log.Fatal(err)
	}
	n, _ := restored.Count(ctx)
	fmt.Println(n, restored.Dimensions())
	// Output: 2 2
}

func ExampleFilter_Match() {
	f := index.Filter{"site": "docs", "lang": "en"}
	fmt.Println(f.Match(map[string]string{"site": "docs", "lang": "en", "page": "1"}))
	fmt.Println(f.Match(map[string]string{"site": "docs"}))
	// Output:
	// true
	// false
}

func ExampleReadSnapshot() {
	ctx := context.Background()
	idx := index.NewMemory(2)
	_ = idx.Upsert(ctx, []index.Record{{ID: "a", Vector: []float32{1, 0}, Text: "alpha"}})

	var buf bytes.Buffer // any io.Writer: a file, an object store upload, ...
	if err := idx.WriteSnapshot(ctx, &buf); err != nil {
		log.Fatal(err)
	}
	restored, err := index.ReadSnapshot(ctx, &buf)
	if err != nil {
		log.Fatal(err)
	}
	r, ok, _ := restored.Get(ctx, "a")
	fmt.Println(ok, r.Text, r.Vector)

	_, err = index.ReadSnapshot(ctx, strings.NewReader("not a snapshot"))
	var corrupt *index.CorruptError
	fmt.Println(errors.As(err, &corrupt))
	// Output:
	// true alpha [1 0]
	// true
}

func ExampleNewMemoryInt8() {
	ctx := context.Background()
	idx := index.NewMemoryInt8(4) // a quarter of the vector memory; scores are approximations
	err := idx.Upsert(ctx, []index.Record{
		{ID: "a", Vector: []float32{0.9, 0.1, 0, 0.2}, Text: "Install on Linux"},
		{ID: "b", Vector: []float32{0, 0.7, 0.7, 0}, Text: "Frequently asked"},
	})
	if err != nil {
		log.Fatal(err)
	}
	hits, err := idx.Query(ctx, []float32{1, 0, 0, 0.2}, 1, nil)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("%s %.2f\n", hits[0].ID, hits[0].Score)
	// Output:
	// a 0.99
}
