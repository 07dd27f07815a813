package memory_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/recrawl/recrawl/crawlstate"
	"github.com/recrawl/recrawl/crawlstate/memory"
	"github.com/recrawl/recrawl/crawlstate/statetest"
)

func open(t *testing.T, opts crawlstate.Options) crawlstate.State { return memory.New(opts) }

func TestConformance(t *testing.T) { statetest.Run(t, open) }

func TestConformanceSharer(t *testing.T) { statetest.RunSharer(t, open) }

var t0 = time.Date(2025, time.March, 1, 12, 0, 0, 123456789, time.UTC)

const src = "docs"

// filled returns a State with the rows of urls in src, each fetched once
// with links, chunks and statistics.
func filled(t *testing.T, urls ...string) *memory.State {
	t.Helper()
	s := memory.New(crawlstate.Options{})
	t.Cleanup(func() { _ = s.Close() })
	ctx := t.Context()
	ds := make([]crawlstate.Discovered, len(urls))
	for i, u := range urls {
		ds[i] = crawlstate.Discovered{URL: u}
	}
	_, err := s.UpsertDiscovered(ctx, src, t0, ds)
	require.NoError(t, err)
	for _, u := range urls {
		st := crawlstate.Stats{ChangeRate: 0.5, Recent: []crawlstate.Check{{Elapsed: time.Hour, Changed: true}, {Elapsed: 2 * time.Hour}}}
		require.NoError(t, s.Record(ctx, src, []crawlstate.Result{{
			URL: u, At: t0, Changed: true, ContentHash: "h", Stats: &st,
			Links:  []string{"https://ex.com/l1", "https://ex.com/l2"},
			Chunks: []crawlstate.Chunk{{Ordinal: 0, TextHash: "t0", Text: "zero"}, {Ordinal: 1, TextHash: "t1", Text: "one"}}, ReplaceChunks: true,
			Alert: &crawlstate.Alert{ID: "alert-" + u, Kind: "new", CreatedAt: t0, Payload: []byte(`{"a":1}`)},
		}}))
	}
	return s
}

// TestReturnedValuesAreCopies: what a call returns shares no storage with
// the State, so a caller that changes it changes nothing stored.
func TestReturnedValuesAreCopies(t *testing.T) {
	const u = "https://ex.com/a"
	ctx := context.Background()
	tests := []struct {
		name   string
		mutate func(t *testing.T, s *memory.State) // changes what a call returned
	}{
		{"Get Stats.Recent", func(t *testing.T, s *memory.State) {
			r, err := s.Get(ctx, src, u)
			require.NoError(t, err)
			r.Stats.Recent[0].Changed = false
			r.Stats.Recent = append(r.Stats.Recent[:1], crawlstate.Check{Elapsed: time.Minute})
		}},
		{"Due Stats.Recent", func(t *testing.T, s *memory.State) {
			rows, err := s.Due(ctx, src, t0.Add(1000*time.Hour), crawlstate.Key{}, 10)
			require.NoError(t, err)
			require.Len(t, rows, 1)
			rows[0].Stats.Recent[0].Elapsed = 0
		}},
		{"LiveRows Stats.Recent", func(t *testing.T, s *memory.State) {
			rows, err := s.LiveRows(ctx, src, "", 10)
			require.NoError(t, err)
			rows[0].Stats.Recent[1].Changed = true
		}},
		{"PlanRows Stats.Recent", func(t *testing.T, s *memory.State) {
			rows, err := s.PlanRows(ctx, src, "", 10)
			require.NoError(t, err)
			rows[0].Stats.Recent[1].Changed = true
		}},
		{"DeadLetters Stats.Recent", func(t *testing.T, s *memory.State) {
			require.NoError(t, s.RecordFailure(ctx, src, crawlstate.Failure{URL: u, At: t0, Stage: "fetch", Err: "x"}))
			rows, err := s.DeadLetters(ctx, src, 1)
			require.NoError(t, err)
			rows[0].Stats.Recent[0].Changed = false
		}},
		{"Links", func(t *testing.T, s *memory.State) {
			l, err := s.Links(ctx, src, u)
			require.NoError(t, err)
			l[0] = "https://ex.com/changed"
		}},
		{"Chunks", func(t *testing.T, s *memory.State) {
			c, err := s.Chunks(ctx, src, u)
			require.NoError(t, err)
			c[0].Text = "changed"
			c[1].Ordinal = 7
		}},
		{"Alert payload", func(t *testing.T, s *memory.State) {
			a, err := s.Alert(ctx, "alert-"+u)
			require.NoError(t, err)
			a.Payload[0] = 'X'
		}},
		{"PendingAlerts payload", func(t *testing.T, s *memory.State) {
			as, err := s.PendingAlerts(ctx, src, 10)
			require.NoError(t, err)
			as[0].Payload[0] = 'X'
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := filled(t, u)
			before := snapshot(t, s, u)
			tc.mutate(t, s)
			after := snapshot(t, s, u)
			if tc.name == "DeadLetters Stats.Recent" { // the failure itself changed the row
				after.row.Failures, after.row.LastError, after.row.LastStage, after.row.LastFailure =
					before.row.Failures, before.row.LastError, before.row.LastStage, before.row.LastFailure
			}
			require.Equal(t, before, after)
		})
	}
}

