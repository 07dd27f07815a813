package statetest

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/recrawl/recrawl/crawlstate"
)

// This file pins the row details: failure stage and time, title,
// canonical, alias, listing document and change statistics, and the
// calls that read or write them (TouchListed, DeadLetters).

// requireStats compares change statistics as instants and values.
func requireStats(t *testing.T, want, got crawlstate.Stats, what string) {
	t.Helper()
	requireTime(t, want.LastChanged, got.LastChanged, what+": LastChanged")
	requireTime(t, want.LastModified, got.LastModified, what+": LastModified")
	require.Equal(t, want.Elapsed, got.Elapsed, what+": Elapsed")
	require.Equal(t, want.ChangeRate, got.ChangeRate, what+": ChangeRate")
	require.Equal(t, want.Weight, got.Weight, what+": Weight")
	if len(want.Recent) == 0 {
		require.Empty(t, got.Recent, what+": Recent")
	} else {
		require.Equal(t, want.Recent, got.Recent, what+": Recent")
	}
}

// sampleStats has one check of each kind the engine produces, nanosecond
// values included.
func sampleStats() crawlstate.Stats {
	return crawlstate.Stats{
		LastChanged: t0.Add(-3*time.Hour + 7),
		Elapsed:     50*time.Hour + 3,
		Recent: []crawlstate.Check{
			{Elapsed: 20*time.Hour + 1, Changed: true, Modified: 5*time.Hour + 2},              // a change with a usable Last-Modified
			{Elapsed: 30 * time.Hour, Modified: 30 * time.Hour},                                // no change, Last-Modified consistent
			{Elapsed: time.Nanosecond},                                                         // no usable Last-Modified
			{Elapsed: 400 * 24 * time.Hour, Changed: true},                                     // a change after a long gap
			{Elapsed: 26 * time.Hour, Changed: true, CoChance: 1.0 / crawlstate.CoChanceSteps}, // found at the least co-change chance kept
			{Elapsed: 2 * time.Hour, CoChance: 1},                                              // and at the most
		},
		LastModified: t0.Add(-4 * time.Hour),
		ChangeRate:   0.375,
		Weight:       2.5,
	}
}

func testNewRowHasNoDetails(t *testing.T, open Opener) {
	s := fresh(t, open, crawlstate.Options{})
	u := "https://ex.com/a"
	upsert(t, s, src, t0, disc(u))
	r := get(t, s, src, u)
	require.Empty(t, r.LastStage)
	require.True(t, r.LastFailure.IsZero(), "never failed: LastFailure zero")
	require.Empty(t, r.Title)
	require.Empty(t, r.Canonical)
	require.Empty(t, r.AliasOf)
	require.Empty(t, r.ListedIn, "listed without Via")
	requireStats(t, crawlstate.Stats{}, r.Stats, "a new row has no statistics")
}

func testRecordStats(t *testing.T, open Opener) {
	s := fresh(t, open, crawlstate.Options{})
	u := "https://ex.com/a"
	upsert(t, s, src, t0, disc(u, "https://ex.com/b"))
	st := sampleStats()
	at := t0.Add(time.Hour)
	require.NoError(t, s.Record(ctxT(t), src, []crawlstate.Result{{
		URL: u, At: at, Changed: true, ContentHash: "h1", NextCheck: at.Add(time.Hour), Stats: &st,
	}}))
	st.Recent[0].Changed = false // the stored copy is not the caller's slice
	want := sampleStats()
	requireStats(t, want, get(t, s, src, u).Stats, "Get")
	requireStats(t, crawlstate.Stats{}, get(t, s, src, "https://ex.com/b").Stats, "another row")

	rows, err := s.Due(ctxT(t), src, at.Add(time.Hour), crawlstate.Key{}, 10)
	require.NoError(t, err)
	require.Len(t, rows, 2)
	require.Equal(t, u, rows[1].URL, "b is due now, a at its NextCheck")
	requireStats(t, want, rows[1].Stats, "Due")

	// A result without statistics keeps them; a 304 too.
	require.NoError(t, s.Record(ctxT(t), src, []crawlstate.Result{{URL: u, At: at.Add(2 * time.Hour), NotModified: true, NextCheck: at.Add(3 * time.Hour)}}))
	requireStats(t, want, get(t, s, src, u).Stats, "no Stats keeps them")

	// Statistics replace as a whole: an empty window and a zero weight
	// (which means the default weight of 1) are stored as given.
	next := crawlstate.Stats{Elapsed: time.Minute, ChangeRate: 1e-9}
	require.NoError(t, s.Record(ctxT(t), src, []crawlstate.Result{{URL: u, At: at.Add(4 * time.Hour), NotModified: true, Stats: &next}}))
	got := get(t, s, src, u).Stats
	requireStats(t, next, got, "replaced")
	require.Zero(t, got.Weight, "a zero weight stays zero (the default of 1)")

	// The statistics travel with a gone result too.
	gone := crawlstate.Stats{LastChanged: at.Add(5 * time.Hour), Weight: 0.5}
	require.NoError(t, s.Record(ctxT(t), src, []crawlstate.Result{{URL: u, At: at.Add(5 * time.Hour), Gone: true, Stats: &gone}}))
	requireStats(t, gone, get(t, s, src, u).Stats, "gone")
}

