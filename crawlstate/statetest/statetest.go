// Package statetest is the conformance suite of crawlstate.State: every
// implementation runs it from its own tests, and passing it is what
// "implements State" means. A store with the crawlstate.Sharer ability
// runs RunSharer too.
//
//	func TestConformance(t *testing.T) {
//		statetest.Run(t, func(t *testing.T, opts crawlstate.Options) crawlstate.State {
//			return mystate.Open(t.TempDir(), opts)
//		})
//	}
package statetest

import (
	"context"
	"fmt"
	"sort"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/recrawl/recrawl/crawlstate"
)

// Opener returns a new, empty State with the given policies. It fails t
// when the State cannot be opened. The suite closes every State it opens.
type Opener func(t *testing.T, opts crawlstate.Options) crawlstate.State

// t0 is the suite's reference instant. It carries nanoseconds on purpose:
// a State must keep times to the nanosecond.
var t0 = time.Date(2025, time.March, 1, 12, 0, 0, 123456789, time.UTC)

const src = "docs"

// Run runs the whole suite, one subtest per part of the contract, each on a
// fresh State from open.
func Run(t *testing.T, open Opener) {
	t.Helper()
	tests := []struct {
		name string
		fn   func(t *testing.T, open Opener)
	}{
		{"NewURLsAreDueNow", testNewURLsAreDueNow},
		{"ReupsertResetsMissingAndSetsLastSeen", testReupsert},
		{"DuplicateURLsCountOnce", testDuplicates},
		{"EmptyUpsert", testEmptyUpsert},
		{"InvalidUpsertStoresNothing", testInvalidUpsert},
		{"LastModBump", testLastModBump},
		{"MarkMissing", testMarkMissing},
		{"MarkMissingKeepsEarlierDue", testMarkMissingKeepsEarlierDue},
		{"MarkMissingRejectsBadThreshold", testMarkMissingBadThreshold},
		{"RecordChanged", testRecordChanged},
		{"RecordUnchanged200", testRecordUnchanged200},
		{"RecordNotModified", testRecordNotModified},
		{"RecordGone", testRecordGone},
		{"RecordAliveClearsTombstone", testRecordAliveClearsTombstone},
		{"RecordFailure", testRecordFailure},
		{"RecordUnknownURL", testRecordUnknown},
		{"RecordBatchIsAtomic", testRecordAtomic},
		{"Revive", testRevive},
		{"ReviveOnMovedLastmod", testReviveOnMovedLastmod},
		{"KeepTombstones", testKeepTombstones},
		{"DueOrderAndPaging", testDuePaging},
		{"DueRejectsBadLimit", testDueBadLimit},
		{"HugeLimitsBoundAllocation", testHugeLimits},
		{"DueNextDueCount", testCounts},
		{"SourcesAreIsolated", testSourcesIsolated},
		{"ZeroTimesRoundTrip", testZeroTimes},
		{"GetUnknown", testGetUnknown},
		{"Lock", testLock},
		{"LockRefresh", testLockRefresh},
		{"LockRejectsBadArgs", testLockBadArgs},
		{"LockRace", testLockRace},
		{"ConcurrentRecords", testConcurrentRecords},
		{"CanceledContext", testCanceledContext},

		{"NewRowHasNoDetails", testNewRowHasNoDetails},
		{"RecordStats", testRecordStats},
		{"RecordTitleCanonicalAlias", testRecordTitleCanonicalAlias},
		{"RecordFailureStageAndTime", testRecordFailureStage},
		{"DiscoveredVia", testDiscoveredVia},
		{"TouchListed", testTouchListed},
		{"TouchListedSkipsDroppedURLs", testTouchListedSkipsDroppedURLs},
		{"TouchListedStoredDocument", testTouchListedStoredDocument},
		{"RecordLinks", testRecordLinks},
		{"RecordChunks", testRecordChunks},
		{"RecordChunksRejectsDuplicateOrdinals", testRecordChunksDuplicate},
		{"RecordAlert", testRecordAlert},
		{"AlertsSince", testAlertsSince},
		{"RecordAlertRejectsBadAlerts", testRecordAlertBad},
		{"RecordBatchIsAtomicWithExtras", testRecordAtomicExtras},
		{"PendingAlerts", testPendingAlerts},
		{"MarkDelivered", testMarkDelivered},
		{"MarkAlertFailed", testMarkAlertFailed},
		{"Vectors", testVectors},
		{"VectorsMany", testVectorsMany},
		{"PutVectorsRejectsBadInput", testPutVectorsBad},
		{"Documents", testDocuments},
		{"StageEvents", testStageEvents},
		{"LogEventsRejectsBadEvents", testLogEventsBad},
		{"RecordEvents", testRecordEvents},
		{"DeadLetters", testDeadLetters},
		{"RecordExcluded", testRecordExcluded},
		{"CanceledContextExtras", testCanceledContextExtras},
		{"Runs", testRuns},
		{"LastModTrust", testLastModTrust},
		{"PlanRows", testPlanRows},
		{"LiveRows", testLiveRows},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) { tc.fn(t, open) })
	}
}

// fresh opens a State that is closed when t ends.
func fresh(t *testing.T, open Opener, opts crawlstate.Options) crawlstate.State {
	t.Helper()
	s := open(t, opts)
	require.NotNil(t, s, "open returned a nil State")
	t.Cleanup(func() { require.NoError(t, s.Close()) })
	return s
}

func ctxT(t *testing.T) context.Context { return t.Context() }

func disc(urls ...string) []crawlstate.Discovered {
	out := make([]crawlstate.Discovered, len(urls))
	for i, u := range urls {
		out[i] = crawlstate.Discovered{URL: u, OriginalURL: u + "?utm_source=x"}
	}
	return out
}

func upsert(t *testing.T, s crawlstate.State, source string, now time.Time, ds []crawlstate.Discovered) crawlstate.UpsertStats {
	t.Helper()
	st, err := s.UpsertDiscovered(ctxT(t), source, now, ds)
	require.NoError(t, err)
	return st
}

func get(t *testing.T, s crawlstate.State, source, u string) crawlstate.Row {
	t.Helper()
	r, err := s.Get(ctxT(t), source, u)
	require.NoError(t, err)
	return r
}

// requireTime compares instants, ignoring location and monotonic reading.
func requireTime(t *testing.T, want, got time.Time, what string) {
	t.Helper()
	require.Truef(t, want.Equal(got), "%s: want %v, got %v", what, want, got)
}

