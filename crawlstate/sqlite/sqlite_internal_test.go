package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/recrawl/recrawl/crawlstate"
	"github.com/recrawl/recrawl/crawlstate/internal/backend"
	"github.com/stretchr/testify/require"
)

func rawDB(t *testing.T, path string) *sql.DB {
	t.Helper()
	db, err := sql.Open("sqlite3", path)
	require.NoError(t, err)
	t.Cleanup(func() { db.Close() })
	return db
}

func pragma(t *testing.T, db *sql.DB, name string) int {
	t.Helper()
	var v int
	require.NoError(t, db.QueryRow("PRAGMA "+name).Scan(&v))
	return v
}

// testNextStep stands for the next real migration (a later issue's table
// and a new pages column), to exercise an upgrade to a version this build
// does not know.
var testNextStep = migration{version: len(migrations) + 1, name: "test: alerts", sql: `
CREATE TABLE test_alerts (
	source TEXT NOT NULL, url TEXT NOT NULL, old_hash TEXT NOT NULL, new_hash TEXT NOT NULL,
	PRIMARY KEY (source, url, old_hash, new_hash)
) WITHOUT ROWID;
ALTER TABLE pages ADD COLUMN test_note TEXT NOT NULL DEFAULT 'none';
`}

// createV1ByHand writes a version-1 database the way an older build left
// it, with one row in it.
func createV1ByHand(t *testing.T, path string) {
	t.Helper()
	db := rawDB(t, path)
	_, err := db.Exec(schemaV1)
	require.NoError(t, err)
	_, err = db.Exec(fmt.Sprintf(`PRAGMA application_id = %d; PRAGMA user_version = 1`, applicationID))
	require.NoError(t, err)
	z := int64(backend.ZeroTime)
	_, err = db.Exec(`INSERT INTO pages (source, url, original_url, first_seen, last_seen, last_fetched,
		next_check, interval_ns, content_hash, sitemap_lastmod, visits)
		VALUES ('docs', 'https://ex.com/a', 'https://EX.com/a', ?, ?, ?, ?, ?, 'h1', ?, 3)`,
		int64(1e18), int64(1e18), int64(1e18), int64(1e18)+int64(time.Hour), int64(time.Hour), z)
	require.NoError(t, err)
	require.NoError(t, db.Close())
}

func TestMigrateUpgradesToNextStep(t *testing.T) {
	path := filepath.Join(t.TempDir(), "state.db")
	createV1ByHand(t, path)

	s, err := open(context.Background(), path, append(migrations[:len(migrations):len(migrations)], testNextStep))
	require.NoError(t, err)
	defer s.Close()

	db := rawDB(t, path)
	require.Equal(t, testNextStep.version, pragma(t, db, "user_version"))
	require.Equal(t, applicationID, pragma(t, db, "application_id"))
	var note string
	require.NoError(t, db.QueryRow(`SELECT test_note FROM pages WHERE url = 'https://ex.com/a'`).Scan(&note))
	require.Equal(t, "none", note, "the new column was added to existing rows")
	_, err = db.Exec(`INSERT INTO test_alerts VALUES ('docs', 'u', 'a', 'b')`)
	require.NoError(t, err, "the new table exists")

	r, err := s.Get(t.Context(), "docs", "https://ex.com/a")
	require.NoError(t, err)
	require.Equal(t, "https://EX.com/a", r.OriginalURL)
	require.Equal(t, "h1", r.ContentHash)
	require.Equal(t, 3, r.Visits)
	require.Equal(t, time.Hour, r.Interval)
	require.Equal(t, time.Unix(0, 1e18).UTC(), r.LastFetched)
	require.True(t, r.SitemapLastMod.IsZero())

	// This build refuses the upgraded file.
	require.NoError(t, s.Close())
	_, err = Open(context.Background(), path)
	var sv *SchemaVersionError
	require.ErrorAs(t, err, &sv)
	require.Equal(t, testNextStep.version, sv.Version)
	require.Equal(t, len(migrations), sv.Supported)
}

