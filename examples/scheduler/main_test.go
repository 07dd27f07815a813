package main

import (
	"bytes"
	"context"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// The service runs each source repeatedly as it falls due, then shuts down
// gracefully and reports what stays due.
func TestServeRunsSourcesAndShutsDownGracefully(t *testing.T) {
	if testing.Short() {
		t.Skip("runs for a few seconds of real time")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 6*time.Second)
	defer cancel()
	var out bytes.Buffer
	require.NoError(t, serve(ctx, &out, 2, 10, filepath.Join(t.TempDir(), "state.sqlite")))
	text := out.String()
	for _, src := range []string{"site-1", "site-2"} {
		runs := regexp.MustCompile(`\[`+src+`\] due`).FindAllStringIndex(text, -1)
		require.GreaterOrEqual(t, len(runs), 2, "%s ran more than once:\n%s", src, text)
		require.Contains(t, text, "["+src+"] 10 pages known")
	}
	require.Contains(t, text, "shutting down")
	require.NotContains(t, text, "run failed")
	require.True(t, strings.Contains(text, "304"), text)
}
