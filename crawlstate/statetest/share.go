package statetest

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/recrawl/recrawl/crawlstate"
)

// This file pins the optional crawlstate.Sharer ability: offers, leased
// claims, their extension and release, what Record does to them, and
// alert claims.

// RunSharer runs the suite of the crawlstate.Sharer ability, one subtest
// per part of its contract, each on a fresh State from open. A subtest
// skips, naming the ability, when the State is not a Sharer.
func RunSharer(t *testing.T, open Opener) {
	t.Helper()
	tests := []struct {
		name string
		fn   func(t *testing.T, open Opener)
	}{
		{"SharerIsRunLog", testSharerRunLog},
		{"Offer", testOffer},
		{"OfferRejectsBadArgs", testOfferBadArgs},
		{"OfferAgainEndsLeases", testOfferAgain},
		{"OfferForNewRun", testOfferNewRun},
		{"ClaimWholeRowsInOrder", testClaimWholeRows},
		{"ClaimRunAndSource", testClaimRunAndSource},
		{"ClaimLease", testClaimLease},
		{"ClaimOwnLeases", testClaimOwnLeases},
		{"ClaimPending", testClaimPending},
		{"ClaimRejectsBadArgs", testClaimBadArgs},
		{"ClaimRace", testClaimRace},
		{"ClaimHugeLimitBoundsAllocation", testClaimHugeLimit},
		{"RecordEndsOfferAndLease", testRecordEndsOffer},
		{"OfferFencedByRunLock", testOfferFenced},
		{"Renew", testRenew},
		{"RecordFencedByLease", testRecordFenced},
		{"RecordFailureFencedByLease", testRecordFailureFenced},
		{"Extend", testExtend},
		{"ExtendRejectsBadTTL", testExtendBadTTL},
		{"ReleaseURLs", testReleaseURLs},
		{"ReleaseAll", testReleaseAll},
		{"Withdraw", testWithdraw},
		{"LockIsApart", testLockIsApart},
		{"CanceledContext", testSharerCanceled},
		{"ClaimAlert", testClaimAlert},
		{"ClaimAlertEndsWithMark", testClaimAlertMark},
		{"ClaimAlertRace", testClaimAlertRace},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) { tc.fn(t, open) })
	}
}

// sharer is a State with the Sharer ability.
type sharer interface {
	crawlstate.State
	crawlstate.Sharer
}

// sharerOutbox is a sharer that keeps alerts, for the ClaimAlert parts.
type sharerOutbox interface {
	sharer
	crawlstate.AlertOutbox
}

// freshSharer is fresh for a part of the Sharer contract: it skips the
// subtest, naming the ability, when the store lacks it.
func freshSharer(t *testing.T, open Opener) sharer {
	t.Helper()
	s := fresh(t, open, crawlstate.Options{})
	sh, ok := s.(sharer)
	if !ok {
		t.Skipf("statetest: %T lacks the optional ability crawlstate.Sharer, which this part of the contract needs", s)
	}
	return sh
}

// freshSharerOutbox is freshSharer for the alert parts.
func freshSharerOutbox(t *testing.T, open Opener) sharerOutbox {
	t.Helper()
	s := fresh(t, open, crawlstate.Options{})
	sh, ok := s.(sharerOutbox)
	if !ok {
		t.Skipf("statetest: %T lacks the optional abilities crawlstate.Sharer and crawlstate.AlertOutbox, which this part of the contract needs", s)
	}
	return sh
}

// leaseTTL is the lease of the Sharer parts; run1 and run2 are run starts.
const leaseTTL = 10 * time.Minute

var (
	run1 = t0
	run2 = t0.Add(24 * time.Hour)
)

// leader is the owner of the run lock that offer takes for its Offer.
const leader = "leader"

// offer offers urls for the run at as its leader: it takes the source's
// run lock, offers and releases the lock.
func offer(t *testing.T, s sharer, source string, at time.Time, urls ...string) int {
	t.Helper()
	require.NoError(t, s.Lock(ctxT(t), source, leader, at, leaseTTL))
	n, err := s.Offer(ctxT(t), source, at, leader, urls)
	require.NoError(t, err)
	require.NoError(t, s.Unlock(ctxT(t), source, leader))
	return n
}

// claimed is what a Claim returned, rows as URLs.
type claimed struct {
	urls    []string
	pending int
	next    time.Time
}

// claimRows calls Claim and checks what holds for every Claim: at most
// limit rows, all of source, in (NextCheck, URL) order, and a zero next
// when pending is 0.
func claimRows(t *testing.T, s sharer, source string, runStart time.Time, owner string, now time.Time, ttl time.Duration, limit int) ([]crawlstate.Row, claimed) {
	t.Helper()
	rows, pending, next, err := s.Claim(ctxT(t), source, runStart, owner, now, ttl, limit)
	require.NoError(t, err)
	require.LessOrEqual(t, len(rows), limit, "at most limit rows")
	c := claimed{urls: make([]string, len(rows)), pending: pending, next: next}
	for i, row := range rows {
		require.Equal(t, source, row.Source, "a claimed row is of the claimed source")
		c.urls[i] = row.URL
		if i > 0 {
			prev := rows[i-1]
			require.True(t, prev.NextCheck.Before(row.NextCheck) || prev.NextCheck.Equal(row.NextCheck) && prev.URL < row.URL,
				"claimed rows in (NextCheck, URL) order: %s (%v) before %s (%v)", prev.URL, prev.NextCheck, row.URL, row.NextCheck)
		}
	}
	require.GreaterOrEqual(t, pending, 0)
	if pending == 0 {
		require.True(t, next.IsZero(), "next is zero when pending is 0, got %v", next)
	}
	return rows, c
}

// claim is claimRows on src with leaseTTL.
func claim(t *testing.T, s sharer, runStart time.Time, owner string, now time.Time, limit int) claimed {
	t.Helper()
	_, c := claimRows(t, s, src, runStart, owner, now, leaseTTL, limit)
	return c
}

// requireClaimed compares a Claim's result with the expected one.
func requireClaimed(t *testing.T, c claimed, urls []string, pending int, next time.Time, what string) {
	t.Helper()
	if len(urls) == 0 {
		require.Empty(t, c.urls, "%s: rows", what)
	} else {
		require.Equal(t, urls, c.urls, "%s: rows", what)
	}
	require.Equal(t, pending, c.pending, "%s: pending", what)
	requireTime(t, next, c.next, what+": next")
}

