//go:build cgo

package recrawl_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/recrawl/recrawl/crawlstate/sqlite"
)

// openState opens the SQLite state file at path, creating it if needed.
// The caller closes it.
func openState(tb testing.TB, path string) testStore {
	tb.Helper()
	st, err := sqlite.Open(context.Background(), path)
	require.NoError(tb, err)
	return st
}