func dueURLs(t *testing.T, s crawlstate.State, source string, now time.Time) []string {
	t.Helper()
	rows, err := s.Due(ctxT(t), source, now, crawlstate.Key{}, 1000)
	require.NoError(t, err)
	out := make([]string, len(rows))
	for i, r := range rows {
		out[i] = r.URL
	}
	return out
}

// fetched records a plain 200 that schedules the next check at next.
func fetched(t *testing.T, s crawlstate.State, source, u string, at, next time.Time) {
	t.Helper()
	require.NoError(t, s.Record(ctxT(t), source, []crawlstate.Result{{
		URL: u, At: at, Changed: true, ContentHash: "h-" + u,
		Interval: next.Sub(at), NextCheck: next,
	}}))
}

func testNewURLsAreDueNow(t *testing.T, open Opener) {
	s := fresh(t, open, crawlstate.Options{})
	lm := time.Date(2025, time.February, 3, 4, 5, 6, 0, time.UTC)
	ds := disc("https://ex.com/b", "https://ex.com/a", "https://ex.com/c")
	ds[0].LastMod = lm
	st := upsert(t, s, src, t0, ds)
	require.Equal(t, crawlstate.UpsertStats{New: 3}, st)

	require.Equal(t, []string{"https://ex.com/a", "https://ex.com/b", "https://ex.com/c"}, dueURLs(t, s, src, t0),
		"new rows are due now, in URL order among equal NextCheck")
	// Due now means due at any instant, even one before the upsert.
	require.Len(t, dueURLs(t, s, src, t0.Add(-time.Hour)), 3)

	r := get(t, s, src, "https://ex.com/b")
	require.Equal(t, src, r.Source)
	require.Equal(t, "https://ex.com/b", r.URL)
	require.Equal(t, "https://ex.com/b?utm_source=x", r.OriginalURL)
	requireTime(t, t0, r.FirstSeen, "FirstSeen")
	requireTime(t, t0, r.LastSeen, "LastSeen")
	require.True(t, r.LastFetched.IsZero(), "never fetched")
	require.True(t, r.NextCheck.IsZero(), "a new row is due now: NextCheck zero")
	requireTime(t, lm, r.SitemapLastMod, "SitemapLastMod")
	require.Zero(t, r.Interval)
	require.Empty(t, r.ContentHash)
	require.Zero(t, r.MissingRuns)
	require.False(t, r.Gone)
	require.Zero(t, r.Visits)
	require.Zero(t, r.Failures)
	require.True(t, get(t, s, src, "https://ex.com/a").SitemapLastMod.IsZero())
}

func testReupsert(t *testing.T, open Opener) {
	s := fresh(t, open, crawlstate.Options{})
	upsert(t, s, src, t0, disc("https://ex.com/a", "https://ex.com/b"))
	t1 := t0.Add(24 * time.Hour)
	upsert(t, s, src, t1, disc("https://ex.com/b"))
	n, err := s.MarkMissing(ctxT(t), src, t1, t1, 3)
	require.NoError(t, err)
	require.Equal(t, 1, n)
	require.Equal(t, 1, get(t, s, src, "https://ex.com/a").MissingRuns)

	t2 := t1.Add(24 * time.Hour)
	ds := disc("https://ex.com/a", "https://ex.com/b")
	ds[0].OriginalURL = "https://EX.com/a"
	st := upsert(t, s, src, t2, ds)
	require.Equal(t, crawlstate.UpsertStats{Seen: 2}, st)
	r := get(t, s, src, "https://ex.com/a")
	require.Zero(t, r.MissingRuns, "rediscovery resets MissingRuns")
	requireTime(t, t2, r.LastSeen, "LastSeen")
	requireTime(t, t0, r.FirstSeen, "FirstSeen is kept")
	require.Equal(t, "https://ex.com/a?utm_source=x", r.OriginalURL, "OriginalURL is the first discovered form")
}

func testDuplicates(t *testing.T, open Opener) {
	s := fresh(t, open, crawlstate.Options{})
	st := upsert(t, s, src, t0, disc("https://ex.com/a", "https://ex.com/a", "https://ex.com/b"))
	require.Equal(t, crawlstate.UpsertStats{New: 2}, st)
	total, _, err := s.Count(ctxT(t), src)
	require.NoError(t, err)
	require.Equal(t, 2, total)
}

func testEmptyUpsert(t *testing.T, open Opener) {
	s := fresh(t, open, crawlstate.Options{})
	st := upsert(t, s, src, t0, nil)
	require.Equal(t, crawlstate.UpsertStats{}, st)
	total, _, err := s.Count(ctxT(t), src)
	require.NoError(t, err)
	require.Zero(t, total)
}

func testInvalidUpsert(t *testing.T, open Opener) {
	s := fresh(t, open, crawlstate.Options{})
	_, err := s.UpsertDiscovered(ctxT(t), src, t0, disc("https://ex.com/a", ""))
	require.Error(t, err, "an empty URL is an error")
	_, err = s.UpsertDiscovered(ctxT(t), "", t0, disc("https://ex.com/a"))
	require.Error(t, err, "an empty source is an error")
	total, _, err := s.Count(ctxT(t), src)
	require.NoError(t, err)
	require.Zero(t, total, "a rejected batch stores nothing")
}

