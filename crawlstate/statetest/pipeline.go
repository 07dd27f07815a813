package statetest

import (
	"context"
	"fmt"
	"math"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/recrawl/recrawl/crawlstate"
)

// This file pins what the pipeline keeps beside the rows: links, chunks,
// alerts, the vector cache, discovery documents and stage events.

func links(t *testing.T, s Full, source, u string) []string {
	t.Helper()
	l, err := s.Links(ctxT(t), source, u)
	require.NoError(t, err)
	return l
}

func chunks(t *testing.T, s Full, source, u string) []crawlstate.Chunk {
	t.Helper()
	c, err := s.Chunks(ctxT(t), source, u)
	require.NoError(t, err)
	return c
}

func getAlert(t *testing.T, s Full, id string) crawlstate.Alert {
	t.Helper()
	a, err := s.Alert(ctxT(t), id)
	require.NoError(t, err)
	return a
}

func pendingIDs(t *testing.T, s Full, source string, limit int) []string {
	t.Helper()
	as, err := s.PendingAlerts(ctxT(t), source, limit)
	require.NoError(t, err)
	ids := make([]string, len(as))
	for i, a := range as {
		require.True(t, a.DeliveredAt.IsZero(), "a pending alert has no DeliveredAt")
		ids[i] = a.ID
	}
	return ids
}

// notModified is a 304 result that changes nothing but what extra adds.
func notModified(u string, at time.Time, extra func(*crawlstate.Result)) crawlstate.Result {
	r := crawlstate.Result{URL: u, At: at, NotModified: true}
	if extra != nil {
		extra(&r)
	}
	return r
}

func record(t *testing.T, s crawlstate.State, source string, rs ...crawlstate.Result) {
	t.Helper()
	require.NoError(t, s.Record(ctxT(t), source, rs))
}

func testRecordLinks(t *testing.T, open Opener) {
	s := freshFull(t, open, crawlstate.Options{})
	a, b := "https://ex.com/a", "https://ex.com/b"
	upsert(t, s, src, t0, disc(a, b))
	require.Nil(t, links(t, s, src, a), "a known row without links")
	_, err := s.Links(ctxT(t), src, "https://ex.com/unknown")
	require.ErrorIs(t, err, crawlstate.ErrNotFound)
	_, err = s.Links(ctxT(t), "other", a)
	require.ErrorIs(t, err, crawlstate.ErrNotFound, "rows are per source")

	first := []string{"https://ex.com/z", "https://ex.com/b", "https://ex.com/z", `https://ex.com/q?a="1",b`, "https://ex.com/ü/日本"}
	record(t, s, src, crawlstate.Result{URL: a, At: t0, Changed: true, ContentHash: "h1", Links: first})
	require.Equal(t, first, links(t, s, src, a), "order and duplicates are kept")
	require.Nil(t, links(t, s, src, b))

	record(t, s, src, notModified(a, t0.Add(time.Hour), nil))
	require.Equal(t, first, links(t, s, src, a), "nil Links keeps the stored ones")

	second := []string{"https://ex.com/c"}
	record(t, s, src, notModified(a, t0.Add(2*time.Hour), func(r *crawlstate.Result) { r.Links = second }))
	require.Equal(t, second, links(t, s, src, a), "non-nil Links replace, on a 304 too")

	record(t, s, src, crawlstate.Result{URL: a, At: t0.Add(3 * time.Hour), ContentHash: "h1", Links: []string{}})
	require.Nil(t, links(t, s, src, a), "empty Links clear them")
}

// sampleChunks are out of ordinal order, and their text hashes do not sort
// like their ordinals.
func sampleChunks() []crawlstate.Chunk {
	return []crawlstate.Chunk{
		{Ordinal: 2, TextHash: "a2", RecordID: "rec-2", HeadingPath: "Install > macOS", Start: 200, End: 260, Text: "brew install x"},
		{Ordinal: 0, TextHash: "c0", RecordID: "rec-0", HeadingPath: "Install", Start: 0, End: 120, Text: "# Install\n\nThree ways — pick one."},
		{Ordinal: 1, TextHash: "b1", RecordID: "rec-1", HeadingPath: "Install > Linux", Start: 120, End: 200, Text: "apt install x\n日本語"},
	}
}

