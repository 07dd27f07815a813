//go:build !cgo || !sqlite_fts5

package sqlitevec

import (
	"context"
	"fmt"

	"github.com/recrawl/recrawl/index"
)

// missing names what this build lacks.
func missing() string {
	if !cgoEnabled {
		return "it was built with CGO_ENABLED=0; build with cgo (gcc) and -tags sqlite_fts5"
	}
	return "it was built without the sqlite_fts5 build tag; build with -tags sqlite_fts5 (go test -tags sqlite_fts5 ./..., go build -tags sqlite_fts5 ...)"
}

// Index is an index.Index in a SQLite file. This build cannot open one:
// every method reports ErrUnavailable.
type Index struct{}

var (
	_ index.Index  = (*Index)(nil)
	_ index.Lister = (*Index)(nil)
)

// Open reports, wrapping ErrUnavailable, that this build has no SQLite
// with sqlite-vec and FTS5, and what to build with instead.
func Open(ctx context.Context, path string, opts Options) (*Index, error) {
	return nil, fmt.Errorf("%w: open %s: %s", ErrUnavailable, path, missing())
}

func (x *Index) unavailable() error { return fmt.Errorf("%w: %s", ErrUnavailable, missing()) }

// Close implements io.Closer.
func (x *Index) Close() error { return x.unavailable() }

// Upsert implements index.Writer.
func (x *Index) Upsert(context.Context, []index.Record) error { return x.unavailable() }

// Delete implements index.Writer.
func (x *Index) Delete(context.Context, []string) error { return x.unavailable() }

// DeleteWhere implements index.Index.
func (x *Index) DeleteWhere(context.Context, index.Filter) (int, error) { return 0, x.unavailable() }

// Query implements index.Index.
func (x *Index) Query(context.Context, []float32, int, index.Filter) ([]index.Hit, error) {
	return nil, x.unavailable()
}

// Count implements index.Index.
func (x *Index) Count(context.Context) (int, error) { return 0, x.unavailable() }

// IDs implements index.Lister.
func (x *Index) IDs(context.Context, index.Filter, int) ([]string, error) {
	return nil, x.unavailable()
}

// Get returns the record with this ID.
func (x *Index) Get(context.Context, string) (index.Record, bool, error) {
	return index.Record{}, false, x.unavailable()
}

// Search answers a hybrid query.
func (x *Index) Search(context.Context, SearchQuery) ([]Hit, error) { return nil, x.unavailable() }

// Dimensions returns the vector length of the index.
func (x *Index) Dimensions() int { return 0 }