func testLastModBump(t *testing.T, open Opener) {
	s := fresh(t, open, crawlstate.Options{})
	lm1 := time.Date(2025, time.January, 1, 0, 0, 0, 0, time.UTC)
	lm2 := lm1.Add(48 * time.Hour)
	ds := disc("https://ex.com/moved", "https://ex.com/same", "https://ex.com/none", "https://ex.com/dropped")
	ds[0].LastMod, ds[1].LastMod, ds[3].LastMod = lm1, lm1, lm1
	upsert(t, s, src, t0, ds)

	next := t0.Add(7 * 24 * time.Hour)
	for _, d := range ds {
		fetched(t, s, src, d.URL, t0, next)
	}
	require.Empty(t, dueURLs(t, s, src, t0.Add(time.Hour)), "all scheduled a week ahead")

	t1 := t0.Add(24 * time.Hour)
	ds[0].LastMod = lm2         // moved
	ds[3].LastMod = time.Time{} // no longer listed with a lastmod
	st := upsert(t, s, src, t1, ds)
	require.Equal(t, crawlstate.UpsertStats{Seen: 4, Bumped: 1}, st)

	require.Equal(t, []string{"https://ex.com/moved"}, dueURLs(t, s, src, t1))
	moved := get(t, s, src, "https://ex.com/moved")
	require.True(t, moved.NextCheck.IsZero(), "a bumped row is due now: NextCheck zero")
	requireTime(t, lm2, moved.SitemapLastMod, "the new lastmod is stored")
	requireTime(t, next, get(t, s, src, "https://ex.com/same").NextCheck, "unchanged lastmod keeps the schedule")
	requireTime(t, next, get(t, s, src, "https://ex.com/none").NextCheck, "zero lastmod never bumps")
	dropped := get(t, s, src, "https://ex.com/dropped")
	requireTime(t, next, dropped.NextCheck, "a zero lastmod never bumps")
	requireTime(t, lm1, dropped.SitemapLastMod, "a zero lastmod keeps the last known one")

	// The same lastmod again is not a move.
	st = upsert(t, s, src, t1.Add(time.Hour), ds)
	require.Equal(t, crawlstate.UpsertStats{Seen: 4}, st)
	// Nor is the old lastmod coming back after a run without one.
	ds[3].LastMod = lm1
	st = upsert(t, s, src, t1.Add(2*time.Hour), ds)
	require.Equal(t, crawlstate.UpsertStats{Seen: 4}, st)
	// A first lastmod for a row that had none is a move.
	ds[2].LastMod = lm2
	st = upsert(t, s, src, t1.Add(3*time.Hour), ds)
	require.Equal(t, crawlstate.UpsertStats{Seen: 4, Bumped: 1}, st)
	require.True(t, get(t, s, src, "https://ex.com/none").NextCheck.IsZero())
}

func testMarkMissing(t *testing.T, open Opener) {
	s := fresh(t, open, crawlstate.Options{})
	all := []string{"https://ex.com/stays", "https://ex.com/leaves", "https://ex.com/gone"}
	upsert(t, s, src, t0, disc(all...))
	next := t0.Add(365 * 24 * time.Hour) // far away: only MarkMissing can make them due
	for _, u := range all {
		fetched(t, s, src, u, t0, next)
	}
	require.NoError(t, s.Record(ctxT(t), src, []crawlstate.Result{{URL: "https://ex.com/gone", At: t0, Gone: true}}))

	const threshold = 3
	for run := 1; run <= 7; run++ {
		start := t0.Add(time.Duration(run) * 24 * time.Hour)
		now := start.Add(time.Minute)
		upsert(t, s, src, start, disc("https://ex.com/stays"))
		n, err := s.MarkMissing(ctxT(t), src, start, now, threshold)
		require.NoError(t, err)
		require.Equal(t, 1, n, "run %d: only the live unseen row is counted", run)

		leaves := get(t, s, src, "https://ex.com/leaves")
		require.Equal(t, run, leaves.MissingRuns)
		require.False(t, leaves.Gone, "absence alone never marks a row gone")
		require.Zero(t, get(t, s, src, "https://ex.com/stays").MissingRuns)
		require.Equal(t, 1, get(t, s, src, "https://ex.com/gone").MissingRuns, "an absent tombstone is flagged once (for rediscovery), never counted up")

		due := dueURLs(t, s, src, now)
		if run%threshold == 0 {
			require.Equal(t, []string{"https://ex.com/leaves"}, due, "run %d: due for a confirming fetch", run)
			requireTime(t, now, leaves.NextCheck, "due at now")
			// The confirming fetch answered 200: the page lives on.
			fetched(t, s, src, "https://ex.com/leaves", now, next)
		} else {
			require.Empty(t, due, "run %d: absence below the threshold schedules nothing", run)
		}
	}
	total, gone, err := s.Count(ctxT(t), src)
	require.NoError(t, err)
	require.Equal(t, 3, total)
	require.Equal(t, 1, gone)
}

func testMarkMissingKeepsEarlierDue(t *testing.T, open Opener) {
	s := fresh(t, open, crawlstate.Options{})
	upsert(t, s, src, t0, disc("https://ex.com/a"))
	// Never fetched: due now. Reaching the threshold must not delay it.
	n, err := s.MarkMissing(ctxT(t), src, t0.Add(time.Hour), t0.Add(time.Hour), 1)
	require.NoError(t, err)
	require.Equal(t, 1, n)
	r := get(t, s, src, "https://ex.com/a")
	require.Equal(t, 1, r.MissingRuns)
	require.True(t, r.NextCheck.IsZero(), "an earlier due time is kept")
}

func testMarkMissingBadThreshold(t *testing.T, open Opener) {
	s := fresh(t, open, crawlstate.Options{})
	upsert(t, s, src, t0, disc("https://ex.com/a"))
	for _, th := range []int{0, -1} {
		_, err := s.MarkMissing(ctxT(t), src, t0.Add(time.Hour), t0.Add(time.Hour), th)
		require.Error(t, err, "threshold %d", th)
	}
	require.Zero(t, get(t, s, src, "https://ex.com/a").MissingRuns)
}

func testRecordChanged(t *testing.T, open Opener) {
	s := fresh(t, open, crawlstate.Options{})
	u := "https://ex.com/a"
	upsert(t, s, src, t0, disc(u))
	at := t0.Add(time.Minute)
	next := at.Add(24 * time.Hour)
	require.NoError(t, s.Record(ctxT(t), src, []crawlstate.Result{{
		URL: u, At: at, Changed: true, ContentHash: "h1", ETag: `"v1"`,
		LastModified: "Sat, 01 Mar 2025 10:00:00 GMT", Interval: 24 * time.Hour, NextCheck: next,
	}}))
	r := get(t, s, src, u)
	requireTime(t, at, r.LastFetched, "LastFetched")
	requireTime(t, next, r.NextCheck, "NextCheck")
	require.Equal(t, 24*time.Hour, r.Interval)
	require.Equal(t, "h1", r.ContentHash)
	require.Equal(t, `"v1"`, r.ETag)
	require.Equal(t, "Sat, 01 Mar 2025 10:00:00 GMT", r.LastModified)
	require.Equal(t, 1, r.Visits)
	require.Equal(t, 1, r.Changes)
	require.Empty(t, dueURLs(t, s, src, at), "scheduled rows leave the queue until NextCheck")
	require.Equal(t, []string{u}, dueURLs(t, s, src, next), "due at NextCheck, inclusive")

	// A second change with a 200 that no longer carries validators.
	at2 := next.Add(time.Minute)
	require.NoError(t, s.Record(ctxT(t), src, []crawlstate.Result{{
		URL: u, At: at2, Changed: true, ContentHash: "h2", Interval: 12 * time.Hour, NextCheck: at2.Add(12 * time.Hour),
	}}))
	r = get(t, s, src, u)
	require.Equal(t, "h2", r.ContentHash)
	require.Empty(t, r.ETag, "an empty validator on a 200 clears the stored one")
	require.Empty(t, r.LastModified)
	require.Equal(t, 2, r.Visits)
	require.Equal(t, 2, r.Changes)
	require.Equal(t, 12*time.Hour, r.Interval)
}

