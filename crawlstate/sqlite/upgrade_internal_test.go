package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/recrawl/recrawl/crawlstate"
	"github.com/recrawl/recrawl/crawlstate/internal/backend"
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
		int64(backend.ZeroTime), int64(backend.ZeroTime), int64(backend.ZeroTime))
	require.NoError(t, err)
	require.NoError(t, db.Close())

	s, err := Open(context.Background(), path)
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
	require.Equal(t, crawlstate.Stats{}, a.Stats, "no statistics, zero times exactly")

	dead, err := s.DeadLetters(ctx, "docs", 1)
	require.NoError(t, err)
	require.Len(t, dead, 1, "the failing old row is in the new index")
	require.Equal(t, "https://ex.com/b", dead[0].URL)
	require.Equal(t, "fetch: 503", dead[0].LastError)
	due, err := s.Due(ctx, "docs", time.Unix(0, 2e18), crawlstate.Key{}, 10)
	require.NoError(t, err)
	require.Len(t, due, 2)

	// Everything new works on the old rows.
	const sm = "https://ex.com/sitemap.xml"
	_, err = s.UpsertDiscovered(ctx, "docs", time.Unix(0, 1e18+1), []crawlstate.Discovered{{URL: "https://ex.com/a", Via: sm}})
	require.NoError(t, err)
	n, err := s.TouchListed(ctx, "docs", sm, time.Unix(0, 1e18+2))
	require.NoError(t, err)
	require.Equal(t, 1, n)
	at := time.Unix(0, 1e18+3).UTC()
	st := crawlstate.Stats{Elapsed: time.Hour, Recent: []crawlstate.Check{{Elapsed: time.Hour, Changed: true}}, ChangeRate: 1}
	require.NoError(t, s.Record(ctx, "docs", []crawlstate.Result{{
		URL: "https://ex.com/a", At: at, Changed: true, ContentHash: "h2", Title: "A", Stats: &st,
		Links: []string{"https://ex.com/b"}, Chunks: []crawlstate.Chunk{{Ordinal: 0, TextHash: "c", Text: "x"}}, ReplaceChunks: true,
		Alert: &crawlstate.Alert{ID: "id-1", Kind: "changed", CreatedAt: at},
	}}))
	require.NoError(t, s.RecordFailure(ctx, "docs", crawlstate.Failure{URL: "https://ex.com/b", At: at, Stage: "extract", Err: "empty"}))
	require.NoError(t, s.PutVectors(ctx, "m", map[string][]float32{"c": {1, 2}}))
	require.NoError(t, s.PutDocument(ctx, "docs", crawlstate.Document{URL: sm, Entries: 1, FetchedAt: at}))
	require.NoError(t, s.LogEvents(ctx, "docs", []crawlstate.StageEvent{{URL: "https://ex.com/a", At: at, Stage: "fetch", Attempt: 1, OK: true}}))
	require.NoError(t, s.Close())

	// Reopened, the state is all there and nothing migrates again.
	var logs strings.Builder
	s, err = Open(context.Background(), path, WithLogger(newTextLogger(&logs)))
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
			old, err := open(context.Background(), path, migrations[:v])
			require.NoError(t, err)
			_, err = old.w.Exec(`INSERT INTO pages (source, url, original_url, first_seen, last_seen, last_fetched,
				next_check, sitemap_lastmod, visits) VALUES ('docs', 'u', 'u', 1, 1, 1, 1, 1, 7)`)
			require.NoError(t, err)
			require.NoError(t, old.Close())
			require.Equal(t, v, pragma(t, rawDB(t, path), "user_version"))

			s, err := Open(context.Background(), path)
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
	s, err := Open(context.Background(), filepath.Join(t.TempDir(), "state.db"))
	require.NoError(t, err)
	defer s.Close()
	ds := make([]crawlstate.Discovered, 2000)
	for i := range ds {
		ds[i] = crawlstate.Discovered{URL: fmt.Sprintf("https://ex.com/%d", i), Via: fmt.Sprintf("https://ex.com/sitemap-%d.xml", i/100)}
	}
	_, err = s.UpsertDiscovered(t.Context(), "docs", time.Unix(1e9, 0), ds)
	require.NoError(t, err)
	_, err = s.w.Exec(`ANALYZE`)
	require.NoError(t, err)

	plan := func(query string, args ...any) string { return queryPlan(t, s.r, query, args...) }
	for _, tc := range []struct {
		name, query, want string
		args              []any
	}{
		{"touch listed", touchListedSQL, "USING INDEX pages_listed (source=? AND listed_in=?)",
			[]any{sql.Named("source", "docs"), sql.Named("via", "x"), sql.Named("now", 1), sql.Named("zero", 0)}},
		{"dead letters", deadLettersSQL, "USING INDEX pages_failing (source=? AND failures>?)", []any{"docs", 1}},
		{"pending alerts", pendingAlertsSQL, "USING INDEX alerts_pending (source=?)", []any{"docs", 10}},
		{"vectors", vectorsSQL(3), "USING INDEX sqlite_autoindex_vectors_1 (model=? AND text_hash=?)", []any{"m", "a", "b", "c"}},
		{"events", `SELECT url FROM events WHERE page_key = ? AND source = ? AND url = ? AND at >= ? ORDER BY at, id`,
			"USING INDEX events_page (page_key=? AND at>?)", []any{eventKey("docs", "u"), "docs", "u", 0}},
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
	s, err := Open(context.Background(), filepath.Join(t.TempDir(), "state.db"))
	require.NoError(t, err)
	defer s.Close()
	ctx := t.Context()
	_, err = s.UpsertDiscovered(ctx, "docs", time.Unix(1e9, 0), []crawlstate.Discovered{{URL: "u"}})
	require.NoError(t, err)
	_, err = s.w.Exec(`UPDATE pages SET recent = x'0900', failures = 1`)
	require.NoError(t, err)
	_, err = s.w.Exec(`INSERT INTO links VALUES ('docs', 'u', x'0105')`)
	require.NoError(t, err)
	_, err = s.w.Exec(`INSERT INTO vectors VALUES ('m', 'h', x'000000')`)
	require.NoError(t, err)

	_, err = s.Get(ctx, "docs", "u")
	require.ErrorIs(t, err, backend.ErrCorrupt)
	require.ErrorContains(t, err, "format 9")
	_, err = s.Due(ctx, "docs", time.Unix(2e9, 0), crawlstate.Key{}, 10)
	require.ErrorIs(t, err, backend.ErrCorrupt)
	_, err = s.DeadLetters(ctx, "docs", 1)
	require.ErrorIs(t, err, backend.ErrCorrupt)
	_, err = s.PlanRows(ctx, "docs", "", 10)
	require.ErrorIs(t, err, backend.ErrCorrupt)
	require.ErrorContains(t, err, "format 9")
	_, err = s.LiveRows(ctx, "docs", "", 10)
	require.ErrorIs(t, err, backend.ErrCorrupt)
	_, err = s.w.Exec(`UPDATE pages SET recent = NULL, change_rate = 'fast'`)
	require.NoError(t, err)
	_, err = s.PlanRows(ctx, "docs", "", 10)
	require.ErrorIs(t, err, backend.ErrCorrupt, "a text where a rate belongs")
	_, err = s.w.Exec(`UPDATE pages SET recent = x'0900', change_rate = 0`)
	require.NoError(t, err)
	_, err = s.Links(ctx, "docs", "u")
	require.ErrorIs(t, err, backend.ErrCorrupt)
	_, err = s.Vectors(ctx, "m", []string{"h"})
	require.ErrorIs(t, err, backend.ErrCorrupt)
	require.ErrorContains(t, err, "3 bytes")
}