// stored is what the State holds about one page.
type stored struct {
	row    crawlstate.Row
	links  []string
	chunks []crawlstate.Chunk
	alert  crawlstate.Alert
}

func snapshot(t *testing.T, s *memory.State, u string) stored {
	t.Helper()
	ctx := context.Background()
	var st stored
	var err error
	st.row, err = s.Get(ctx, src, u)
	require.NoError(t, err)
	st.links, err = s.Links(ctx, src, u)
	require.NoError(t, err)
	st.chunks, err = s.Chunks(ctx, src, u)
	require.NoError(t, err)
	st.alert, err = s.Alert(ctx, "alert-"+u)
	require.NoError(t, err)
	return st
}

// TestStoredValuesAreCopies: what a caller passed in is copied, so a
// caller that changes it afterwards changes nothing stored.
func TestStoredValuesAreCopies(t *testing.T) {
	ctx := context.Background()
	const u = "https://ex.com/a"
	s := filled(t, u)
	st := crawlstate.Stats{Recent: []crawlstate.Check{{Elapsed: time.Hour}}}
	links := []string{"https://ex.com/x"}
	chunks := []crawlstate.Chunk{{Ordinal: 0, TextHash: "x", Text: "x"}}
	payload := []byte("payload")
	require.NoError(t, s.Record(ctx, src, []crawlstate.Result{{
		URL: u, At: t0.Add(time.Hour), Changed: true, ContentHash: "h2", Stats: &st, Links: links,
		Chunks: chunks, ReplaceChunks: true, Alert: &crawlstate.Alert{ID: "id-2", Kind: "changed", Payload: payload},
	}}))
	vec := []float32{1, 2, 3}
	require.NoError(t, s.PutVectors(ctx, "m", map[string][]float32{"h": vec}))
	before := snapshot(t, s, u)
	a2, err := s.Alert(ctx, "id-2")
	require.NoError(t, err)

	st.Recent[0].Changed = true
	links[0] = "changed"
	chunks[0].Text = "changed"
	payload[0] = 'X'
	vec[0] = 99

	require.Equal(t, before, snapshot(t, s, u))
	got, err := s.Alert(ctx, "id-2")
	require.NoError(t, err)
	require.Equal(t, a2, got)
	require.Equal(t, []byte("payload"), got.Payload)
	vs, err := s.Vectors(ctx, "m", []string{"h"})
	require.NoError(t, err)
	require.Equal(t, []float32{1, 2, 3}, vs["h"])
	vs["h"][1] = 42
	vs, err = s.Vectors(ctx, "m", []string{"h"})
	require.NoError(t, err)
	require.Equal(t, []float32{1, 2, 3}, vs["h"], "the returned vector is a copy too")
}

