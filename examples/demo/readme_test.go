package main

import (
	"bytes"
	"os"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

var number = regexp.MustCompile(`\d+(\.\d+)?`)

// The README quotes the demo's default run (300 pages, 56 days, seed 1):
// each quoted row and closing line must be what the demo prints, number
// by number. The engine's stages run concurrently on an auto-advancing
// fake clock, so a page's fetch time moves by seconds between runs and a
// page near its due time may fall into the next day: numbers may differ by
// 10% (at least 3).
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
	block := string(readme)[start+5:]
	block = block[:strings.Index(block, "```")]

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
		printed[key(p)] = p
	}
	quoted := 0
	for _, line := range strings.Split(strings.Trim(block, "\n"), "\n") {
		if s := strings.TrimSpace(line); s == "..." || s == "" {
			continue
		}
		p, ok := printed[key(line)]
		require.True(t, ok, "README line not printed by `go run ./examples/demo`:\n%s\n\nthe demo printed:\n%s", line, out.String())
		want, got := number.FindAllString(line, -1), number.FindAllString(p, -1)
		require.Len(t, got, len(want), "README: %s\ndemo:   %s", line, p)
		for i := range want {
			w, _ := strconv.ParseFloat(want[i], 64)
			g, _ := strconv.ParseFloat(got[i], 64)
			require.InDelta(t, g, w, max(3, 0.1*g), "README: %s\ndemo:   %s", line, p)
		}
		quoted++
	}
	require.Greater(t, quoted, 5)
}
