package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestRunPrintsTable(t *testing.T) {
	var out bytes.Buffer
	err := run([]string{"-mix", "C", "-seeds", "1", "-pages", "200", "-days", "20", "-classes"}, &out)
	require.NoError(t, err)
	for _, want := range []string{
		"mix C, 200 pages, 20 days measured after 0 days of warm-up",
		"Halving", "Nutch", "Uniform", "Optimal (estimated)", "Optimal (true rates)", "Halving, raw bytes",
		"volatile alerts", "hourly",
	} {
		require.Contains(t, out.String(), want)
	}
}

func TestRunRejectsBadInput(t *testing.T) {
	var out bytes.Buffer
	require.ErrorContains(t, run([]string{"-mix", "Z"}, &out), "use A, B, C, L, R")
	require.Error(t, run([]string{"-pages", "x"}, &out))
	require.ErrorContains(t, run([]string{"-pages", "-5"}, &out), "must not be negative")
}

// docs/scheduling.md's release table is exactly what -release-table
// renders from the recorded -releases results; they keep the default
// within Halving's fetches.
func TestDocReleaseTableIsTheRecordedRun(t *testing.T) {
	const rec = "testdata/releases.jsonl"
	var want bytes.Buffer
	require.NoError(t, run([]string{"-release-table", rec}, &want))
	doc, err := os.ReadFile("../../docs/scheduling.md")
	require.NoError(t, err)
	const begin = "<!-- release-table: go run ./examples/simulate -release-table examples/simulate/testdata/releases.jsonl -->\n"
	const end = "<!-- /release-table -->"
	text := string(doc)
	i := strings.Index(text, begin)
	require.GreaterOrEqual(t, i, 0, "docs/scheduling.md lacks the release-table block")
	j := strings.Index(text[i:], end)
	require.Positive(t, j)
	require.Equal(t, want.String(), text[i+len(begin):i+j], "docs/scheduling.md's release table differs from -release-table %s", rec)
	f, err := os.Open(rec)
	require.NoError(t, err)
	defer f.Close()
	dec := json.NewDecoder(f)
	for dec.More() {
		var l line
		require.NoError(t, dec.Decode(&l))
		if l.Policy == "default" {
			require.LessOrEqual(t, l.FetchRate, 1.0, "at %s the default spends at most Halving's fetches", l.Cadence)
		}
	}
}

func TestReleasesAndTable(t *testing.T) {
	var out bytes.Buffer
	require.NoError(t, run([]string{"-releases", "-pages", "60", "-days", "8", "-warmup", "4", "-seeds", "1"}, &out))
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	require.Len(t, lines, 16, "four policies at four cadences")
	path := filepath.Join(t.TempDir(), "releases.jsonl")
	require.NoError(t, os.WriteFile(path, out.Bytes(), 0o644))
	var table bytes.Buffer
	require.NoError(t, run([]string{"-release-table", path}, &table))
	require.Contains(t, table.String(), "| 7 d |")
	require.Contains(t, table.String(), "mix R, 60 pages")
	require.ErrorContains(t, run([]string{"-releases", "-mix", "B"}, &out), "needs a mix with releases")
}

// The README's scheduler table is exactly what -table renders from the
// recorded -grid results, so it cannot drift from them; the results keep
// the default within Halving's fetches.
func TestReadmeTableIsTheRecordedGrid(t *testing.T) {
	const grid = "testdata/grid.jsonl"
	var want bytes.Buffer
	require.NoError(t, run([]string{"-table", grid}, &want))
	readme, err := os.ReadFile("../../docs/scheduling.md")
	require.NoError(t, err)
	const begin = "<!-- scheduler-table: go run ./examples/simulate -table examples/simulate/testdata/grid.jsonl -->\n"
	const end = "<!-- /scheduler-table -->"
	text := string(readme)
	i := strings.Index(text, begin)
	require.GreaterOrEqual(t, i, 0, "docs/scheduling.md lacks the scheduler-table block")
	j := strings.Index(text[i:], end)
	require.Positive(t, j, "docs/scheduling.md: the scheduler-table block is not closed")
	require.Equal(t, want.String(), text[i+len(begin):i+j], "docs/scheduling.md's table differs from -table %s; paste the command's output", grid)

	f, err := os.Open(grid)
	require.NoError(t, err)
	defer f.Close()
	dec := json.NewDecoder(f)
	n := 0
	for dec.More() {
		var l line
		require.NoError(t, dec.Decode(&l))
		if l.Policy == "default" {
			n++
			require.LessOrEqual(t, l.FetchRate, 1.0, "mix %s at %s: the default spends at most Halving's fetches", l.Mix, l.Cadence)
		}
	}
	require.Equal(t, 8, n, "mixes A and B at four cadences")
}