func testRecordUnchanged200(t *testing.T, open Opener) {
	s := fresh(t, open, crawlstate.Options{})
	u := "https://ex.com/a"
	upsert(t, s, src, t0, disc(u))
	fetched(t, s, src, u, t0, t0.Add(time.Hour))
	at := t0.Add(2 * time.Hour)
	require.NoError(t, s.Record(ctxT(t), src, []crawlstate.Result{{
		URL: u, At: at, ContentHash: "h-" + u, ETag: `"e"`, Interval: 36 * time.Hour, NextCheck: at.Add(36 * time.Hour),
	}}))
	r := get(t, s, src, u)
	require.Equal(t, 2, r.Visits)
	require.Equal(t, 1, r.Changes, "an unchanged 200 is a visit, not a change")
	require.Equal(t, "h-"+u, r.ContentHash)
	require.Equal(t, `"e"`, r.ETag)

	// An empty hash keeps the stored one.
	require.NoError(t, s.Record(ctxT(t), src, []crawlstate.Result{{URL: u, At: at, NextCheck: at}}))
	require.Equal(t, "h-"+u, get(t, s, src, u).ContentHash)
}

func testRecordNotModified(t *testing.T, open Opener) {
	s := fresh(t, open, crawlstate.Options{})
	u := "https://ex.com/a"
	upsert(t, s, src, t0, disc(u))
	require.NoError(t, s.Record(ctxT(t), src, []crawlstate.Result{{
		URL: u, At: t0, Changed: true, ContentHash: "h1", ETag: `"v1"`, LastModified: "lm1",
		Interval: time.Hour, NextCheck: t0.Add(time.Hour),
	}}))

	at := t0.Add(2 * time.Hour)
	require.NoError(t, s.Record(ctxT(t), src, []crawlstate.Result{{
		URL: u, At: at, NotModified: true, ContentHash: "ignored-on-304",
		Interval: 90 * time.Minute, NextCheck: at.Add(90 * time.Minute),
	}}))
	r := get(t, s, src, u)
	require.Equal(t, "h1", r.ContentHash, "a 304 keeps the stored hash")
	require.Equal(t, `"v1"`, r.ETag, "a 304 without validators keeps the stored ones")
	require.Equal(t, "lm1", r.LastModified)
	require.Equal(t, 2, r.Visits)
	require.Equal(t, 1, r.Changes)
	require.Equal(t, 90*time.Minute, r.Interval)
	requireTime(t, at, r.LastFetched, "LastFetched")
	requireTime(t, at.Add(90*time.Minute), r.NextCheck, "NextCheck")

	// A 304 that carries a new validator stores it.
	require.NoError(t, s.Record(ctxT(t), src, []crawlstate.Result{{
		URL: u, At: at, NotModified: true, ETag: `"v2"`, NextCheck: at.Add(time.Hour),
	}}))
	r = get(t, s, src, u)
	require.Equal(t, `"v2"`, r.ETag)
	require.Equal(t, "lm1", r.LastModified)
}

func testRecordGone(t *testing.T, open Opener) {
	s := fresh(t, open, crawlstate.Options{})
	u := "https://ex.com/a"
	upsert(t, s, src, t0, disc(u, "https://ex.com/b"))
	fetched(t, s, src, u, t0, t0.Add(time.Hour))
	require.NoError(t, s.RecordFailure(ctxT(t), src, crawlstate.Failure{URL: u, At: t0, Stage: "fetch", Err: "timeout"}))

	at := t0.Add(2 * time.Hour)
	require.NoError(t, s.Record(ctxT(t), src, []crawlstate.Result{{
		URL: u, At: at, Gone: true, ContentHash: "ignored", NextCheck: at.Add(time.Hour),
	}}))
	r := get(t, s, src, u)
	require.True(t, r.Gone)
	requireTime(t, at, r.LastFetched, "a 404 is a definitive answer")
	require.Equal(t, 1, r.Visits, "a gone answer is not a visit")
	require.Zero(t, r.Failures)
	require.NotEqual(t, "ignored", r.ContentHash)

	require.Equal(t, []string{"https://ex.com/b"}, dueURLs(t, s, src, at.Add(24*time.Hour)), "a tombstone leaves the due queue")
	total, gone, err := s.Count(ctxT(t), src)
	require.NoError(t, err)
	require.Equal(t, 2, total, "the tombstone row stays")
	require.Equal(t, 1, gone)
}

func testRecordAliveClearsTombstone(t *testing.T, open Opener) {
	s := fresh(t, open, crawlstate.Options{KeepTombstones: true})
	u := "https://ex.com/a"
	upsert(t, s, src, t0, disc(u))
	require.NoError(t, s.Record(ctxT(t), src, []crawlstate.Result{{URL: u, At: t0, Gone: true}}))
	require.True(t, get(t, s, src, u).Gone)
	// A later definitive 200 (a direct check of the URL) proves it exists.
	fetched(t, s, src, u, t0.Add(time.Hour), t0.Add(2*time.Hour))
	r := get(t, s, src, u)
	require.False(t, r.Gone)
	require.Equal(t, []string{u}, dueURLs(t, s, src, t0.Add(2*time.Hour)))
}