func TestMigrateFailedStepChangesNothing(t *testing.T) {
	path := filepath.Join(t.TempDir(), "state.db")
	createV1ByHand(t, path)
	bad := migration{version: len(migrations) + 1, name: "test: broken", sql: `
CREATE TABLE half_done (x INTEGER);
INSERT INTO no_such_table VALUES (1);`}
	_, err := open(context.Background(), path, append(migrations[:len(migrations):len(migrations)], bad))
	require.Error(t, err)
	require.Contains(t, err.Error(), fmt.Sprintf("version %d (test: broken)", bad.version))

	db := rawDB(t, path)
	require.Equal(t, len(migrations), pragma(t, db, "user_version"), "the steps before the broken one stay applied")
	var n int
	require.NoError(t, db.QueryRow(`SELECT count(*) FROM sqlite_schema WHERE name = 'half_done'`).Scan(&n))
	require.Zero(t, n, "the failed step was rolled back as a whole")

	s, err := Open(context.Background(), path)
	require.NoError(t, err, "the database is still usable")
	require.NoError(t, s.Close())
}

func TestMigrateRejectsMisnumberedStep(t *testing.T) {
	path := filepath.Join(t.TempDir(), "state.db")
	_, err := open(context.Background(), path, []migration{{version: 1, sql: schemaV1}, {version: 3, sql: `SELECT 1`}})
	require.ErrorContains(t, err, "numbered")
}

func TestMigrationsAreNumberedInOrder(t *testing.T) {
	for i, m := range migrations {
		require.Equal(t, i+1, m.version, "migrations[%d]", i)
		require.NotEmpty(t, m.name)
		require.NotEmpty(t, strings.TrimSpace(m.sql))
	}
}

// Several processes creating the same new file apply each step once.
func TestMigrateConcurrentOpen(t *testing.T) {
	path := filepath.Join(t.TempDir(), "state.db")
	steps := append(migrations[:len(migrations):len(migrations)], testNextStep)
	var wg sync.WaitGroup
	errs := make([]error, 6)
	for i := range errs {
		wg.Go(func() {
			s, err := open(context.Background(), path, steps)
			if err == nil {
				err = s.Close()
			}
			errs[i] = err
		})
	}
	wg.Wait()
	for _, err := range errs {
		require.NoError(t, err)
	}
	require.Equal(t, len(steps), pragma(t, rawDB(t, path), "user_version"))
}

func TestJournalModeIsWAL(t *testing.T) {
	path := filepath.Join(t.TempDir(), "state.db")
	s, err := Open(context.Background(), path)
	require.NoError(t, err)
	defer s.Close()
	var mode string
	require.NoError(t, s.r.QueryRow(`PRAGMA journal_mode`).Scan(&mode))
	require.Equal(t, "wal", mode)
	_, err = s.r.Exec(`DELETE FROM pages`)
	require.Error(t, err, "the read pool is read-only")
}

func TestPageSize(t *testing.T) {
	tests := []struct {
		name     string
		existing int // page size of a file written before OpenSQLite; 0: none
		want     int
	}{
		{"a new file gets newPageSize", 0, newPageSize},
		{"an existing file keeps its page size", 4096, 4096},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "state.db")
			if tc.existing > 0 {
				createV1ByHand(t, path) // SQLite's default page size
				require.Equal(t, tc.existing, pragma(t, rawDB(t, path), "page_size"))
			}
			s, err := Open(context.Background(), path)
			require.NoError(t, err)
			_, err = s.UpsertDiscovered(t.Context(), "docs", time.Unix(1e9, 0), []crawlstate.Discovered{{URL: "https://ex.com/b"}})
			require.NoError(t, err)
			var mode string
			require.NoError(t, s.w.QueryRow(`PRAGMA journal_mode`).Scan(&mode))
			require.Equal(t, "wal", mode)
			require.NoError(t, s.Close())
			require.Equal(t, tc.want, pragma(t, rawDB(t, path), "page_size"))
		})
	}
}

// The due queue must stay an index range scan on a big table: no full
// scan, no temporary B-tree for ORDER BY.
func TestDueQueryPlan(t *testing.T) {
	s, err := Open(context.Background(), filepath.Join(t.TempDir(), "state.db"))
	require.NoError(t, err)
	defer s.Close()
	ds := make([]crawlstate.Discovered, 2000)
	for i := range ds {
		ds[i] = crawlstate.Discovered{URL: fmt.Sprintf("https://ex.com/%d", i)}
	}
	_, err = s.UpsertDiscovered(t.Context(), "docs", time.Unix(1e9, 0), ds)
	require.NoError(t, err)
	_, err = s.UpsertDiscovered(t.Context(), "blog", time.Unix(1e9, 0), ds)
	require.NoError(t, err)
	_, err = s.w.Exec(`ANALYZE`)
	require.NoError(t, err)

	plan := func(query string, args ...any) string { return queryPlan(t, s.r, query, args...) }
	due := plan(dueSQL, sql.Named("source", "docs"), sql.Named("now", int64(2e18)),
		sql.Named("after_next", int64(backend.ZeroTime)), sql.Named("after_url", ""), sql.Named("limit", 500))
	require.Contains(t, due, "SEARCH pages USING INDEX pages_due", due)
	require.Contains(t, due, "(source=? AND gone=? AND (next_check,url)>(?,?) AND next_check<?)", due)
	require.NotContains(t, due, "TEMP B-TREE", due)

	count := plan(`SELECT count(*) FROM pages WHERE source = ? AND gone = 0 AND next_check <= ?`, "docs", int64(2e18))
	require.Contains(t, count, "pages_due", count)
	next := plan(`SELECT min(next_check) FROM pages WHERE source = ? AND gone = 0`, "docs")
	require.Contains(t, next, "pages_due", next)
}

