package main

import (
	"bytes"
	"flag"
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

var update = flag.Bool("update", false, "rewrite the README's quote of the demo with what it prints now")

var number = regexp.MustCompile(`\d+(\.\d+)?`)

// The README quotes the demo's default run (300 pages, 56 days, seed 1):
// each quoted row and closing line must be exactly what the demo prints.
// The demo is deterministic (a fixed host name, a clock that stands still
// during a run), so any difference is a change of behaviour: rerun with
// -update to quote the new output.
func TestREADMEQuotesTheDemo(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the full demo; skipped with -short")
	}
	var out bytes.Buffer
	require.NoError(t, run(&out, 300, 56, 1))
	readme, err := os.ReadFile("../../README.md")
	require.NoError(t, err)
	start := strings.Index(string(readme), "\n```\n   days ")
	require.GreaterOrEqual(t, start, 0, "the README shows the demo's table in a fenced block")
	start += len("\n```\n")
	end := start + strings.Index(string(readme)[start:], "```")

	// A printed line is found by its words: the row label and the text
	// between the numbers.
	key := func(line string) string {
		f := strings.Fields(line)
		if len(f) > 0 && strings.ContainsAny(f[0], "0123456789") {
			return f[0] // a table row: its days
		}
		return strings.TrimSpace(number.ReplaceAllString(line, "#"))
	}
	printed := map[string]string{}
	for _, p := range strings.Split(out.String(), "\n") {
		printed[key(p)] = strings.TrimRight(p, " ")
	}
	quoted := 0
	var rewritten []string
	for _, line := range strings.Split(strings.TrimSuffix(string(readme)[start:end], "\n"), "\n") {
		if s := strings.TrimSpace(line); s == "..." || s == "" {
			rewritten = append(rewritten, line)
			continue
		}
		p, ok := printed[key(line)]
		require.True(t, ok, "README line not printed by `go run ./examples/demo`:\n%s\n\nthe demo printed:\n%s", line, out.String())
		rewritten = append(rewritten, p)
		quoted++
		if !*update {
			require.Equal(t, p, line, "the README quotes the demo; rerun with -update if the change is intended")
		}
	}
	require.Greater(t, quoted, 5)
	if *update {
		fresh := string(readme)[:start] + strings.Join(rewritten, "\n") + "\n" + string(readme)[end:]
		require.NoError(t, os.WriteFile("../../README.md", []byte(fresh), 0o644))
	}
}