func testRecordChunks(t *testing.T, open Opener) {
	s := freshFull(t, open, crawlstate.Options{})
	a, b := "https://ex.com/a", "https://ex.com/b"
	upsert(t, s, src, t0, disc(a, b))
	require.Nil(t, chunks(t, s, src, a), "a known row without chunks")
	_, err := s.Chunks(ctxT(t), src, "https://ex.com/unknown")
	require.ErrorIs(t, err, crawlstate.ErrNotFound)

	cs := sampleChunks()
	record(t, s, src, crawlstate.Result{URL: a, At: t0, Changed: true, ContentHash: "h1", Chunks: cs, ReplaceChunks: true})
	cs[1].Text = "changed by the caller afterwards"
	want := sampleChunks()
	want[0], want[1], want[2] = want[1], want[2], want[0]
	require.Equal(t, want, chunks(t, s, src, a), "in ordinal order, every field kept")
	require.Nil(t, chunks(t, s, src, b))

	record(t, s, src, notModified(a, t0.Add(time.Hour), func(r *crawlstate.Result) { r.Chunks = cs[:1] }))
	require.Equal(t, want, chunks(t, s, src, a), "without ReplaceChunks the list is kept")

	next := []crawlstate.Chunk{{Ordinal: 1, TextHash: "d1", RecordID: "rec-d1", Text: "b"}, {Ordinal: 0, TextHash: "e0", RecordID: "rec-e0", Text: "a"}}
	record(t, s, src, crawlstate.Result{URL: a, At: t0.Add(2 * time.Hour), Changed: true, ContentHash: "h2", Chunks: next, ReplaceChunks: true})
	require.Equal(t, []crawlstate.Chunk{next[1], next[0]}, chunks(t, s, src, a), "replaced as a whole: no chunk of the old list is left")

	record(t, s, src, crawlstate.Result{URL: a, At: t0.Add(3 * time.Hour), ContentHash: "h2", ReplaceChunks: true})
	require.Nil(t, chunks(t, s, src, a), "ReplaceChunks with no chunks empties the list")

	record(t, s, src, crawlstate.Result{URL: a, At: t0.Add(4 * time.Hour), ContentHash: "h3", Chunks: sampleChunks(), ReplaceChunks: true})
	record(t, s, src, crawlstate.Result{URL: a, At: t0.Add(5 * time.Hour), Gone: true})
	require.Nil(t, chunks(t, s, src, a), "a gone result deletes the chunk list")

	record(t, s, src, crawlstate.Result{URL: b, At: t0, ContentHash: "hb", Chunks: sampleChunks(), ReplaceChunks: true})
	record(t, s, src, crawlstate.Result{URL: b, At: t0.Add(time.Hour), Gone: true, Chunks: sampleChunks(), ReplaceChunks: true})
	require.Nil(t, chunks(t, s, src, b), "a gone result stores no chunks, whatever it carries")
}

func testRecordChunksDuplicate(t *testing.T, open Opener) {
	s := freshFull(t, open, crawlstate.Options{})
	a, b := "https://ex.com/a", "https://ex.com/b"
	upsert(t, s, src, t0, disc(a, b))
	dup := []crawlstate.Chunk{{Ordinal: 0, TextHash: "x"}, {Ordinal: 1, TextHash: "y"}, {Ordinal: 0, TextHash: "z"}}
	err := s.Record(ctxT(t), src, []crawlstate.Result{
		{URL: a, At: t0, Changed: true, ContentHash: "h", Chunks: sampleChunks(), ReplaceChunks: true},
		{URL: b, At: t0, Changed: true, ContentHash: "h", Chunks: dup, ReplaceChunks: true},
	})
	require.Error(t, err, "two chunks with one ordinal")
	require.Nil(t, chunks(t, s, src, a), "nothing of the batch is stored")
	require.Nil(t, chunks(t, s, src, b))
	require.Zero(t, get(t, s, src, a).Visits)
}