func testRecordTitleCanonicalAlias(t *testing.T, open Opener) {
	s := fresh(t, open, crawlstate.Options{})
	u := "https://ex.com/a"
	upsert(t, s, src, t0, disc(u))
	check := func(title, canonical, alias, what string) {
		t.Helper()
		r := get(t, s, src, u)
		require.Equal(t, title, r.Title, what)
		require.Equal(t, canonical, r.Canonical, what)
		require.Equal(t, alias, r.AliasOf, what)
	}

	require.NoError(t, s.Record(ctxT(t), src, []crawlstate.Result{{
		URL: u, At: t0, Changed: true, ContentHash: "h1",
		Title: "Install — Linux", Canonical: "https://ex.com/install", AliasOf: "https://ex.com/install",
	}}))
	check("Install — Linux", "https://ex.com/install", "https://ex.com/install", "a 200 stores them")

	require.NoError(t, s.Record(ctxT(t), src, []crawlstate.Result{{
		URL: u, At: t0.Add(time.Hour), NotModified: true, Title: "ignored", Canonical: "ignored", AliasOf: "ignored",
	}}))
	check("Install — Linux", "https://ex.com/install", "https://ex.com/install", "a 304 has no body: kept")

	require.NoError(t, s.Record(ctxT(t), src, []crawlstate.Result{{
		URL: u, At: t0.Add(2 * time.Hour), Gone: true, Title: "ignored", Canonical: "ignored", AliasOf: "ignored",
	}}))
	check("Install — Linux", "https://ex.com/install", "https://ex.com/install", "a gone answer has no body: kept")

	require.NoError(t, s.Record(ctxT(t), src, []crawlstate.Result{{
		URL: u, At: t0.Add(3 * time.Hour), ContentHash: "h1", Title: "Install",
	}}))
	check("Install", "", "", "a 200 replaces them, empty values included")
}

func testRecordFailureStage(t *testing.T, open Opener) {
	s := fresh(t, open, crawlstate.Options{})
	u := "https://ex.com/a"
	upsert(t, s, src, t0, disc(u))
	t1, t2 := t0.Add(time.Hour+1), t0.Add(2*time.Hour+2)
	require.NoError(t, s.RecordFailure(ctxT(t), src, crawlstate.Failure{URL: u, At: t1, Stage: "extract", Err: "script-only page"}))
	r := get(t, s, src, u)
	require.Equal(t, "extract", r.LastStage)
	requireTime(t, t1, r.LastFailure, "LastFailure is Failure.At")
	require.Contains(t, r.LastError, "extract")
	require.Contains(t, r.LastError, "script-only page")

	require.NoError(t, s.RecordFailure(ctxT(t), src, crawlstate.Failure{URL: u, At: t2, Stage: "embed", Err: "429"}))
	r = get(t, s, src, u)
	require.Equal(t, 2, r.Failures)
	require.Equal(t, "embed", r.LastStage)
	requireTime(t, t2, r.LastFailure, "LastFailure")

	// A definitive answer resets the count; the diagnosis stays.
	require.NoError(t, s.Record(ctxT(t), src, []crawlstate.Result{{URL: u, At: t2.Add(time.Hour), Changed: true, ContentHash: "h"}}))
	r = get(t, s, src, u)
	require.Zero(t, r.Failures)
	require.Equal(t, "embed", r.LastStage, "kept for diagnosis")
	requireTime(t, t2, r.LastFailure, "kept for diagnosis")
	require.Contains(t, r.LastError, "429")

	// A failure at the zero time stores the zero time.
	require.NoError(t, s.RecordFailure(ctxT(t), src, crawlstate.Failure{URL: u, Stage: "fetch", Err: "reset"}))
	r = get(t, s, src, u)
	require.True(t, r.LastFailure.IsZero())
	require.Equal(t, "fetch", r.LastStage)
}

