//go:build cgo

package recrawl

import (
	"context"
	"testing"

	"github.com/recrawl/recrawl/crawlstate/sqlite"
)

// openPlanState opens the SQLite state file at path, creating it if
// needed. The caller closes it.
func openPlanState(tb testing.TB, path string) planStore {
	tb.Helper()
	st, err := sqlite.Open(context.Background(), path)
	if err != nil {
		tb.Fatal(err)
	}
	return st
}
