package crawlstate

import (
	"database/sql"
	"fmt"
	"io"
	"log/slog"
	"math"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// A database an older build left at version 1 (built with the version-1
// schema by hand) upgrades to this build's schema, keeps its rows, and
// every new part of the contract works on them.
func TestMigrateUpgradesVersion1(t *testing.T) {
	path := filepath.Join(t.TempDir(), "state.db")
	createV1ByHand(t, path)
	db := rawDB(t, path)
	_, err := db.Exec(`INSERT INTO pages (source, url, original_url, first_seen, last_seen, last_fetched,
		next_check, sitemap_lastmod, failures, last_error)
		VALUES ('docs', 'https://ex.com/b', 'https://ex.com/b', 1, 1, ?, ?, ?, 4, 'fetch: 503')`,
		int64(zeroTime), int64(zeroTime), int64(zeroTime))
	require.NoError(t, err)
	require.NoError(t, db.Close())

	s, err := OpenSQLite(path)
	require.NoError(t, err)
	defer s.Close()
	require.Equal(t, len(migrations), pragma(t, rawDB(t, path), "user_version"))
	ctx := t.Context()

	// The old rows are intact and read with empty details.
	a, err := s.Get(ctx, "docs", "https://ex.com/a")
	require.NoError(t, err)
	require.Equal(t, "https://EX.com/a", a.OriginalURL)
	require.Equal(t, "h1", a.ContentHash)
	require.Equal(t, 3, a.Visits)
	require.Equal(t, time.Hour, a.Interval)
	require.Equal(t, time.Unix(0, 1e18).UTC(), a.LastFetched)
	require.Equal(t, time.Unix(0, 1e18+int64(time.Hour)).UTC(), a.NextCheck)
	require.True(t, a.SitemapLastMod.IsZero())
	require.Empty(t, a.LastStage)
	require.True(t, a.LastFailure.IsZero(), "an old row has the zero LastFailure, not 1970")
	require.Empty(t, a.Title)
	require.Empty(t, a.ListedIn)
	require.Equal(t, Stats{}, a.Stats, "no statistics, zero times exactly")

	dead, err := s.DeadLetters(ctx, "docs", 1)
	require.NoError(t, err)
	require.Len(t, dead, 1, "the failing old row is in the new index")
	require.Equal(t, "https://ex.com/b", dead[0].URL)
	require.Equal(t, "fetch: 503", dead[0].LastError)
	due, err := s.Due(ctx, "docs", time.Unix(0, 2e18), Key{}, 10)
	require.NoError(t, err)
	require.Len(t, due, 2)

	// Everything new works on the old rows.
	const sm = "https://ex.com/sitemap.xml"
	_, err = s.UpsertDiscovered(ctx, "docs", time.Unix(0, 1e18+1), []Discovered{{URL: "https://ex.com/a", Via: sm}})
	require.NoError(t, err)
	n, err := s.TouchListed(ctx, "docs", sm, time.Unix(0, 1e18+2))
	require.NoError(t, err)
	require.Equal(t, 1, n)
	at := time.Unix(0, 1e18+3).UTC()
	st := Stats{Elapsed: time.Hour, Recent: []Check{{Elapsed: time.Hour, Changed: true}}, ChangeRate: 1}
	require.NoError(t, s.Record(ctx, "docs", []Result{{
		URL: "https://ex.com/a", At: at, Changed: true, ContentHash: "h2", Title: "A", Stats: &st,
		Links: []string{"https://ex.com/b"}, Chunks: []Chunk{{Ordinal: 0, TextHash: "c", Text: "x"}}, ReplaceChunks: true,
		Alert: &Alert{ID: "id-1", Kind: "changed", CreatedAt: at},
	}}))
	require.NoError(t, s.RecordFailure(ctx, "docs", Failure{URL: "https://ex.com/b", At: at, Stage: "extract", Err: "empty"}))
	require.NoError(t, s.PutVectors(ctx, "m", map[string][]float32{"c": {1, 2}}))
	require.NoError(t, s.PutDocument(ctx, "docs", Document{URL: sm, Entries: 1, FetchedAt: at}))
	require.NoError(t, s.LogEvents(ctx, "docs", []StageEvent{{URL: "https://ex.com/a", At: at, Stage: "fetch", Attempt: 1, OK: true}}))
	require.NoError(t, s.Close())

	// Reopened, the state is all there and nothing migrates again.
	var logs strings.Builder
	s, err = OpenSQLite(path, WithLogger(newTextLogger(&logs)))
	require.NoError(t, err)
	defer s.Close()
	require.Empty(t, logs.String(), "an up-to-date file is not migrated")
	a, err = s.Get(ctx, "docs", "https://ex.com/a")
	require.NoError(t, err)
	require.Equal(t, "A", a.Title)
	require.Equal(t, sm, a.ListedIn)
	require.Equal(t, st, a.Stats)
	require.Equal(t, 4, a.Visits)
	links, err := s.Links(ctx, "docs", "https://ex.com/a")
	require.NoError(t, err)
	require.Equal(t, []string{"https://ex.com/b"}, links)
	pending, err := s.PendingAlerts(ctx, "docs", 10)
	require.NoError(t, err)
	require.Len(t, pending, 1)
	b, err := s.Get(ctx, "docs", "https://ex.com/b")
	require.NoError(t, err)
	require.Equal(t, 5, b.Failures)
	require.Equal(t, "extract", b.LastStage)
	require.Equal(t, at, b.LastFailure)
}

func newTextLogger(w io.Writer) *slog.Logger { return slog.New(slog.NewTextHandler(w, nil)) }

// A database left at any earlier version of this build's history upgrades
// to the last one and keeps its rows.
func TestMigrateFromEveryVersion(t *testing.T) {
	for v := 1; v < len(migrations); v++ {
		t.Run(fmt.Sprint(v), func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "state.db")
			old, err := openSQLite(path, migrations[:v])
			require.NoError(t, err)
			_, err = old.w.Exec(`INSERT INTO pages (source, url, original_url, first_seen, last_seen, last_fetched,
				next_check, sitemap_lastmod, visits) VALUES ('docs', 'u', 'u', 1, 1, 1, 1, 1, 7)`)
			require.NoError(t, err)
			require.NoError(t, old.Close())
			require.Equal(t, v, pragma(t, rawDB(t, path), "user_version"))

			s, err := OpenSQLite(path)
			require.NoError(t, err)
			defer s.Close()
			require.Equal(t, len(migrations), pragma(t, rawDB(t, path), "user_version"))
			r, err := s.Get(t.Context(), "docs", "u")
			require.NoError(t, err)
			require.Equal(t, 7, r.Visits)
			require.True(t, r.LastFailure.IsZero())
		})
	}
}