func testDiscoveredVia(t *testing.T, open Opener) {
	s := fresh(t, open, crawlstate.Options{})
	const sm1, sm2, sm3 = "https://ex.com/sitemap-1.xml", "https://ex.com/sitemap-2.xml", "https://ex.com/sitemap-3.xml"
	a, b, c := "https://ex.com/a", "https://ex.com/b", "https://ex.com/c"
	ds := disc(a, b, c)
	ds[0].Via, ds[1].Via = sm1, sm1
	upsert(t, s, src, t0, ds)
	require.Equal(t, sm1, get(t, s, src, a).ListedIn)
	require.Equal(t, sm1, get(t, s, src, b).ListedIn)
	require.Empty(t, get(t, s, src, c).ListedIn)

	// "" keeps the stored value; another document replaces it.
	ds[0].Via, ds[1].Via, ds[2].Via = "", sm2, sm2
	st := upsert(t, s, src, t0.Add(time.Hour), ds)
	require.Equal(t, crawlstate.UpsertStats{Seen: 3}, st, "a new listing document is no change of the row")
	require.Equal(t, sm1, get(t, s, src, a).ListedIn, "empty Via keeps ListedIn")
	require.Equal(t, sm2, get(t, s, src, b).ListedIn)
	require.Equal(t, sm2, get(t, s, src, c).ListedIn)
	require.Len(t, dueURLs(t, s, src, t0.Add(time.Hour)), 3, "never fetched: all still due now")

	// A tombstone that a stale listing keeps naming records its listing
	// document too (and stays gone).
	require.NoError(t, s.Record(ctxT(t), src, []crawlstate.Result{{URL: c, At: t0.Add(time.Hour), Gone: true}}))
	ds[2].Via = sm3
	st = upsert(t, s, src, t0.Add(2*time.Hour), ds)
	require.Equal(t, crawlstate.UpsertStats{Seen: 3}, st)
	r := get(t, s, src, c)
	require.True(t, r.Gone)
	require.Equal(t, sm3, r.ListedIn)
}

