//go:build !cgo || !sqlite_fts5

package main

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// Built without cgo or the sqlite_fts5 tag, docsmcp says what to build
// with and serves nothing.
func TestSaysWhatTheBuildLacks(t *testing.T) {
	var stderr strings.Builder
	err := run(context.Background(), env{args: []string{"-db", filepath.Join(t.TempDir(), "docs.sqlite")}, stderr: &stderr})
	require.Error(t, err)
	if cgoEnabled {
		require.Contains(t, err.Error(), "-tags sqlite_fts5")
	} else {
		require.Contains(t, err.Error(), "cgo")
	}
}
