//go:build !cgo || !sqlite_fts5

package sqlitevec_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/recrawl/recrawl/index/sqlitevec"
)

// Without cgo or the sqlite_fts5 tag the package builds, and Open says
// what the build lacks.
func TestOpenSaysWhatTheBuildLacks(t *testing.T) {
	x, err := sqlitevec.Open(context.Background(), "index.sqlite", sqlitevec.Options{})
	require.ErrorIs(t, err, sqlitevec.ErrUnavailable)
	require.Nil(t, x)
	require.Contains(t, err.Error(), "-tags sqlite_fts5")
}