// TestClose: after Close every call fails with ErrClosed; Close again is
// not an error.
func TestClose(t *testing.T) {
	ctx := context.Background()
	const u = "https://ex.com/a"
	s := filled(t, u)
	require.NoError(t, s.Close())
	require.NoError(t, s.Close(), "closing again")

	calls := []struct {
		name string
		call func() error
	}{
		{"UpsertDiscovered", func() error {
			_, err := s.UpsertDiscovered(ctx, src, t0, []crawlstate.Discovered{{URL: u}})
			return err
		}},
		{"MarkMissing", func() error { _, err := s.MarkMissing(ctx, src, t0, t0, 1); return err }},
		{"Due", func() error { _, err := s.Due(ctx, src, t0, crawlstate.Key{}, 10); return err }},
		{"NextDue", func() error { _, _, err := s.NextDue(ctx, src); return err }},
		{"Get", func() error { _, err := s.Get(ctx, src, u); return err }},
		{"Count", func() error { _, _, err := s.Count(ctx, src); return err }},
		{"Record", func() error { return s.Record(ctx, src, []crawlstate.Result{{URL: u, At: t0}}) }},
		{"RecordFailure", func() error { return s.RecordFailure(ctx, src, crawlstate.Failure{URL: u, Stage: "fetch"}) }},
		{"Lock", func() error { return s.Lock(ctx, src, "A", t0, time.Minute) }},
		{"Refresh", func() error { return s.Refresh(ctx, src, "A", t0, time.Minute) }},
		{"Unlock", func() error { return s.Unlock(ctx, src, "A") }},
		{"Links", func() error { _, err := s.Links(ctx, src, u); return err }},
		{"Chunks", func() error { _, err := s.Chunks(ctx, src, u); return err }},
		{"Vectors", func() error { _, err := s.Vectors(ctx, "m", []string{"h"}); return err }},
		{"PutVectors", func() error { return s.PutVectors(ctx, "m", map[string][]float32{"h": {1}}) }},
		{"PendingAlerts", func() error { _, err := s.PendingAlerts(ctx, src, 10); return err }},
		{"Alert", func() error { _, err := s.Alert(ctx, "alert-"+u); return err }},
		{"MarkDelivered", func() error { return s.MarkDelivered(ctx, "alert-"+u, t0) }},
		{"MarkAlertFailed", func() error { return s.MarkAlertFailed(ctx, "alert-"+u, t0, "x") }},
		{"Document", func() error { _, err := s.Document(ctx, src, "https://ex.com/s.xml"); return err }},
		{"PutDocument", func() error { return s.PutDocument(ctx, src, crawlstate.Document{URL: "https://ex.com/s.xml"}) }},
		{"TouchListed", func() error { _, err := s.TouchListed(ctx, src, "https://ex.com/s.xml", t0); return err }},
		{"LogEvents", func() error {
			return s.LogEvents(ctx, src, []crawlstate.StageEvent{{URL: u, Stage: "fetch"}})
		}},
		{"Events", func() error { _, err := s.Events(ctx, src, u, time.Time{}); return err }},
		{"DeadLetters", func() error { _, err := s.DeadLetters(ctx, src, 1); return err }},
		{"RecordRun", func() error { return s.RecordRun(ctx, src, t0) }},
		{"Runs", func() error { _, err := s.Runs(ctx, src, 10); return err }},
		{"LastModTrust", func() error { _, err := s.LastModTrust(ctx, src); return err }},
		{"AddLastModTrust", func() error { return s.AddLastModTrust(ctx, src, crawlstate.LastModCounts{}, 0) }},
		{"PlanRows", func() error { _, err := s.PlanRows(ctx, src, "", 10); return err }},
		{"LiveRows", func() error { _, err := s.LiveRows(ctx, src, "", 10); return err }},
		{"Offer", func() error { _, err := s.Offer(ctx, src, t0, "L", []string{u}); return err }},
		{"Renew", func() error { _, err := s.Renew(ctx, src, "A", []string{u}, t0, time.Minute); return err }},
		{"Claim", func() error { _, _, _, err := s.Claim(ctx, src, t0, "A", t0, time.Minute, 10); return err }},
		{"Extend", func() error { _, err := s.Extend(ctx, src, "A", t0, time.Minute); return err }},
		{"Release", func() error { return s.Release(ctx, src, "A", nil) }},
		{"ClaimAlert", func() error { _, err := s.ClaimAlert(ctx, "alert-"+u, "A", t0, time.Minute); return err }},
	}
	for _, c := range calls {
		err := c.call()
		require.ErrorIs(t, err, memory.ErrClosed, c.name)
		require.Contains(t, err.Error(), "closed", c.name)
	}
}