// SQLite has no NaN: Record refuses one instead of failing on a NOT NULL
// constraint or storing something else. Infinities are kept.
func TestRecordStatsNaN(t *testing.T) {
	s, err := Open(context.Background(), ":memory:")
	require.NoError(t, err)
	defer s.Close()
	ctx := t.Context()
	_, err = s.UpsertDiscovered(ctx, "docs", time.Unix(1e9, 0), []crawlstate.Discovered{{URL: "a"}, {URL: "b"}})
	require.NoError(t, err)
	for _, st := range []crawlstate.Stats{{ChangeRate: math.NaN()}, {Weight: math.NaN()}} {
		err := s.Record(ctx, "docs", []crawlstate.Result{
			{URL: "a", At: time.Unix(1e9, 0), Changed: true, ContentHash: "h"},
			{URL: "b", At: time.Unix(1e9, 0), Stats: &st},
		})
		require.ErrorContains(t, err, "NaN")
		require.ErrorContains(t, err, `"b"`, "the error names the result")
		r, err := s.Get(ctx, "docs", "a")
		require.NoError(t, err)
		require.Zero(t, r.Visits, "nothing of the batch is stored")
	}
	inf := crawlstate.Stats{ChangeRate: math.Inf(1), Weight: math.Inf(-1)}
	require.NoError(t, s.Record(ctx, "docs", []crawlstate.Result{{URL: "b", At: time.Unix(1e9, 0), Stats: &inf}}))
	r, err := s.Get(ctx, "docs", "b")
	require.NoError(t, err)
	require.Equal(t, inf, r.Stats)
}