func testTouchListed(t *testing.T, open Opener) {
	s := freshFull(t, open, crawlstate.Options{})
	const sm1, sm2 = "https://ex.com/sitemap-1.xml", "https://ex.com/sitemap-2.xml"
	a, b, c, d := "https://ex.com/a", "https://ex.com/b", "https://ex.com/c", "https://ex.com/d"
	ds := disc(a, b, c, d)
	ds[0].Via, ds[1].Via, ds[2].Via = sm1, sm1, sm2
	upsert(t, s, src, t0, ds)
	upsert(t, s, "other", t0, ds[:1])
	for _, u := range []string{a, b, c, d} {
		fetched(t, s, src, u, t0, t0.Add(365*24*time.Hour))
	}

	// Run 1 listed nothing: every row is missing once.
	t1 := t0.Add(24 * time.Hour)
	n, err := s.MarkMissing(ctxT(t), src, t1, t1, 3)
	require.NoError(t, err)
	require.Equal(t, 4, n)

	// Run 2: sitemap-1 answered 304, sitemap-2 is gone from the index.
	t2 := t1.Add(24 * time.Hour)
	n, err = s.TouchListed(ctxT(t), src, sm1, t2)
	require.NoError(t, err)
	require.Equal(t, 2, n, "the rows sitemap-1 listed")
	for _, u := range []string{a, b} {
		r := get(t, s, src, u)
		requireTime(t, t2, r.LastSeen, u+": LastSeen")
		require.Zero(t, r.MissingRuns, u+": seen again")
		requireTime(t, t0.Add(365*24*time.Hour), r.NextCheck, u+": the schedule is untouched")
	}
	for _, u := range []string{c, d} {
		r := get(t, s, src, u)
		requireTime(t, t0, r.LastSeen, u+": not listed by sitemap-1")
		require.Equal(t, 1, r.MissingRuns)
	}
	requireTime(t, t0, get(t, s, "other", a).LastSeen, "another source's row is untouched")

	n, err = s.MarkMissing(ctxT(t), src, t2, t2, 3)
	require.NoError(t, err)
	require.Equal(t, 2, n, "touched rows count as listed in the run")

	n, err = s.TouchListed(ctxT(t), src, "https://ex.com/never.xml", t2)
	require.NoError(t, err)
	require.Zero(t, n, "a document that listed nothing touches nothing")
	_, err = s.TouchListed(ctxT(t), src, "", t2)
	require.Error(t, err, "an empty via is an error")
	require.Equal(t, 2, get(t, s, src, d).MissingRuns, "the rejected call touched nothing")

	// A tombstone an unchanged document still lists is seen as well, and
	// stays gone: an unchanged listing is no rediscovery.
	require.NoError(t, s.Record(ctxT(t), src, []crawlstate.Result{{URL: b, At: t2, Gone: true}}))
	t3 := t2.Add(24 * time.Hour)
	n, err = s.TouchListed(ctxT(t), src, sm1, t3)
	require.NoError(t, err)
	require.Equal(t, 2, n)
	r := get(t, s, src, b)
	require.True(t, r.Gone)
	requireTime(t, t3, r.LastSeen, "LastSeen")
	require.NotContains(t, dueURLs(t, s, src, t3.Add(400*24*time.Hour)), b)
}

// A URL a document stopped listing is not touched by a later 304 of that
// document: only rows seen at its last full read are.
func testTouchListedSkipsDroppedURLs(t *testing.T, open Opener) {
	s := freshFull(t, open, crawlstate.Options{})
	const sm = "https://ex.com/sitemap.xml"
	a, b := "https://ex.com/a", "https://ex.com/b"
	ds := disc(a, b)
	ds[0].Via, ds[1].Via = sm, sm
	upsert(t, s, src, t0, ds)
	require.NoError(t, s.PutDocument(ctxT(t), src, crawlstate.Document{URL: sm, ETag: `"1"`, Entries: 2, FetchedAt: t0}))

	// The next full read lists only a.
	t1 := t0.Add(24 * time.Hour)
	upsert(t, s, src, t1, ds[:1])
	require.NoError(t, s.PutDocument(ctxT(t), src, crawlstate.Document{URL: sm, ETag: `"2"`, Entries: 1, FetchedAt: t1}))
	n, err := s.MarkMissing(ctxT(t), src, t1, t1, 3)
	require.NoError(t, err)
	require.Equal(t, 1, n)

	// Then the document answers 304: it lists what its last read listed.
	t2 := t1.Add(24 * time.Hour)
	n, err = s.TouchListed(ctxT(t), src, sm, t2)
	require.NoError(t, err)
	require.Equal(t, 1, n, "only a")
	requireTime(t, t2, get(t, s, src, a).LastSeen, "a: seen")
	requireTime(t, t0, get(t, s, src, b).LastSeen, "b: dropped at the last read, not seen")
	n, err = s.MarkMissing(ctxT(t), src, t2, t2, 3)
	require.NoError(t, err)
	require.Equal(t, 1, n)
	require.Equal(t, 2, get(t, s, src, b).MissingRuns)
}