func extend(t *testing.T, s sharer, source, owner string, now time.Time, ttl time.Duration) int {
	t.Helper()
	n, err := s.Extend(ctxT(t), source, owner, now, ttl)
	require.NoError(t, err)
	return n
}

// testSharerRunLog: a Sharer is a RunLog, where a worker finds the run a
// leader started and joins it.
func testSharerRunLog(t *testing.T, open Opener) {
	s := freshSharer(t, open)
	var log crawlstate.RunLog = s // a Sharer is a RunLog by its type
	a := "https://ex.com/a"
	upsert(t, s, src, t0, disc(a))
	require.NoError(t, log.RecordRun(ctxT(t), src, run1), "the leader records the run's start")
	require.Equal(t, 1, offer(t, s, src, run1, a))

	runs, err := log.Runs(ctxT(t), src, 1)
	require.NoError(t, err)
	require.Len(t, runs, 1, "a worker that arrives later finds the run")
	requireClaimed(t, claim(t, s, runs[0], "worker", t0.Add(time.Minute), 10), []string{a}, 0, time.Time{},
		"the worker joins the run it found")
}

func testOffer(t *testing.T, open Opener) {
	s := freshSharer(t, open)
	a, b, c := "https://ex.com/a", "https://ex.com/b", "https://ex.com/c"
	upsert(t, s, src, t0, disc(c, b, a))
	upsert(t, s, "blog", t0, disc("https://ex.com/blog-only"))

	n := offer(t, s, src, run1, b, "https://ex.com/unknown", a, "https://ex.com/blog-only", b)
	require.Equal(t, 2, n, "offered rows, each once; URLs without a row of source are skipped")
	requireClaimed(t, claim(t, s, run1, "A", t0, 10), []string{a, b}, 0, time.Time{}, "only the offered rows are handed out")
	requireClaimed(t, claim(t, s, run1, "B", t0, 10), nil, 2, t0.Add(leaseTTL), "nothing else is offered")
	_, other := claimRows(t, s, "blog", run1, "B", t0, leaseTTL, 10)
	requireClaimed(t, other, nil, 0, time.Time{}, "a URL offered for another source offers nothing here")

	require.Zero(t, offer(t, s, src, run1), "an empty offer")
	require.Zero(t, offer(t, s, src, run1, "https://ex.com/unknown"), "only unknown URLs")
	require.Equal(t, 1, offer(t, s, src, run1, c), "a later offer adds rows to the run1")
	requireClaimed(t, claim(t, s, run1, "B", t0, 10), []string{c}, 2, t0.Add(leaseTTL), "the added row")
}

func testOfferBadArgs(t *testing.T, open Opener) {
	s := freshSharer(t, open)
	a := "https://ex.com/a"
	upsert(t, s, src, t0, disc(a))
	require.NoError(t, s.Lock(ctxT(t), src, leader, t0, leaseTTL))
	_, err := s.Offer(ctxT(t), "", run1, leader, []string{a})
	require.Error(t, err, "an empty source is an error")
	_, err = s.Offer(ctxT(t), src, time.Time{}, leader, []string{a})
	require.Error(t, err, "a zero run is an error")
	_, err = s.Offer(ctxT(t), src, run1, "", []string{a})
	require.Error(t, err, "an empty owner is an error")

	requireClaimed(t, claim(t, s, time.Time{}, "A", t0, 10), nil, 0, time.Time{}, "a rejected Offer offers nothing")
	requireClaimed(t, claim(t, s, run1, "A", t0, 10), nil, 0, time.Time{}, "nothing offered yet")
}

func testOfferAgain(t *testing.T, open Opener) {
	s := freshSharer(t, open)
	a, b := "https://ex.com/a", "https://ex.com/b"
	upsert(t, s, src, t0, disc(a, b))
	require.Equal(t, 2, offer(t, s, src, run1, a, b))
	requireClaimed(t, claim(t, s, run1, "A", t0, 10), []string{a, b}, 0, time.Time{}, "A claims both")
	now := t0.Add(time.Minute)
	requireClaimed(t, claim(t, s, run1, "B", now, 10), nil, 2, t0.Add(leaseTTL), "both are A's")

	require.Equal(t, 1, offer(t, s, src, run1, a), "offering a row again counts it")
	requireClaimed(t, claim(t, s, run1, "B", now, 10), []string{a}, 1, t0.Add(leaseTTL),
		"offering again ends the lease: B claims the row at once")
	require.Equal(t, 1, extend(t, s, src, "A", now, leaseTTL), "A holds only the row not offered again")
}

func testOfferNewRun(t *testing.T, open Opener) {
	s := freshSharer(t, open)
	a, b := "https://ex.com/a", "https://ex.com/b"
	upsert(t, s, src, t0, disc(a, b))
	require.Equal(t, 2, offer(t, s, src, run1, a, b))
	requireClaimed(t, claim(t, s, run1, "A", t0, 1), []string{a}, 0, time.Time{}, "A claims one row of the first run1")

	require.Equal(t, 2, offer(t, s, src, run2, a, b), "the next run1 offers the same rows")
	now := t0.Add(time.Minute)
	requireClaimed(t, claim(t, s, run1, "C", now, 10), nil, 0, time.Time{},
		"the old run's offer is replaced: nothing left to claim nor pending in it")
	requireClaimed(t, claim(t, s, run2, "B", now, 10), []string{a, b}, 0, time.Time{},
		"the new run's offer ended A's lease: B claims both at once")
	require.Zero(t, extend(t, s, src, "A", now, leaseTTL), "A holds nothing any more")
}

