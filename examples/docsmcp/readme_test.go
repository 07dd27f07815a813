//go:build cgo && sqlite_fts5

package main

import (
	"bytes"
	"context"
	"flag"
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

var update = flag.Bool("update", false, "rewrite the README's transcript with what -transcript prints now")

// The README quotes `go run -tags sqlite_fts5 ./examples/docsmcp
// -transcript` whole. The session is deterministic (a fixed host name, a
// clock that stands still within a call), so a difference is a change of
// behaviour: rerun with -update to quote the new output.
func TestREADMEQuotesTheTranscript(t *testing.T) {
	var out bytes.Buffer
	require.NoError(t, transcript(context.Background(), &out))
	readme, err := os.ReadFile("../../README.md")
	require.NoError(t, err)
	const open, closing = "<!-- docsmcp-transcript: go run -tags sqlite_fts5 ./examples/docsmcp -transcript -->\n```\n", "```\n<!-- /docsmcp-transcript -->"
	start := strings.Index(string(readme), open)
	require.GreaterOrEqual(t, start, 0, "the README quotes the transcript between its markers")
	start += len(open)
	end := start + strings.Index(string(readme)[start:], closing)
	require.GreaterOrEqual(t, end, start)
	if *update {
		fresh := string(readme)[:start] + out.String() + string(readme)[end:]
		require.NoError(t, os.WriteFile("../../README.md", []byte(fresh), 0o644))
		return
	}
	require.Equal(t, out.String(), string(readme)[start:end], "the README quotes the transcript; rerun with -update if the change is intended")
}
