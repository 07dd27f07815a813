package statetest

import (
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/recrawl/recrawl/crawlstate"
	"github.com/recrawl/recrawl/internal/peakheap"
)

// This file pins that a limit bounds what a call returns, not what it
// allocates: a caller may pass a huge page size and get the few rows
// there are, not an out-of-memory crash.

// hugeLimit is the page size the limit parts pass: room for a billion
// rows, of which a store holds a handful.
const hugeLimit = 1 << 30

// maxHugeLimitHeap bounds the heap a call with hugeLimit may use over a
// handful of rows. A store that sized its result by the limit would ask
// for gigabytes (a slice of 1<<30 pointers is 8 GiB).
const maxHugeLimitHeap = 16 << 20

// requireBoundedHeap runs call, which must succeed, and checks that its
// peak heap stays under maxHugeLimitHeap.
func requireBoundedHeap(t *testing.T, what string, call func() error) {
	t.Helper()
	var err error
	peak := peakheap.Measure(func() { err = call() })
	require.NoError(t, err, "%s with limit %d", what, hugeLimit)
	t.Logf("%s with limit %d: peak heap %d KiB", what, hugeLimit, peak>>10)
	require.Less(t, peak, uint64(maxHugeLimitHeap), "%s with limit %d: peak heap %d bytes", what, hugeLimit, peak)
}

// testHugeLimits passes a limit of 1<<30 to Due and to every method of
// the store's optional abilities that takes one (RunLog.Runs,
// AlertOutbox.PendingAlerts, PlanLister.PlanRows, LiveLister.LiveRows):
// each returns what there is, at a bounded peak heap. The parts of an
// ability the store lacks are left out.
func testHugeLimits(t *testing.T, open Opener) {
	s := fresh(t, open, crawlstate.Options{})
	ctx := ctxT(t)
	const n = 5
	var ds []crawlstate.Discovered
	for i := range n {
		ds = append(ds, crawlstate.Discovered{URL: fmt.Sprintf("https://ex.com/%d", i)})
	}
	upsert(t, s, src, t0, ds)
	_, outbox := s.(crawlstate.AlertOutbox)
	var results []crawlstate.Result
	for i := range 2 {
		r := crawlstate.Result{URL: ds[i].URL, At: t0, Changed: true, ContentHash: "h",
			Interval: time.Hour, NextCheck: t0.Add(time.Hour)}
		if outbox {
			r.Alert = &crawlstate.Alert{ID: fmt.Sprint("alert-", i), Kind: "new", CreatedAt: t0, Payload: []byte(`{}`)}
		}
		results = append(results, r)
	}
	require.NoError(t, s.Record(ctx, src, results))

	var rows []crawlstate.Row
	requireBoundedHeap(t, "Due", func() (err error) {
		rows, err = s.Due(ctx, src, t0, crawlstate.Key{}, hugeLimit)
		return err
	})
	require.Len(t, rows, n-2, "the rows not fetched are due")

	if rl, ok := s.(crawlstate.RunLog); ok {
		require.NoError(t, rl.RecordRun(ctx, src, t0))
		var runs []time.Time
		requireBoundedHeap(t, "Runs", func() (err error) {
			runs, err = rl.Runs(ctx, src, hugeLimit)
			return err
		})
		require.Len(t, runs, 1)
	}
	if outbox {
		var alerts []crawlstate.Alert
		requireBoundedHeap(t, "PendingAlerts", func() (err error) {
			alerts, err = s.(crawlstate.AlertOutbox).PendingAlerts(ctx, src, hugeLimit)
			return err
		})
		require.Len(t, alerts, 2)
	}
	if pl, ok := s.(crawlstate.PlanLister); ok {
		requireBoundedHeap(t, "PlanRows", func() (err error) {
			rows, err = pl.PlanRows(ctx, src, "", hugeLimit)
			return err
		})
		require.Len(t, rows, n)
	}
	if ll, ok := s.(crawlstate.LiveLister); ok {
		requireBoundedHeap(t, "LiveRows", func() (err error) {
			rows, err = ll.LiveRows(ctx, src, "", hugeLimit)
			return err
		})
		require.Len(t, rows, n)
	}
}

// testClaimHugeLimit is testHugeLimits for Sharer.Claim: a claim of up
// to 1<<30 rows leases the few offered ones at a bounded peak heap.
func testClaimHugeLimit(t *testing.T, open Opener) {
	s := freshSharer(t, open)
	const n = 5
	var urls []string
	for i := range n {
		urls = append(urls, fmt.Sprintf("https://ex.com/%d", i))
	}
	upsert(t, s, src, t0, disc(urls...))
	require.Equal(t, n, offer(t, s, src, run1, urls...))
	var rows []crawlstate.Row
	var pending int
	requireBoundedHeap(t, "Claim", func() (err error) {
		rows, pending, _, err = s.Claim(ctxT(t), src, run1, "A", t0, leaseTTL, hugeLimit)
		return err
	})
	require.Len(t, rows, n)
	require.Zero(t, pending)
}
