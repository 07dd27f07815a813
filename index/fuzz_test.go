package index_test

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/recrawl/recrawl/index"
)

// FuzzReadSnapshot: arbitrary bytes never panic; they are either rejected
// with a *CorruptError or give an index that writes back and reads again
// to the same records.
func FuzzReadSnapshot(f *testing.F) {
	m := index.NewMemory(2)
	_ = m.Upsert(ctx, []index.Record{
		{ID: "a", Vector: []float32{1, 0}, Metadata: map[string]string{"k": "v"}, Text: "alpha"},
		{ID: "b", Vector: []float32{0, 1}},
	})
	var buf bytes.Buffer
	_ = m.WriteSnapshot(ctx, &buf)
	f.Add(buf.Bytes())
	f.Add(buf.Bytes()[:20])
	f.Add([]byte("RCRWLIDX\x01\x00\x00\x00\x00\x00"))
	if golden, err := os.ReadFile(filepath.Join("testdata", "v1.snap")); err == nil {
		f.Add(golden)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		got, err := index.ReadSnapshot(ctx, bytes.NewReader(data))
		if err != nil {
			var ce *index.CorruptError
			if !errors.As(err, &ce) {
				t.Fatalf("error is not a *CorruptError: %v", err)
			}
			return
		}
		var out bytes.Buffer
		if err := got.WriteSnapshot(ctx, &out); err != nil {
			t.Fatal(err)
		}
		again, err := index.ReadSnapshot(ctx, &out)
		if err != nil {
			t.Fatalf("re-read: %v", err)
		}
		n1, _ := got.Count(ctx)
		n2, _ := again.Count(ctx)
		if n1 != n2 || got.Dimensions() != again.Dimensions() {
			t.Fatalf("round trip changed the index: %d/%d records, %d/%d dims", n1, n2, got.Dimensions(), again.Dimensions())
		}
	})
}
