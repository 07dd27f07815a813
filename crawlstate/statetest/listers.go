package statetest

import (
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/recrawl/recrawl/crawlstate"
)

// lister is a State that lists rows for planning (crawlstate.PlanLister
// and crawlstate.LiveLister).
type lister interface {
	crawlstate.State
	crawlstate.PlanLister
	crawlstate.LiveLister
}

// freshLister is fresh for the listers' subtests: it skips, naming them,
// when the store lacks them.
func freshLister(t *testing.T, open Opener) lister {
	t.Helper()
	s := fresh(t, open, crawlstate.Options{})
	l, ok := s.(lister)
	if !ok {
		t.Skipf("statetest: %T lacks the optional abilities crawlstate.PlanLister and crawlstate.LiveLister, which this part of the contract needs", s)
	}
	return l
}

// listerRows stores 7 rows of source "docs" (the fourth gone, the sixth
// failing) and 2 of source "other", every field set, and returns the
// rows of "docs" that list reads, a page of 2 at a time, after checking
// they are the live ones in URL order.
func listerRows(t *testing.T, s lister, list func(after string, limit int) ([]crawlstate.Row, error)) []crawlstate.Row {
	t.Helper()
	ctx := t.Context()
	var urls []crawlstate.Discovered
	var results []crawlstate.Result
	for i := range 7 {
		u := fmt.Sprintf("https://ex.com/%d", i)
		urls = append(urls, crawlstate.Discovered{URL: u, OriginalURL: u + "?utm=x", LastMod: t0, Via: "https://ex.com/sitemap.xml"})
		results = append(results, crawlstate.Result{
			URL: u, At: t0.Add(time.Duration(i) * time.Hour), Changed: true, ContentHash: fmt.Sprint("h", i), ETag: `"e"`, Title: "T",
			LastModified: "Mon, 01 Jan 2024 00:00:00 GMT", Canonical: u,
			Interval: time.Duration(i+1) * time.Hour, NextCheck: t0.Add(time.Duration(i+1) * time.Hour),
			Stats: &crawlstate.Stats{Elapsed: time.Duration(i) * time.Minute, ChangeRate: 0.5 + float64(i), Weight: 2,
				Recent: []crawlstate.Check{{Elapsed: time.Hour, Changed: i%2 == 0, Modified: time.Minute}}, LastChanged: t0},
		})
	}
	_, err := s.UpsertDiscovered(ctx, "docs", t0, urls)
	require.NoError(t, err)
	_, err = s.UpsertDiscovered(ctx, "other", t0, urls[:2])
	require.NoError(t, err)
	results[3].Gone = true
	require.NoError(t, s.Record(ctx, "docs", results))
	require.NoError(t, s.RecordFailure(ctx, "docs", crawlstate.Failure{URL: urls[5].URL, At: t0.Add(9 * time.Hour), Stage: "fetch", Err: "boom"}))

	var got []crawlstate.Row
	after := ""
	for {
		page, err := list(after, 2)
		require.NoError(t, err)
		got = append(got, page...)
		if len(page) < 2 {
			break
		}
		after = page[len(page)-1].URL
	}
	require.Len(t, got, 6, "the gone row is left out, the other source's rows too")
	for i := 1; i < len(got); i++ {
		require.Less(t, got[i-1].URL, got[i].URL)
	}
	_, err = list("", 0)
	require.Error(t, err, "a limit below 1")
	return got
}

// PlanRows lists a source's live rows in URL order, a page at a time, with
// the planning columns as Get reads them and the others zero.
func testPlanRows(t *testing.T, open Opener) {
	s := freshLister(t, open)
	got := listerRows(t, s, func(after string, limit int) ([]crawlstate.Row, error) {
		return s.PlanRows(t.Context(), "docs", after, limit)
	})
	for _, r := range got {
		full, err := s.Get(t.Context(), "docs", r.URL)
		require.NoError(t, err)
		want := crawlstate.Row{
			Source: full.Source, URL: full.URL, LastFetched: full.LastFetched, NextCheck: full.NextCheck,
			Interval: full.Interval, ContentHash: full.ContentHash, Visits: full.Visits, Changes: full.Changes, Stats: full.Stats,
		}
		require.Equal(t, want, r)
		require.NotEmpty(t, full.ETag, "Get reads what PlanRows leaves out")
	}
}

// LiveRows lists a source's live rows in URL order, a page at a time,
// each exactly as Get reads it.
func testLiveRows(t *testing.T, open Opener) {
	s := freshLister(t, open)
	got := listerRows(t, s, func(after string, limit int) ([]crawlstate.Row, error) {
		return s.LiveRows(t.Context(), "docs", after, limit)
	})
	for _, r := range got {
		full, err := s.Get(t.Context(), "docs", r.URL)
		require.NoError(t, err)
		require.Equal(t, full, r)
	}
	require.Equal(t, 1, got[4].Failures, "a failing row is listed with its failure")
}