// The README's sentence on what the uncapped default spends quotes the
// recorded grid's uncapped rows.
func TestReadmeQuotesTheUncappedSpend(t *testing.T) {
	f, err := os.Open("testdata/grid.jsonl")
	require.NoError(t, err)
	defer f.Close()
	spend := map[string][]string{} // mix -> fetch ratios in the grid's cadence order
	dec := json.NewDecoder(f)
	for dec.More() {
		var l line
		require.NoError(t, dec.Decode(&l))
		if l.Policy == "default-uncapped" {
			spend[l.Mix] = append(spend[l.Mix], fmt.Sprintf("%.3f", l.FetchRate))
		}
	}
	require.Len(t, spend["A"], len(gridCadences))
	require.Len(t, spend["B"], len(gridCadences))
	readme, err := os.ReadFile("../../docs/scheduling.md")
	require.NoError(t, err)
	text := strings.Join(strings.Fields(string(readme)), " ")
	want := fmt.Sprintf("the uncapped default spends %s× the baseline's fetches on mix A at hourly, 6-hourly, daily and weekly runs, and %s× on mix B.",
		strings.Join(spend["A"], "/"), strings.Join(spend["B"], "/"))
	require.Contains(t, text, want)
}

func TestGridAndTable(t *testing.T) {
	var out bytes.Buffer
	require.NoError(t, run([]string{"-grid", "-pages", "60", "-days", "8", "-warmup", "4", "-seeds", "1"}, &out))
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	require.Len(t, lines, 24, "halving, default and uncapped default for two mixes at four cadences")
	var l line
	require.NoError(t, json.Unmarshal([]byte(lines[1]), &l))
	require.Equal(t, "default", l.Policy)
	require.Equal(t, "A", l.Mix)
	require.Equal(t, "1h0m0s", l.Cadence)
	require.Positive(t, l.Freshness)
	require.Positive(t, l.Fetches)

	path := filepath.Join(t.TempDir(), "grid.jsonl")
	require.NoError(t, os.WriteFile(path, out.Bytes(), 0o644))
	var table bytes.Buffer
	require.NoError(t, run([]string{"-table", path}, &table))
	require.Contains(t, table.String(), "| A | 1 h |")
	require.Contains(t, table.String(), "| B | 7 d |")
	require.Contains(t, table.String(), "60 pages, 8 days measured after 4 days of warm-up, mean of 1 seeds.")
	require.Error(t, run([]string{"-table", filepath.Join(t.TempDir(), "none.jsonl")}, &table))
}

func TestJSONLines(t *testing.T) {
	var out bytes.Buffer
	require.NoError(t, run([]string{"-json", "-policies", "default,uniform", "-pages", "80", "-days", "6", "-seeds", "1", "-cadence", "6h"}, &out))
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	require.Len(t, lines, 3)
	var policies []string
	for _, s := range lines {
		var l line
		require.NoError(t, json.Unmarshal([]byte(s), &l))
		policies = append(policies, l.Policy)
		require.Equal(t, "6h0m0s", l.Cadence)
	}
	require.Equal(t, []string{"halving", "default", "uniform"}, policies)
	require.ErrorContains(t, run([]string{"-policies", "nope"}, &out), "unknown policy")
}