// Links are stored byte for byte, whatever their encoding.
func TestLinksAnyBytes(t *testing.T) {
	s, err := Open(context.Background(), ":memory:")
	require.NoError(t, err)
	defer s.Close()
	ctx := t.Context()
	_, err = s.UpsertDiscovered(ctx, "docs", time.Unix(1e9, 0), []crawlstate.Discovered{{URL: "a"}})
	require.NoError(t, err)
	in := []string{"https://ex.com/\xff\xfe", "", "nul\x00inside"}
	require.NoError(t, s.Record(ctx, "docs", []crawlstate.Result{{URL: "a", At: time.Unix(1e9, 0), Links: in}}))
	got, err := s.Links(ctx, "docs", "a")
	require.NoError(t, err)
	require.Equal(t, in, got)
}

// MarkAlertFailed keeps the time of the failed attempt for diagnosis; the
// Alert type has no field for it, so it is read from the table.
func TestMarkAlertFailedKeepsAttemptTime(t *testing.T) {
	s, err := Open(context.Background(), ":memory:")
	require.NoError(t, err)
	defer s.Close()
	ctx := t.Context()
	_, err = s.UpsertDiscovered(ctx, "docs", time.Unix(1e9, 0), []crawlstate.Discovered{{URL: "a"}})
	require.NoError(t, err)
	require.NoError(t, s.Record(ctx, "docs", []crawlstate.Result{{URL: "a", At: time.Unix(1e9, 0), NotModified: true,
		Alert: &crawlstate.Alert{ID: "id", Kind: "changed"}}}))
	at := time.Unix(1e9, 5)
	require.NoError(t, s.MarkAlertFailed(ctx, "id", at, "503"))
	var got int64
	require.NoError(t, s.w.QueryRow(`SELECT last_attempt FROM alerts WHERE id = 'id'`).Scan(&got))
	require.Equal(t, at.UnixNano(), got)
}

// dumpTables returns every row of the state tables as text, in key order,
// read through db.
func dumpTables(t *testing.T, db *sql.DB) map[string][]string {
	t.Helper()
	order := map[string]string{
		"pages": "source, url", "links": "source, url", "chunks": "source, url, ordinal",
		"documents": "source, url", "events": "id", "alerts": "id", "vectors": "model, text_hash",
		"runs": "source, start", "lastmod_trust": "source", "run_locks": "source",
	}
	out := map[string][]string{}
	for table, by := range order {
		rows, err := db.Query(`SELECT * FROM ` + table + ` ORDER BY ` + by)
		require.NoError(t, err)
		cols, err := rows.Columns()
		require.NoError(t, err)
		for rows.Next() {
			vals := make([]any, len(cols))
			ptrs := make([]any, len(cols))
			for i := range vals {
				ptrs[i] = &vals[i]
			}
			require.NoError(t, rows.Scan(ptrs...))
			var b strings.Builder
			for i, v := range vals {
				fmt.Fprintf(&b, "%s=%T:%v ", cols[i], v, v)
			}
			out[table] = append(out[table], b.String())
		}
		require.NoError(t, errors.Join(rows.Err(), rows.Close()))
	}
	return out
}

