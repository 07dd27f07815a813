package sqlite

import (
	"context"
	"database/sql"
	"testing"
	"time"

	"github.com/recrawl/recrawl/crawlstate"
	"github.com/stretchr/testify/require"
)

// A 304 written by the short statement leaves the row exactly as the full
// statement does, for rows with and without validators, failures and
// statistics.
func TestNotModifiedStatementMatchesRecordSQL(t *testing.T) {
	at := time.Unix(2e9, 0).UTC()
	stats := &crawlstate.Stats{LastChanged: at.Add(-time.Hour), Elapsed: 3 * time.Hour, LastModified: at.Add(-2 * time.Hour),
		ChangeRate: 0.25, Weight: 1.5, Recent: []crawlstate.Check{{Elapsed: time.Hour, Changed: true, Modified: time.Minute}, {Elapsed: 2 * time.Hour}}}
	cases := []struct {
		name   string
		before []crawlstate.Result // recorded first, by Record
		fail   bool                // a failure recorded before the 304
		res    crawlstate.Result
	}{
		{name: "new validators", before: []crawlstate.Result{{URL: "a", At: at.Add(-time.Hour), ContentHash: "h", ETag: `"1"`, LastModified: "Mon, 01 Jan 2024 00:00:00 GMT", Title: "T"}},
			res: crawlstate.Result{URL: "a", At: at, NotModified: true, ETag: `"2"`, LastModified: "Tue, 02 Jan 2024 00:00:00 GMT", Interval: time.Hour, NextCheck: at.Add(time.Hour), Stats: stats}},
		{name: "validators kept", before: []crawlstate.Result{{URL: "a", At: at.Add(-time.Hour), ContentHash: "h", ETag: `"1"`, LastModified: "Mon, 01 Jan 2024 00:00:00 GMT"}},
			res: crawlstate.Result{URL: "a", At: at, NotModified: true, Interval: 2 * time.Hour, NextCheck: at.Add(2 * time.Hour), Stats: stats}},
		{name: "after a failure", before: []crawlstate.Result{{URL: "a", At: at.Add(-time.Hour), ContentHash: "h", ETag: `"1"`}}, fail: true,
			res: crawlstate.Result{URL: "a", At: at, NotModified: true, ETag: `"1"`, Interval: time.Hour, NextCheck: at.Add(time.Hour), Stats: &crawlstate.Stats{}}},
		{name: "never fetched", res: crawlstate.Result{URL: "a", At: at, NotModified: true, Interval: time.Hour, NextCheck: at.Add(time.Hour), Stats: stats}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			require.True(t, plainNotModified(c.res))
			var rows [2]crawlstate.Row
			for i, full := range []bool{false, true} {
				s, err := Open(context.Background(), ":memory:")
				require.NoError(t, err)
				defer s.Close()
				ctx := t.Context()
				_, err = s.UpsertDiscovered(ctx, "docs", at.Add(-2*time.Hour), []crawlstate.Discovered{{URL: "a"}})
				require.NoError(t, err)
				require.NoError(t, s.Record(ctx, "docs", c.before))
				if c.fail {
					require.NoError(t, s.RecordFailure(ctx, "docs", crawlstate.Failure{URL: "a", At: at.Add(-time.Minute), Stage: "fetch", Err: "boom"}))
				}
				if full {
					require.NoError(t, s.withTx(ctx, "test", func(tx *sql.Tx) error {
						ps := s.txStmts(tx)
						defer ps.close()
						return recordFull(ctx, ps, "docs", c.res)
					}))
				} else {
					require.NoError(t, s.Record(ctx, "docs", []crawlstate.Result{c.res}))
				}
				rows[i], err = s.Get(ctx, "docs", "a")
				require.NoError(t, err)
			}
			require.Equal(t, rows[1], rows[0])
			require.Equal(t, 0, rows[0].Failures)
		})
	}
}

// The short statement reports an unknown URL as the full one does.
func TestNotModifiedStatementUnknownURL(t *testing.T) {
	s, err := Open(context.Background(), ":memory:")
	require.NoError(t, err)
	defer s.Close()
	err = s.Record(t.Context(), "docs", []crawlstate.Result{{URL: "nope", At: time.Unix(2e9, 0), NotModified: true, Stats: &crawlstate.Stats{}}})
	require.ErrorIs(t, err, crawlstate.ErrNotFound)
}