func testRecordAlert(t *testing.T, open Opener) {
	s := freshFull(t, open, crawlstate.Options{})
	u := "https://ex.com/a"
	upsert(t, s, src, t0, disc(u))
	created := t0.Add(time.Minute + 1)
	payload := []byte(`{"kind":"changed","url":"https://ex.com/a"}`)
	alert := &crawlstate.Alert{ID: "id-1", URL: "https://ex.com/canonical", Kind: "changed", CreatedAt: created, Payload: payload}
	record(t, s, src, crawlstate.Result{URL: u, At: t0, Changed: true, ContentHash: "h1", Alert: alert})

	a := getAlert(t, s, "id-1")
	require.Equal(t, "id-1", a.ID)
	require.Equal(t, src, a.Source, "an alert without Source belongs to the recorded source")
	require.Equal(t, "https://ex.com/canonical", a.URL)
	require.Equal(t, "changed", a.Kind)
	requireTime(t, created, a.CreatedAt, "CreatedAt")
	require.Equal(t, payload, a.Payload)
	require.True(t, a.DeliveredAt.IsZero(), "stored pending")
	require.Zero(t, a.Attempts)
	require.Empty(t, a.LastError)
	require.Equal(t, []string{"id-1"}, pendingIDs(t, s, src, 10))

	// A replay (the same change recorded again) stores nothing new.
	replay := *alert
	replay.Payload = []byte(`{"replayed":true}`)
	replay.CreatedAt = created.Add(time.Hour)
	record(t, s, src, crawlstate.Result{URL: u, At: t0.Add(time.Hour), Changed: true, ContentHash: "h1", Alert: &replay})
	require.Equal(t, []string{"id-1"}, pendingIDs(t, s, src, 10), "no duplicate")
	a = getAlert(t, s, "id-1")
	require.Equal(t, payload, a.Payload, "the stored alert is left as it is")
	requireTime(t, created, a.CreatedAt, "CreatedAt")

	// A delivered alert stays delivered when replayed.
	delivered := t0.Add(2 * time.Hour)
	require.NoError(t, s.MarkDelivered(ctxT(t), "id-1", delivered))
	record(t, s, src, crawlstate.Result{URL: u, At: t0.Add(3 * time.Hour), Changed: true, ContentHash: "h1", Alert: &replay})
	requireTime(t, delivered, getAlert(t, s, "id-1").DeliveredAt, "DeliveredAt")
	require.Empty(t, pendingIDs(t, s, src, 10))

	// The URL defaults to the result's; Source may be given.
	record(t, s, src, notModified(u, t0.Add(4*time.Hour), func(r *crawlstate.Result) {
		r.Alert = &crawlstate.Alert{ID: "id-2", Source: src, Kind: "removed", CreatedAt: t0}
	}))
	a = getAlert(t, s, "id-2")
	require.Equal(t, u, a.URL, "an alert without URL is about the result's page")
	require.Equal(t, src, a.Source)
	require.Empty(t, a.Payload)

	_, err := s.Alert(ctxT(t), "no-such-id")
	require.ErrorIs(t, err, crawlstate.ErrNotFound)
}

func testRecordAlertBad(t *testing.T, open Opener) {
	s := freshFull(t, open, crawlstate.Options{})
	a, b := "https://ex.com/a", "https://ex.com/b"
	upsert(t, s, src, t0, disc(a, b))
	for _, tc := range []struct {
		name  string
		alert crawlstate.Alert
	}{
		{"empty ID", crawlstate.Alert{Kind: "changed", CreatedAt: t0}},
		{"another source", crawlstate.Alert{ID: "x", Source: "blog", Kind: "changed", CreatedAt: t0}},
	} {
		err := s.Record(ctxT(t), src, []crawlstate.Result{
			{URL: a, At: t0, Changed: true, ContentHash: "h", Alert: &crawlstate.Alert{ID: "good", Kind: "new"}},
			{URL: b, At: t0, Changed: true, ContentHash: "h", Alert: &tc.alert},
		})
		require.Error(t, err, tc.name)
		require.Empty(t, pendingIDs(t, s, src, 10), "%s: nothing of the batch is stored", tc.name)
		require.Empty(t, pendingIDs(t, s, "blog", 10), tc.name)
		require.Zero(t, get(t, s, src, a).Visits, tc.name)
	}
}

func testRecordAtomicExtras(t *testing.T, open Opener) {
	s := freshFull(t, open, crawlstate.Options{})
	a := "https://ex.com/a"
	upsert(t, s, src, t0, disc(a))
	oldLinks := []string{"https://ex.com/old"}
	record(t, s, src, crawlstate.Result{URL: a, At: t0, Changed: true, ContentHash: "h1", Links: oldLinks,
		Chunks: sampleChunks(), ReplaceChunks: true})
	before := get(t, s, src, a)

	st := sampleStats()
	err := s.Record(ctxT(t), src, []crawlstate.Result{
		{URL: a, At: t0.Add(time.Hour), Changed: true, ContentHash: "h2", Title: "new", Stats: &st,
			Links: []string{"https://ex.com/new"}, Chunks: sampleChunks()[:1], ReplaceChunks: true,
			Alert: &crawlstate.Alert{ID: "id-1", Kind: "changed", CreatedAt: t0}},
		{URL: "https://ex.com/unknown", At: t0.Add(time.Hour)},
	})
	require.ErrorIs(t, err, crawlstate.ErrNotFound)
	require.Equal(t, normalize(before), normalize(get(t, s, src, a)), "the row is as it was")
	require.Equal(t, oldLinks, links(t, s, src, a), "the links are as they were")
	require.Len(t, chunks(t, s, src, a), 3, "the chunk list is as it was")
	_, err = s.Alert(ctxT(t), "id-1")
	require.ErrorIs(t, err, crawlstate.ErrNotFound, "no alert of a failed batch")
	require.Empty(t, pendingIDs(t, s, src, 10))

	// The same for a gone result, which would delete the chunk list.
	err = s.Record(ctxT(t), src, []crawlstate.Result{
		{URL: a, At: t0.Add(time.Hour), Gone: true},
		{URL: "https://ex.com/unknown", At: t0.Add(time.Hour)},
	})
	require.ErrorIs(t, err, crawlstate.ErrNotFound)
	require.Len(t, chunks(t, s, src, a), 3)
	require.False(t, get(t, s, src, a).Gone)
}