func testClaimWholeRows(t *testing.T, open Opener) {
	s := freshSharer(t, open)
	a, b, c, d, e := "https://ex.com/a", "https://ex.com/b", "https://ex.com/c", "https://ex.com/d", "https://ex.com/e"
	ds := disc(c, a, e, b, d)
	ds[0].LastMod = t0.Add(-48 * time.Hour)
	ds[0].Via = "https://ex.com/sitemap.xml"
	upsert(t, s, src, t0, ds)
	// Queue order: d and e (never fetched, due now), then b and c at
	// t0+1h, then a at t0+2h; neither URL nor discovery order.
	stats := sampleStats()
	record(t, s, src,
		crawlstate.Result{URL: a, At: t0, Changed: true, ContentHash: "h-a", ETag: `"a1"`,
			LastModified: "Sat, 01 Mar 2025 10:00:00 GMT", Interval: 2 * time.Hour, NextCheck: t0.Add(2 * time.Hour),
			Stats: &stats, Title: "A", Canonical: "https://ex.com/a-canonical"},
		crawlstate.Result{URL: b, At: t0, Changed: true, ContentHash: "h-b", Interval: time.Hour, NextCheck: t0.Add(time.Hour)},
		crawlstate.Result{URL: c, At: t0, Changed: true, ContentHash: "h-c", Interval: time.Hour, NextCheck: t0.Add(time.Hour)})
	require.NoError(t, s.RecordFailure(ctxT(t), src, crawlstate.Failure{URL: b, At: t0.Add(time.Minute), Stage: "extract", Err: "bad html"}))
	require.NoError(t, s.RecordFailure(ctxT(t), src, crawlstate.Failure{URL: e, At: t0.Add(time.Minute), Stage: "fetch", Err: "503"}))
	require.Equal(t, 5, offer(t, s, src, run1, a, b, c, d, e))

	now := t0.Add(2 * time.Minute)
	var got []string
	for _, want := range [][]string{{d, e}, {b, c}, {a}, nil} {
		rows, cl := claimRows(t, s, src, run1, "A", now, leaseTTL, 2)
		requireClaimed(t, cl, want, 0, time.Time{}, "batch of 2")
		for _, r := range rows {
			require.Equal(t, normalize(get(t, s, src, r.URL)), normalize(r), "a claimed row is whole, as Get returns it")
		}
		got = append(got, cl.urls...)
	}
	require.Equal(t, []string{d, e, b, c, a}, got, "rows are handed out in (NextCheck, URL) order")
}

func testClaimRunAndSource(t *testing.T, open Opener) {
	s := freshSharer(t, open)
	a, b, c := "https://ex.com/a", "https://ex.com/b", "https://ex.com/c"
	upsert(t, s, src, t0, disc(a, b, c))
	upsert(t, s, "blog", t0, disc(a))
	require.Equal(t, 2, offer(t, s, src, run1, a, b))
	require.Equal(t, 1, offer(t, s, src, run2, c))
	require.Equal(t, 1, offer(t, s, "blog", run1, a))

	requireClaimed(t, claim(t, s, run1, "A", t0, 10), []string{a, b}, 0, time.Time{}, "the rows of run1 only")
	requireClaimed(t, claim(t, s, run2, "A", t0, 10), []string{c}, 0, time.Time{}, "the rows of the other run1")
	_, other := claimRows(t, s, "blog", run1, "A", t0, leaseTTL, 10)
	requireClaimed(t, other, []string{a}, 0, time.Time{}, "the same URL in another source is another row")

	now := t0.Add(time.Minute)
	requireClaimed(t, claim(t, s, run1, "B", now, 10), nil, 2, t0.Add(leaseTTL), "pending counts the rows of run1, not of other runs or sources")
	requireClaimed(t, claim(t, s, run2, "B", now, 10), nil, 1, t0.Add(leaseTTL), "pending of the other run1")
	requireClaimed(t, claim(t, s, time.Time{}, "B", now, 10), nil, 0, time.Time{}, "nothing is offered for a run1 never offered")
}

func testClaimLease(t *testing.T, open Opener) {
	s := freshSharer(t, open)
	a, b, c := "https://ex.com/a", "https://ex.com/b", "https://ex.com/c"
	upsert(t, s, src, t0, disc(a, b, c))
	require.Equal(t, 3, offer(t, s, src, run1, a, b, c))

	requireClaimed(t, claim(t, s, run1, "A", t0, 2), []string{a, b}, 0, time.Time{}, "A claims two")
	justBefore := t0.Add(leaseTTL - time.Nanosecond)
	requireClaimed(t, claim(t, s, run1, "B", justBefore, 10), []string{c}, 2, t0.Add(leaseTTL),
		"A's rows are leased until t0+ttl: B gets only the third")

	// A died: its leases expire at t0+ttl, and its rows return to the others.
	expired := t0.Add(leaseTTL)
	requireClaimed(t, claim(t, s, run1, "C", expired, 10), []string{a, b}, 1, justBefore.Add(leaseTTL),
		"a lease that expired at or before now is taken over")
	requireClaimed(t, claim(t, s, run1, "A", expired, 10), nil, 3, justBefore.Add(leaseTTL),
		"A's rows are C's now; next is the earliest expiry")
	require.Zero(t, extend(t, s, src, "A", expired, leaseTTL), "A lost its leases")
	require.Equal(t, 2, extend(t, s, src, "C", expired, leaseTTL), "C holds them")
}

func testClaimOwnLeases(t *testing.T, open Opener) {
	s := freshSharer(t, open)
	a, b := "https://ex.com/a", "https://ex.com/b"
	upsert(t, s, src, t0, disc(a, b))
	require.Equal(t, 2, offer(t, s, src, run1, a, b))

	requireClaimed(t, claim(t, s, run1, "A", t0, 1), []string{a}, 0, time.Time{}, "first claim")
	requireClaimed(t, claim(t, s, run1, "A", t0.Add(time.Minute), 1), []string{b}, 0, time.Time{},
		"owner's own unexpired lease is not returned again")
	requireClaimed(t, claim(t, s, run1, "A", t0.Add(2*time.Minute), 10), nil, 0, time.Time{},
		"a worker that claims until nothing is left ends; its own leases are not pending")
	requireClaimed(t, claim(t, s, run1, "A", t0.Add(leaseTTL), 10), []string{a}, 0, time.Time{},
		"its own expired lease is claimed again, the unexpired one not")
}

