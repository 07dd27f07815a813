package sqlite_test

import (
	"context"
	"fmt"
	"time"

	"github.com/recrawl/recrawl/crawlstate"
	"github.com/recrawl/recrawl/crawlstate/sqlite"
)

// openExample opens an in-memory state with one page of source "docs",
// listed by a sitemap file.
func openExample(now time.Time) (*sqlite.State, error) {
	st, err := sqlite.Open(context.Background(), ":memory:")
	if err != nil {
		return nil, err
	}
	_, err = st.UpsertDiscovered(context.Background(), "docs", now, []crawlstate.Discovered{
		{URL: "https://example.com/docs/install", Via: "https://example.com/sitemap-docs.xml"},
	})
	if err != nil {
		_ = st.Close()
		return nil, err
	}
	return st, nil
}

// A changed page is recorded with everything the pipeline produced for it:
// statistics, title, links, chunks and the change alert, in one
// transaction. A later 304 keeps them.
func ExampleState_Chunks() {
	now := time.Date(2025, time.March, 1, 9, 0, 0, 0, time.UTC)
	st, err := openExample(now)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer st.Close()
	ctx := context.Background()
	const page = "https://example.com/docs/install"

	err = st.Record(ctx, "docs", []crawlstate.Result{{
		URL: page, At: now, Changed: true, ContentHash: "sha256:aa01", ETag: `"v2"`,
		Interval: 24 * time.Hour, NextCheck: now.Add(24 * time.Hour),
		Title: "Install", Canonical: page,
		Stats: &crawlstate.Stats{LastChanged: now, Recent: []crawlstate.Check{{Elapsed: 24 * time.Hour, Changed: true}}},
		Links: []string{"https://example.com/docs/linux", "https://example.com/docs/macos"},
		Chunks: []crawlstate.Chunk{
			{Ordinal: 1, TextHash: "t2", RecordID: "r2", HeadingPath: "Install > Linux", Text: "apt install tool"},
			{Ordinal: 0, TextHash: "t1", RecordID: "r1", HeadingPath: "Install", Text: "Two ways to install."},
		},
		ReplaceChunks: true,
		Alert:         &crawlstate.Alert{ID: "alert-1", Kind: "changed", CreatedAt: now, Payload: []byte(`{}`)},
	}})
	if err != nil {
		fmt.Println(err)
		return
	}
	// The next visit answers 304: nothing of the above changes.
	err = st.Record(ctx, "docs", []crawlstate.Result{{URL: page, At: now.Add(24 * time.Hour), NotModified: true,
		Interval: 48 * time.Hour, NextCheck: now.Add(72 * time.Hour)}})
	if err != nil {
		fmt.Println(err)
		return
	}

	r, _ := st.Get(ctx, "docs", page)
	links, _ := st.Links(ctx, "docs", page)
	chunks, _ := st.Chunks(ctx, "docs", page)
	fmt.Printf("%s: title %q, %d checks, %d links\n", r.URL, r.Title, len(r.Stats.Recent), len(links))
	for _, c := range chunks {
		fmt.Printf("chunk %d %s (%s)\n", c.Ordinal, c.HeadingPath, c.RecordID)
	}
	pending, _ := st.PendingAlerts(ctx, "docs", 10)
	fmt.Println("pending alerts:", len(pending))
	// Output:
	// https://example.com/docs/install: title "Install", 1 checks, 2 links
	// chunk 0 Install (r1)
	// chunk 1 Install > Linux (r2)
	// pending alerts: 1
}