// alertAt records a pending alert for u at created through a 304 result.
func alertAt(t *testing.T, s crawlstate.State, source, u, id string, created time.Time) {
	t.Helper()
	record(t, s, source, notModified(u, created, func(r *crawlstate.Result) {
		r.Alert = &crawlstate.Alert{ID: id, Kind: "changed", CreatedAt: created, Payload: []byte(id)}
	}))
}

func testPendingAlerts(t *testing.T, open Opener) {
	s := freshFull(t, open, crawlstate.Options{})
	u := "https://ex.com/a"
	upsert(t, s, src, t0, disc(u))
	upsert(t, s, "other", t0, disc(u))
	t1, t2 := t0.Add(time.Hour), t0.Add(2*time.Hour)
	alertAt(t, s, src, u, "z-late", t2)
	alertAt(t, s, src, u, "b-same", t1)
	alertAt(t, s, src, u, "a-same", t1)
	alertAt(t, s, src, u, "c-early", t0)
	alertAt(t, s, src, u, "zero-time", time.Time{})
	alertAt(t, s, "other", u, "o-1", t0)

	require.Equal(t, []string{"zero-time", "c-early", "a-same", "b-same", "z-late"}, pendingIDs(t, s, src, 10),
		"oldest first by CreatedAt, then by ID")
	require.Equal(t, []string{"zero-time", "c-early"}, pendingIDs(t, s, src, 2), "up to limit")
	require.Equal(t, []string{"o-1"}, pendingIDs(t, s, "other", 10), "per source")
	require.Empty(t, pendingIDs(t, s, "none", 10))

	require.NoError(t, s.MarkDelivered(ctxT(t), "c-early", t2))
	require.NoError(t, s.MarkAlertFailed(ctxT(t), "a-same", t2, "503"))
	require.Equal(t, []string{"zero-time", "a-same", "b-same", "z-late"}, pendingIDs(t, s, src, 10),
		"delivered alerts leave; failed ones stay")

	as, err := s.PendingAlerts(ctxT(t), src, 1)
	require.NoError(t, err)
	require.Len(t, as, 1)
	require.Equal(t, []byte("zero-time"), as[0].Payload, "whole alerts")
	require.Equal(t, u, as[0].URL)

	for _, limit := range []int{0, -1} {
		_, err := s.PendingAlerts(ctxT(t), src, limit)
		require.Error(t, err, "limit %d", limit)
	}
}

func testMarkDelivered(t *testing.T, open Opener) {
	s := freshFull(t, open, crawlstate.Options{})
	u := "https://ex.com/a"
	upsert(t, s, src, t0, disc(u))
	alertAt(t, s, src, u, "id-1", t0)
	t1 := t0.Add(time.Hour + 1)
	require.NoError(t, s.MarkDelivered(ctxT(t), "id-1", t1))
	requireTime(t, t1, getAlert(t, s, "id-1").DeliveredAt, "DeliveredAt")
	require.NoError(t, s.MarkDelivered(ctxT(t), "id-1", t1.Add(time.Hour)), "idempotent")
	requireTime(t, t1, getAlert(t, s, "id-1").DeliveredAt, "the first delivery time is kept")

	require.ErrorIs(t, s.MarkDelivered(ctxT(t), "no-such-id", t1), crawlstate.ErrNotFound)

	alertAt(t, s, src, u, "id-2", t0)
	require.Error(t, s.MarkDelivered(ctxT(t), "id-2", time.Time{}), "a zero time would read as pending")
	require.Equal(t, []string{"id-2"}, pendingIDs(t, s, src, 10))
}