func testClaimPending(t *testing.T, open Opener) {
	s := freshSharer(t, open)
	a, b, c := "https://ex.com/a", "https://ex.com/b", "https://ex.com/c"
	upsert(t, s, src, t0, disc(a, b, c))
	require.Equal(t, 3, offer(t, s, src, run1, a, b, c))

	_, cl := claimRows(t, s, src, run1, "A", t0, 10*time.Minute, 1) // a until t0+10m
	requireClaimed(t, cl, []string{a}, 0, time.Time{}, "A")
	_, cl = claimRows(t, s, src, run1, "B", t0.Add(time.Minute), 5*time.Minute, 1) // b until t0+6m
	requireClaimed(t, cl, []string{b}, 1, t0.Add(10*time.Minute), "B: A's lease is pending")
	_, cl = claimRows(t, s, src, run1, "C", t0.Add(2*time.Minute), 10*time.Minute, 1) // c until t0+12m
	requireClaimed(t, cl, []string{c}, 2, t0.Add(6*time.Minute), "C: next is the earliest expiry of the others'")
	_, cl = claimRows(t, s, src, run1, "C", t0.Add(3*time.Minute), 10*time.Minute, 1)
	requireClaimed(t, cl, nil, 2, t0.Add(6*time.Minute), "C claims nothing while pending > 0: it asks again at next")

	_, cl = claimRows(t, s, src, run1, "C", t0.Add(6*time.Minute), 10*time.Minute, 1) // b until t0+16m
	requireClaimed(t, cl, []string{b}, 1, t0.Add(10*time.Minute), "at next, C takes the expired lease over")
	_, cl = claimRows(t, s, src, run1, "A", t0.Add(7*time.Minute), 10*time.Minute, 10)
	requireClaimed(t, cl, nil, 2, t0.Add(12*time.Minute), "A: C's two leases are pending, A's own not")
	_, cl = claimRows(t, s, src, run1, "A", t0.Add(12*time.Minute), 10*time.Minute, 1)
	requireClaimed(t, cl, []string{a}, 1, t0.Add(16*time.Minute), "C's expired lease, not taken over, is not pending")
	_, cl = claimRows(t, s, src, run1, "A", t0.Add(12*time.Minute), 10*time.Minute, 10)
	requireClaimed(t, cl, []string{c}, 1, t0.Add(16*time.Minute), "it is there to claim")
}

func testClaimBadArgs(t *testing.T, open Opener) {
	s := freshSharer(t, open)
	a := "https://ex.com/a"
	upsert(t, s, src, t0, disc(a))
	require.Equal(t, 1, offer(t, s, src, run1, a))
	for _, tc := range []struct {
		name, source, owner string
		ttl                 time.Duration
		limit               int
	}{
		{"zero limit", src, "A", leaseTTL, 0},
		{"negative limit", src, "A", leaseTTL, -1},
		{"empty source", "", "A", leaseTTL, 10},
		{"empty owner", src, "", leaseTTL, 10},
		{"zero ttl", src, "A", 0, 10},
		{"negative ttl", src, "A", -time.Second, 10},
	} {
		_, _, _, err := s.Claim(ctxT(t), tc.source, run1, tc.owner, t0, tc.ttl, tc.limit)
		require.Error(t, err, tc.name)
	}
	requireClaimed(t, claim(t, s, run1, "B", t0, 10), []string{a}, 0, time.Time{}, "a rejected Claim leases nothing")
}

func testClaimRace(t *testing.T, open Opener) {
	s := freshSharer(t, open)
	const (
		rows    = 500
		workers = 8
		batch   = 7
	)
	urls := make([]string, rows)
	for i := range urls {
		urls[i] = fmt.Sprintf("https://ex.com/%03d", i)
	}
	upsert(t, s, src, t0, disc(urls...))
	require.Equal(t, rows, offer(t, s, src, run1, urls...))

	got := make([][]string, workers)
	errs := make([]error, workers)
	var wg sync.WaitGroup
	start := make(chan struct{})
	for w := range workers {
		wg.Go(func() {
			<-start
			for n := 0; ; n++ {
				rs, _, _, err := s.Claim(context.Background(), src, run1, fmt.Sprintf("worker-%d", w), t0, time.Hour, batch)
				switch {
				case err != nil:
				case len(rs) > batch:
					err = fmt.Errorf("%d rows claimed with limit %d", len(rs), batch)
				case n > rows && len(rs) > 0:
					err = fmt.Errorf("still claiming after %d Claims of %d offered rows: owner's own leases returned again?", n, rows)
				}
				if err != nil {
					errs[w] = err
					return
				}
				if len(rs) == 0 {
					return
				}
				for _, r := range rs {
					got[w] = append(got[w], r.URL)
				}
			}
		})
	}
	close(start)
	wg.Wait()
	seen := make(map[string]int, rows)
	for w := range workers {
		require.NoError(t, errs[w], "worker %d", w)
		for _, u := range got[w] {
			seen[u]++
		}
	}
	for _, u := range urls {
		require.Equal(t, 1, seen[u], "%s claimed %d times: two Claims at once never return the same row", u, seen[u])
	}
	require.Len(t, seen, rows, "only offered rows are claimed")
	requireClaimed(t, claim(t, s, run1, "late", t0, 10), nil, rows, t0.Add(time.Hour), "every row is leased")
}

// testRecordEndsOffer: Record and RecordFailure end the offer and the
// lease of every row they write, whoever holds it, whatever the result.
func testRecordEndsOffer(t *testing.T, open Opener) {
	s := freshSharer(t, open)
	ok, notMod, gone, excl, fail, unclaimed, keep := "https://ex.com/1-ok", "https://ex.com/2-not-modified",
		"https://ex.com/3-gone", "https://ex.com/4-excluded", "https://ex.com/5-failure", "https://ex.com/6-unclaimed",
		"https://ex.com/7-keep"
	all := []string{ok, notMod, gone, excl, fail, unclaimed, keep}
	upsert(t, s, src, t0, disc(all...))
	require.Equal(t, len(all), offer(t, s, src, run1, all...))
	requireClaimed(t, claim(t, s, run1, "A", t0, 5), all[:5], 0, time.Time{}, "A claims five")

	at := t0.Add(time.Minute)
	err := s.Record(ctxT(t), src, []crawlstate.Result{{URL: ok, At: at}, {URL: "https://ex.com/unknown", At: at}})
	require.ErrorIs(t, err, crawlstate.ErrNotFound)
	require.Equal(t, 5, extend(t, s, src, "A", t0, leaseTTL), "a rejected Record ends no lease")
	record(t, s, src,
		crawlstate.Result{URL: ok, At: at, Changed: true, ContentHash: "h", Interval: time.Hour, NextCheck: at.Add(time.Hour)},
		crawlstate.Result{URL: notMod, At: at, NotModified: true, Interval: time.Hour, NextCheck: at.Add(time.Hour)},
		crawlstate.Result{URL: gone, At: at, Gone: true})
	record(t, s, src, crawlstate.Result{URL: excl, At: at, Excluded: "not_document"})
	require.NoError(t, s.RecordFailure(ctxT(t), src, crawlstate.Failure{URL: fail, At: at, Stage: "fetch", Err: "503", RetryAt: at.Add(time.Hour)}))
	record(t, s, src, crawlstate.Result{URL: unclaimed, At: at, Changed: true, ContentHash: "h"})

	require.Zero(t, extend(t, s, src, "A", at, leaseTTL), "the leases of the rows written are ended")
	requireClaimed(t, claim(t, s, run1, "B", at, 10), []string{keep}, 0, time.Time{},
		"the offer of the rows written is ended, leased or not; they are not pending")
	requireClaimed(t, claim(t, s, run1, "C", t0.Add(3*leaseTTL), 10), []string{keep}, 0, time.Time{},
		"nor are they claimed after their leases would have expired")

	require.Equal(t, 2, offer(t, s, src, run1, ok, fail), "a written row can be offered again")
	requireClaimed(t, claim(t, s, run1, "D", t0.Add(3*leaseTTL), 10), []string{ok, fail}, 1, t0.Add(4*leaseTTL), "offered again")
}