// TouchListed of a stored document, run after run, as the engine calls it
// (a store may keep the time on the document instead of on each row):
// every read of a row (Get, Due, LiveRows) sees the LastSeen the 304 gave,
// an absence being counted ends, MarkMissing counts what the document no
// longer lists, a later full read keeps the LastSeen its 304s gave to the
// URLs it drops, and a document stored again in the run of its 304 (an
// index moved its lastmod) keeps vouching for its rows.
func testTouchListedStoredDocument(t *testing.T, open Opener) {
	s := freshFull(t, open, crawlstate.Options{})
	const sm, other = "https://ex.com/sitemap.xml", "https://ex.com/other.xml"
	a, b, c, g := "https://ex.com/a", "https://ex.com/b", "https://ex.com/c", "https://ex.com/gone"
	ds := disc(a, b, c, g)
	ds[0].Via, ds[1].Via, ds[2].Via, ds[3].Via = sm, sm, other, sm
	upsert(t, s, src, t0, ds)
	upsert(t, s, "other", t0, disc(a))
	put := func(u string, at time.Time) {
		t.Helper()
		require.NoError(t, s.PutDocument(ctxT(t), src, crawlstate.Document{URL: u, ETag: `"x"`, Entries: 3, FetchedAt: at}))
	}
	put(sm, t0)
	put(other, t0)
	for _, u := range []string{a, b, c} {
		fetched(t, s, src, u, t0, t0.Add(365*24*time.Hour))
	}
	require.NoError(t, s.Record(ctxT(t), src, []crawlstate.Result{{URL: g, At: t0, Gone: true}}))
	seen := func(u string, want time.Time, what string) {
		t.Helper()
		requireTime(t, want, get(t, s, src, u).LastSeen, u+": "+what+" (Get)")
		if u == g {
			return // not live: neither due nor listed as live
		}
		rows, err := s.Due(ctxT(t), src, t0.Add(400*24*time.Hour), crawlstate.Key{}, 1000)
		require.NoError(t, err)
		found := false
		for _, r := range rows {
			if r.URL == u {
				found = true
				requireTime(t, want, r.LastSeen, u+": "+what+" (Due)")
			}
		}
		require.True(t, found, u+" is due at the end of time")
		if ll, ok := s.(crawlstate.LiveLister); ok {
			rows, err := ll.LiveRows(ctxT(t), src, "", 1000)
			require.NoError(t, err)
			for _, r := range rows {
				if r.URL == u {
					requireTime(t, want, r.LastSeen, u+": "+what+" (LiveRows)")
				}
			}
		}
	}

	// Run 1: sitemap.xml was not read (a failed fetch), other.xml
	// answered 304: a and b are missing once.
	t1 := t0.Add(24 * time.Hour)
	n, err := s.TouchListed(ctxT(t), src, other, t1)
	require.NoError(t, err)
	require.Equal(t, 1, n)
	n, err = s.MarkMissing(ctxT(t), src, t1, t1, 3)
	require.NoError(t, err)
	require.Equal(t, 2, n, "a and b")
	seen(c, t1, "listed by the 304 of other.xml")
	seen(a, t0, "not seen in run 1")

	// Run 2: sitemap.xml answers 304: a, b and the tombstone are seen, the
	// absence count ends, the tombstone stays gone and is not flagged.
	t2 := t1.Add(24 * time.Hour)
	n, err = s.TouchListed(ctxT(t), src, sm, t2)
	require.NoError(t, err)
	require.Equal(t, 3, n, "a, b and the tombstone")
	for _, u := range []string{a, b, g} {
		seen(u, t2, "seen in run 2")
		require.Zero(t, get(t, s, src, u).MissingRuns, u+": seen again")
	}
	require.True(t, get(t, s, src, g).Gone)
	requireTime(t, t0, get(t, s, "other", a).LastSeen, "another source's row is untouched")
	n, err = s.MarkMissing(ctxT(t), src, t2, t2, 3)
	require.NoError(t, err)
	require.Equal(t, 1, n, "c only: other.xml was not read in run 2")
	require.Zero(t, get(t, s, src, g).MissingRuns, "a listed tombstone is not flagged absent")

	// Run 3: an index moved sitemap.xml's lastmod; it answered 304 and
	// was stored again in the run.
	t3 := t2.Add(24 * time.Hour)
	n, err = s.TouchListed(ctxT(t), src, sm, t3)
	require.NoError(t, err)
	require.Equal(t, 3, n)
	put(sm, t3)
	seen(a, t3, "seen in run 3")
	t4 := t3.Add(24 * time.Hour)
	n, err = s.TouchListed(ctxT(t), src, sm, t4)
	require.NoError(t, err)
	require.Equal(t, 3, n, "the document stored in run 3 still vouches for its rows")
	seen(b, t4, "seen in run 4")

	// Run 5: a full read of sitemap.xml lists a only. b keeps the
	// LastSeen of run 4's 304 and is missing; a is seen in run 5.
	t5 := t4.Add(24 * time.Hour)
	upsert(t, s, src, t5, ds[:1])
	put(sm, t5)
	seen(a, t5, "listed by the full read of run 5")
	seen(b, t4, "dropped by run 5's full read")
	n, err = s.MarkMissing(ctxT(t), src, t5, t5, 3)
	require.NoError(t, err)
	require.Equal(t, 2, n, "b, and c (other.xml not read)")

	// Run 6: sitemap.xml answers 304: only a is seen.
	t6 := t5.Add(24 * time.Hour)
	n, err = s.TouchListed(ctxT(t), src, sm, t6)
	require.NoError(t, err)
	require.Equal(t, 1, n)
	seen(a, t6, "seen in run 6")
	seen(b, t4, "still dropped")
	require.Equal(t, 1, get(t, s, src, b).MissingRuns)
	n, err = s.MarkMissing(ctxT(t), src, t6, t6, 3)
	require.NoError(t, err)
	require.Equal(t, 2, n)
	require.Equal(t, 2, get(t, s, src, b).MissingRuns)
}