func testMarkAlertFailed(t *testing.T, open Opener) {
	s := freshFull(t, open, crawlstate.Options{})
	u := "https://ex.com/a"
	upsert(t, s, src, t0, disc(u))
	alertAt(t, s, src, u, "id-1", t0)

	require.NoError(t, s.MarkAlertFailed(ctxT(t), "id-1", t0.Add(time.Minute), "webhook: 503"))
	a := getAlert(t, s, "id-1")
	require.Equal(t, 1, a.Attempts)
	require.Equal(t, "webhook: 503", a.LastError)
	require.True(t, a.DeliveredAt.IsZero())
	require.NoError(t, s.MarkAlertFailed(ctxT(t), "id-1", t0.Add(2*time.Minute), "webhook: timeout"))
	a = getAlert(t, s, "id-1")
	require.Equal(t, 2, a.Attempts)
	require.Equal(t, "webhook: timeout", a.LastError)
	require.Equal(t, []string{"id-1"}, pendingIDs(t, s, src, 10), "a failed alert stays pending")

	delivered := t0.Add(time.Hour)
	require.NoError(t, s.MarkDelivered(ctxT(t), "id-1", delivered))
	require.NoError(t, s.MarkAlertFailed(ctxT(t), "id-1", delivered.Add(time.Minute), "late failure"))
	a = getAlert(t, s, "id-1")
	require.Equal(t, 2, a.Attempts, "a delivered alert is left alone")
	require.Equal(t, "webhook: timeout", a.LastError)
	requireTime(t, delivered, a.DeliveredAt, "still delivered")

	require.ErrorIs(t, s.MarkAlertFailed(ctxT(t), "no-such-id", t0, "x"), crawlstate.ErrNotFound)
}

func testVectors(t *testing.T, open Opener) {
	s := freshFull(t, open, crawlstate.Options{})
	v1 := []float32{0.25, -1.5, math.MaxFloat32, math.SmallestNonzeroFloat32, float32(math.Inf(-1))}
	v2 := []float32{1, 2, 3}
	in := map[string][]float32{"h1": v1, "h2": v2}
	require.NoError(t, s.PutVectors(ctxT(t), "m1", in))
	v1[0] = 99 // the caller's slice is not the stored one
	got, err := s.Vectors(ctxT(t), "m1", []string{"h1", "missing", "h2", "h1"})
	require.NoError(t, err)
	require.Equal(t, map[string][]float32{
		"h1": {0.25, -1.5, math.MaxFloat32, math.SmallestNonzeroFloat32, float32(math.Inf(-1))},
		"h2": {1, 2, 3},
	}, got, "exact float32 values; missing hashes are absent; duplicates are harmless")

	got["h2"][0] = 42 // nor is the returned one
	again, err := s.Vectors(ctxT(t), "m1", []string{"h2"})
	require.NoError(t, err)
	require.Equal(t, []float32{1, 2, 3}, again["h2"])

	got, err = s.Vectors(ctxT(t), "m2", []string{"h1", "h2"})
	require.NoError(t, err)
	require.Empty(t, got, "vectors are per model")

	require.NoError(t, s.PutVectors(ctxT(t), "m2", map[string][]float32{"h1": {7, 8}}))
	require.NoError(t, s.PutVectors(ctxT(t), "m1", map[string][]float32{"h2": {4, 5, 6, 7}}))
	got, err = s.Vectors(ctxT(t), "m1", []string{"h1", "h2"})
	require.NoError(t, err)
	require.Equal(t, []float32{4, 5, 6, 7}, got["h2"], "a put replaces the vector of a hash")
	require.Equal(t, float32(0.25), got["h1"][0], "another model's put leaves m1 alone")

	got, err = s.Vectors(ctxT(t), "m1", nil)
	require.NoError(t, err)
	require.Empty(t, got)
	require.NoError(t, s.PutVectors(ctxT(t), "m1", nil), "nothing to store")
	_, err = s.Vectors(ctxT(t), "", []string{"h1"})
	require.Error(t, err, "an empty model is an error")
}

// Many hashes at once: a large batch of pages asks for thousands.
func testVectorsMany(t *testing.T, open Opener) {
	s := freshFull(t, open, crawlstate.Options{})
	const n = 2000
	hashes := make([]string, n)
	put := map[string][]float32{}
	for i := range hashes {
		hashes[i] = fmt.Sprintf("%064x", i*7919)
		if i%2 == 0 {
			put[hashes[i]] = []float32{float32(i), -float32(i), float32(i) / 7}
		}
	}
	require.NoError(t, s.PutVectors(ctxT(t), "m", put))
	got, err := s.Vectors(ctxT(t), "m", hashes)
	require.NoError(t, err)
	require.Equal(t, put, got)
}

func testPutVectorsBad(t *testing.T, open Opener) {
	s := freshFull(t, open, crawlstate.Options{})
	for _, tc := range []struct {
		name  string
		model string
		in    map[string][]float32
	}{
		{"empty model", "", map[string][]float32{"h": {1}}},
		{"empty hash", "m", map[string][]float32{"good": {1}, "": {1}}},
		{"nil vector", "m", map[string][]float32{"good": {1}, "h": nil}},
		{"empty vector", "m", map[string][]float32{"good": {1}, "h": {}}},
	} {
		require.Error(t, s.PutVectors(ctxT(t), tc.model, tc.in), tc.name)
		got, err := s.Vectors(ctxT(t), "m", []string{"good", "h"})
		require.NoError(t, err)
		require.Empty(t, got, "%s: nothing is stored", tc.name)
	}
}