func testOfferFenced(t *testing.T, open Opener) {
	s := freshSharer(t, open)
	a, b := "https://ex.com/a", "https://ex.com/b"
	upsert(t, s, src, t0, disc(a, b))
	ctx := ctxT(t)

	_, err := s.Offer(ctx, src, run1, "L1", []string{a})
	require.ErrorIs(t, err, crawlstate.ErrLeaseLost, "nobody holds the run lock")
	require.NoError(t, s.Lock(ctx, src, "L1", t0, time.Minute))
	_, err = s.Offer(ctx, src, run1, "L2", []string{a})
	require.ErrorIs(t, err, crawlstate.ErrLeaseLost, "another owner holds the run lock")
	requireClaimed(t, claim(t, s, run1, "A", t0, 10), nil, 0, time.Time{}, "a fenced-off Offer offers nothing")

	late := t0.Add(time.Hour) // L1's lock expired: nobody took it yet
	n, err := s.Offer(ctx, src, run1, "L1", []string{a})
	require.NoError(t, err, "an expired lock nobody took is still held")
	require.Equal(t, 1, n)
	require.NoError(t, s.Lock(ctx, src, "L2", late, time.Minute), "L2 takes the expired lock over")
	_, err = s.Offer(ctx, src, run1, "L1", []string{b})
	require.ErrorIs(t, err, crawlstate.ErrLeaseLost, "the lock was taken over: the old leader offers nothing")
	n, err = s.Offer(ctx, src, run2, "L2", []string{b})
	require.NoError(t, err)
	require.Equal(t, 1, n)
	requireClaimed(t, claim(t, s, run1, "A", late, 10), []string{a}, 0, time.Time{}, "run1 holds what L1 offered while it led")
	requireClaimed(t, claim(t, s, run2, "A", late, 10), []string{b}, 0, time.Time{}, "run2 what L2 offered")
}

func testRenew(t *testing.T, open Opener) {
	s := freshSharer(t, open)
	a, b, c, d := "https://ex.com/a", "https://ex.com/b", "https://ex.com/c", "https://ex.com/d"
	upsert(t, s, src, t0, disc(a, b, c, d))
	require.Equal(t, 4, offer(t, s, src, run1, a, b, c, d))
	requireClaimed(t, claim(t, s, run1, "A", t0, 3), []string{a, b, c}, 0, time.Time{}, "A claims three")
	ctx := ctxT(t)

	t5 := t0.Add(5 * time.Minute)
	held, err := s.Renew(ctx, src, "A", []string{c, a, d, "https://ex.com/unknown", a}, t5, leaseTTL)
	require.NoError(t, err)
	require.Equal(t, []string{c, a}, held, "A's leases among the URLs, in the order given, each once")
	requireClaimed(t, claim(t, s, run1, "B", t0.Add(leaseTTL), 10), []string{b, d}, 2, t5.Add(leaseTTL),
		"a and c last until now+ttl; b expired and is taken over")

	held, err = s.Renew(ctx, src, "A", []string{a, b}, t5, leaseTTL)
	require.NoError(t, err)
	require.Equal(t, []string{a}, held, "b was taken over: it is not A's any more")
	record(t, s, src, crawlstate.Result{URL: a, At: t5})
	late := t0.Add(2 * time.Hour)
	held, err = s.Renew(ctx, src, "A", []string{a, c}, late, leaseTTL)
	require.NoError(t, err)
	require.Equal(t, []string{c}, held, "a Record ended a's lease; c expired, nobody took it: still A's")

	_, err = s.Renew(ctx, src, "A", []string{c}, late, 0)
	require.Error(t, err, "a ttl of 0 is an error")
	held, err = s.Renew(ctx, src, "A", nil, late, leaseTTL)
	require.NoError(t, err)
	require.Empty(t, held)
}

func testRecordFenced(t *testing.T, open Opener) {
	s := freshSharer(t, open)
	a, b, c, free := "https://ex.com/a", "https://ex.com/b", "https://ex.com/c", "https://ex.com/free"
	upsert(t, s, src, t0, disc(a, b, c, free))
	require.Equal(t, 3, offer(t, s, src, run1, a, b, c))
	requireClaimed(t, claim(t, s, run1, "A", t0, 3), []string{a, b, c}, 0, time.Time{}, "A claims all")
	expired := t0.Add(leaseTTL)
	requireClaimed(t, claim(t, s, run1, "B", expired, 1), []string{a}, 0, time.Time{}, "B takes a over after A's leases expired")

	at := expired.Add(time.Minute)
	err := s.Record(ctxT(t), src, []crawlstate.Result{
		{URL: a, At: at, Changed: true, ContentHash: "A-a", Lease: "A"},
		{URL: b, At: at, Changed: true, ContentHash: "A-b", Lease: "A"},
		{URL: free, At: at, Changed: true, ContentHash: "free"},
	})
	var lost *crawlstate.LeaseLostError
	require.ErrorAs(t, err, &lost)
	require.ErrorIs(t, err, crawlstate.ErrLeaseLost)
	require.Equal(t, []string{a}, lost.URLs, "only the row B took over is lost")
	require.Equal(t, "A", lost.Owner)
	require.Equal(t, "", get(t, s, src, a).ContentHash, "A's result for a is not written")
	require.Equal(t, 0, get(t, s, src, a).Visits)
	require.Equal(t, "A-b", get(t, s, src, b).ContentHash, "b's lease expired but nobody took it: A writes it")
	require.Equal(t, "free", get(t, s, src, free).ContentHash, "a result without a lease is written")

	record(t, s, src, crawlstate.Result{URL: a, At: at, Changed: true, ContentHash: "B-a", Lease: "B"})
	require.Equal(t, "B-a", get(t, s, src, a).ContentHash, "B holds a: its write passes")
	err = s.Record(ctxT(t), src, []crawlstate.Result{{URL: a, At: at, Changed: true, ContentHash: "B-again", Lease: "B"}})
	require.ErrorIs(t, err, crawlstate.ErrLeaseLost, "B's Record ended the lease: a second fenced write is lost")
	require.Equal(t, 1, get(t, s, src, a).Visits, "a is recorded once")
	err = s.Record(ctxT(t), src, []crawlstate.Result{{URL: "https://ex.com/unknown", At: at, Lease: "A"}})
	require.ErrorIs(t, err, crawlstate.ErrNotFound, "an unknown URL is not found, fenced or not")
}

