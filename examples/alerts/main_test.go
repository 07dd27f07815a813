package main

import (
	"context"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

var update = flag.Bool("update", false, "rewrite testdata/output.golden")

func TestOutput(t *testing.T) {
	var out strings.Builder
	require.NoError(t, run(context.Background(), &out))
	got := out.String()

	// Three runs: the first stores, the second alerts, the third finds
	// nothing new and repeats no alert.
	require.Contains(t, got, "run 1 at 2026-03-02 09:00:00: new 4, changed 0, unchanged 0 (0 answered 304), gone 0; vectors embedded 16, reused 0; 0 alerts")
	require.Contains(t, got, "run 2 at 2026-03-04 09:00:00: new 0, changed 2, unchanged 1 (1 answered 304), gone 1; vectors embedded 2, reused 8; 3 alerts")
	require.Contains(t, got, "run 3 at 2026-03-06 09:00:00: new 0, changed 0, unchanged 3 (3 answered 304), gone 0; vectors embedded 0, reused 0; 0 alerts")

	// The changed alert names the one chunk that changed, under its
	// heading, and carries the unified diff of that chunk only.
	alerts := strings.Split(got, "\n== ")
	var changed, removed string
	for _, a := range alerts {
		switch {
		case strings.HasPrefix(a, "alert 1/3: changed http://docs.example.test/docs/configuration"):
			changed = a
		case strings.HasPrefix(a, "alert 2/3: removed http://docs.example.test/docs/faq"):
			removed = a
		}
	}
	require.NotEmpty(t, changed, got)
	require.Regexp(t, `hash    [0-9a-f]{12} -> [0-9a-f]{12}`, changed)
	require.Regexp(t, `changed chunk 3 "Configuration > Timeouts" bytes \d+-\d+, record [0-9a-f]{12} -> [0-9a-f]{12}`, changed)
	require.Contains(t, changed, "   | --- old/http://docs.example.test/docs/configuration\n   | +++ new/http://docs.example.test/docs/configuration\n")
	require.Contains(t, changed, "   | -Every request to the bucket times out after 30 seconds by default.")
	require.Contains(t, changed, "   | +Every request to the bucket times out after 10 seconds by default.")
	require.NotContains(t, changed, "Logging", "unchanged sections stay out of the alert")
	require.Contains(t, removed, `removed chunk 2 "FAQ > Can two syncs run at once?"`)
	require.Contains(t, got, `added   chunk 4 "Installing skiff > Verifying the install"`)

	// Explain shows the evidence: both hashes, the stage events of both
	// versions and the record IDs written.
	require.Contains(t, got, "\n== explain ")
	require.Regexp(t, `old hash   [0-9a-f]{64}\n   new hash   [0-9a-f]{64} \(the state holds the new hash\)`, got)
	for _, stage := range []string{"fetch   #1 ok  HTTP 200", "embed   #1 ok  1 texts", "index   #2 ok  delete 5 stale records", "commit  #1 ok  hash ", "alert   #1 ok  "} {
		require.Contains(t, got, stage)
	}
	require.Regexp(t, `record IDs written \(5\): ([0-9a-f]{12} ){4}[0-9a-f]{12}\n`, got)

	// The question finds the rewritten section first, with its provenance.
	q := got[strings.Index(got, "== query"):]
	require.Regexp(t, `1\. score 0\.\d{3}  http://docs\.example\.test/docs/configuration  "Configuration > Timeouts"`, q)
	require.Contains(t, q, "times out after 10 seconds")
	require.Equal(t, 3, strings.Count(q, "score "))

	golden := filepath.Join("testdata", "output.golden")
	if *update {
		require.NoError(t, os.WriteFile(golden, []byte(got), 0o644))
	}
	want, err := os.ReadFile(golden)
	require.NoError(t, err)
	require.Equal(t, string(want), got, "the output changed; rerun with -update if that is intended")
}