// The queries of the additions read their indexes: no scan of a source's
// rows, no sorting.
func TestAdditionsQueryPlans(t *testing.T) {
	s, err := OpenSQLite(filepath.Join(t.TempDir(), "state.db"))
	require.NoError(t, err)
	defer s.Close()
	ds := make([]Discovered, 2000)
	for i := range ds {
		ds[i] = Discovered{URL: fmt.Sprintf("https://ex.com/%d", i), Via: fmt.Sprintf("https://ex.com/sitemap-%d.xml", i/100)}
	}
	_, err = s.UpsertDiscovered(t.Context(), "docs", time.Unix(1e9, 0), ds)
	require.NoError(t, err)
	_, err = s.w.Exec(`ANALYZE`)
	require.NoError(t, err)

	plan := func(query string, args ...any) string {
		rows, err := s.r.Query("EXPLAIN QUERY PLAN "+query, args...)
		require.NoError(t, err)
		defer rows.Close()
		var lines []string
		for rows.Next() {
			var id, parent, notused int
			var detail string
			require.NoError(t, rows.Scan(&id, &parent, &notused, &detail))
			lines = append(lines, detail)
		}
		require.NoError(t, rows.Err())
		return strings.Join(lines, "\n")
	}
	for _, tc := range []struct {
		name, query, want string
		args              []any
	}{
		{"touch listed", touchListedSQL, "USING INDEX pages_listed (source=? AND listed_in=?)",
			[]any{sql.Named("source", "docs"), sql.Named("via", "x"), sql.Named("now", 1), sql.Named("zero", 0)}},
		{"dead letters", deadLettersSQL, "USING INDEX pages_failing (source=? AND failures>?)", []any{"docs", 1}},
		{"pending alerts", pendingAlertsSQL, "USING INDEX alerts_pending (source=?)", []any{"docs", 10}},
		{"vectors", vectorsSQL(3), "USING INDEX sqlite_autoindex_vectors_1 (model=? AND text_hash=?)", []any{"m", "a", "b", "c"}},
		{"events", `SELECT url FROM events WHERE source = ? AND url = ? AND at >= ? ORDER BY at, id`,
			"USING COVERING INDEX events_page (source=? AND url=? AND at>?)", []any{"docs", "u", 0}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := plan(tc.query, tc.args...)
			require.Contains(t, p, tc.want, p)
			require.NotContains(t, p, "TEMP B-TREE", p)
		})
	}
}