func testRecordFailureFenced(t *testing.T, open Opener) {
	s := freshSharer(t, open)
	a, b := "https://ex.com/a", "https://ex.com/b"
	upsert(t, s, src, t0, disc(a, b))
	require.Equal(t, 2, offer(t, s, src, run1, a, b))
	requireClaimed(t, claim(t, s, run1, "A", t0, 2), []string{a, b}, 0, time.Time{}, "A claims both")
	expired := t0.Add(leaseTTL)
	requireClaimed(t, claim(t, s, run1, "B", expired, 1), []string{a}, 0, time.Time{}, "B takes a over")

	err := s.RecordFailure(ctxT(t), src, crawlstate.Failure{URL: a, At: expired, Stage: "fetch", Err: "503", Lease: "A"})
	require.ErrorIs(t, err, crawlstate.ErrLeaseLost)
	var lost *crawlstate.LeaseLostError
	require.ErrorAs(t, err, &lost)
	require.Equal(t, []string{a}, lost.URLs)
	require.Zero(t, get(t, s, src, a).Failures, "the lost failure is not written")
	require.NoError(t, s.RecordFailure(ctxT(t), src, crawlstate.Failure{URL: b, At: expired, Stage: "fetch", Err: "503", Lease: "A"}))
	require.Equal(t, 1, get(t, s, src, b).Failures, "b is still A's")
	err = s.RecordFailure(ctxT(t), src, crawlstate.Failure{URL: "https://ex.com/unknown", At: expired, Stage: "fetch", Err: "x", Lease: "A"})
	require.ErrorIs(t, err, crawlstate.ErrNotFound)
}

func testExtend(t *testing.T, open Opener) {
	s := freshSharer(t, open)
	a, b, c, x := "https://ex.com/a", "https://ex.com/b", "https://ex.com/c", "https://ex.com/x"
	upsert(t, s, src, t0, disc(a, b, c))
	upsert(t, s, "blog", t0, disc(x))
	require.Equal(t, 3, offer(t, s, src, run1, a, b, c))
	require.Equal(t, 1, offer(t, s, "blog", run1, x))
	requireClaimed(t, claim(t, s, run1, "A", t0, 2), []string{a, b}, 0, time.Time{}, "A")
	requireClaimed(t, claim(t, s, run1, "B", t0, 2), []string{c}, 2, t0.Add(leaseTTL), "B")
	_, cl := claimRows(t, s, "blog", run1, "A", t0, leaseTTL, 10)
	requireClaimed(t, cl, []string{x}, 0, time.Time{}, "A in another source")

	t5 := t0.Add(5 * time.Minute)
	require.Equal(t, 2, extend(t, s, src, "A", t5, leaseTTL), "A's leases on the source, counted")
	expired := t0.Add(leaseTTL)
	requireClaimed(t, claim(t, s, run1, "C", expired, 10), []string{c}, 2, t5.Add(leaseTTL),
		"A's leases last until now+ttl; B's are untouched")
	_, cl = claimRows(t, s, "blog", run1, "C", expired, leaseTTL, 10)
	requireClaimed(t, cl, []string{x}, 0, time.Time{}, "A's leases on another source are untouched")

	// Long after: A's leases expired, and nobody took them.
	late := t0.Add(2 * time.Hour)
	require.Equal(t, 2, extend(t, s, src, "A", late, leaseTTL), "expired leases nobody took are extended")
	requireClaimed(t, claim(t, s, run1, "D", late, 10), []string{c}, 2, late.Add(leaseTTL), "so they are A's again")
	lateExpiry := late.Add(leaseTTL)
	requireClaimed(t, claim(t, s, run1, "D", lateExpiry, 10), []string{a, b, c}, 0, time.Time{},
		"at expiry D takes A's over, and its own expired one again")
	require.Zero(t, extend(t, s, src, "A", lateExpiry, leaseTTL), "leases taken over are not A's to extend")
	requireClaimed(t, claim(t, s, run1, "E", lateExpiry, 10), nil, 3, lateExpiry.Add(leaseTTL),
		"D's leases are untouched by A's Extend")
	require.Zero(t, extend(t, s, src, "nobody", late, leaseTTL), "an owner without leases")
}

func testExtendBadTTL(t *testing.T, open Opener) {
	s := freshSharer(t, open)
	a := "https://ex.com/a"
	upsert(t, s, src, t0, disc(a))
	require.Equal(t, 1, offer(t, s, src, run1, a))
	requireClaimed(t, claim(t, s, run1, "A", t0, 10), []string{a}, 0, time.Time{}, "A")
	for _, ttl := range []time.Duration{0, -time.Second} {
		_, err := s.Extend(ctxT(t), src, "A", t0.Add(time.Minute), ttl)
		require.Error(t, err, "ttl %v", ttl)
	}
	requireClaimed(t, claim(t, s, run1, "B", t0.Add(leaseTTL), 10), []string{a}, 0, time.Time{},
		"a rejected Extend extends nothing")
}