func testDocuments(t *testing.T, open Opener) {
	s := freshFull(t, open, crawlstate.Options{})
	const sm = "https://ex.com/sitemap.xml"
	_, err := s.Document(ctxT(t), src, sm)
	require.ErrorIs(t, err, crawlstate.ErrNotFound)

	doc := crawlstate.Document{URL: sm, ETag: `W/"abc"`, LastModified: "Sat, 01 Mar 2025 10:00:00 GMT",
		Entries: 1234, NewestLastMod: t0.Add(-time.Hour + 5), ListedLastMod: t0.Add(-2*time.Hour + 3), FetchedAt: t0.Add(9)}
	require.NoError(t, s.PutDocument(ctxT(t), src, doc))
	got, err := s.Document(ctxT(t), src, sm)
	require.NoError(t, err)
	require.Equal(t, doc.URL, got.URL)
	require.Equal(t, doc.ETag, got.ETag)
	require.Equal(t, doc.LastModified, got.LastModified)
	require.Equal(t, doc.Entries, got.Entries)
	requireTime(t, doc.NewestLastMod, got.NewestLastMod, "NewestLastMod")
	requireTime(t, doc.ListedLastMod, got.ListedLastMod, "ListedLastMod")
	requireTime(t, doc.FetchedAt, got.FetchedAt, "FetchedAt")

	// Put replaces every field, empty and zero values included.
	require.NoError(t, s.PutDocument(ctxT(t), src, crawlstate.Document{URL: sm, Entries: 7, FetchedAt: t0.Add(time.Hour)}))
	got, err = s.Document(ctxT(t), src, sm)
	require.NoError(t, err)
	require.Empty(t, got.ETag)
	require.Empty(t, got.LastModified)
	require.Equal(t, 7, got.Entries)
	require.True(t, got.NewestLastMod.IsZero())
	require.True(t, got.ListedLastMod.IsZero())
	requireTime(t, t0.Add(time.Hour), got.FetchedAt, "FetchedAt")

	_, err = s.Document(ctxT(t), "other", sm)
	require.ErrorIs(t, err, crawlstate.ErrNotFound, "documents are per source")
	require.Error(t, s.PutDocument(ctxT(t), src, crawlstate.Document{ETag: "x"}), "a document needs a URL")
}

func testStageEvents(t *testing.T, open Opener) {
	s := freshFull(t, open, crawlstate.Options{})
	a, b := "https://ex.com/a", "https://ex.com/b"
	t1, t2 := t0.Add(time.Minute+1), t0.Add(2*time.Minute)
	require.NoError(t, s.LogEvents(ctxT(t), src, []crawlstate.StageEvent{
		{URL: a, At: t1, Stage: "fetch", Attempt: 1, Err: "503 Service Unavailable", Detail: "503"},
		{URL: a, At: t1, Stage: "fetch", Attempt: 2, OK: true, Detail: "200"},
		{URL: b, At: t1, Stage: "fetch", Attempt: 1, OK: true},
		{URL: a, At: t2, Stage: "index", Attempt: 1, OK: true, Detail: "rec-1,rec-2"},
	}))
	require.NoError(t, s.LogEvents(ctxT(t), src, []crawlstate.StageEvent{
		{URL: a, At: t0, Stage: "alert", Attempt: 1, OK: true}, // earlier, logged later
		{URL: a, At: t1, Stage: "extract", Attempt: 1, OK: true},
	}))
	require.NoError(t, s.LogEvents(ctxT(t), "other", []crawlstate.StageEvent{{URL: a, At: t1, Stage: "fetch", Attempt: 1}}))
	require.NoError(t, s.LogEvents(ctxT(t), src, nil))

	evs, err := s.Events(ctxT(t), src, a, time.Time{})
	require.NoError(t, err)
	var got []string
	for _, e := range evs {
		require.Equal(t, a, e.URL)
		got = append(got, fmt.Sprintf("%s#%d", e.Stage, e.Attempt))
	}
	require.Equal(t, []string{"alert#1", "fetch#1", "fetch#2", "extract#1", "index#1"}, got,
		"oldest first; equal times in the order they were logged")
	first := evs[1]
	requireTime(t, t1, first.At, "At")
	require.False(t, first.OK)
	require.Equal(t, "503 Service Unavailable", first.Err)
	require.Equal(t, "503", first.Detail)
	require.True(t, evs[4].OK)
	require.Equal(t, "rec-1,rec-2", evs[4].Detail)

	evs, err = s.Events(ctxT(t), src, a, t1)
	require.NoError(t, err)
	require.Len(t, evs, 4, "at or after since")
	evs, err = s.Events(ctxT(t), src, a, t2.Add(1))
	require.NoError(t, err)
	require.Empty(t, evs)
	evs, err = s.Events(ctxT(t), "other", a, time.Time{})
	require.NoError(t, err)
	require.Len(t, evs, 1, "events are per source")
	evs, err = s.Events(ctxT(t), src, "https://ex.com/none", time.Time{})
	require.NoError(t, err)
	require.Empty(t, evs)
}

