package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// The README quotes the engine's freshness against Halving from
// testdata/readme.jsonl, the output of
//
//	go run ./examples/enginefresh -pages 1000 -warmup 60 -days 60 -cadence 24h -json
//	go run ./examples/enginefresh -pages 1000 -warmup 60 -days 60 -cadence 6h -json
//
// (too long for a test to rerun): each quoted figure must be the recorded
// run's. Rerun both commands into the file and requote the README when the
// engine's scheduling changes.
func TestREADMEQuotesTheRecordedRun(t *testing.T) {
	f, err := os.Open("testdata/readme.jsonl")
	require.NoError(t, err)
	defer f.Close()
	byCadence := map[string]Result{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		var r Result
		require.NoError(t, json.Unmarshal(sc.Bytes(), &r))
		require.Equal(t, 1000, r.Pages)
		if r.Policy == "default" {
			byCadence[r.Cadence] = r
		}
	}
	require.NoError(t, sc.Err())
	daily, ok := byCadence["24h0m0s"]
	require.True(t, ok, "the recorded run has the daily cadence")
	sixHourly, ok := byCadence["6h0m0s"]
	require.True(t, ok, "the recorded run has the 6-hourly cadence")

	readme, err := os.ReadFile("../../docs/scheduling.md")
	require.NoError(t, err)
	text := strings.Join(strings.Fields(string(readme)), " ")
	want := fmt.Sprintf("the default is %+.1f%% fresher than `schedule.DefaultHalving` with daily runs at %.3f× its fetches, and %+.1f%% with 6-hourly runs at %.3f× its fetches",
		100*daily.VsHalving, daily.FetchRate, 100*sixHourly.VsHalving, sixHourly.FetchRate)
	require.Contains(t, text, want)
}

// The README's daily figures for seeds 2 and 3 are those of
// testdata/daily-seeds.jsonl, the output of
//
//	go run ./examples/enginefresh -pages 1000 -warmup 60 -days 60 -cadence 24h -json -seed 2
//	go run ./examples/enginefresh -pages 1000 -warmup 60 -days 60 -cadence 24h -json -seed 3
func TestREADMEQuotesTheOtherSeeds(t *testing.T) {
	f, err := os.Open("testdata/daily-seeds.jsonl")
	require.NoError(t, err)
	defer f.Close()
	bySeed := map[uint64]Result{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		var r Result
		require.NoError(t, json.Unmarshal(sc.Bytes(), &r))
		require.Equal(t, 1000, r.Pages)
		require.Equal(t, "24h0m0s", r.Cadence)
		if r.Policy == "default" {
			bySeed[r.Seed] = r
		}
	}
	require.NoError(t, sc.Err())
	require.Len(t, bySeed, 2)
	readme, err := os.ReadFile("../../docs/scheduling.md")
	require.NoError(t, err)
	text := strings.Join(strings.Fields(string(readme)), " ")
	want := fmt.Sprintf("seeds 2 and 3 give %+.1f%% and %+.1f%% at %.3f× and %.3f× its fetches",
		100*bySeed[2].VsHalving, 100*bySeed[3].VsHalving, bySeed[2].FetchRate, bySeed[3].FetchRate)
	require.Contains(t, text, want)
}

// docs/scheduling.md's table of the release mixes through the engine is
// what -table renders from testdata/release.jsonl, the output of
//
//	go run ./examples/enginefresh -mix R -pages 1000 -warmup 60 -days 60 -cadence 6h -json
//
// and of the same for each mix (R, R-honest, R-generated) and cadence (6h, 24h).
func TestDocQuotesTheReleaseRuns(t *testing.T) {
	var want strings.Builder
	require.NoError(t, writeTable(&want, "testdata/release.jsonl"))
	doc, err := os.ReadFile("../../docs/scheduling.md")
	require.NoError(t, err)
	const begin = "<!-- release-engine-table: go run ./examples/enginefresh -table examples/enginefresh/testdata/release.jsonl -->\n"
	text := string(doc)
	i := strings.Index(text, begin)
	require.GreaterOrEqual(t, i, 0, "docs/scheduling.md lacks the release-engine-table block")
	j := strings.Index(text[i:], "<!-- /release-engine-table -->")
	require.Positive(t, j)
	require.Equal(t, want.String(), text[i+len(begin):i+j])
}