func testRecordFailure(t *testing.T, open Opener) {
	s := fresh(t, open, crawlstate.Options{})
	u := "https://ex.com/a"
	upsert(t, s, src, t0, disc(u))
	require.NoError(t, s.Record(ctxT(t), src, []crawlstate.Result{{
		URL: u, At: t0, Changed: true, ContentHash: "h1", ETag: `"v1"`, LastModified: "lm1",
		Interval: time.Hour, NextCheck: t0.Add(time.Hour),
	}}))
	before := get(t, s, src, u)

	for i := 1; i <= 3; i++ {
		require.NoError(t, s.RecordFailure(ctxT(t), src, crawlstate.Failure{
			URL: u, At: t0.Add(time.Duration(i) * time.Hour), Stage: "fetch", Err: fmt.Sprintf("503 attempt %d", i),
		}))
		r := get(t, s, src, u)
		require.Equal(t, i, r.Failures)
		require.Contains(t, r.LastError, "fetch")
		require.Contains(t, r.LastError, fmt.Sprintf("503 attempt %d", i))
		require.Equal(t, "fetch", r.LastStage)
		requireTime(t, t0.Add(time.Duration(i)*time.Hour), r.LastFailure, "LastFailure")
		// Nothing else moved.
		r.Failures, r.LastError, r.LastStage, r.LastFailure = before.Failures, before.LastError, before.LastStage, before.LastFailure
		require.Equal(t, normalize(before), normalize(r))
	}
	require.Equal(t, []string{u}, dueURLs(t, s, src, t0.Add(time.Hour)), "a failed row stays due")

	at := t0.Add(5 * time.Hour)
	require.NoError(t, s.Record(ctxT(t), src, []crawlstate.Result{{URL: u, At: at, NotModified: true, NextCheck: at.Add(time.Hour)}}))
	require.Zero(t, get(t, s, src, u).Failures, "a definitive answer resets the failure count")

	// A failure with RetryAt backs the row off: it leaves the due queue
	// until then; the failure count goes on.
	retry := at.Add(4 * time.Hour)
	require.NoError(t, s.RecordFailure(ctxT(t), src, crawlstate.Failure{URL: u, At: at, Stage: "fetch", Err: "503", RetryAt: retry}))
	r := get(t, s, src, u)
	requireTime(t, retry, r.NextCheck, "NextCheck")
	require.Equal(t, 1, r.Failures)
	require.Empty(t, dueURLs(t, s, src, retry.Add(-time.Second)))
	require.Equal(t, []string{u}, dueURLs(t, s, src, retry))

	err := s.RecordFailure(ctxT(t), src, crawlstate.Failure{URL: "https://ex.com/unknown", Stage: "fetch", Err: "x"})
	require.ErrorIs(t, err, crawlstate.ErrNotFound)
}

// normalize puts a row's times in UTC without monotonic readings, so
// require.Equal compares instants.
func normalize(r crawlstate.Row) crawlstate.Row {
	for _, p := range []*time.Time{&r.FirstSeen, &r.LastSeen, &r.LastFetched, &r.NextCheck, &r.SitemapLastMod,
		&r.LastFailure, &r.Stats.LastChanged, &r.Stats.LastModified} {
		if !p.IsZero() {
			*p = p.UTC().Round(0)
		}
	}
	return r
}

func testRecordUnknown(t *testing.T, open Opener) {
	s := fresh(t, open, crawlstate.Options{})
	upsert(t, s, src, t0, disc("https://ex.com/a"))
	err := s.Record(ctxT(t), src, []crawlstate.Result{{URL: "https://ex.com/nope", At: t0}})
	require.ErrorIs(t, err, crawlstate.ErrNotFound)
	require.Contains(t, err.Error(), "https://ex.com/nope", "the error names the URL")
	// The same URL in another source is unknown too.
	err = s.Record(ctxT(t), "other", []crawlstate.Result{{URL: "https://ex.com/a", At: t0}})
	require.ErrorIs(t, err, crawlstate.ErrNotFound)
}

func testRecordAtomic(t *testing.T, open Opener) {
	s := fresh(t, open, crawlstate.Options{})
	upsert(t, s, src, t0, disc("https://ex.com/a", "https://ex.com/b"))
	err := s.Record(ctxT(t), src, []crawlstate.Result{
		{URL: "https://ex.com/a", At: t0, Changed: true, ContentHash: "h", NextCheck: t0.Add(time.Hour)},
		{URL: "https://ex.com/unknown", At: t0},
		{URL: "https://ex.com/b", At: t0, Changed: true, ContentHash: "h", NextCheck: t0.Add(time.Hour)},
	})
	require.ErrorIs(t, err, crawlstate.ErrNotFound)
	for _, u := range []string{"https://ex.com/a", "https://ex.com/b"} {
		r := get(t, s, src, u)
		require.Zero(t, r.Visits, "%s: nothing of the failed batch is stored", u)
		require.Empty(t, r.ContentHash)
		require.True(t, r.LastFetched.IsZero())
	}
}

func testRevive(t *testing.T, open Opener) {
	s := fresh(t, open, crawlstate.Options{})
	u := "https://ex.com/a"
	upsert(t, s, src, t0, disc(u, "https://ex.com/b"))
	require.NoError(t, s.Record(ctxT(t), src, []crawlstate.Result{{
		URL: u, At: t0, Changed: true, ContentHash: "h1", ETag: `"v1"`, LastModified: "lm1",
		Interval: time.Hour, NextCheck: t0.Add(time.Hour),
	}}))
	require.NoError(t, s.Record(ctxT(t), src, []crawlstate.Result{{URL: u, At: t0.Add(time.Hour), Gone: true}}))

	// A stale listing that keeps naming the tombstone does not revive it.
	st := upsert(t, s, src, t0.Add(2*time.Hour), disc(u, "https://ex.com/b"))
	require.Equal(t, crawlstate.UpsertStats{Seen: 2}, st)
	require.True(t, get(t, s, src, u).Gone, "listed all along: a stale entry, not a rediscovery")

	// Absent from one listing, then listed again: a rediscovery.
	t1 := t0.Add(48 * time.Hour)
	upsert(t, s, src, t1.Add(-time.Hour), disc("https://ex.com/b"))
	n, err := s.MarkMissing(ctxT(t), src, t1.Add(-time.Hour), t1.Add(-time.Hour), 3)
	require.NoError(t, err)
	require.Equal(t, 0, n, "tombstones are not counted missing")
	ds := disc(u, "https://ex.com/b")
	ds[0].LastMod = t1 // a moved lastmod on a revived row counts as a revival only
	st = upsert(t, s, src, t1, ds)
	require.Equal(t, crawlstate.UpsertStats{Seen: 2, Revived: 1}, st)
	r := get(t, s, src, u)
	require.False(t, r.Gone)
	require.True(t, r.NextCheck.IsZero(), "a revived row is due now")
	require.Empty(t, r.ContentHash, "a revived row's next fetch counts as new")
	require.Empty(t, r.ETag, "a revived row is fetched unconditionally")
	require.Empty(t, r.LastModified)
	requireTime(t, t1, r.SitemapLastMod, "a revived row stores its new lastmod")
	require.Contains(t, dueURLs(t, s, src, t1), u)
	_, gone, err := s.Count(ctxT(t), src)
	require.NoError(t, err)
	require.Zero(t, gone)
}