func testRecordEvents(t *testing.T, open Opener) {
	s := freshFull(t, open, crawlstate.Options{})
	a, b := "https://ex.com/a", "https://ex.com/b"
	upsert(t, s, src, t0, disc(a, b))
	t1 := t0.Add(time.Minute)
	record(t, s, src,
		crawlstate.Result{URL: a, At: t1, Changed: true, ContentHash: "h1", Events: []crawlstate.StageEvent{
			{At: t1, Stage: "fetch", Attempt: 1, OK: true, Detail: "HTTP 200"},
			{URL: a, At: t1, Stage: "commit", Attempt: 1, OK: true},
		}},
		notModified(b, t1, func(r *crawlstate.Result) {
			r.Events = []crawlstate.StageEvent{{At: t1, Stage: "fetch", Attempt: 1, OK: true, Detail: "HTTP 304"}}
		}))
	evs, err := s.Events(ctxT(t), src, a, time.Time{})
	require.NoError(t, err)
	require.Len(t, evs, 2)
	require.Equal(t, a, evs[0].URL, "an event without URL takes the result's")
	require.Equal(t, "HTTP 200", evs[0].Detail)
	require.Equal(t, "commit", evs[1].Stage)
	evs, err = s.Events(ctxT(t), src, b, time.Time{})
	require.NoError(t, err)
	require.Len(t, evs, 1)

	// A failed batch stores none of its events; a bad event fails it.
	err = s.Record(ctxT(t), src, []crawlstate.Result{
		{URL: a, At: t1.Add(time.Hour), Events: []crawlstate.StageEvent{{At: t1, Stage: "fetch"}}},
		{URL: "https://ex.com/unknown", At: t1},
	})
	require.ErrorIs(t, err, crawlstate.ErrNotFound)
	err = s.Record(ctxT(t), src, []crawlstate.Result{{URL: a, At: t1.Add(time.Hour), Events: []crawlstate.StageEvent{{At: t1}}}})
	require.Error(t, err, "an event without stage")
	evs, err = s.Events(ctxT(t), src, a, time.Time{})
	require.NoError(t, err)
	require.Len(t, evs, 2, "nothing of the failed batches")
	requireTime(t, t1, get(t, s, src, a).LastFetched, "the row is as the first batch left it")
}

func testLogEventsBad(t *testing.T, open Opener) {
	s := freshFull(t, open, crawlstate.Options{})
	a := "https://ex.com/a"
	good := crawlstate.StageEvent{URL: a, At: t0, Stage: "fetch", Attempt: 1, OK: true}
	require.Error(t, s.LogEvents(ctxT(t), src, []crawlstate.StageEvent{good, {At: t0, Stage: "fetch"}}), "an event without URL")
	require.Error(t, s.LogEvents(ctxT(t), src, []crawlstate.StageEvent{good, {URL: a, At: t0}}), "an event without stage")
	require.Error(t, s.LogEvents(ctxT(t), "", []crawlstate.StageEvent{good}), "an empty source")
	evs, err := s.Events(ctxT(t), src, a, time.Time{})
	require.NoError(t, err)
	require.Empty(t, evs, "nothing of a rejected batch is stored")
}