func testDeadLetters(t *testing.T, open Opener) {
	s := freshFull(t, open, crawlstate.Options{})
	a, b, c, d := "https://ex.com/a", "https://ex.com/b", "https://ex.com/c", "https://ex.com/d"
	upsert(t, s, src, t0, disc(a, b, c, d))
	upsert(t, s, "other", t0, disc(a))
	st := sampleStats()
	require.NoError(t, s.Record(ctxT(t), src, []crawlstate.Result{{URL: c, At: t0, Changed: true, ContentHash: "h", Title: "C", Stats: &st}}))
	fail := func(source, u string, times int) {
		for i := range times {
			require.NoError(t, s.RecordFailure(ctxT(t), source, crawlstate.Failure{
				URL: u, At: t0.Add(time.Duration(i+1) * time.Minute), Stage: "fetch", Err: "503",
			}))
		}
	}
	fail(src, c, 3)
	fail(src, b, 1)
	fail(src, a, 3)
	fail("other", a, 5)

	urls := func(rows []crawlstate.Row) []string {
		out := make([]string, len(rows))
		for i, r := range rows {
			out[i] = r.URL
		}
		return out
	}
	rows, err := s.DeadLetters(ctxT(t), src, 1)
	require.NoError(t, err)
	require.Equal(t, []string{a, c, b}, urls(rows), "most failures first, then by URL")
	rows, err = s.DeadLetters(ctxT(t), src, 3)
	require.NoError(t, err)
	require.Equal(t, []string{a, c}, urls(rows))
	rows, err = s.DeadLetters(ctxT(t), src, 4)
	require.NoError(t, err)
	require.Empty(t, rows)

	// The rows are whole: the diagnosis and the rest.
	rows, err = s.DeadLetters(ctxT(t), src, 3)
	require.NoError(t, err)
	cr := rows[1]
	require.Equal(t, src, cr.Source)
	require.Equal(t, 3, cr.Failures)
	require.Equal(t, "fetch", cr.LastStage)
	require.Contains(t, cr.LastError, "503")
	requireTime(t, t0.Add(3*time.Minute), cr.LastFailure, "LastFailure")
	require.Equal(t, "C", cr.Title)
	require.Equal(t, "h", cr.ContentHash)
	requireStats(t, sampleStats(), cr.Stats, "DeadLetters")
	require.Equal(t, normalize(get(t, s, src, c)), normalize(cr), "the same row as Get")

	// A definitive answer takes a row out.
	require.NoError(t, s.Record(ctxT(t), src, []crawlstate.Result{{URL: a, At: t0.Add(time.Hour), NotModified: true}}))
	rows, err = s.DeadLetters(ctxT(t), src, 1)
	require.NoError(t, err)
	require.Equal(t, []string{c, b}, urls(rows))

	rows, err = s.DeadLetters(ctxT(t), "other", 1)
	require.NoError(t, err)
	require.Equal(t, []string{a}, urls(rows))
	require.Equal(t, 5, rows[0].Failures)

	for _, m := range []int{0, -1} {
		_, err := s.DeadLetters(ctxT(t), src, m)
		require.Error(t, err, "minFailures %d", m)
	}
}