func testReviveOnMovedLastmod(t *testing.T, open Opener) {
	s := fresh(t, open, crawlstate.Options{})
	u := "https://ex.com/a"
	ds := disc(u)
	ds[0].LastMod = t0
	upsert(t, s, src, t0, ds)
	require.NoError(t, s.Record(ctxT(t), src, []crawlstate.Result{{URL: u, At: t0, Gone: true}}))
	st := upsert(t, s, src, t0.Add(time.Hour), ds)
	require.Equal(t, crawlstate.UpsertStats{Seen: 1}, st, "same lastmod: still gone")
	ds[0].LastMod = t0.Add(30 * time.Minute)
	st = upsert(t, s, src, t0.Add(2*time.Hour), ds)
	require.Equal(t, crawlstate.UpsertStats{Seen: 1, Revived: 1}, st, "a republished page (moved lastmod) is revived")
	require.False(t, get(t, s, src, u).Gone)
}

func testKeepTombstones(t *testing.T, open Opener) {
	s := fresh(t, open, crawlstate.Options{KeepTombstones: true})
	u := "https://ex.com/a"
	upsert(t, s, src, t0, disc(u))
	require.NoError(t, s.Record(ctxT(t), src, []crawlstate.Result{{URL: u, At: t0, Gone: true}}))
	n, err := s.MarkMissing(ctxT(t), src, t0.Add(time.Hour), t0.Add(time.Hour), 1)
	require.NoError(t, err)
	require.Zero(t, n)

	t1 := t0.Add(48 * time.Hour)
	ds := disc(u)
	ds[0].LastMod = t1
	st := upsert(t, s, src, t1, ds)
	require.Equal(t, crawlstate.UpsertStats{Seen: 1}, st)
	r := get(t, s, src, u)
	require.True(t, r.Gone, "KeepTombstones keeps a gone row gone")
	requireTime(t, t1, r.LastSeen, "a kept tombstone still records that it was seen")
	requireTime(t, t1, r.SitemapLastMod, "and its new lastmod")
	require.Empty(t, dueURLs(t, s, src, t1))
}

func testDuePaging(t *testing.T, open Opener) {
	s := fresh(t, open, crawlstate.Options{})
	var urls []string
	for i := range 60 {
		urls = append(urls, fmt.Sprintf("https://ex.com/p%02d", i))
	}
	upsert(t, s, src, t0, disc(urls...))
	// Schedules with ties: rows i and i+4 share a NextCheck; every fifth
	// stays never-fetched (zero); rows >= 50 are not due yet.
	now := t0.Add(10 * time.Hour)
	want := map[string]time.Time{}
	for i, u := range urls {
		var next time.Time
		switch {
		case i%5 == 0:
			continue
		case i >= 50:
			next = now.Add(time.Duration(i) * time.Minute)
		default:
			next = t0.Add(time.Duration(i%4) * time.Hour)
		}
		fetched(t, s, src, u, t0, next)
		if i < 50 {
			want[u] = next
		}
	}
	for i, u := range urls {
		if i%5 == 0 {
			want[u] = time.Time{}
		}
	}
	var expect []crawlstate.Key
	for u, next := range want {
		expect = append(expect, crawlstate.Key{NextCheck: next, URL: u})
	}
	sort.Slice(expect, func(i, j int) bool {
		a, b := expect[i], expect[j]
		if !a.NextCheck.Equal(b.NextCheck) {
			return a.NextCheck.Before(b.NextCheck)
		}
		return a.URL < b.URL
	})

	for _, limit := range []int{1, 7, 10, 1000} {
		var got []crawlstate.Key
		after := crawlstate.Key{}
		for pages := 0; ; pages++ {
			require.Less(t, pages, 100, "paging does not terminate")
			rows, err := s.Due(ctxT(t), src, now, after, limit)
			require.NoError(t, err)
			require.LessOrEqual(t, len(rows), limit)
			if len(rows) == 0 {
				break
			}
			for _, r := range rows {
				got = append(got, crawlstate.KeyOf(r))
			}
			after = crawlstate.KeyOf(rows[len(rows)-1])
		}
		require.Len(t, got, len(expect), "limit %d", limit)
		for i := range expect {
			require.Equal(t, expect[i].URL, got[i].URL, "limit %d position %d", limit, i)
			requireTime(t, expect[i].NextCheck, got[i].NextCheck, "NextCheck")
		}
	}

	// Paging from a position that is not a row starts right after it.
	mid := expect[20]
	rows, err := s.Due(ctxT(t), src, now, crawlstate.Key{NextCheck: mid.NextCheck, URL: mid.URL + "!"}, 1)
	require.NoError(t, err)
	require.Len(t, rows, 1)
	require.Equal(t, expect[21].URL, rows[0].URL)
}

func testDueBadLimit(t *testing.T, open Opener) {
	s := fresh(t, open, crawlstate.Options{})
	upsert(t, s, src, t0, disc("https://ex.com/a"))
	for _, limit := range []int{0, -5} {
		_, err := s.Due(ctxT(t), src, t0, crawlstate.Key{}, limit)
		require.Error(t, err, "limit %d", limit)
	}
}

func testCounts(t *testing.T, open Opener) {
	s := fresh(t, open, crawlstate.Options{})
	_, ok, err := s.NextDue(ctxT(t), src)
	require.NoError(t, err)
	require.False(t, ok, "no rows: nothing is due, ever")
	total, gone, err := s.Count(ctxT(t), src)
	require.NoError(t, err)
	require.Zero(t, total)
	require.Zero(t, gone)

	upsert(t, s, src, t0, disc("https://ex.com/a", "https://ex.com/b", "https://ex.com/c", "https://ex.com/d"))
	next, ok, err := s.NextDue(ctxT(t), src)
	require.NoError(t, err)
	require.True(t, ok)
	require.True(t, next.IsZero(), "never-fetched rows are due now")

	fetched(t, s, src, "https://ex.com/a", t0, t0.Add(3*time.Hour))
	fetched(t, s, src, "https://ex.com/b", t0, t0.Add(1*time.Hour))
	fetched(t, s, src, "https://ex.com/c", t0, t0.Add(2*time.Hour))
	require.NoError(t, s.Record(ctxT(t), src, []crawlstate.Result{{URL: "https://ex.com/d", At: t0, Gone: true}}))

	next, ok, err = s.NextDue(ctxT(t), src)
	require.NoError(t, err)
	require.True(t, ok)
	requireTime(t, t0.Add(time.Hour), next, "earliest NextCheck among live rows")

	for _, tc := range []struct {
		at   time.Duration
		want int
	}{{0, 0}, {time.Hour - 1, 0}, {time.Hour, 1}, {150 * time.Minute, 2}, {3 * time.Hour, 3}, {100 * time.Hour, 3}} {
		require.Len(t, dueURLs(t, s, src, t0.Add(tc.at)), tc.want, "due at t0+%v", tc.at)
	}
	total, gone, err = s.Count(ctxT(t), src)
	require.NoError(t, err)
	require.Equal(t, 4, total)
	require.Equal(t, 1, gone)

	for _, u := range []string{"https://ex.com/a", "https://ex.com/b", "https://ex.com/c"} {
		require.NoError(t, s.Record(ctxT(t), src, []crawlstate.Result{{URL: u, At: t0, Gone: true}}))
	}
	_, ok, err = s.NextDue(ctxT(t), src)
	require.NoError(t, err)
	require.False(t, ok, "only tombstones: nothing is due, ever")
}

