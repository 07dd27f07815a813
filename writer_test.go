package recrawl_test

import (
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/recrawl/recrawl"
	"github.com/recrawl/recrawl/embed"
	"github.com/recrawl/recrawl/index"
	"github.com/recrawl/recrawl/internal/testsite"
)

// writerOnly exposes only index.Writer of a Memory.
type writerOnly struct{ m *index.Memory }

func (w writerOnly) Upsert(ctx context.Context, r []index.Record) error { return w.m.Upsert(ctx, r) }
func (w writerOnly) Delete(ctx context.Context, ids []string) error     { return w.m.Delete(ctx, ids) }

// withLister adds index.Lister to a writerOnly.
type withLister struct{ writerOnly }

func (w withLister) IDs(ctx context.Context, f index.Filter, limit int) ([]string, error) {
	return w.m.IDs(ctx, f, limit)
}

// withQuery adds Query to a writerOnly.
type withQuery struct{ writerOnly }

func (w withQuery) Query(ctx context.Context, v []float32, k int, f index.Filter) ([]index.Hit, error) {
	return w.m.Query(ctx, v, k, f)
}

// The engine needs only an index.Writer; listing (Lister or Query) and
// DeleteWhere are abilities it uses when present. A record that no stored
// chunk list names (a version a crash left uncommitted) is removed with
// its page only when the index can list or DeleteWhere.
func TestConfigIndexTakesAWriter(t *testing.T) {
	for _, tc := range []struct {
		name       string
		wrap       func(*index.Memory) index.Writer
		orphanGone bool
	}{
		{"writer only", func(m *index.Memory) index.Writer { return writerOnly{m} }, false},
		{"writer and lister", func(m *index.Memory) index.Writer { return withLister{writerOnly{m}} }, true},
		{"writer and query", func(m *index.Memory) index.Writer { return withQuery{writerOnly{m}} }, true},
		{"index.Memory", func(m *index.Memory) index.Writer { return m }, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			emb, err := embed.NewHashing(16)
			require.NoError(t, err)
			mem := index.NewMemory(16)
			f := newFixture(t, testsite.Options{Pages: 3}, recrawl.Config{Embedder: emb, Index: tc.wrap(mem)})
			rep := f.run()
			require.Equal(t, 3, rep.New)
			total, err := mem.Count(ctx)
			require.NoError(t, err)
			path := f.site.Paths()[0]
			url := f.site.PageURL(path)
			chunks, err := f.state.Chunks(ctx, f.src.Name(), url)
			require.NoError(t, err)
			require.NotEmpty(t, chunks)

			orphan := index.Record{ID: "orphan", Vector: make([]float32, 16), Metadata: map[string]string{"source": f.src.Name(), "source_url": url}}
			orphan.Vector[0] = 1
			require.NoError(t, mem.Upsert(ctx, []index.Record{orphan}))
			f.site.Delete(path, http.StatusGone)
			f.clk.Advance(25 * time.Hour)
			rep = f.run()
			require.Equal(t, 1, rep.Gone)

			left, err := mem.IDs(ctx, index.Filter{"source_url": url}, 100)
			require.NoError(t, err)
			if tc.orphanGone {
				require.Empty(t, left)
				n, err := mem.Count(ctx)
				require.NoError(t, err)
				require.Equal(t, total-len(chunks), n)
			} else {
				require.Equal(t, []string{"orphan"}, left, "the stored version's records are deleted; an unlisted orphan stays")
			}
		})
	}
}