// A first listing of bulkIndexRows URLs or more into an empty table builds
// pages_due and pages_listed after the insert: the schema ends as it began,
// the queries still use the indexes, and the rows are those of the
// row-by-row path (the first entry of a duplicate wins).
func TestFirstBulkListingRebuildsIndexes(t *testing.T) {
	path := filepath.Join(t.TempDir(), "state.db")
	s, err := Open(context.Background(), path)
	require.NoError(t, err)
	defer s.Close()
	ctx := t.Context()
	schema := func() map[string]string {
		rows, err := s.r.QueryContext(ctx, `SELECT name, sql FROM sqlite_schema WHERE type = 'index' AND sql IS NOT NULL`)
		require.NoError(t, err)
		defer rows.Close()
		m := map[string]string{}
		for rows.Next() {
			var name, q string
			require.NoError(t, rows.Scan(&name, &q))
			m[name] = q
		}
		require.NoError(t, rows.Err())
		return m
	}
	before := schema()
	require.Contains(t, before, "pages_due")
	require.Contains(t, before, "pages_listed")

	const n = bulkIndexRows + 500
	t0 := time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC)
	ds := make([]crawlstate.Discovered, 0, n+1)
	for i := range n {
		ds = append(ds, crawlstate.Discovered{URL: fmt.Sprintf("https://ex.com/p/%06d", (i*7919)%n), OriginalURL: "first",
			LastMod: t0.Add(time.Duration(i) * time.Second), Via: fmt.Sprintf("https://ex.com/sitemap-%d.xml", i%7)})
	}
	ds = append(ds, crawlstate.Discovered{URL: ds[3].URL, OriginalURL: "second"})
	st, err := s.UpsertDiscovered(ctx, "docs", t0, ds)
	require.NoError(t, err)
	require.Equal(t, crawlstate.UpsertStats{New: n}, st)
	require.Equal(t, before, schema(), "the indexes are back, as the schema defined them")

	r, err := s.Get(ctx, "docs", ds[3].URL)
	require.NoError(t, err)
	require.Equal(t, "first", r.OriginalURL)
	require.Equal(t, ds[3].Via, r.ListedIn)
	require.True(t, r.NextCheck.IsZero(), "due now")

	due, err := s.Due(ctx, "docs", t0, crawlstate.Key{}, n+1)
	require.NoError(t, err)
	require.Len(t, due, n)
	var plan []string
	rows, err := s.r.QueryContext(ctx, `EXPLAIN QUERY PLAN `+dueSQL, sql.Named("source", "docs"), sql.Named("now", backend.EncTime(t0)),
		sql.Named("after_next", backend.EncTime(time.Time{})), sql.Named("after_url", ""), sql.Named("limit", 10))
	require.NoError(t, err)
	for rows.Next() {
		var id, parent, notused int
		var detail string
		require.NoError(t, rows.Scan(&id, &parent, &notused, &detail))
		plan = append(plan, detail)
	}
	require.NoError(t, errors.Join(rows.Err(), rows.Close()))
	require.Contains(t, strings.Join(plan, "\n"), "pages_due", plan)
	touched, err := s.TouchListed(ctx, "docs", "https://ex.com/sitemap-3.xml", t0.Add(time.Hour))
	require.NoError(t, err)
	require.Equal(t, n/7, touched) // i%7 == 3 for i < n (n is a multiple of 7)

	// A second source goes through the row-by-row path: the table holds
	// more rows than the batch.
	st, err = s.UpsertDiscovered(ctx, "blog", t0, ds[:bulkIndexRows])
	require.NoError(t, err)
	require.Equal(t, crawlstate.UpsertStats{New: bulkIndexRows}, st)
	require.Equal(t, before, schema())
	st, err = s.UpsertDiscovered(ctx, "docs", t0.Add(2*time.Hour), ds)
	require.NoError(t, err)
	require.Equal(t, crawlstate.UpsertStats{Seen: n}, st)
}