func testSourcesIsolated(t *testing.T, open Opener) {
	s := fresh(t, open, crawlstate.Options{})
	const other = "blog"
	u := "https://ex.com/shared"
	upsert(t, s, src, t0, disc(u, "https://ex.com/docs-only"))
	st := upsert(t, s, other, t0, disc(u))
	require.Equal(t, crawlstate.UpsertStats{New: 1}, st, "the same URL in another source is a new row")

	fetched(t, s, src, u, t0, t0.Add(time.Hour))
	require.Zero(t, get(t, s, other, u).Visits, "a result for one source leaves the other alone")

	n, err := s.MarkMissing(ctxT(t), other, t0.Add(time.Hour), t0.Add(time.Hour), 1)
	require.NoError(t, err)
	require.Equal(t, 1, n)
	require.Zero(t, get(t, s, src, u).MissingRuns)

	require.NoError(t, s.Record(ctxT(t), other, []crawlstate.Result{{URL: u, At: t0, Gone: true}}))
	require.False(t, get(t, s, src, u).Gone)

	total, _, err := s.Count(ctxT(t), src)
	require.NoError(t, err)
	require.Equal(t, 2, total)
	total, gone, err := s.Count(ctxT(t), other)
	require.NoError(t, err)
	require.Equal(t, 1, total)
	require.Equal(t, 1, gone)
	require.Equal(t, []string{"https://ex.com/docs-only"}, dueURLs(t, s, src, t0))
	require.Empty(t, dueURLs(t, s, other, t0.Add(24*time.Hour)))
	_, err = s.Get(ctxT(t), other, "https://ex.com/docs-only")
	require.ErrorIs(t, err, crawlstate.ErrNotFound)

	require.NoError(t, s.Lock(ctxT(t), src, "run-1", t0, time.Minute))
	require.NoError(t, s.Lock(ctxT(t), other, "run-2", t0, time.Minute), "locks are per source")
}

func testZeroTimes(t *testing.T, open Opener) {
	s := fresh(t, open, crawlstate.Options{})
	u := "https://ex.com/a"
	upsert(t, s, src, t0, disc(u))
	// A result that schedules "due now" keeps NextCheck zero.
	require.NoError(t, s.Record(ctxT(t), src, []crawlstate.Result{{URL: u, At: t0, Changed: true, ContentHash: "h"}}))
	r := get(t, s, src, u)
	require.True(t, r.NextCheck.IsZero())
	require.True(t, r.SitemapLastMod.IsZero())
	require.Zero(t, r.Interval)
	require.Equal(t, []string{u}, dueURLs(t, s, src, t0.Add(-24*time.Hour)))

	// The Unix epoch is a real instant, distinct from the zero time.
	epoch := time.Unix(0, 0)
	require.NoError(t, s.Record(ctxT(t), src, []crawlstate.Result{{URL: u, At: epoch, NextCheck: epoch}}))
	r = get(t, s, src, u)
	require.False(t, r.LastFetched.IsZero())
	requireTime(t, epoch, r.LastFetched, "LastFetched at the epoch")
	require.False(t, r.NextCheck.IsZero())
	requireTime(t, epoch, r.NextCheck, "NextCheck at the epoch")

	// Nanoseconds and other time zones survive (compared as instants).
	zone := time.FixedZone("UTC+7", 7*3600)
	at := time.Date(2031, time.July, 9, 8, 7, 6, 999999999, zone)
	require.NoError(t, s.Record(ctxT(t), src, []crawlstate.Result{{URL: u, At: at, NextCheck: at.Add(time.Nanosecond)}}))
	r = get(t, s, src, u)
	requireTime(t, at, r.LastFetched, "LastFetched with nanoseconds")
	requireTime(t, at.Add(time.Nanosecond), r.NextCheck, "NextCheck with nanoseconds")
}

func testGetUnknown(t *testing.T, open Opener) {
	s := fresh(t, open, crawlstate.Options{})
	_, err := s.Get(ctxT(t), src, "https://ex.com/none")
	require.ErrorIs(t, err, crawlstate.ErrNotFound)
}

func testLock(t *testing.T, open Opener) {
	s := fresh(t, open, crawlstate.Options{})
	ctx := ctxT(t)
	ttl := 10 * time.Minute
	require.NoError(t, s.Lock(ctx, src, "A", t0, ttl))
	require.NoError(t, s.Lock(ctx, src, "A", t0.Add(time.Minute), ttl), "the holder may lock again")

	err := s.Lock(ctx, src, "B", t0.Add(5*time.Minute), ttl)
	require.ErrorIs(t, err, crawlstate.ErrRunInProgress)
	var held *crawlstate.LockHeldError
	require.ErrorAs(t, err, &held, "the error names the holder")
	require.Equal(t, "A", held.Owner)
	require.Equal(t, src, held.Source)
	requireTime(t, t0, held.Acquired, "Acquired")
	requireTime(t, t0.Add(time.Minute).Add(ttl), held.Expires, "Expires")

	// A unlocking releases; B then gets it at once.
	require.NoError(t, s.Unlock(ctx, src, "A"))
	require.NoError(t, s.Lock(ctx, src, "B", t0.Add(6*time.Minute), ttl))
	// Unlock by a non-owner does nothing.
	require.NoError(t, s.Unlock(ctx, src, "A"))
	require.ErrorIs(t, s.Lock(ctx, src, "C", t0.Add(7*time.Minute), ttl), crawlstate.ErrRunInProgress)
	// Unlock of a lock never taken is not an error.
	require.NoError(t, s.Unlock(ctx, "never-locked", "A"))

	// B crashes: its lock expires and C takes over.
	require.ErrorIs(t, s.Lock(ctx, src, "C", t0.Add(15*time.Minute), ttl), crawlstate.ErrRunInProgress)
	require.NoError(t, s.Lock(ctx, src, "C", t0.Add(17*time.Minute), ttl))
	require.ErrorIs(t, s.Refresh(ctx, src, "B", t0.Add(18*time.Minute), ttl), crawlstate.ErrLockLost,
		"the crashed holder learns it lost the lock")
	require.ErrorIs(t, s.Lock(ctx, src, "B", t0.Add(18*time.Minute), ttl), crawlstate.ErrRunInProgress)
}