// TestExcludedRowIsNeverDue: an excluded row leaves the queue with a
// NextCheck no planner reaches, as the SQL stores give it.
func TestExcludedRowIsNeverDue(t *testing.T) {
	ctx := context.Background()
	const u = "https://ex.com/a"
	s := filled(t, u)
	require.NoError(t, s.Record(ctx, src, []crawlstate.Result{{URL: u, At: t0, Excluded: "not_document"}}))
	rows, err := s.LiveRows(ctx, src, "", 10)
	require.NoError(t, err)
	require.Len(t, rows, 1, "an excluded row is live")
	require.True(t, rows[0].NextCheck.After(time.Date(2200, 1, 1, 0, 0, 0, 0, time.UTC)), "its NextCheck: %v", rows[0].NextCheck)
	_, ok, err := s.NextDue(ctx, src)
	require.NoError(t, err)
	require.False(t, ok)
}

// TestTimesComeBackInUTC: times are kept to the nanosecond, in UTC,
// without a monotonic reading, so rows compare with ==.
func TestTimesComeBackInUTC(t *testing.T) {
	ctx := context.Background()
	s := memory.New(crawlstate.Options{})
	defer s.Close()
	zone := time.FixedZone("UTC+7", 7*3600)
	now := time.Now().In(zone) // with a monotonic reading
	_, err := s.UpsertDiscovered(ctx, src, now, []crawlstate.Discovered{{URL: "https://ex.com/a"}})
	require.NoError(t, err)
	r, err := s.Get(ctx, src, "https://ex.com/a")
	require.NoError(t, err)
	require.Equal(t, now.UTC(), r.FirstSeen)
	require.Equal(t, time.UTC, r.FirstSeen.Location())
	require.Equal(t, now.UnixNano(), r.FirstSeen.UnixNano())
}

// TestLargeSource pages through a source larger than an index block, with
// rows moving in the queue between pages, and checks the order.
func TestLargeSource(t *testing.T) {
	ctx := context.Background()
	s := memory.New(crawlstate.Options{})
	defer s.Close()
	const n = 5000
	ds := make([]crawlstate.Discovered, n)
	for i := range ds {
		ds[i] = crawlstate.Discovered{URL: fmt.Sprintf("https://ex.com/%05d", (i*7919)%n)}
	}
	st, err := s.UpsertDiscovered(ctx, src, t0, ds)
	require.NoError(t, err)
	require.Equal(t, n, st.New)
	// Rows i get NextCheck t0 + (i%97) minutes; every tenth is gone.
	var rs []crawlstate.Result
	for i := range n {
		u := fmt.Sprintf("https://ex.com/%05d", i)
		next := t0.Add(time.Duration(i%97) * time.Minute)
		rs = append(rs, crawlstate.Result{URL: u, At: t0, Gone: i%10 == 0, NextCheck: next})
	}
	require.NoError(t, s.Record(ctx, src, rs))
	total, gone, err := s.Count(ctx, src)
	require.NoError(t, err)
	require.Equal(t, n, total)
	require.Equal(t, n/10, gone)

	var got []crawlstate.Row
	after := crawlstate.Key{}
	for {
		rows, err := s.Due(ctx, src, t0.Add(time.Hour), after, 333)
		require.NoError(t, err)
		if len(rows) == 0 {
			break
		}
		got = append(got, rows...)
		after = crawlstate.KeyOf(rows[len(rows)-1])
	}
	want := 0
	for i := range n {
		if i%10 != 0 && i%97 <= 60 {
			want++
		}
	}
	require.Len(t, got, want)
	for i := 1; i < len(got); i++ {
		a, b := got[i-1], got[i]
		require.True(t, a.NextCheck.Before(b.NextCheck) || a.NextCheck.Equal(b.NextCheck) && a.URL < b.URL, "%d: %s then %s", i, a.URL, b.URL)
	}

	var live int
	last := ""
	for {
		rows, err := s.PlanRows(ctx, src, last, 700)
		require.NoError(t, err)
		if len(rows) == 0 {
			break
		}
		for _, r := range rows {
			require.Greater(t, r.URL, last)
			last = r.URL
		}
		live += len(rows)
	}
	require.Equal(t, n-n/10, live)
}