// Alerts wait in the state until a sink acknowledges them: a failed
// delivery leaves them pending, a delivered one is never sent again, and a
// replayed change does not store it twice.
func ExampleState_PendingAlerts() {
	now := time.Date(2025, time.March, 1, 9, 0, 0, 0, time.UTC)
	st, err := openExample(now)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer st.Close()
	ctx := context.Background()
	changed := crawlstate.Result{URL: "https://example.com/docs/install", At: now, Changed: true, ContentHash: "sha256:bb02",
		Alert: &crawlstate.Alert{ID: "alert-7", Kind: "changed", CreatedAt: now, Payload: []byte(`{"kind":"changed"}`)}}
	if err := st.Record(ctx, "docs", []crawlstate.Result{changed}); err != nil {
		fmt.Println(err)
		return
	}

	deliver := func(a crawlstate.Alert, ok bool) {
		if !ok {
			_ = st.MarkAlertFailed(ctx, a.ID, now.Add(time.Minute), "webhook: 503")
			return
		}
		_ = st.MarkDelivered(ctx, a.ID, now.Add(2*time.Minute))
	}
	for _, ok := range []bool{false, true} {
		pending, _ := st.PendingAlerts(ctx, "docs", 100)
		for _, a := range pending {
			deliver(a, ok)
		}
	}
	_ = st.Record(ctx, "docs", []crawlstate.Result{changed}) // a replay after a crash

	a, _ := st.Alert(ctx, "alert-7")
	pending, _ := st.PendingAlerts(ctx, "docs", 100)
	fmt.Printf("attempts failed %d, last error %q, delivered %s, pending %d\n",
		a.Attempts, a.LastError, a.DeliveredAt.Format(time.Kitchen), len(pending))
	// Output:
	// attempts failed 1, last error "webhook: 503", delivered 9:02AM, pending 0
}

// Vectors of chunk text already embedded are reused: only the texts the
// cache lacks go to the embedder.
func ExampleState_Vectors() {
	st, err := sqlite.Open(context.Background(), ":memory:")
	if err != nil {
		fmt.Println(err)
		return
	}
	defer st.Close()
	ctx := context.Background()
	if err := st.PutVectors(ctx, "hashing-256", map[string][]float32{"t1": {0.6, 0.8}}); err != nil {
		fmt.Println(err)
		return
	}
	cached, err := st.Vectors(ctx, "hashing-256", []string{"t1", "t2"})
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, h := range []string{"t1", "t2"} {
		if v, ok := cached[h]; ok {
			fmt.Println(h, "cached", v)
		} else {
			fmt.Println(h, "to embed")
		}
	}
	// Output:
	// t1 cached [0.6 0.8]
	// t2 to embed
}

// A sitemap file that answers 304 lists what it listed before: its URLs
// are marked seen without parsing it, so they are not counted missing.
func ExampleState_TouchListed() {
	now := time.Date(2025, time.March, 1, 9, 0, 0, 0, time.UTC)
	st, err := openExample(now)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer st.Close()
	ctx := context.Background()
	const sitemap = "https://example.com/sitemap-docs.xml"
	_ = st.PutDocument(ctx, "docs", crawlstate.Document{URL: sitemap, ETag: `"s1"`, Entries: 1, FetchedAt: now})

	// The next run sends the stored ETag and gets 304.
	run := now.Add(24 * time.Hour)
	doc, _ := st.Document(ctx, "docs", sitemap)
	fmt.Println("If-None-Match:", doc.ETag)
	n, _ := st.TouchListed(ctx, "docs", sitemap, run)
	missing, _ := st.MarkMissing(ctx, "docs", run, run, 3)
	fmt.Printf("touched %d, missing %d\n", n, missing)
	// Output:
	// If-None-Match: "s1"
	// touched 1, missing 0
}

// A page that keeps failing is a dead letter; its stage events explain
// each attempt.
func ExampleState_DeadLetters() {
	now := time.Date(2025, time.March, 1, 9, 0, 0, 0, time.UTC)
	st, err := openExample(now)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer st.Close()
	ctx := context.Background()
	const page = "https://example.com/docs/install"
	for i := range 3 {
		at := now.Add(time.Duration(i) * time.Hour)
		_ = st.LogEvents(ctx, "docs", []crawlstate.StageEvent{
			{URL: page, At: at, Stage: "fetch", Attempt: 1, OK: true, Detail: "200"},
			{URL: page, At: at, Stage: "extract", Attempt: 1, Err: "script-only page"},
		})
		_ = st.RecordFailure(ctx, "docs", crawlstate.Failure{URL: page, At: at, Stage: "extract", Err: "script-only page"})
	}

	dead, _ := st.DeadLetters(ctx, "docs", 3)
	for _, r := range dead {
		fmt.Printf("%s: %d failures, last at %s in %s\n", r.URL, r.Failures, r.LastFailure.Format(time.Kitchen), r.LastStage)
	}
	events, _ := st.Events(ctx, "docs", page, now.Add(2*time.Hour))
	for _, e := range events {
		fmt.Printf("%s ok=%v %s%s\n", e.Stage, e.OK, e.Detail, e.Err)
	}
	// Output:
	// https://example.com/docs/install: 3 failures, last at 11:00AM in extract
	// fetch ok=true 200
	// extract ok=false script-only page
}