func testRecordExcluded(t *testing.T, open Opener) {
	s := freshFull(t, open, crawlstate.Options{})
	lm := time.Date(2025, time.January, 1, 0, 0, 0, 0, time.UTC)
	ds := disc("https://ex.com/page", "https://ex.com/logo", "https://ex.com/seen")
	ds[1].LastMod = lm
	upsert(t, s, src, t0, ds)
	fetched(t, s, src, "https://ex.com/seen", t0, t0.Add(time.Hour))
	at := t0.Add(time.Minute)
	require.NoError(t, s.RecordFailure(ctxT(t), src, crawlstate.Failure{URL: "https://ex.com/logo", At: t0, Stage: "fetch", Err: "boom"}))
	require.NoError(t, s.Record(ctxT(t), src, []crawlstate.Result{
		{URL: "https://ex.com/logo", At: at, Excluded: "not_document", ContentHash: "ignored", NextCheck: at},
		{URL: "https://ex.com/seen", At: at, Excluded: "not_document"},
	}))
	logo := get(t, s, src, "https://ex.com/logo")
	require.Equal(t, "not_document", logo.Excluded)
	requireTime(t, at, logo.LastFetched, "LastFetched")
	require.Zero(t, logo.Failures, "an answer resets the failure count")
	require.Empty(t, logo.ContentHash, "every other field of the result is ignored")
	require.Equal(t, "h-https://ex.com/seen", get(t, s, src, "https://ex.com/seen").ContentHash, "an excluded row keeps its hash")

	far := t0.Add(100 * 365 * 24 * time.Hour)
	require.Equal(t, []string{"https://ex.com/page"}, dueURLs(t, s, src, far), "excluded rows are never due")
	// Missing runs do not bring an excluded row back for confirmation.
	_, err := s.MarkMissing(ctxT(t), src, t0.Add(time.Hour), t0.Add(time.Hour), 1)
	require.NoError(t, err)
	require.Equal(t, []string{"https://ex.com/page"}, dueURLs(t, s, src, far))
	fetched(t, s, src, "https://ex.com/page", t0, t0.Add(time.Hour))
	next, ok, err := s.NextDue(ctxT(t), src)
	require.NoError(t, err)
	require.True(t, ok)
	requireTime(t, t0.Add(time.Hour), next, "NextDue skips excluded rows")

	// Rediscovery without a moved lastmod keeps the exclusion; a moved
	// lastmod brings the row back, due now.
	upsert(t, s, src, t0.Add(2*time.Hour), ds)
	require.Equal(t, "not_document", get(t, s, src, "https://ex.com/logo").Excluded)
	ds[1].LastMod = lm.Add(time.Hour)
	st := upsert(t, s, src, t0.Add(3*time.Hour), ds)
	require.Equal(t, 1, st.Bumped)
	logo = get(t, s, src, "https://ex.com/logo")
	require.Empty(t, logo.Excluded)
	require.Contains(t, dueURLs(t, s, src, t0.Add(3*time.Hour)), "https://ex.com/logo")

	// Any other result clears the exclusion.
	require.NoError(t, s.Record(ctxT(t), src, []crawlstate.Result{{URL: "https://ex.com/seen", At: at, NotModified: true, NextCheck: at}}))
	require.Empty(t, get(t, s, src, "https://ex.com/seen").Excluded)
	require.ErrorIs(t, s.Record(ctxT(t), src, []crawlstate.Result{{URL: "https://ex.com/nope", At: at, Excluded: "not_document"}}), crawlstate.ErrNotFound)
}