func testReleaseURLs(t *testing.T, open Opener) {
	s := freshSharer(t, open)
	a, b, c := "https://ex.com/a", "https://ex.com/b", "https://ex.com/c"
	upsert(t, s, src, t0, disc(a, b, c))
	require.Equal(t, 3, offer(t, s, src, run1, a, b, c))
	requireClaimed(t, claim(t, s, run1, "A", t0, 10), []string{a, b, c}, 0, time.Time{}, "A")
	now := t0.Add(time.Minute)

	require.NoError(t, s.Release(ctxT(t), src, "A", []string{a, "https://ex.com/never-claimed"}),
		"releasing a lease not held is not an error")
	requireClaimed(t, claim(t, s, run1, "B", now, 10), []string{a}, 2, t0.Add(leaseTTL),
		"the released row stays offered: B claims it at once; the rest stays A's")
	require.NoError(t, s.Release(ctxT(t), src, "A", []string{a}), "a row A no longer holds")
	require.NoError(t, s.Release(ctxT(t), src, "A", []string{}), "no rows")
	requireClaimed(t, claim(t, s, run1, "C", now, 10), nil, 3, t0.Add(leaseTTL),
		"A's Release ends A's leases only, and an empty list releases none")
	require.Equal(t, 1, extend(t, s, src, "B", now, leaseTTL), "B still holds its row")
}

func testReleaseAll(t *testing.T, open Opener) {
	s := freshSharer(t, open)
	a, b, c, x := "https://ex.com/a", "https://ex.com/b", "https://ex.com/c", "https://ex.com/x"
	upsert(t, s, src, t0, disc(a, b, c))
	upsert(t, s, "blog", t0, disc(x))
	require.Equal(t, 3, offer(t, s, src, run1, a, b, c))
	require.Equal(t, 1, offer(t, s, "blog", run1, x))
	requireClaimed(t, claim(t, s, run1, "B", t0, 1), []string{a}, 0, time.Time{}, "B")
	requireClaimed(t, claim(t, s, run1, "A", t0, 10), []string{b, c}, 1, t0.Add(leaseTTL), "A")
	_, cl := claimRows(t, s, "blog", run1, "A", t0, leaseTTL, 10)
	requireClaimed(t, cl, []string{x}, 0, time.Time{}, "A in another source")

	now := t0.Add(time.Minute)
	require.NoError(t, s.Release(ctxT(t), src, "A", nil))
	requireClaimed(t, claim(t, s, run1, "C", now, 10), []string{b, c}, 1, t0.Add(leaseTTL),
		"nil releases every lease of A on the source; the rows stay offered; B's lease stays")
	_, cl = claimRows(t, s, "blog", run1, "C", now, leaseTTL, 10)
	requireClaimed(t, cl, nil, 1, t0.Add(leaseTTL), "A's lease on another source stays")
	require.NoError(t, s.Release(ctxT(t), src, "A", nil), "releasing when holding nothing is not an error")
	require.NoError(t, s.Release(ctxT(t), src, "nobody", nil))
}

func testWithdraw(t *testing.T, open Opener) {
	s := freshSharer(t, open)
	a, b, c, d := "https://ex.com/a", "https://ex.com/b", "https://ex.com/c", "https://ex.com/d"
	upsert(t, s, src, t0, disc(a, b, c, d))
	fetched(t, s, src, a, t0, t0.Add(time.Hour))
	fetched(t, s, src, d, t0, t0.Add(2*time.Hour)) // queue order: b, c, a, d
	require.Equal(t, 4, offer(t, s, src, run1, a, b, c, d))
	requireClaimed(t, claim(t, s, run1, "A", t0, 3), []string{b, c, a}, 0, time.Time{}, "A claims three")
	before := get(t, s, src, a)

	require.NoError(t, s.Withdraw(ctxT(t), src, "A", []string{a, d, "https://ex.com/never"}))
	require.Equal(t, 2, extend(t, s, src, "A", t0, leaseTTL), "the withdrawn row's lease is ended")
	now := t0.Add(time.Minute)
	requireClaimed(t, claim(t, s, run1, "B", now, 10), []string{d}, 2, t0.Add(leaseTTL),
		"the withdrawn row is not offered (nor pending); a row A did not hold is left as it was")
	require.Equal(t, normalize(before), normalize(get(t, s, src, a)), "nothing is recorded: the row keeps its NextCheck")
	require.NotContains(t, dueURLs(t, s, src, t0.Add(time.Hour-1)), a)
	require.Contains(t, dueURLs(t, s, src, t0.Add(time.Hour)), a, "it stays due at its NextCheck, for a later run")

	require.Error(t, s.Withdraw(ctxT(t), "", "A", []string{b}), "an empty source is an error")
	require.Error(t, s.Withdraw(ctxT(t), src, "", []string{b}), "an empty owner is an error")
	late := t0.Add(3 * leaseTTL)
	requireClaimed(t, claim(t, s, run1, "C", late, 10), []string{b, c, d}, 0, time.Time{},
		"the withdrawn row is never claimed in this run; a rejected Withdraw withdrew nothing")

	require.NoError(t, s.Withdraw(ctxT(t), src, "A", []string{b}))
	requireClaimed(t, claim(t, s, run1, "D", late, 10), nil, 3, late.Add(leaseTTL), "rows A does not hold are left as they are")
	require.Equal(t, 1, offer(t, s, src, run1, a), "a withdrawn row can be offered again")
	requireClaimed(t, claim(t, s, run1, "D", late, 10), []string{a}, 3, late.Add(leaseTTL), "offered again")
}

// testLockIsApart: leases and offers are not kept by Lock, which a Sharer
// still serves.
func testLockIsApart(t *testing.T, open Opener) {
	s := freshSharer(t, open)
	a, b := "https://ex.com/a", "https://ex.com/b"
	upsert(t, s, src, t0, disc(a, b))
	require.NoError(t, s.Lock(ctxT(t), src, "leader", t0, leaseTTL), "a Sharer serves Lock")
	require.Equal(t, 2, offer(t, s, src, run1, a, b))
	requireClaimed(t, claim(t, s, run1, "A", t0, 1), []string{a}, 0, time.Time{}, "a worker claims while the leader holds the lock")
	require.NoError(t, s.Unlock(ctxT(t), src, "leader"))

	now := t0.Add(time.Minute)
	requireClaimed(t, claim(t, s, run1, "B", now, 10), []string{b}, 1, t0.Add(leaseTTL),
		"Unlock ends neither the offer nor the leases")
	require.NoError(t, s.Lock(ctxT(t), src, "B", now, leaseTTL), "leases do not hold the lock")
}