// TestCanceledContextSharer: the Sharer calls honour a canceled context
// and store nothing.
func TestCanceledContextSharer(t *testing.T) {
	const u = "https://ex.com/a"
	s := filled(t, u)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	require.NoError(t, s.Lock(context.Background(), src, "L", t0, time.Minute))
	_, err := s.Offer(ctx, src, t0, "L", []string{u})
	require.ErrorIs(t, err, context.Canceled)
	_, _, _, err = s.Claim(ctx, src, t0, "A", t0, time.Minute, 10)
	require.ErrorIs(t, err, context.Canceled)
	_, err = s.ClaimAlert(ctx, "alert-"+u, "A", t0, time.Minute)
	require.ErrorIs(t, err, context.Canceled)
	rows, _, _, err := s.Claim(context.Background(), src, t0, "A", t0, time.Minute, 10)
	require.NoError(t, err)
	require.Empty(t, rows, "the canceled Offer offered nothing")
	require.True(t, errors.Is(s.Release(ctx, src, "A", nil), context.Canceled))
}

// TestClaimMergesExpiredLeases: rows whose leases expired are handed out
// among the free ones in (NextCheck, URL) order.
func TestClaimMergesExpiredLeases(t *testing.T) {
	ctx := context.Background()
	urls := []string{"https://ex.com/a", "https://ex.com/b", "https://ex.com/c", "https://ex.com/d", "https://ex.com/e"}
	s := filled(t, urls...)
	require.NoError(t, s.Lock(ctx, src, "L", t0, time.Minute))
	n, err := s.Offer(ctx, src, t0, "L", urls)
	require.NoError(t, err)
	require.Equal(t, 5, n)
	claim := func(owner string, now time.Time, ttl time.Duration, limit int) ([]string, int, time.Time) {
		t.Helper()
		rows, pending, next, err := s.Claim(ctx, src, t0, owner, now, ttl, limit)
		require.NoError(t, err)
		out := make([]string, len(rows))
		for i, r := range rows {
			out[i] = r.URL
		}
		return out, pending, next
	}
	got, _, _ := claim("W1", t0, 10*time.Minute, 1)
	require.Equal(t, urls[:1], got)
	got, _, _ = claim("W2", t0, time.Hour, 2)
	require.Equal(t, urls[1:3], got)
	got, pending, next := claim("W3", t0, 10*time.Minute, 1)
	require.Equal(t, urls[3:4], got)
	require.Equal(t, 3, pending)
	require.True(t, next.Equal(t0.Add(10*time.Minute)))

	got, pending, next = claim("W4", t0.Add(10*time.Minute), time.Hour, 10)
	require.Equal(t, []string{urls[0], urls[3], urls[4]}, got, "a and d expired, e free: in queue order")
	require.Equal(t, 2, pending, "W2's two")
	require.True(t, next.Equal(t0.Add(time.Hour)), "next %v", next)

	n, err = s.Extend(ctx, src, "W1", t0.Add(11*time.Minute), time.Hour)
	require.NoError(t, err)
	require.Zero(t, n, "W1's lease was taken over")
	require.NoError(t, s.Withdraw(ctx, src, "W4", []string{urls[4]}))
	require.NoError(t, s.Release(ctx, src, "W4", nil))
	got, pending, _ = claim("W5", t0.Add(11*time.Minute), time.Hour, 10)
	require.Equal(t, []string{urls[0], urls[3]}, got, "released rows stay offered; the withdrawn one is not")
	require.Equal(t, 2, pending)
}