// schemaOf returns the schema objects of the database at path, by name.
func schemaOf(t *testing.T, db *sql.DB) map[string]string {
	t.Helper()
	rows, err := db.Query(`SELECT type, name, tbl_name, coalesce(sql, '') FROM sqlite_schema`)
	require.NoError(t, err)
	defer rows.Close()
	m := map[string]string{}
	for rows.Next() {
		var typ, name, tbl, q string
		require.NoError(t, rows.Scan(&typ, &name, &tbl, &q))
		m[name] = typ + " on " + tbl + ": " + q
	}
	require.NoError(t, rows.Err())
	return m
}

// fillVersion6 writes, through a store of the version-6 schema, rows of
// every kind: two sources of pages (fetched, failing, gone, excluded,
// with statistics), links, chunks, alerts, documents, events, vectors,
// runs, lastmod trust and a run lock. It returns the URLs of source docs
// that the old store finds due at dueAt, in queue order.
func fillVersion6(t *testing.T, path string) (due []string) {
	t.Helper()
	old, err := open(context.Background(), path, migrations[:6])
	require.NoError(t, err)
	ctx := t.Context()
	t0 := time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC)
	for _, src := range []string{"docs", "blog"} {
		ds := make([]crawlstate.Discovered, 300)
		for i := range ds {
			u := fmt.Sprintf("https://%s.ex.com/p/%03d", src, (i*37)%300)
			ds[i] = crawlstate.Discovered{URL: u, OriginalURL: u + "/", LastMod: t0.Add(time.Duration(i) * time.Minute),
				Via: fmt.Sprintf("https://%s.ex.com/sitemap-%d.xml", src, i%3)}
		}
		_, err := old.UpsertDiscovered(ctx, src, t0, ds)
		require.NoError(t, err)
		var rs []crawlstate.Result
		for i := range 200 {
			u := fmt.Sprintf("https://%s.ex.com/p/%03d", src, i)
			at := t0.Add(time.Duration(i) * time.Second)
			r := crawlstate.Result{URL: u, At: at, Changed: true, ContentHash: fmt.Sprintf("h%d", i), ETag: fmt.Sprintf(`"e%d"`, i),
				Interval: time.Hour, NextCheck: at.Add(time.Duration(i) * time.Hour), Title: "T" + u,
				Stats: &crawlstate.Stats{Elapsed: time.Hour, Recent: []crawlstate.Check{{Elapsed: time.Hour, Changed: i%2 == 0}}, ChangeRate: 0.5, Weight: 2}}
			switch {
			case i%10 == 0:
				r = crawlstate.Result{URL: u, At: at, Gone: true}
			case i%10 == 1:
				r = crawlstate.Result{URL: u, At: at, Excluded: "image/png"}
			case i%3 == 0:
				r.Links = []string{u + "/a", u + "/b"}
				r.ReplaceChunks = true
				r.Chunks = []crawlstate.Chunk{{Ordinal: 0, TextHash: "c0" + u, Text: "zero"}, {Ordinal: 1, TextHash: "c1" + u, Text: "one", Start: 4, End: 7}}
				r.Alert = &crawlstate.Alert{ID: "alert-" + u, Kind: "changed", CreatedAt: at, Payload: []byte("{}")}
			}
			rs = append(rs, r)
		}
		require.NoError(t, old.Record(ctx, src, rs))
		// Events as the version-6 schema stores them (this build's
		// statements write the page key of version 8).
		for i := 0; i < 200; i += 3 {
			at := t0.Add(time.Duration(i) * time.Second)
			for _, stage := range []string{"fetch", "extract", "commit"} {
				_, err := old.w.Exec(`INSERT INTO events (source, url, at, stage, attempt, ok, err, detail) VALUES (?, ?, ?, ?, 1, 1, '', ?)`,
					src, fmt.Sprintf("https://%s.ex.com/p/%03d", src, i), backend.EncTime(at), stage, "HTTP 200")
				require.NoError(t, err)
			}
		}
		for i := 200; i < 220; i++ {
			require.NoError(t, old.RecordFailure(ctx, src, crawlstate.Failure{URL: fmt.Sprintf("https://%s.ex.com/p/%03d", src, i),
				At: t0, Stage: "fetch", Err: "503"}))
		}
		// A document as the version-6 schema stores it (this build's
		// PutDocument also settles the seen_at of version 9).
		_, err = old.w.Exec(`INSERT INTO documents (source, url, etag, last_modified, entries, newest_lastmod, listed_lastmod, fetched_at)
VALUES (?, ?, '"s"', '', 100, ?, ?, ?)`, src, fmt.Sprintf("https://%s.ex.com/sitemap-0.xml", src), int64(backend.ZeroTime), int64(backend.ZeroTime), backend.EncTime(t0))
		require.NoError(t, err)
		require.NoError(t, old.RecordRun(ctx, src, t0))
		require.NoError(t, old.AddLastModTrust(ctx, src, crawlstate.LastModCounts{MovedChanged: 3, StillSame: 5}, 1))
	}
	require.NoError(t, old.PutVectors(ctx, "m", map[string][]float32{"c0": {1, 2, 3}}))
	require.NoError(t, old.Lock(ctx, "docs", "run-1", t0, time.Hour))
	// The due queue as the version-6 schema reads it (this build's row
	// statements read documents.seen_at of version 9).
	rows, err := old.r.Query(`SELECT url FROM pages WHERE source = 'docs' AND gone = 0 AND next_check <= ? ORDER BY next_check, url LIMIT 1000`, backend.EncTime(dueAt))
	require.NoError(t, err)
	for rows.Next() {
		var u string
		require.NoError(t, rows.Scan(&u))
		due = append(due, u)
	}
	require.NoError(t, rows.Err())
	require.NoError(t, rows.Close())
	require.NoError(t, old.Close())
	require.Equal(t, 6, pragma(t, rawDB(t, path), "user_version"))
	return due
}

