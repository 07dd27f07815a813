package main

import (
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// The README's throughput figures quote this round's table in
// BENCHMARKS.md, which is the output of `go run ./examples/bench -pages
// 10000`: each quoted ratio must be the table's for its scenario, so the
// two cannot drift apart. A new table needs the README requoted.
func TestREADMEQuotesBenchmarks(t *testing.T) {
	bench, err := os.ReadFile("../../BENCHMARKS.md")
	require.NoError(t, err)
	readme, err := os.ReadFile("../../README.md")
	require.NoError(t, err)

	// This round's table is the first one of results in BENCHMARKS.md.
	rows := map[string][]string{}
	for _, line := range strings.Split(string(bench), "\n") {
		if !strings.HasPrefix(line, "|") {
			if len(rows) > 0 {
				if strings.Contains(strings.Join(rows["scenario"], "|"), "vs colly") {
					break
				}
				rows = map[string][]string{} // a table of another kind
			}
			continue
		}
		cells := strings.Split(strings.Trim(line, "| "), " | ")
		if _, seen := rows[cells[0]]; !seen {
			rows[cells[0]] = cells
		}
	}
	require.Contains(t, rows, "scenario", "BENCHMARKS.md has its table")
	col := func(name string) int {
		for i, c := range rows["scenario"] {
			if c == name {
				return i
			}
		}
		t.Fatalf("no column %q in BENCHMARKS.md", name)
		return -1
	}
	vsColly, vsMD := col("vs colly"), col("vs colly+md")
	// ratio turns a table cell such as 0.693× into the README's 0.69×.
	ratio := func(scenario string, c int) string {
		cells, ok := rows[scenario]
		require.True(t, ok, "BENCHMARKS.md has no %s row", scenario)
		v := strings.TrimSuffix(cells[c], "×")
		if i := strings.IndexByte(v, '.'); i >= 0 && len(v) > i+3 {
			v = v[:i+3]
		}
		return v + "×"
	}
	section := string(readme)[strings.Index(string(readme), "## Throughput"):]
	section = section[:strings.Index(section[3:], "\n## ")+3]
	quotes := []struct{ pattern, want string }{
		{`every page due and unchanged: \*\*([0-9.]+×) colly`, ratio("all-due", vsColly)},
		{`2% edits and 1% volatile-only edits: ([0-9.]+×) colly`, ratio("all-due-edits", vsColly)},
		{`a cold run: ([0-9.]+×) colly \+ html-to-markdown`, ratio("cold", vsMD)},
		{`bare .net/http. sending the same\s+conditional requests takes ([0-9.]+×)`, ratio("net/http-304", vsColly)},
	}
	for _, q := range quotes {
		m := regexp.MustCompile(q.pattern).FindStringSubmatch(section)
		require.NotNil(t, m, "the README's throughput section quotes %q", q.pattern)
		require.Equal(t, q.want, m[1], "README %q against BENCHMARKS.md", q.pattern)
	}
	cpu := regexp.MustCompile(`a cold run: [0-9.]+× colly \+ html-to-markdown on every page, ([0-9.]+) ms of CPU a page`).FindStringSubmatch(section)
	require.NotNil(t, cpu, "the README's throughput section quotes the cold run's CPU a page")
	require.Equal(t, rows["cold"][col("CPU/page ms")], cpu[1], "README's cold CPU a page against BENCHMARKS.md")
	nothing := rows["nothing-due"]
	require.NotNil(t, nothing)
	require.Equal(t, "1", nothing[col("requests")], "nothing due: one request")
	require.Contains(t, section, "nothing due: one request")
}

// The README's scaling figures quote the workers table of BENCHMARKS.md,
// the output of `go run ./examples/bench -workers 1,2,4 -state postgres
// -pages 5000`.
func TestREADMEQuotesWorkers(t *testing.T) {
	bench, err := os.ReadFile("../../BENCHMARKS.md")
	require.NoError(t, err)
	readme, err := os.ReadFile("../../README.md")
	require.NoError(t, err)
	section := string(bench)[strings.Index(string(bench), "## Several workers"):]
	vs := map[string]string{} // "cold 4" -> "3.53×"
	for _, line := range strings.Split(section, "\n") {
		cells := strings.Split(strings.Trim(line, "| "), " | ")
		if len(cells) == 7 && (cells[0] == "cold" || cells[0] == "all-due") {
			vs[cells[0]+" "+cells[1]] = cells[6]
		}
	}
	require.Len(t, vs, 6, "BENCHMARKS.md has the workers table")
	m := regexp.MustCompile(`4 workers fetch ([0-9.]+×) the pages per second of one on a cold run and\s+([0-9.]+×) when every page is due`).FindStringSubmatch(string(readme))
	require.NotNil(t, m, "the README quotes the 4-worker ratios")
	require.Equal(t, vs["cold 4"], m[1])
	require.Equal(t, vs["all-due 4"], m[2])
	require.Contains(t, string(readme), "go run ./examples/bench -workers 1,2,4 -state postgres -pages 5000")
}