// Reading connections map the database file; the writer does not.
func TestReadersMapTheFile(t *testing.T) {
	s, err := Open(context.Background(), filepath.Join(t.TempDir(), "state.db"))
	require.NoError(t, err)
	defer s.Close()
	for range 3 { // connections of the pool, as they are opened
		var n int64
		require.NoError(t, s.r.QueryRowContext(t.Context(), `PRAGMA mmap_size`).Scan(&n))
		require.Equal(t, int64(readerMmapBytes), n)
	}
	var n int64
	require.NoError(t, s.w.QueryRowContext(t.Context(), `PRAGMA mmap_size`).Scan(&n))
	require.Zero(t, n)
}

// A listing whose new URLs outnumber the rows of the table (a site that
// grew tenfold) builds pages_due and pages_listed after the merge, and
// ends exactly as the row-by-row merge into a larger table: the same
// counts, rows, queue and listings, the schema as it began.
func TestGrowingListingRebuildsIndexes(t *testing.T) {
	ctx := t.Context()
	t0 := time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC)
	const old, grown = 1000, bulkIndexRows + 2000
	listing := func(n int, suffix string, lastmod time.Time) []crawlstate.Discovered {
		ds := make([]crawlstate.Discovered, n)
		for i := range ds {
			k := (i * 7919) % n
			ds[i] = crawlstate.Discovered{URL: fmt.Sprintf("https://ex.com/p/%06d%s", k, suffix), OriginalURL: "o" + suffix,
				LastMod: lastmod.Add(time.Duration(k) * time.Second), Via: fmt.Sprintf("https://ex.com/sitemap-%d.xml", k%5)}
		}
		return ds
	}
	run := func(t *testing.T, pad int) (*State, crawlstate.UpsertStats) {
		s, err := Open(context.Background(), filepath.Join(t.TempDir(), "state.db"))
		require.NoError(t, err)
		t.Cleanup(func() { s.Close() })
		if pad > 0 { // another source makes the table larger than the batch
			_, err := s.UpsertDiscovered(ctx, "pad", t0, listing(pad, "", t0))
			require.NoError(t, err)
		}
		before := listing(old, "", t0)
		_, err = s.UpsertDiscovered(ctx, "docs", t0, before)
		require.NoError(t, err)
		var rs []crawlstate.Result
		for i, d := range before[:300] {
			rs = append(rs, crawlstate.Result{URL: d.URL, At: t0, Changed: true, ContentHash: "h", NextCheck: t0.Add(time.Duration(i+1) * time.Hour)})
		}
		require.NoError(t, s.Record(ctx, "docs", rs))
		require.NoError(t, s.RecordFailure(ctx, "docs", crawlstate.Failure{URL: before[5].URL, At: t0, Stage: "fetch", Err: "503"}))
		require.NoError(t, s.Record(ctx, "docs", []crawlstate.Result{{URL: before[7].URL, At: t0, Gone: true}}))

		// The old URLs again (a tenth with a moved lastmod, one from
		// another sitemap), then many new ones between them.
		again := listing(old, "", t0)
		for i := range again {
			if i%10 == 0 {
				again[i].LastMod = again[i].LastMod.Add(time.Minute)
			}
		}
		again[3].Via = "https://ex.com/sitemap-moved.xml"
		batch := append(listing(grown, "/more", t0), again...)
		st, err := s.UpsertDiscovered(ctx, "docs", t0.Add(time.Minute), batch)
		require.NoError(t, err)
		return s, st
	}
	rebuilt, st := run(t, 0)
	rowByRow, want := run(t, 3*grown)
	require.Equal(t, want, st)
	require.Equal(t, grown, st.New)
	require.Equal(t, old, st.Seen)
	require.Equal(t, schemaOf(t, rowByRow.w), schemaOf(t, rebuilt.w), "the indexes are back, as the schema defined them")

	dump := func(s *State) []string {
		rows, err := s.w.Query(`SELECT * FROM pages WHERE source = 'docs' ORDER BY url`)
		require.NoError(t, err)
		defer rows.Close()
		cols, err := rows.Columns()
		require.NoError(t, err)
		var out []string
		for rows.Next() {
			vals := make([]any, len(cols))
			ptrs := make([]any, len(cols))
			for i := range vals {
				ptrs[i] = &vals[i]
			}
			require.NoError(t, rows.Scan(ptrs...))
			out = append(out, fmt.Sprint(vals...))
		}
		require.NoError(t, rows.Err())
		return out
	}
	require.Equal(t, dump(rowByRow), dump(rebuilt), "the same rows")
	for _, now := range []time.Time{t0, t0.Add(100 * time.Hour), t0.Add(1000 * time.Hour)} {
		a, err := rebuilt.Due(ctx, "docs", now, crawlstate.Key{}, 3*grown)
		require.NoError(t, err)
		b, err := rowByRow.Due(ctx, "docs", now, crawlstate.Key{}, 3*grown)
		require.NoError(t, err)
		require.Equal(t, b, a, "the same queue at %v", now)
	}
	for _, via := range []string{"https://ex.com/sitemap-2.xml", "https://ex.com/sitemap-moved.xml"} {
		a, err := rebuilt.TouchListed(ctx, "docs", via, t0.Add(time.Hour))
		require.NoError(t, err)
		b, err := rowByRow.TouchListed(ctx, "docs", via, t0.Add(time.Hour))
		require.NoError(t, err)
		require.Equal(t, b, a, via)
		require.Positive(t, a, via)
	}
	dead, err := rebuilt.DeadLetters(ctx, "docs", 1)
	require.NoError(t, err)
	require.Len(t, dead, 1)
}