// dueAt is when fillVersion6 reads the due queue: some fetched rows are
// due, some not.
var dueAt = time.Date(2026, 3, 1, 50, 0, 0, 0, time.UTC)

// A version-6 database, whose pages table is WITHOUT ROWID, upgrades to a
// rowid pages table: every row of every table survives as it was, the
// links and chunks keep their parent rows (and lose them with it), and the
// schema is that of a new database.
func TestMigrateRowidPages(t *testing.T) {
	path := filepath.Join(t.TempDir(), "state.db")
	dueBefore := fillVersion6(t, path)
	before := dumpTables(t, rawDB(t, path))
	require.Len(t, before["pages"], 600)
	require.NotEmpty(t, before["links"])
	require.NotEmpty(t, before["chunks"])
	require.NotEmpty(t, before["alerts"])
	require.NotEmpty(t, before["events"])
	require.Len(t, before["documents"], 2)
	require.Contains(t, schemaOf(t, rawDB(t, path))["pages"], "WITHOUT ROWID")

	var logs strings.Builder
	s, err := open(context.Background(), path, migrations[:7], WithLogger(newTextLogger(&logs)))
	require.NoError(t, err)
	defer s.Close()
	require.Contains(t, logs.String(), "pages as a rowid table")
	require.Equal(t, 7, pragma(t, rawDB(t, path), "user_version"))
	require.Equal(t, before, dumpTables(t, s.w), "every row of every table, unchanged")
	require.NotContains(t, schemaOf(t, s.w)["pages"], "WITHOUT ROWID")
	var pagesIndexes int
	require.NoError(t, s.w.QueryRow(`SELECT count(*) FROM sqlite_schema WHERE type = 'index' AND tbl_name = 'pages'`).Scan(&pagesIndexes))
	require.Equal(t, 4, pagesIndexes, "the unique key, pages_due, pages_failing, pages_listed")
	var ordered int
	require.NoError(t, s.w.QueryRow(`SELECT count(*) FROM pages AS a JOIN pages AS b ON b.rowid = a.rowid + 1
		WHERE (b.source, b.url) < (a.source, a.url)`).Scan(&ordered))
	require.Zero(t, ordered, "the rows were copied in key order")
	require.Equal(t, 1, pragma(t, s.w, "foreign_keys"), "the writer enforces foreign keys again")
	rows, err := s.w.Query(`PRAGMA foreign_key_check`)
	require.NoError(t, err)
	require.False(t, rows.Next(), "no row lost its parent")
	require.NoError(t, errors.Join(rows.Err(), rows.Close()))
	// A new database of that version has the same schema.
	fresh, err := open(context.Background(), filepath.Join(t.TempDir(), "fresh.db"), migrations[:7])
	require.NoError(t, err)
	defer fresh.Close()
	require.Equal(t, schemaOf(t, fresh.w), schemaOf(t, s.w))

	// The store, upgraded the rest of the way (later versions leave pages
	// as they are; this build's statements need them), reads the moved
	// rows through their indexes.
	require.NoError(t, s.Close())
	s, err = Open(context.Background(), path)
	require.NoError(t, err)
	defer s.Close()
	ctx := t.Context()
	const u = "https://docs.ex.com/p/003" // fetched with links, chunks and an alert
	links, err := s.Links(ctx, "docs", u)
	require.NoError(t, err)
	require.Equal(t, []string{u + "/a", u + "/b"}, links)
	chunks, err := s.Chunks(ctx, "docs", u)
	require.NoError(t, err)
	require.Len(t, chunks, 2)
	dead, err := s.DeadLetters(ctx, "docs", 1)
	require.NoError(t, err)
	require.Len(t, dead, 20)
	due, err := s.Due(ctx, "docs", dueAt, crawlstate.Key{}, 1000)
	require.NoError(t, err)
	var dueAfter []string
	for _, r := range due {
		dueAfter = append(dueAfter, r.URL)
	}
	require.Greater(t, len(dueBefore), 100, "rows never fetched and fetched rows")
	require.Less(t, len(dueBefore), 300)
	require.Equal(t, dueBefore, dueAfter, "the same queue in the same order")
	n, err := s.TouchListed(ctx, "docs", "https://docs.ex.com/sitemap-0.xml", time.Date(2026, 3, 2, 0, 0, 0, 0, time.UTC))
	require.NoError(t, err)
	require.Equal(t, 100, n)

	// Deleting a row still deletes its links and chunks, and only those;
	// a link without its row is refused.
	var otherLinks, otherChunks int
	require.NoError(t, s.w.QueryRow(`SELECT (SELECT count(*) FROM links), (SELECT count(*) FROM chunks)`).Scan(&otherLinks, &otherChunks))
	_, err = s.w.Exec(`DELETE FROM pages WHERE source = 'docs' AND url = ?`, u)
	require.NoError(t, err)
	_, err = s.Links(ctx, "docs", u)
	require.ErrorIs(t, err, crawlstate.ErrNotFound)
	var linksLeft, chunksLeft int
	require.NoError(t, s.w.QueryRow(`SELECT (SELECT count(*) FROM links), (SELECT count(*) FROM chunks)`).Scan(&linksLeft, &chunksLeft))
	require.Equal(t, otherLinks-1, linksLeft)
	require.Equal(t, otherChunks-2, chunksLeft)
	_, err = s.w.Exec(`INSERT INTO links (source, url, links) VALUES ('docs', ?, x'00')`, u)
	require.ErrorContains(t, err, "FOREIGN KEY")
}

