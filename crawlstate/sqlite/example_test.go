package sqlite_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/recrawl/recrawl/crawlstate"
	"github.com/recrawl/recrawl/crawlstate/sqlite"
)

// One discovery run against a state file: upsert what the sitemap listed,
// walk the due queue, record a fetch, and see the row leave the queue.
func ExampleOpen() {
	dir, err := os.MkdirTemp("", "crawlstate-example")
	if err != nil {
		fmt.Println(err)
		return
	}
	defer os.RemoveAll(dir)

	st, err := sqlite.Open(context.Background(), filepath.Join(dir, "state.db"))
	if err != nil {
		fmt.Println(err)
		return
	}
	defer st.Close()

	ctx := context.Background()
	now := time.Date(2025, time.March, 1, 9, 0, 0, 0, time.UTC)
	stats, err := st.UpsertDiscovered(ctx, "docs", now, []crawlstate.Discovered{
		{URL: "https://example.com/docs/install", OriginalURL: "https://Example.com/docs/install/"},
		{URL: "https://example.com/docs/api", LastMod: now.Add(-24 * time.Hour)},
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("new %d, seen %d\n", stats.New, stats.Seen)

	due, err := st.Due(ctx, "docs", now, crawlstate.Key{}, 500)
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, r := range due {
		fmt.Println("due:", r.URL)
	}

	err = st.Record(ctx, "docs", []crawlstate.Result{{
		URL: "https://example.com/docs/api", At: now, Changed: true,
		ContentHash: "sha256:1f2e", ETag: `"v1"`,
		Interval: 24 * time.Hour, NextCheck: now.Add(24 * time.Hour),
	}})
	if err != nil {
		fmt.Println(err)
		return
	}
	now2, _ := st.Due(ctx, "docs", now, crawlstate.Key{}, 100)
	n := len(now2)
	next, _, _ := st.NextDue(ctx, "docs")
	r, _ := st.Get(ctx, "docs", "https://example.com/docs/api")
	fmt.Printf("due now: %d; api next check %s, etag %s\n", n, r.NextCheck.Format(time.RFC3339), r.ETag)
	fmt.Println("earliest next check is due now:", next.IsZero())
	// Output:
	// new 2, seen 0
	// due: https://example.com/docs/api
	// due: https://example.com/docs/install
	// due now: 1; api next check 2025-03-02T09:00:00Z, etag "v1"
	// earliest next check is due now: true
}

// A run takes the source's lock first, so two schedulers never crawl the
// same site at once; a crashed holder's lock expires.
func ExampleState_Lock() {
	st, err := sqlite.Open(context.Background(), ":memory:")
	if err != nil {
		fmt.Println(err)
		return
	}
	defer st.Close()
	ctx := context.Background()
	now := time.Date(2025, time.March, 1, 9, 0, 0, 0, time.UTC)

	fmt.Println(st.Lock(ctx, "docs", "run-1", now, 10*time.Minute))
	err = st.Lock(ctx, "docs", "run-2", now.Add(time.Minute), 10*time.Minute)
	fmt.Println(errors.Is(err, crawlstate.ErrRunInProgress))
	fmt.Println(st.Lock(ctx, "docs", "run-2", now.Add(11*time.Minute), 10*time.Minute))
	fmt.Println(errors.Is(st.Refresh(ctx, "docs", "run-1", now.Add(12*time.Minute), 10*time.Minute), crawlstate.ErrLockLost))
	// Output:
	// <nil>
	// true
	// <nil>
	// true
}

// With tombstones kept, a page that answered 404 stays gone even when a
// stale sitemap lists it again.
func ExampleWithKeepTombstones() {
	st, err := sqlite.Open(context.Background(), ":memory:", sqlite.WithKeepTombstones())
	if err != nil {
		fmt.Println(err)
		return
	}
	defer st.Close()
	ctx := context.Background()
	now := time.Date(2025, time.March, 1, 9, 0, 0, 0, time.UTC)
	page := []crawlstate.Discovered{{URL: "https://example.com/old"}}

	_, _ = st.UpsertDiscovered(ctx, "docs", now, page)
	_ = st.Record(ctx, "docs", []crawlstate.Result{{URL: "https://example.com/old", At: now, Gone: true}})
	stats, _ := st.UpsertDiscovered(ctx, "docs", now.Add(time.Hour), page)
	r, _ := st.Get(ctx, "docs", "https://example.com/old")
	fmt.Printf("revived %d, gone %v\n", stats.Revived, r.Gone)
	// Output:
	// revived 0, gone true
}

// The engine records every run's start; the scheduler measures the
// source's cadence from them.
func ExampleState_RecordRun() {
	st, err := sqlite.Open(context.Background(), ":memory:")
	if err != nil {
		fmt.Println(err)
		return
	}
	defer st.Close()
	ctx := context.Background()
	start := time.Date(2025, time.March, 1, 0, 0, 0, 0, time.UTC)
	for i := range 3 {
		if err := st.RecordRun(ctx, "docs", start.Add(time.Duration(i)*6*time.Hour)); err != nil {
			fmt.Println(err)
			return
		}
	}
	runs, err := st.Runs(ctx, "docs", 2)
	fmt.Println(len(runs), runs[0].Format(time.Kitchen), runs[1].Format(time.Kitchen), err)
	// Output: 2 12:00PM 6:00AM <nil>
}