// UpsertDiscovered's statements are driven by the batch: each URL of it
// is one lookup in pages (never a scan of the source's rows), and the new
// ones are found by a lookup in the scratch table.
func TestUpsertDiscoveredQueryPlans(t *testing.T) {
	s, err := Open(context.Background(), filepath.Join(t.TempDir(), "state.db"))
	require.NoError(t, err)
	defer s.Close()
	ds := make([]crawlstate.Discovered, 2000)
	for i := range ds {
		ds[i] = crawlstate.Discovered{URL: fmt.Sprintf("https://ex.com/%d", i)}
	}
	_, err = s.UpsertDiscovered(t.Context(), "docs", time.Unix(1e9, 0), ds)
	require.NoError(t, err)
	_, err = s.w.Exec(`ANALYZE`)
	require.NoError(t, err)
	_, err = s.w.Exec(scratchTables)
	require.NoError(t, err)
	plan := func(query string) string {
		return queryPlan(t, s.w, query, sql.Named("source", "docs"), sql.Named("now", 1),
			sql.Named("zero", int64(backend.ZeroTime)), sql.Named("keep_tombstones", false))
	}
	classify := plan(classifySQL)
	require.Regexp(t, `(?s)^SCAN r\nSEARCH p USING INDEX sqlite_autoindex_pages_1 \(source=\? AND url=\?\)$`, classify)
	for _, m := range mergeSQL {
		p := plan(m.sql)
		if m.name == "insert new" {
			require.Contains(t, p, "SCAN discovered_raw", p)
			require.Contains(t, p, "USING INDEX sqlite_autoindex_discovered_1 FOR IN-OPERATOR", p)
		} else {
			require.Contains(t, p, "SEARCH pages USING COVERING INDEX sqlite_autoindex_pages_1 (source=? AND url=?)", m.name+"\n"+p)
		}
		require.NotContains(t, p, "SCAN pages", m.name+"\n"+p)
		require.NotContains(t, p, "TEMP B-TREE", m.name+"\n"+p)
	}
}

// queryPlan returns the detail lines of EXPLAIN QUERY PLAN for query on db,
// one line a step.
func queryPlan(t *testing.T, db *sql.DB, query string, args ...any) string {
	t.Helper()
	rows, err := db.Query("EXPLAIN QUERY PLAN "+query, args...)
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

// The positions stampSeen reads are those of last_seen and listed_in in
// both column lists.
func TestRowColumnPositions(t *testing.T) {
	names := strings.Split(storedRowColumns, ",")
	require.Len(t, names, rowColumnCount)
	require.Equal(t, "last_seen", strings.TrimSpace(names[colLastSeen]))
	require.Equal(t, "listed_in", strings.TrimSpace(names[colListedIn]))
	require.Equal(t, storedRowColumns, strings.Replace(rowColumns, seenSQL, "last_seen", 1), "the lists differ in last_seen alone")
}