func testCanceledContextExtras(t *testing.T, open Opener) {
	s := freshFull(t, open, crawlstate.Options{})
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	u := "https://ex.com/a"
	ds := disc(u)
	ds[0].Via = "https://ex.com/sitemap.xml"
	upsert(t, s, src, t0, ds)

	err := s.Record(ctx, src, []crawlstate.Result{{URL: u, At: t0, Changed: true, ContentHash: "h",
		Links: []string{"https://ex.com/b"}, Chunks: sampleChunks(), ReplaceChunks: true,
		Alert: &crawlstate.Alert{ID: "id-1", Kind: "new"}}})
	require.ErrorIs(t, err, context.Canceled)
	require.Nil(t, links(t, s, src, u))
	require.Nil(t, chunks(t, s, src, u))
	require.Empty(t, pendingIDs(t, s, src, 10))

	require.ErrorIs(t, s.PutVectors(ctx, "m", map[string][]float32{"h": {1}}), context.Canceled)
	got, err := s.Vectors(ctxT(t), "m", []string{"h"})
	require.NoError(t, err)
	require.Empty(t, got)
	_, err = s.Vectors(ctx, "m", []string{"h"})
	require.ErrorIs(t, err, context.Canceled)

	require.ErrorIs(t, s.LogEvents(ctx, src, []crawlstate.StageEvent{{URL: u, At: t0, Stage: "fetch"}}), context.Canceled)
	evs, err := s.Events(ctxT(t), src, u, time.Time{})
	require.NoError(t, err)
	require.Empty(t, evs)

	_, err = s.TouchListed(ctx, src, "https://ex.com/sitemap.xml", t0.Add(time.Hour))
	require.ErrorIs(t, err, context.Canceled)
	requireTime(t, t0, get(t, s, src, u).LastSeen, "a canceled TouchListed touches nothing")

	require.ErrorIs(t, s.PutDocument(ctx, src, crawlstate.Document{URL: "https://ex.com/sitemap.xml"}), context.Canceled)
	_, err = s.Document(ctxT(t), src, "https://ex.com/sitemap.xml")
	require.ErrorIs(t, err, crawlstate.ErrNotFound)

	alertAt(t, s, src, u, "id-2", t0)
	require.ErrorIs(t, s.MarkDelivered(ctx, "id-2", t0), context.Canceled)
	require.ErrorIs(t, s.MarkAlertFailed(ctx, "id-2", t0, "x"), context.Canceled)
	a := getAlert(t, s, "id-2")
	require.True(t, a.DeliveredAt.IsZero())
	require.Zero(t, a.Attempts)
}

// testAlertsSince pins crawlstate.AlertHistory: a source's alerts,
// delivered or not, after a position in (CreatedAt, ID) order.
func testAlertsSince(t *testing.T, open Opener) {
	s := freshFull(t, open, crawlstate.Options{})
	h, ok := s.(crawlstate.AlertHistory)
	if !ok {
		t.Skipf("statetest: %T lacks the optional ability crawlstate.AlertHistory, which this part of the contract needs", s)
	}
	a, b := "https://ex.com/a", "https://ex.com/b"
	upsert(t, s, src, t0, disc(a, b))
	upsert(t, s, "blog", t0, disc(a))
	at := func(m int) time.Time { return t0.Add(time.Duration(m) * time.Minute) }
	for i, al := range []crawlstate.Alert{
		{ID: "c", Kind: "changed", CreatedAt: at(2)},
		{ID: "a", Kind: "new", CreatedAt: at(1)},
		{ID: "b", Kind: "changed", CreatedAt: at(2)},
		{ID: "d", Kind: "removed", CreatedAt: at(3)},
	} {
		u := []string{a, b}[i%2]
		record(t, s, src, crawlstate.Result{URL: u, At: al.CreatedAt, Changed: true, ContentHash: "h" + al.ID, Alert: &al})
	}
	record(t, s, "blog", crawlstate.Result{URL: a, At: at(2), Changed: true, ContentHash: "x", Alert: &crawlstate.Alert{ID: "other", Kind: "new", CreatedAt: at(2)}})
	require.NoError(t, s.MarkDelivered(ctxT(t), "b", at(5)), "delivered alerts are listed too")
	ids := func(since time.Time, after string, limit int) []string {
		t.Helper()
		as, err := h.AlertsSince(ctxT(t), src, since, after, limit)
		require.NoError(t, err)
		out := []string{}
		for _, x := range as {
			require.Equal(t, src, x.Source)
			out = append(out, x.ID)
		}
		return out
	}
	require.Equal(t, []string{"a", "b", "c", "d"}, ids(time.Time{}, "", 10))
	require.Equal(t, []string{"b", "c", "d"}, ids(at(2), "", 10), "since is inclusive")
	require.Equal(t, []string{"c", "d"}, ids(at(2), "b", 10), "after the last alert of a page")
	require.Equal(t, []string{"b", "c"}, ids(at(2), "", 2))
	require.Equal(t, []string{}, ids(at(4), "", 10))
	got, err := h.AlertsSince(ctxT(t), src, at(3), "", 1)
	require.NoError(t, err)
	require.Equal(t, "removed", got[0].Kind)
	requireTime(t, at(3), got[0].CreatedAt, "CreatedAt")
	_, err = h.AlertsSince(ctxT(t), src, t0, "", 0)
	require.Error(t, err, "limit 0")
	_, err = h.AlertsSince(ctxT(t), "", t0, "", 1)
	require.Error(t, err, "empty source")
}