// The README's sitemap-trust table quotes the recorded output of its
// command (testdata/mix-l-6h.txt, from the command the README names).
func TestReadmeLastModTableIsTheRecordedRun(t *testing.T) {
	rec, err := os.ReadFile("testdata/mix-l-6h.txt")
	require.NoError(t, err)
	fresh, vs := map[string]string{}, map[string]string{}
	bySitemap := map[[2]string]string{}
	num := func(s string) float64 {
		v, err := strconv.ParseFloat(s, 64)
		require.NoError(t, err, s)
		return v
	}
	for _, ln := range strings.Split(string(rec), "\n") {
		f := strings.Split(strings.TrimSpace(ln), "  ")
		var cols []string
		for _, c := range f {
			if c = strings.TrimSpace(c); c != "" {
				cols = append(cols, c)
			}
		}
		switch {
		case len(cols) == 5 && strings.HasSuffix(cols[1], "lastmod"):
			bySitemap[[2]string{cols[0], cols[1]}] = fmt.Sprintf("%.3f", num(cols[3]))
		case len(cols) > 5 && strings.HasSuffix(cols[2], "%"):
			fresh[cols[0]] = fmt.Sprintf("%.3f", num(cols[1]))
			vs[cols[0]] = strings.Replace(cols[2], "-", "−", 1)
		}
	}
	readme, err := os.ReadFile("../../docs/scheduling.md")
	require.NoError(t, err)
	for _, row := range []struct{ label, policy string }{
		{"learned (the default)", "Default"},
		{"lastmods ignored", "Default (ignore)"},
		{"`TrustHint`, `TrustAuthoritative`", "Default (hint)"},
	} {
		p := row.policy
		want := fmt.Sprintf("| %s | %s | %s | %s | %s | %s |", row.label, fresh[p], vs[p],
			bySitemap[[2]string{p, "honest lastmod"}], bySitemap[[2]string{p, "generated lastmod"}], bySitemap[[2]string{p, "no lastmod"}])
		require.True(t, strings.Contains(string(readme), want), "docs/scheduling.md lacks the row\n%s\n(from testdata/mix-l-6h.txt)", want)
	}
	require.Equal(t, fresh["Default (hint)"], fresh["Default (authoritative)"], "one row for both")
}

// The README compares the engine's daily figures with the simulator in the
// engine's setting: testdata/engine-setting-24h.jsonl is the output of
//
//	go run ./examples/simulate -mix A -pages 1000 -seeds 10 -warmup 60 -days 60 -cadence 24h -policies default-uncapped,index-oracle,index-bayes -json
//
// and each figure quoted must be the recorded run's.
func TestREADMEQuotesTheEngineSetting(t *testing.T) {
	rec, err := os.ReadFile("testdata/engine-setting-24h.jsonl")
	require.NoError(t, err)
	got := map[string]line{}
	for _, s := range strings.Split(strings.TrimSpace(string(rec)), "\n") {
		var l line
		require.NoError(t, json.Unmarshal([]byte(s), &l))
		require.Equal(t, 1000, l.Pages)
		require.Equal(t, 10, l.Seeds)
		got[l.Policy] = l
	}
	readme, err := os.ReadFile("../../docs/scheduling.md")
	require.NoError(t, err)
	text := strings.Join(strings.Fields(string(readme)), " ")
	want := fmt.Sprintf("the simulator in the same setting (1,000 pages, 60 days after 60 of warm-up, 10 seeds) puts the uncapped default at %+.1f%% at %.3f× Halving's fetches, and the index given the true change rates at %+.1f%%",
		100*got["default-uncapped"].VsHalving, got["default-uncapped"].FetchRate, 100*got["index-oracle"].VsHalving)
	require.Contains(t, text, want)
	require.Contains(t, text, fmt.Sprintf("ranks by the index averaged over each page's posterior given its checks, is at %+.1f%%", 100*got["index-bayes"].VsHalving))
	require.Contains(t, text, "-policies default-uncapped,index-oracle,index-bayes`")
}
