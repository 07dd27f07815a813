package main

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func TestBenchRunsEveryScenario(t *testing.T) {
	const pages = 200
	res, err := run(context.Background(), options{Pages: pages, Rounds: 1, Concurrency: 4, Words: 400})
	require.NoError(t, err)
	rows := map[string]Row{}
	for _, r := range res.Rows {
		rows[r.Scenario] = r
	}
	want := len(scenarios)
	if !sqlitevecAvailable() {
		want-- // pipeline-sqlitevec needs -tags sqlite_fts5
	} else {
		q := rows[scPipelineSQLite].Median.Queries
		require.NotNil(t, q)
		require.Positive(t, q.SearchP50MS)
		require.Equal(t, 1.0, q.Recall10, "Query is exact")
		require.Positive(t, q.FileBytes)
		require.Equal(t, rows[scPipelineCold].Median.Vectors, rows[scPipelineSQLite].Median.Vectors, "both indexes hold the same chunks")
	}
	require.Len(t, rows, want)
	for _, sc := range []string{scBare, scBare304, scColly, scCollyMD, scCold, scPipelineCold} {
		require.Equal(t, pages, rows[sc].Median.Pages, sc)
	}
	colly := rows[scColly].Median
	require.InDelta(t, 1, rows[scColly].VsColly, 1e-9)
	cold := rows[scCold].Median.Bytes
	require.GreaterOrEqual(t, cold, colly.Bytes, "a cold run downloads every page, as colly does")
	require.Less(t, cold, colly.Bytes*21/20, "plus robots.txt and the sitemap")
	bare304 := rows[scBare304].Median
	require.Equal(t, pages, bare304.Requests, "one conditional request a page")
	require.Zero(t, bare304.Bytes, "every one a 304")
	allDue := rows[scAllDue].Median
	require.Equal(t, pages, allDue.Scheduled)
	require.LessOrEqual(t, allDue.Requests, pages+2, "one request a page, robots.txt and the sitemap")
	require.Less(t, allDue.Bytes*50, colly.Bytes, "304s carry no body")
	require.LessOrEqual(t, rows[scNothingDue].Median.Requests, 2, "nothing due: robots.txt and the sitemap at most")
	require.Equal(t, pages*3/100, rows[scLastmod].Median.Pages, "only the rows whose lastmod moved")
	require.Positive(t, rows[scPipelineCold].Median.Vectors)

	var out bytes.Buffer
	require.NoError(t, res.table(&out))
	for _, r := range res.Rows {
		require.Contains(t, out.String(), r.Scenario)
	}
	require.True(t, strings.HasPrefix(out.String(), "200 pages"), out.String())
}

func TestBenchRejectsBadOptions(t *testing.T) {
	_, err := run(context.Background(), options{Pages: 0, Rounds: 1, Concurrency: 1})
	require.Error(t, err)
	_, err = run(context.Background(), options{Pages: 10, Rounds: 1, Concurrency: 1, Only: "nope"})
	require.ErrorContains(t, err, "unknown scenario")
}

// The -workers mode runs each worker count on a fresh site and State and
// reports pages per second against one worker; every page is fetched once
// per scenario, whatever the count.
func TestBenchWorkers(t *testing.T) {
	const pages = 150
	res, err := runWorkers(context.Background(), options{Pages: pages, Concurrency: 4},
		workersOptions{Workers: "1,3", State: "memory", Latency: 2 * time.Millisecond})
	require.NoError(t, err)
	require.Len(t, res.Rows, 4)
	for _, r := range res.Rows {
		require.Equal(t, pages, r.Pages, "%s %d", r.Scenario, r.Workers)
		require.Positive(t, r.PagesPerSec)
		require.LessOrEqual(t, r.Requests, pages+1+r.Workers, "each page once, robots.txt per engine, the sitemap once or not at all")
		if r.Workers == 1 {
			require.InDelta(t, 1, r.VsOne, 1e-9)
		}
	}
	three := res.Rows[2]
	require.Equal(t, 3, three.Workers)
	require.InDelta(t, three.PagesPerSec/res.Rows[0].PagesPerSec, three.VsOne, 1e-9, "against one worker's cold run")
	var out bytes.Buffer
	require.NoError(t, res.table(&out))
	require.Contains(t, out.String(), "vs 1 worker")

	_, err = runWorkers(context.Background(), options{Pages: 10, Concurrency: 1}, workersOptions{Workers: "1,x", State: "memory"})
	require.ErrorContains(t, err, "-workers")
	_, err = runWorkers(context.Background(), options{Pages: 10, Concurrency: 1}, workersOptions{Workers: "1", State: "nope"})
	require.ErrorContains(t, err, "-state")
}