// A value this build cannot read is an error naming what is wrong, never a
// panic or a silently empty field.
func TestCorruptStoredValues(t *testing.T) {
	s, err := OpenSQLite(filepath.Join(t.TempDir(), "state.db"))
	require.NoError(t, err)
	defer s.Close()
	ctx := t.Context()
	_, err = s.UpsertDiscovered(ctx, "docs", time.Unix(1e9, 0), []Discovered{{URL: "u"}})
	require.NoError(t, err)
	_, err = s.w.Exec(`UPDATE pages SET recent = x'0900', failures = 1`)
	require.NoError(t, err)
	_, err = s.w.Exec(`INSERT INTO links VALUES ('docs', 'u', x'0105')`)
	require.NoError(t, err)
	_, err = s.w.Exec(`INSERT INTO vectors VALUES ('m', 'h', x'000000')`)
	require.NoError(t, err)

	_, err = s.Get(ctx, "docs", "u")
	require.ErrorIs(t, err, errCorrupt)
	require.ErrorContains(t, err, "format 9")
	_, err = s.Due(ctx, "docs", time.Unix(2e9, 0), Key{}, 10)
	require.ErrorIs(t, err, errCorrupt)
	_, err = s.DeadLetters(ctx, "docs", 1)
	require.ErrorIs(t, err, errCorrupt)
	_, err = s.Links(ctx, "docs", "u")
	require.ErrorIs(t, err, errCorrupt)
	_, err = s.Vectors(ctx, "m", []string{"h"})
	require.ErrorIs(t, err, errCorrupt)
	require.ErrorContains(t, err, "3 bytes")
}

// SQLite has no NaN: Record refuses one instead of failing on a NOT NULL
// constraint or storing something else. Infinities are kept.
func TestRecordStatsNaN(t *testing.T) {
	s, err := OpenSQLite(":memory:")
	require.NoError(t, err)
	defer s.Close()
	ctx := t.Context()
	_, err = s.UpsertDiscovered(ctx, "docs", time.Unix(1e9, 0), []Discovered{{URL: "a"}, {URL: "b"}})
	require.NoError(t, err)
	for _, st := range []Stats{{ChangeRate: math.NaN()}, {Weight: math.NaN()}} {
		err := s.Record(ctx, "docs", []Result{
			{URL: "a", At: time.Unix(1e9, 0), Changed: true, ContentHash: "h"},
			{URL: "b", At: time.Unix(1e9, 0), Stats: &st},
		})
		require.ErrorContains(t, err, "NaN")
		require.ErrorContains(t, err, `"b"`, "the error names the result")
		r, err := s.Get(ctx, "docs", "a")
		require.NoError(t, err)
		require.Zero(t, r.Visits, "nothing of the batch is stored")
	}
	inf := Stats{ChangeRate: math.Inf(1), Weight: math.Inf(-1)}
	require.NoError(t, s.Record(ctx, "docs", []Result{{URL: "b", At: time.Unix(1e9, 0), Stats: &inf}}))
	r, err := s.Get(ctx, "docs", "b")
	require.NoError(t, err)
	require.Equal(t, inf, r.Stats)
}

// Links are stored byte for byte, whatever their encoding.
func TestLinksAnyBytes(t *testing.T) {
	s, err := OpenSQLite(":memory:")
	require.NoError(t, err)
	defer s.Close()
	ctx := t.Context()
	_, err = s.UpsertDiscovered(ctx, "docs", time.Unix(1e9, 0), []Discovered{{URL: "a"}})
	require.NoError(t, err)
	in := []string{"https://ex.com/\xff\xfe", "", "nul\x00inside"}
	require.NoError(t, s.Record(ctx, "docs", []Result{{URL: "a", At: time.Unix(1e9, 0), Links: in}}))
	got, err := s.Links(ctx, "docs", "a")
	require.NoError(t, err)
	require.Equal(t, in, got)
}

// MarkAlertFailed keeps the time of the failed attempt for diagnosis; the
// Alert type has no field for it, so it is read from the table.
func TestMarkAlertFailedKeepsAttemptTime(t *testing.T) {
	s, err := OpenSQLite(":memory:")
	require.NoError(t, err)
	defer s.Close()
	ctx := t.Context()
	_, err = s.UpsertDiscovered(ctx, "docs", time.Unix(1e9, 0), []Discovered{{URL: "a"}})
	require.NoError(t, err)
	require.NoError(t, s.Record(ctx, "docs", []Result{{URL: "a", At: time.Unix(1e9, 0), NotModified: true,
		Alert: &Alert{ID: "id", Kind: "changed"}}}))
	at := time.Unix(1e9, 5)
	require.NoError(t, s.MarkAlertFailed(ctx, "id", at, "503"))
	var got int64
	require.NoError(t, s.w.QueryRow(`SELECT last_attempt FROM alerts WHERE id = 'id'`).Scan(&got))
	require.Equal(t, at.UnixNano(), got)
}