func testLockRefresh(t *testing.T, open Opener) {
	s := fresh(t, open, crawlstate.Options{})
	ctx := ctxT(t)
	ttl := 10 * time.Minute
	require.NoError(t, s.Lock(ctx, src, "A", t0, ttl))
	require.NoError(t, s.Refresh(ctx, src, "A", t0.Add(8*time.Minute), ttl))
	// Without the refresh the lock would have expired at t0+10m.
	require.ErrorIs(t, s.Lock(ctx, src, "B", t0.Add(15*time.Minute), ttl), crawlstate.ErrRunInProgress)
	require.NoError(t, s.Lock(ctx, src, "B", t0.Add(19*time.Minute), ttl))

	// An expired lock that nobody took is still A's to refresh.
	require.NoError(t, s.Unlock(ctx, src, "B"))
	require.NoError(t, s.Lock(ctx, src, "A", t0.Add(20*time.Minute), ttl))
	require.NoError(t, s.Refresh(ctx, src, "A", t0.Add(45*time.Minute), ttl))
	require.ErrorIs(t, s.Lock(ctx, src, "B", t0.Add(50*time.Minute), ttl), crawlstate.ErrRunInProgress)
	// Held until, not including, now+ttl.
	require.NoError(t, s.Lock(ctx, src, "B", t0.Add(55*time.Minute), ttl))

	require.ErrorIs(t, s.Refresh(ctx, src, "nobody", t0, ttl), crawlstate.ErrLockLost)
	require.ErrorIs(t, s.Refresh(ctx, "never-locked", "A", t0, ttl), crawlstate.ErrLockLost)
	require.NoError(t, s.Unlock(ctx, src, "B"))
	require.ErrorIs(t, s.Refresh(ctx, src, "B", t0.Add(56*time.Minute), ttl), crawlstate.ErrLockLost,
		"a released lock cannot be refreshed")
}

func testLockBadArgs(t *testing.T, open Opener) {
	s := fresh(t, open, crawlstate.Options{})
	ctx := ctxT(t)
	require.Error(t, s.Lock(ctx, src, "", t0, time.Minute), "empty owner")
	require.Error(t, s.Lock(ctx, "", "A", t0, time.Minute), "empty source")
	require.Error(t, s.Lock(ctx, src, "A", t0, 0), "zero ttl")
	require.Error(t, s.Refresh(ctx, src, "A", t0, -time.Second), "negative ttl")
	require.NoError(t, s.Lock(ctx, src, "B", t0, time.Minute), "a rejected call takes nothing")
}

func testLockRace(t *testing.T, open Opener) {
	s := fresh(t, open, crawlstate.Options{})
	const n = 16
	var wg sync.WaitGroup
	errs := make([]error, n)
	start := make(chan struct{})
	for i := range n {
		wg.Go(func() {
			<-start
			errs[i] = s.Lock(context.Background(), src, fmt.Sprintf("owner-%d", i), t0, time.Minute)
		})
	}
	close(start)
	wg.Wait()
	wins := 0
	for _, err := range errs {
		if err == nil {
			wins++
			continue
		}
		require.ErrorIs(t, err, crawlstate.ErrRunInProgress)
	}
	require.Equal(t, 1, wins, "exactly one of the racing owners gets the lock")
}

func testConcurrentRecords(t *testing.T, open Opener) {
	s := fresh(t, open, crawlstate.Options{})
	urls := []string{"https://ex.com/a", "https://ex.com/b", "https://ex.com/c", "https://ex.com/d"}
	upsert(t, s, src, t0, disc(urls...))
	const perURL = 10
	var wg sync.WaitGroup
	errs := make(chan error, len(urls)*perURL*2)
	for _, u := range urls {
		for i := range perURL {
			wg.Go(func() {
				at := t0.Add(time.Duration(i) * time.Minute)
				errs <- s.Record(context.Background(), src, []crawlstate.Result{{URL: u, At: at, NotModified: true, NextCheck: at}})
			})
			wg.Go(func() {
				_, err := s.Due(context.Background(), src, t0, crawlstate.Key{}, 10)
				errs <- err
			})
		}
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		require.NoError(t, err)
	}
	for _, u := range urls {
		require.Equal(t, perURL, get(t, s, src, u).Visits, "no lost update for %s", u)
	}
}

func testCanceledContext(t *testing.T, open Opener) {
	s := fresh(t, open, crawlstate.Options{})
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := s.UpsertDiscovered(ctx, src, t0, disc("https://ex.com/a"))
	require.ErrorIs(t, err, context.Canceled)
	total, _, err := s.Count(ctxT(t), src)
	require.NoError(t, err)
	require.Zero(t, total, "a canceled upsert stores nothing")

	upsert(t, s, src, t0, disc("https://ex.com/a"))
	err = s.Record(ctx, src, []crawlstate.Result{{URL: "https://ex.com/a", At: t0, Changed: true, ContentHash: "h"}})
	require.ErrorIs(t, err, context.Canceled)
	require.Empty(t, get(t, s, src, "https://ex.com/a").ContentHash)

	_, err = s.Due(ctx, src, t0, crawlstate.Key{}, 10)
	require.ErrorIs(t, err, context.Canceled)
	require.ErrorIs(t, s.Lock(ctx, src, "A", t0, time.Minute), context.Canceled)
	require.NoError(t, s.Lock(ctxT(t), src, "B", t0, time.Minute), "a canceled Lock takes nothing")
}

// Full is a State with every optional ability but Sharer: what the parts
// of the suite that exercise the abilities need.
type Full interface {
	crawlstate.State
	crawlstate.RunLog
	crawlstate.PageDetails
	crawlstate.VectorCache
	crawlstate.AlertOutbox
	crawlstate.DocumentStore
	crawlstate.EventLog
	crawlstate.TrustStore
}

// freshFull is fresh for a subtest that needs the abilities: it skips the
// subtest, naming them, when the store lacks one.
func freshFull(t *testing.T, open Opener, opts crawlstate.Options) Full {
	t.Helper()
	s := fresh(t, open, opts)
	f, ok := s.(Full)
	if !ok {
		t.Skipf("statetest: %T lacks an optional ability this part of the contract needs (statetest.Full)", s)
	}
	return f
}