// A version-7 database's event log is keyed by page (version 8): every
// event keeps its values and gets its page's key, Events finds the old
// events through the new index in their order, new events join them, and
// the schema is that of a new database.
func TestMigrateEventKeys(t *testing.T) {
	path := filepath.Join(t.TempDir(), "state.db")
	fillVersion6(t, path)
	v7, err := open(context.Background(), path, migrations[:7])
	require.NoError(t, err)
	before := dumpTables(t, v7.w)
	require.NoError(t, v7.Close())
	require.Len(t, before["events"], 2*67*3)

	var logs strings.Builder
	s, err := Open(context.Background(), path, WithLogger(newTextLogger(&logs)))
	require.NoError(t, err)
	defer s.Close()
	require.Contains(t, logs.String(), "stage events indexed by a page key")
	require.Equal(t, len(migrations), pragma(t, rawDB(t, path), "user_version"))
	after := dumpTables(t, s.w)
	for table, rows := range before {
		switch table {
		case "events":
		case "documents": // version 9 adds seen_at, 0 in every old document
			var old []string
			for _, r := range after[table] {
				require.Contains(t, r, " seen_at=int64:0 ")
				old = append(old, strings.Replace(r, "seen_at=int64:0 ", "", 1))
			}
			require.Equal(t, rows, old, table)
		default:
			require.Equal(t, rows, after[table], table)
		}
	}
	require.Len(t, after["events"], len(before["events"]))
	var wrongKeys int
	rows, err := s.w.Query(`SELECT source, url, page_key FROM events`)
	require.NoError(t, err)
	for rows.Next() {
		var src, u string
		var key int64
		require.NoError(t, rows.Scan(&src, &u, &key))
		if key != eventKey(src, u) {
			wrongKeys++
		}
	}
	require.NoError(t, errors.Join(rows.Err(), rows.Close()))
	require.Zero(t, wrongKeys, "every event has its page's key")

	ctx := t.Context()
	const u = "https://docs.ex.com/p/003"
	t0 := time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC)
	require.NoError(t, s.LogEvents(ctx, "docs", []crawlstate.StageEvent{{URL: u, At: t0.Add(3 * time.Second), Stage: "alert", Attempt: 1, OK: true}}))
	evs, err := s.Events(ctx, "docs", u, time.Time{})
	require.NoError(t, err)
	var stages []string
	for _, e := range evs {
		require.Equal(t, u, e.URL)
		stages = append(stages, e.Stage)
	}
	require.Equal(t, []string{"fetch", "extract", "commit", "alert"}, stages, "by time, then as logged")
	evs, err = s.Events(ctx, "blog", "https://blog.ex.com/p/003", time.Time{})
	require.NoError(t, err)
	require.Len(t, evs, 3, "the other source's events are its own")

	fresh, err := Open(context.Background(), filepath.Join(t.TempDir(), "fresh.db"))
	require.NoError(t, err)
	defer fresh.Close()
	require.Equal(t, schemaOf(t, fresh.w), schemaOf(t, s.w))
}

// Pages whose event keys are equal (forced here: every event gets the
// key of one page) keep their events apart: Events checks source and URL.
func TestEventKeyCollision(t *testing.T) {
	s, err := Open(context.Background(), filepath.Join(t.TempDir(), "state.db"))
	require.NoError(t, err)
	defer s.Close()
	ctx := t.Context()
	at := time.Unix(1e9, 0)
	require.NoError(t, s.LogEvents(ctx, "docs", []crawlstate.StageEvent{
		{URL: "https://ex.com/a", At: at, Stage: "fetch"}, {URL: "https://ex.com/b", At: at, Stage: "extract"}}))
	require.NoError(t, s.LogEvents(ctx, "blog", []crawlstate.StageEvent{{URL: "https://ex.com/a", At: at, Stage: "commit"}}))
	_, err = s.w.Exec(`UPDATE events SET page_key = ?`, eventKey("docs", "https://ex.com/a"))
	require.NoError(t, err)
	evs, err := s.Events(ctx, "docs", "https://ex.com/a", time.Time{})
	require.NoError(t, err)
	require.Len(t, evs, 1, "the other page's and the other source's events share the key, not the answer")
	require.Equal(t, "fetch", evs[0].Stage)
}