func testSharerCanceled(t *testing.T, open Opener) {
	s := freshSharer(t, open)
	a, b := "https://ex.com/a", "https://ex.com/b"
	upsert(t, s, src, t0, disc(a, b))
	require.Equal(t, 1, offer(t, s, src, run1, a))
	ctx, cancel := context.WithCancel(context.Background())
	cancel()

	require.NoError(t, s.Lock(ctxT(t), src, leader, t0, leaseTTL))
	_, err := s.Offer(ctx, src, run1, leader, []string{b})
	require.ErrorIs(t, err, context.Canceled)
	require.NoError(t, s.Unlock(ctxT(t), src, leader))
	_, _, _, err = s.Claim(ctx, src, run1, "C", t0, leaseTTL, 10)
	require.ErrorIs(t, err, context.Canceled)
	requireClaimed(t, claim(t, s, run1, "A", t0, 10), []string{a}, 0, time.Time{}, "a canceled Claim leased nothing, a canceled Offer offered nothing")

	_, err = s.Extend(ctx, src, "A", t0.Add(time.Minute), leaseTTL)
	require.ErrorIs(t, err, context.Canceled)
	require.ErrorIs(t, s.Release(ctx, src, "A", nil), context.Canceled)
	require.ErrorIs(t, s.Withdraw(ctx, src, "A", []string{a}), context.Canceled)
	_, err = s.ClaimAlert(ctx, "id-1", "A", t0, leaseTTL)
	require.ErrorIs(t, err, context.Canceled)
	requireClaimed(t, claim(t, s, run1, "B", t0.Add(leaseTTL-time.Nanosecond), 10), nil, 1, t0.Add(leaseTTL),
		"a canceled Release or Withdraw ended nothing, a canceled Extend extended nothing")
	requireClaimed(t, claim(t, s, run1, "B", t0.Add(leaseTTL), 10), []string{a}, 0, time.Time{}, "A's lease expired as claimed")
}

func claimAlert(t *testing.T, s sharer, id, owner string, now time.Time) bool {
	t.Helper()
	ok, err := s.ClaimAlert(ctxT(t), id, owner, now, leaseTTL)
	require.NoError(t, err)
	return ok
}

func testClaimAlert(t *testing.T, open Opener) {
	s := freshSharerOutbox(t, open)
	u := "https://ex.com/a"
	upsert(t, s, src, t0, disc(u))
	alertAt(t, s, src, u, "id-1", t0)

	require.True(t, claimAlert(t, s, "id-1", "A", t0), "a pending alert is leased")
	a, err := s.Alert(ctxT(t), "id-1")
	require.NoError(t, err)
	require.True(t, a.DeliveredAt.IsZero(), "a claimed alert stays pending")
	require.False(t, claimAlert(t, s, "id-1", "B", t0.Add(leaseTTL-time.Nanosecond)), "another owner holds an unexpired lease")

	renewed := t0.Add(time.Minute)
	require.True(t, claimAlert(t, s, "id-1", "A", renewed), "the same owner may claim again")
	require.False(t, claimAlert(t, s, "id-1", "B", t0.Add(leaseTTL)), "the claim again renewed A's lease")
	require.True(t, claimAlert(t, s, "id-1", "B", renewed.Add(leaseTTL)), "a lease that expired is taken over")
	require.False(t, claimAlert(t, s, "id-1", "A", renewed.Add(leaseTTL)), "it is B's now")

	require.NoError(t, s.MarkDelivered(ctxT(t), "id-1", renewed.Add(leaseTTL+time.Second)))
	require.False(t, claimAlert(t, s, "id-1", "B", renewed.Add(leaseTTL+time.Second)), "a delivered alert, even for its holder")
	require.False(t, claimAlert(t, s, "id-1", "C", t0.Add(24*time.Hour)), "a delivered alert, ever")

	_, err = s.ClaimAlert(ctxT(t), "no-such-id", "A", t0, leaseTTL)
	require.ErrorIs(t, err, crawlstate.ErrNotFound)
}

func testClaimAlertMark(t *testing.T, open Opener) {
	s := freshSharerOutbox(t, open)
	u := "https://ex.com/a"
	upsert(t, s, src, t0, disc(u))
	alertAt(t, s, src, u, "id-1", t0)
	alertAt(t, s, src, u, "id-2", t0)

	require.True(t, claimAlert(t, s, "id-1", "A", t0))
	now := t0.Add(time.Minute)
	require.False(t, claimAlert(t, s, "id-1", "B", now), "A holds it")
	require.NoError(t, s.MarkAlertFailed(ctxT(t), "id-1", now, "webhook: 503"))
	require.True(t, claimAlert(t, s, "id-1", "B", now), "MarkAlertFailed ends the lease: another owner claims at once")

	require.True(t, claimAlert(t, s, "id-2", "A", t0))
	require.NoError(t, s.MarkDelivered(ctxT(t), "id-2", now))
	require.False(t, claimAlert(t, s, "id-2", "A", now), "delivered")
	as, err := s.PendingAlerts(ctxT(t), src, 10)
	require.NoError(t, err)
	require.Len(t, as, 1, "the delivered alert left the outbox")
	require.Equal(t, "id-1", as[0].ID, "the failed one stayed")
	require.Equal(t, 1, as[0].Attempts)
}

func testClaimAlertRace(t *testing.T, open Opener) {
	s := freshSharerOutbox(t, open)
	u := "https://ex.com/a"
	upsert(t, s, src, t0, disc(u))
	const (
		alerts = 10
		owners = 8
	)
	for i := range alerts {
		alertAt(t, s, src, u, fmt.Sprintf("id-%d", i), t0)
	}
	wins := make([][]string, alerts)
	errs := make([]error, alerts*owners)
	var (
		mu    sync.Mutex
		wg    sync.WaitGroup
		start = make(chan struct{})
	)
	for i := range alerts {
		for o := range owners {
			wg.Go(func() {
				<-start
				owner := fmt.Sprintf("owner-%d", o)
				ok, err := s.ClaimAlert(context.Background(), fmt.Sprintf("id-%d", i), owner, t0, leaseTTL)
				errs[i*owners+o] = err
				if ok {
					mu.Lock()
					wins[i] = append(wins[i], owner)
					mu.Unlock()
				}
			})
		}
	}
	close(start)
	wg.Wait()
	for _, err := range errs {
		require.NoError(t, err)
	}
	for i, w := range wins {
		require.Len(t, w, 1, "id-%d: exactly one of the racing owners wins, got %s", i, strings.Join(w, ", "))
		for o := range owners {
			owner := fmt.Sprintf("owner-%d", o)
			require.Equal(t, owner == w[0], claimAlert(t, s, fmt.Sprintf("id-%d", i), owner, t0.Add(time.Minute)),
				"id-%d: only the winner may claim again", i)
		}
	}
}
