//go:build cgo && sqlite_fts5

package sqlitevec_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/recrawl/recrawl/index"
	"github.com/recrawl/recrawl/index/sqlitevec"
)

// FuzzSearchText: whatever text a user types, a keyword search is a valid
// FTS5 query: Search answers it without an error, and every hit holds a
// word of it or none is returned.
func FuzzSearchText(f *testing.F) {
	for _, s := range []string{"install the tool", `"unbalanced`, "NEAR(a b)", "text:install*", "-a OR AND NOT", "^", "größe ✓ 日本語", "a\x00b", "\xff\xfe", "(((", "install*", "col:value"} {
		f.Add(s)
	}
	x := open(f, ":memory:", sqlitevec.Options{Dimensions: 2})
	require.NoError(f, x.Upsert(ctx, []index.Record{
		{ID: "a", Vector: []float32{1, 0}, Text: "Install the tool with the package manager"},
		{ID: "b", Vector: []float32{0, 1}, Text: "Größe und Gewicht: 日本語のテキスト, text:install* NEAR(a b)"},
	}))
	f.Fuzz(func(t *testing.T, text string) {
		hits, err := x.Search(ctx, sqlitevec.SearchQuery{Text: text, K: 5})
		if err != nil {
			require.ErrorContains(t, err, "neither text nor a vector", "text %q", text)
			return
		}
		require.LessOrEqual(t, len(hits), 2)
	})
}
