package sqlite

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/recrawl/recrawl/crawlstate"
	"github.com/recrawl/recrawl/crawlstate/internal/backend"
)

// SQLite is the default State: one SQLite database file in WAL mode.
//
// Writes go through a pool of exactly one connection, so writers of one
// SQLite value queue in Go instead of failing with SQLITE_BUSY, and every
// write transaction begins IMMEDIATE (it takes the write lock first, so two
// processes sharing the file wait for each other, up to the busy timeout,
// instead of deadlocking). Reads use a separate pool of read-only
// connections that see the last committed state and never block the writer.
// An in-memory database (path ":memory:") uses the single connection for
// both.
//
// Commits survive a crash of the process. The file runs with
// synchronous=NORMAL, the usual setting for WAL: a power failure can undo
// the last few commits but never corrupts the database.
//
// Times are stored as Unix nanoseconds and come back in UTC, without a
// monotonic clock reading; the zero time stays zero. Times outside the
// years 1678 to 2262 (the range of int64 nanoseconds) are clamped to it.
//
// A SQLite is safe for concurrent use, and several SQLite values (or
// processes) may open the same file.
type State struct {
	w        *sql.DB // exactly one connection: every write
	r        *sql.DB // read-only connections; == w for :memory:
	prepared map[string]*sql.Stmt
	path     string
	opts     crawlstate.Options
	log      *slog.Logger
}

var _ crawlstate.State = (*State)(nil)

// check checks the arguments of the State's calls and makes its errors.
const check = backend.Checker("crawlstate")

// Option configures Open.
type Option func(*sqliteConfig)

type sqliteConfig struct {
	opts        crawlstate.Options
	busyTimeout time.Duration
	readConns   int
	log         *slog.Logger
}

// WithOptions sets the policies of the store.
func WithOptions(o crawlstate.Options) Option { return func(c *sqliteConfig) { c.opts = o } }

// WithKeepTombstones keeps gone rows gone when discovery lists them again
// (Options.KeepTombstones).
func WithKeepTombstones() Option { return func(c *sqliteConfig) { c.opts.KeepTombstones = true } }

// WithBusyTimeout sets how long a statement waits for another connection
// or process that holds the database's write lock (default 5s).
func WithBusyTimeout(d time.Duration) Option { return func(c *sqliteConfig) { c.busyTimeout = d } }

// WithReadConns sets the size of the read-only connection pool (default 4).
func WithReadConns(n int) Option { return func(c *sqliteConfig) { c.readConns = n } }

// WithLogger sets the logger for schema migrations and run-lock takeovers
// (default: discard).
func WithLogger(l *slog.Logger) Option { return func(c *sqliteConfig) { c.log = l } }

// DefaultBusyTimeout is how long a statement waits for another process's
// write lock unless WithBusyTimeout says otherwise.
const DefaultBusyTimeout = 5 * time.Second

// Open opens the state database at path, creating it if needed, and
// upgrades its schema to the version this build knows. The path ":memory:"
// opens a private in-memory database that disappears on Close.
//
// It returns a *SchemaVersionError for a database written by a newer
// recrawl and an error wrapping ErrNotStateDB for a file of another
// application.
func Open(ctx context.Context, path string, opts ...Option) (*State, error) {
	return open(ctx, path, migrations, opts...)
}

// openSQLite opens path with the schema history steps (tests pass a longer
// history to exercise upgrades).
func open(ctx context.Context, path string, steps []migration, opts ...Option) (*State, error) {
	cfg := sqliteConfig{busyTimeout: DefaultBusyTimeout, readConns: 4}
	for _, o := range opts {
		o(&cfg)
	}
	if path == "" {
		return nil, errors.New(`crawlstate: open: empty path; pass a file path or ":memory:"`)
	}
	if cfg.busyTimeout < 0 {
		return nil, fmt.Errorf("crawlstate: open %s: busy timeout %v is negative", path, cfg.busyTimeout)
	}
	if cfg.readConns < 1 {
		return nil, fmt.Errorf("crawlstate: open %s: %d read connections; need at least 1", path, cfg.readConns)
	}
	if cfg.log == nil {
		cfg.log = slog.New(slog.DiscardHandler)
	}

	params := url.Values{}
	params.Set("_busy_timeout", strconv.FormatInt(cfg.busyTimeout.Milliseconds(), 10))
	params.Set("_foreign_keys", "on")
	params.Set("_txlock", "immediate")
	memory := path == ":memory:"
	if !memory {
		// WAL mode is set by writerDriver, after the page size.
		params.Set("_synchronous", "NORMAL")
	}
	// The writer's page cache holds the B-tree pages a large batch keeps
	// returning to: UpsertDiscovered of a million new URLs appends to
	// pages_listed at one point per listing document, hundreds of leaf
	// pages that SQLite's default 2 MiB cache would evict and reread on
	// every row. Pages are allocated only as they are used.
	params.Set("_cache_size", strconv.Itoa(-writerCacheKiB))
	// The one writing connection is used by one goroutine at a time (the
	// pool of one hands it out), as a reading connection is: SQLite's
	// per-call connection mutex is pure cost there too (a lock and an
	// unlock per step of every row written).
	params.Set("_mutex", "no")

	w, err := sql.Open(writerDriver, dsn(path, params))
	if err != nil {
		return nil, fmt.Errorf("crawlstate: open %s: %w", path, err)
	}
	// One connection: it owns the in-memory database and the temp tables
	// used by UpsertDiscovered; it must never be closed while idle.
	w.SetMaxOpenConns(1)
	w.SetMaxIdleConns(1)
	w.SetConnMaxLifetime(0)
	w.SetConnMaxIdleTime(0)

	s := &State{w: w, r: w, path: path, opts: cfg.opts, log: cfg.log}
	if err := migrate(ctx, w, path, steps, cfg.busyTimeout, cfg.log); err != nil {
		_ = w.Close()
		return nil, err
	}
	if len(steps) >= len(migrations) { // a test's shorter history lacks the tables
		if err := s.prepareWrites(ctx); err != nil {
			_ = s.Close()
			return nil, err
		}
	}
	if memory {
		return s, nil
	}

	params.Del("_cache_size") // readers keep SQLite's default
	params.Del("_txlock")
	params.Set("_query_only", "true")
	// A reading connection is used by one goroutine at a time (the pool
	// hands it out), so SQLite's per-call connection mutex is pure cost:
	// it was a tenth of a due query's CPU time (_mutex=no, kept from the
	// writer's parameters). The driver keeps the reads' prepared
	// statements (the due query, Get, ...) per connection.
	params.Set("_stmt_cache_size", strconv.Itoa(readerStmtCache))
	r, err := sql.Open(readerDriver, dsn(path, params))
	if err != nil {
		_ = w.Close()
		return nil, fmt.Errorf("crawlstate: open %s for reading: %w", path, err)
	}
	r.SetMaxOpenConns(cfg.readConns)
	r.SetMaxIdleConns(cfg.readConns)
	if err := r.PingContext(ctx); err != nil {
		_ = errors.Join(r.Close(), w.Close())
		return nil, fmt.Errorf("crawlstate: open %s for reading: %w", path, err)
	}
	s.r = r
	return s, nil
}

// readerDriver is go-sqlite3 with every new connection reading the
// database file through a memory map of up to readerMmapBytes: the due
// queue looks each row up in pages by its key, and a page read is then a
// memory access instead of a pread system call (the file's pages are
// shared with the operating system's cache, not copied per connection).
// Writes do not go through the map.
const readerDriver = "sqlite3-recrawl-reader"

// readerMmapBytes bounds the memory map of a reading connection: the
// largest map SQLite is built to allow (SQLITE_MAX_MMAP_SIZE), so that a
// state file of up to 2 GiB is read without a system call per page.
// It is address space, not memory: the mapped pages are the operating
// system's file cache.
const readerMmapBytes = 0x7fff0000

// writerDriver is go-sqlite3 with, on every new connection, the SQL
// function recrawl_event_key (eventKey) for the migration that keys the
// event log (schemaEventKeys); then, for a file, the page size of a
// database not yet written (newPageSize; a no-op on an existing one) and
// WAL mode, which is stored in the file and fixes its page size (the
// go-sqlite3 parameter _journal_mode would switch to WAL first, leaving a
// new file at SQLite's default of 4 KiB).
const writerDriver = "sqlite3-recrawl-writer"

// newPageSize is the page size of a state database this build creates.
// UpsertDiscovered of a million new URLs into a new file (one run each,
// alternating, load 8-12): 12.1 s CPU at 4 KiB, 9.5-9.7 s at 8 KiB,
// 8.5 s at 16 KiB (fewer pages to allocate, balance, spill to the WAL
// and look up in its index). Larger pages cost the scattered row updates
// of a run (Record of 304s on a million rows writes a page per row to
// the WAL): 40,000 such updates took 2.7-3.3 s CPU at 4 KiB, 2.9 s at
// 8 KiB, 3.1-3.2 s at 16 KiB, so 8 KiB. Existing files keep their page
// size: WAL mode cannot change it.
const newPageSize = 8 << 10

// readerStmtCache is how many prepared statements a reading connection
// keeps.
const readerStmtCache = 16

// writerCacheKiB bounds the writer connection's page cache, in KiB.
const writerCacheKiB = 64 << 10

// dsn builds a go-sqlite3 data source name. File paths become file: URIs
// with the path escaped, so '?', '#' and '%' in a file name stay part of it.
func dsn(path string, params url.Values) string {
	if path == ":memory:" {
		return path + "?" + params.Encode()
	}
	return "file:" + (&url.URL{Path: path}).EscapedPath() + "?" + params.Encode()
}

// Close releases both connection pools.
func (s *State) Close() error {
	for _, st := range s.prepared {
		_ = st.Close()
	}
	var errR error
	if s.r != s.w {
		errR = s.r.Close()
	}
	if err := errors.Join(s.w.Close(), errR); err != nil {
		return fmt.Errorf("crawlstate: close %s: %w", s.path, err)
	}
	return nil
}

// rowColumns lists the pages columns in the order decodeRow reads them
// (all but source: the caller knows it).
const rowColumns = `url, original_url, first_seen, ` + seenSQL + `, last_fetched,` + rowColumnsRest

// rowColumnsRest are the columns of rowColumns after last_seen.
const rowColumnsRest = `
	next_check, interval_ns, content_hash, etag, last_modified, sitemap_lastmod,
	missing_runs, gone, visits, changes, failures, last_error,
	last_stage, last_failure, title, canonical, alias_of, listed_in,
	last_changed, elapsed_ns, recent, origin_modified, change_rate, weight, excluded`

// colLastSeen and colListedIn are the positions of last_seen and
// listed_in in rowColumns and storedRowColumns.
const (
	colLastSeen = 3
	colListedIn = 22
)

// storedRowColumns is rowColumns with the stored last_seen, for
// queryStampedRows.
const storedRowColumns = `url, original_url, first_seen, last_seen, last_fetched,` + rowColumnsRest

// seenSQL is a pages row's LastSeen: its last_seen, or the seen_at of the
// document it was listed in at that document's last full read, when later
// (TouchListed stamps the document instead of every row). The
// subquery is one seek in documents' primary key.
const seenSQL = `CASE WHEN pages.listed_in = '' THEN pages.last_seen ELSE COALESCE((
	SELECT max(pages.last_seen, d.seen_at) FROM documents d
	WHERE d.source = pages.source AND d.url = pages.listed_in AND pages.last_seen >= d.fetched_at),
	pages.last_seen) END`

// unseenSQL holds for a pages row whose LastSeen (seenSQL) is before
// :run_start; its first term alone decides most rows.
const unseenSQL = `pages.last_seen < :run_start AND NOT EXISTS (
	SELECT 1 FROM documents d
	WHERE d.source = pages.source AND d.url = pages.listed_in
		AND d.seen_at >= :run_start AND pages.last_seen >= d.fetched_at)`

// rowColumnCount is the number of columns in rowColumns.
const rowColumnCount = 30

// decodeRow converts one row selected as rowColumns, as the driver
// produced its values, into *r (a zero Row, in place: a Row is wide): the
// generic conversions of database/sql's Scan (reflection, byte slices
// copied once more) cost more than the query itself on a page of wide
// rows.
func decodeRow(r *crawlstate.Row, source string, vals []driver.Value) error {
	var d rowDecoder
	*r = crawlstate.Row{
		Source: source, URL: d.text(vals[0], 0), OriginalURL: d.text(vals[1], 1),
		FirstSeen: backend.DecTime(d.int(vals[2], 2)), LastSeen: backend.DecTime(d.int(vals[3], 3)), LastFetched: backend.DecTime(d.int(vals[4], 4)),
		NextCheck: backend.DecTime(d.int(vals[5], 5)), Interval: time.Duration(d.int(vals[6], 6)),
		ContentHash: d.text(vals[7], 7), ETag: d.text(vals[8], 8), LastModified: d.text(vals[9], 9),
		SitemapLastMod: backend.DecTime(d.int(vals[10], 10)),
		MissingRuns:    int(d.int(vals[11], 11)), Gone: d.int(vals[12], 12) != 0,
		Visits: int(d.int(vals[13], 13)), Changes: int(d.int(vals[14], 14)), Failures: int(d.int(vals[15], 15)),
		LastError: d.text(vals[16], 16), LastStage: d.text(vals[17], 17), LastFailure: backend.DecTime(d.int(vals[18], 18)),
		Title: d.text(vals[19], 19), Canonical: d.text(vals[20], 20), AliasOf: d.text(vals[21], 21), ListedIn: d.text(vals[22], 22),
		Excluded: d.text(vals[29], 29),
	}
	return d.stats(r, vals, 23)
}

// stats decodes the row's statistics from the six columns from at on
// (last_changed, elapsed_ns, recent, origin_modified, change_rate,
// weight, as in rowColumns), and returns the first error of the row's
// decoding.
func (d *rowDecoder) stats(r *crawlstate.Row, vals []driver.Value, at int) error {
	r.Stats.LastChanged = backend.DecTime(d.int(vals[at], at))
	r.Stats.Elapsed = time.Duration(d.int(vals[at+1], at+1))
	r.Stats.LastModified = backend.DecTime(d.int(vals[at+3], at+3))
	r.Stats.ChangeRate, r.Stats.Weight = d.real(vals[at+4], at+4), d.real(vals[at+5], at+5)
	if d.err != nil {
		return fmt.Errorf("row %q: %w", r.URL, d.err)
	}
	var recent []byte
	switch v := vals[at+2].(type) {
	case nil:
	case []byte:
		recent = v
	default:
		return fmt.Errorf("row %q: %w: column recent holds %T", r.URL, backend.ErrCorrupt, v)
	}
	var err error
	if r.Stats.Recent, err = decodeChecks(recent); err != nil {
		return fmt.Errorf("row %q: %w", r.URL, err)
	}
	return nil
}

// rowDecoder converts the column values of decodeRow, keeping the first
// value of an unexpected type as its error.
type rowDecoder struct{ err error }

func (d *rowDecoder) fail(i int, v any) {
	if d.err == nil {
		d.err = fmt.Errorf("%w: column %d holds %T", backend.ErrCorrupt, i, v)
	}
}

func (d *rowDecoder) text(v any, i int) string {
	switch v := v.(type) {
	case string:
		return v
	case []byte:
		return string(v)
	}
	d.fail(i, v)
	return ""
}

func (d *rowDecoder) int(v any, i int) int64 {
	if n, ok := v.(int64); ok {
		return n
	}
	d.fail(i, v)
	return 0
}

func (d *rowDecoder) real(v any, i int) float64 {
	switch v := v.(type) {
	case float64:
		return v
	case int64:
		return float64(v)
	}
	d.fail(i, v)
	return 0
}

// withTx runs fn in a write transaction (BEGIN IMMEDIATE) and commits it,
// or rolls it back when fn or the commit fails.
func (s *State) withTx(ctx context.Context, op string, fn func(tx *sql.Tx) error) error {
	tx, err := s.w.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("crawlstate: %s: begin: %w", op, err)
	}
	if err := fn(tx); err != nil {
		_ = tx.Rollback()
		return err
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("crawlstate: %s: commit: %w", op, err)
	}
	return nil
}

// scratchTables are where UpsertDiscovered stages a batch, so that the
// merge into pages is a few set-based statements. They live in the writer
// connection's temp schema and are empty between calls.
//
// discovered_raw takes the batch, each URL once (its first entry),
// appended in sorted order. discovered holds those that have a row, with
// their outcome, decided against pages as they were before the call; the
// others are new (inserted, due now):
//
//	seen     an existing row listed again
//	bumped   a live row whose non-zero lastmod moved: due now
//	revived  a gone row listed again (unless tombstones are kept): due now
//
// lastmod_moved marks an existing row whose stored lastmod must change
// (a non-zero lastmod that differs; gone rows included), via_moved one
// whose listed_in must change (a non-empty via that differs).
const scratchTables = `
CREATE TEMP TABLE IF NOT EXISTS discovered_raw (
	url          TEXT    NOT NULL,
	original_url TEXT    NOT NULL,
	lastmod      INTEGER NOT NULL,
	via          TEXT    NOT NULL
);
CREATE TEMP TABLE IF NOT EXISTS discovered (
	url           TEXT    NOT NULL PRIMARY KEY,
	original_url  TEXT    NOT NULL,
	lastmod       INTEGER NOT NULL,
	via           TEXT    NOT NULL,
	outcome       TEXT    NOT NULL,
	lastmod_moved INTEGER NOT NULL,
	via_moved     INTEGER NOT NULL
) WITHOUT ROWID;
DELETE FROM discovered_raw;
DELETE FROM discovered;`

// loadRowsPerStatement is how many URLs one execution of the load
// statement carries: fewer round trips through database/sql and cgo.
const loadRowsPerStatement = 256

// loadSQL returns the statement that appends n URLs to discovered_raw;
// its arguments are url, original_url, lastmod, via for each.
func loadSQL(n int) string {
	return `INSERT INTO discovered_raw (url, original_url, lastmod, via) VALUES ` +
		strings.Repeat("(?, ?, ?, ?), ", n-1) + "(?, ?, ?, ?)"
}

// classifySQL copies the URLs of the batch that have a row to discovered,
// with their outcome. The CROSS JOIN makes the batch the outer loop, in
// key order, whatever the sizes of the two tables.
const classifySQL = `
INSERT INTO discovered (url, original_url, lastmod, via, outcome, lastmod_moved, via_moved)
SELECT r.url, r.original_url, r.lastmod, r.via,
	CASE
		WHEN p.gone = 1 AND NOT :keep_tombstones
			AND (p.missing_runs > 0 OR (r.lastmod <> :zero AND r.lastmod <> p.sitemap_lastmod)) THEN 'revived'
		WHEN p.gone = 0 AND r.lastmod <> :zero AND r.lastmod <> p.sitemap_lastmod THEN 'bumped'
		ELSE 'seen'
	END,
	r.lastmod <> :zero AND r.lastmod <> p.sitemap_lastmod,
	r.via <> '' AND r.via <> p.listed_in
FROM discovered_raw AS r
CROSS JOIN pages AS p ON p.source = :source AND p.url = r.url`

// mergeSQL applies the outcomes to existing rows and inserts the new ones
// (those of discovered_raw not in discovered), in this order. Every
// statement walks a scratch table and looks rows
// up in pages (the IN (SELECT ...) form makes SQLite drive the loop from
// the batch, so a small batch costs little however big pages is). Only
// the statements for bumped and revived rows assign indexed columns, so
// the common case (seen) leaves the due index alone. A revived row forgets
// its content hash and validators: its records were deleted when it went
// gone, so its next fetch must be a full one that counts as new. "Due now"
// is a zero next_check.
var mergeSQL = []struct{ name, sql string }{
	{"mark seen", `
UPDATE pages SET last_seen = :now, missing_runs = 0
WHERE source = :source AND url IN (SELECT url FROM discovered)`},
	{"store lastmods", `
UPDATE pages SET sitemap_lastmod = (SELECT lastmod FROM discovered AS d WHERE d.url = pages.url)
WHERE source = :source AND url IN (SELECT url FROM discovered WHERE lastmod_moved)`},
	{"store vias", `
UPDATE pages SET listed_in = (SELECT via FROM discovered AS d WHERE d.url = pages.url)
WHERE source = :source AND url IN (SELECT url FROM discovered WHERE via_moved)`},
	{"bump", `
UPDATE pages SET next_check = :zero, excluded = ''
WHERE source = :source AND url IN (SELECT url FROM discovered WHERE outcome = 'bumped')`},
	{"revive", `
UPDATE pages SET
	gone          = 0,
	next_check    = :zero,
	content_hash  = '',
	etag          = '',
	last_modified = ''
WHERE source = :source AND url IN (SELECT url FROM discovered WHERE outcome = 'revived')`},
	{"insert new", `
INSERT INTO pages (source, url, original_url, first_seen, last_seen,
	last_fetched, next_check, sitemap_lastmod, listed_in)
SELECT :source, url, original_url, :now, :now, :zero, :zero, lastmod, via
FROM discovered_raw WHERE url NOT IN (SELECT url FROM discovered)`},
}

// UpsertDiscovered implements State. The whole batch is one transaction,
// however large: the URLs are loaded, in sorted order, into temporary
// tables with a prepared multi-row INSERT, classified with one join and
// merged into pages with a few set-based statements. The temporary tables
// spill to a temporary file, so a large batch costs little memory beyond
// the caller's slice. A URL listed twice counts once; its first entry
// wins.
func (s *State) UpsertDiscovered(ctx context.Context, source string, now time.Time, urls []crawlstate.Discovered) (crawlstate.UpsertStats, error) {
	const op = "upsert discovered"
	var st crawlstate.UpsertStats
	if err := check.Upsert(source, urls); err != nil {
		return st, err
	}
	if len(urls) == 0 {
		return st, ctx.Err()
	}
	// Loading in key order appends to the B-trees instead of splitting
	// pages all over them (about 3x faster for a large batch); only the
	// first entry of a URL listed twice is loaded.
	order := backend.KeyOrder(urls)

	err := s.withTx(ctx, op, func(tx *sql.Tx) error {
		// A source's first listing (every URL new) goes straight into
		// pages: nothing to classify against.
		var fresh bool
		if err := tx.QueryRowContext(ctx, `SELECT NOT EXISTS (SELECT 1 FROM pages WHERE source = ?)`, source).Scan(&fresh); err != nil {
			return fmt.Errorf("crawlstate: %s: %w", op, err)
		}
		if fresh {
			// Into a table of fewer rows, the due and listing indexes are
			// built once after the insert (one sort) instead of row by
			// row; the transaction makes the rebuild atomic.
			rebuild, err := dropForBulk(ctx, tx, len(urls))
			if err != nil {
				return fmt.Errorf("crawlstate: %s: %w", op, err)
			}
			n, err := insertFresh(ctx, tx, source, now, urls, order)
			if err != nil {
				return fmt.Errorf("crawlstate: %s: %w", op, err)
			}
			for _, q := range rebuild {
				if _, err := tx.ExecContext(ctx, q); err != nil {
					return fmt.Errorf("crawlstate: %s: rebuild index: %w", op, err)
				}
			}
			st.New = n
			return nil
		}
		if _, err := tx.ExecContext(ctx, scratchTables); err != nil {
			return fmt.Errorf("crawlstate: %s: prepare scratch tables: %w", op, err)
		}
		if err := load(ctx, tx, urls, order); err != nil {
			return fmt.Errorf("crawlstate: %s: %w", op, err)
		}
		args := []any{
			sql.Named("source", source),
			sql.Named("now", backend.EncTime(now)),
			sql.Named("zero", int64(backend.ZeroTime)),
			sql.Named("keep_tombstones", s.opts.KeepTombstones),
		}
		if _, err := tx.ExecContext(ctx, classifySQL, args...); err != nil {
			return fmt.Errorf("crawlstate: %s: classify: %w", op, err)
		}

		rows, err := tx.QueryContext(ctx, `SELECT outcome, count(*), sum(lastmod_moved), sum(via_moved) FROM discovered GROUP BY outcome`)
		if err != nil {
			return fmt.Errorf("crawlstate: %s: count: %w", op, err)
		}
		var lastmodsMoved, viasMoved int
		for rows.Next() {
			var outcome string
			var n, lm, vm int
			if err := rows.Scan(&outcome, &n, &lm, &vm); err != nil {
				rows.Close()
				return fmt.Errorf("crawlstate: %s: count: %w", op, err)
			}
			lastmodsMoved += lm
			viasMoved += vm
			switch outcome {
			case "seen":
				st.Seen += n
			case "bumped":
				st.Seen += n
				st.Bumped = n
			case "revived":
				st.Seen += n
				st.Revived = n
			}
		}
		if err := errors.Join(rows.Err(), rows.Close()); err != nil {
			return fmt.Errorf("crawlstate: %s: count: %w", op, err)
		}
		st.New = len(order) - st.Seen

		// Many new rows into a table of few: the due and listing indexes
		// are built again after the merge (see dropForBulk).
		var rebuild []string
		if st.New > 0 {
			if rebuild, err = dropForBulk(ctx, tx, st.New); err != nil {
				return fmt.Errorf("crawlstate: %s: %w", op, err)
			}
		}
		// A statement with nothing to do is skipped: each would still
		// scan the whole scratch table.
		todo := map[string]bool{
			"mark seen": st.Seen > 0, "store lastmods": lastmodsMoved > 0, "store vias": viasMoved > 0,
			"bump": st.Bumped > 0, "revive": st.Revived > 0, "insert new": st.New > 0,
		}
		for _, m := range mergeSQL {
			if run, known := todo[m.name]; known && !run {
				continue
			}
			if _, err := tx.ExecContext(ctx, m.sql, args...); err != nil {
				return fmt.Errorf("crawlstate: %s: %s: %w", op, m.name, err)
			}
		}
		for _, q := range rebuild {
			if _, err := tx.ExecContext(ctx, q); err != nil {
				return fmt.Errorf("crawlstate: %s: rebuild index: %w", op, err)
			}
		}
		if _, err := tx.ExecContext(ctx, `DELETE FROM discovered_raw; DELETE FROM discovered`); err != nil {
			return fmt.Errorf("crawlstate: %s: clear scratch tables: %w", op, err)
		}
		return nil
	})
	if err != nil {
		return crawlstate.UpsertStats{}, err
	}
	return st, nil
}

// bulkIndexRows is the number of new rows from which a batch that at
// least doubles the pages table builds the due and listing indexes after
// the insert.
const bulkIndexRows = 10_000

// dropForBulk drops the indexes pages_due and pages_listed when n new
// rows (at least bulkIndexRows) are about to be inserted into a pages
// table that holds no more than n rows, and returns the statements that
// create them again, as the schema holds them. Building an index costs a
// sort of all the table's rows; inserting into it, a descent of the
// B-tree for each new row, which in a populated index (a site that grew
// tenfold) costs more than the sort.
func dropForBulk(ctx context.Context, tx *sql.Tx, n int) ([]string, error) {
	if n < bulkIndexRows {
		return nil, nil
	}
	// The largest rowid is the number of rows or more (more if some were
	// deleted): one step down the table's B-tree, not a count.
	var stored int64
	if err := tx.QueryRowContext(ctx, `SELECT coalesce(max(rowid), 0) FROM pages`).Scan(&stored); err != nil {
		return nil, err
	}
	if stored > int64(n) {
		return nil, nil
	}
	rows, err := tx.QueryContext(ctx, `SELECT name, sql FROM sqlite_schema
		WHERE type = 'index' AND tbl_name = 'pages' AND name IN ('pages_due', 'pages_listed') ORDER BY name`)
	if err != nil {
		return nil, err
	}
	var names, create []string
	for rows.Next() {
		var name, q string
		if err := rows.Scan(&name, &q); err != nil {
			rows.Close()
			return nil, err
		}
		names, create = append(names, name), append(create, q)
	}
	if err := errors.Join(rows.Err(), rows.Close()); err != nil {
		return nil, err
	}
	for _, name := range names {
		if _, err := tx.ExecContext(ctx, `DROP INDEX `+name); err != nil {
			return nil, fmt.Errorf("drop index %s: %w", name, err)
		}
	}
	return create, nil
}

// freshSQL returns the statement that inserts n new rows into pages, as
// mergeSQL's "insert new" does; ?1 is the source, ?2 now, ?3 the zero
// time, then url, original_url, lastmod, via for each row. A URL already
// inserted (listed twice) is ignored: its first entry wins.
func freshSQL(n int) string {
	var b strings.Builder
	b.WriteString(`INSERT OR IGNORE INTO pages (source, url, original_url, first_seen, last_seen,
	last_fetched, next_check, sitemap_lastmod, listed_in) VALUES `)
	for i := range n {
		if i > 0 {
			b.WriteString(", ")
		}
		k := 4 + 4*i
		fmt.Fprintf(&b, "(?1, ?%d, ?%d, ?2, ?2, ?3, ?3, ?%d, ?%d)", k, k+1, k+2, k+3)
	}
	return b.String()
}

// insertFresh inserts urls, in the given order, as new rows of a source
// that has none, loadRowsPerStatement to a statement; it returns how many
// rows it inserted.
func insertFresh(ctx context.Context, tx *sql.Tx, source string, now time.Time, urls []crawlstate.Discovered, order []int32) (int, error) {
	var stmts [2]*sql.Stmt
	defer func() {
		for _, st := range stmts {
			if st != nil {
				_ = st.Close()
			}
		}
	}()
	args := make([]any, 0, 3+4*loadRowsPerStatement)
	// The statements run through execFused, which reports no row count:
	// the connection's total_changes() counts the rows inserted (the
	// transaction changes nothing else meanwhile).
	var before int64
	if err := tx.QueryRowContext(ctx, `SELECT total_changes()`).Scan(&before); err != nil {
		return 0, fmt.Errorf("count changes: %w", err)
	}
	for rest := order; len(rest) > 0; {
		batch := rest[:min(len(rest), loadRowsPerStatement)]
		rest = rest[len(batch):]
		k := 0
		if len(batch) < loadRowsPerStatement {
			k = 1
		}
		if stmts[k] == nil {
			st, err := tx.PrepareContext(ctx, freshSQL(len(batch)))
			if err != nil {
				return 0, fmt.Errorf("prepare insert: %w", err)
			}
			stmts[k] = st
		}
		args = append(args[:0], source, backend.EncTime(now), int64(backend.ZeroTime))
		for _, i := range batch {
			d := urls[i]
			args = append(args, d.URL, d.OriginalURL, backend.EncTime(d.LastMod), d.Via)
		}
		// As in load: no per-statement cancellation goroutine.
		if err := ctx.Err(); err != nil {
			return 0, err
		}
		if err := execFused(stmts[k], args); err != nil {
			return 0, fmt.Errorf("insert %d URLs from %q: %w", len(batch), urls[batch[0]].URL, err)
		}
	}
	var inserted int
	if err := tx.QueryRowContext(ctx, `SELECT total_changes() - ?`, before).Scan(&inserted); err != nil {
		return 0, fmt.Errorf("count inserted rows: %w", err)
	}
	return inserted, nil
}

// execFused executes a prepared statement that returns no rows through
// the driver's query path, which binds every argument and steps in one
// cgo call; the exec path makes one call per argument, a third of the
// cost of loading a large batch. The statement must take positional
// arguments only (string, int64).
func execFused(st *sql.Stmt, args []any) error {
	rows, err := st.QueryContext(context.Background(), args...)
	if err != nil {
		return err
	}
	return rows.Close()
}

// load appends urls, in the given order, to discovered_raw: full
// statements of loadRowsPerStatement URLs, then one for the rest.
func load(ctx context.Context, tx *sql.Tx, urls []crawlstate.Discovered, order []int32) error {
	full, err := tx.PrepareContext(ctx, loadSQL(loadRowsPerStatement))
	if err != nil {
		return fmt.Errorf("prepare load: %w", err)
	}
	defer full.Close()
	args := make([]any, 0, 4*loadRowsPerStatement)
	exec := func(stmt *sql.Stmt, batch []int32) error {
		args = args[:0]
		for _, i := range batch {
			d := urls[i]
			args = append(args, d.URL, d.OriginalURL, backend.EncTime(d.LastMod), d.Via)
		}
		// Executing without the caller's context avoids go-sqlite3's
		// per-statement cancellation goroutine; ctx is checked between
		// statements instead (and the transaction itself is bound to it).
		if err := ctx.Err(); err != nil {
			return err
		}
		if err := execFused(stmt, args); err != nil {
			return fmt.Errorf("load %d URLs from %q: %w", len(batch), urls[batch[0]].URL, err)
		}
		return nil
	}
	rest := order
	for len(rest) >= loadRowsPerStatement {
		if err := exec(full, rest[:loadRowsPerStatement]); err != nil {
			return err
		}
		rest = rest[loadRowsPerStatement:]
	}
	if len(rest) == 0 {
		return nil
	}
	tail, err := tx.PrepareContext(ctx, loadSQL(len(rest)))
	if err != nil {
		return fmt.Errorf("prepare load: %w", err)
	}
	defer tail.Close()
	return exec(tail, rest)
}

// markMissingSQL counts a run of absence on every live row of the source
// not seen since the run started (a scan of the source's rows).
const markMissingSQL = `
UPDATE pages SET missing_runs = missing_runs + 1
WHERE source = :source AND gone = 0 AND ` + unseenSQL

// confirmMissingSQL makes the rows whose absence count just reached a
// multiple of the threshold due at now, unless they are due earlier. It
// is a separate statement so that the common case, counting, leaves the
// due index alone.
// absentTombstoneSQL flags gone rows the listing lacked, so that a later
// listing revives them (a rediscovery); a tombstone already flagged is
// left alone, so a long-dead URL costs no write per run.
const absentTombstoneSQL = `
UPDATE pages SET missing_runs = 1
WHERE source = :source AND gone = 1 AND missing_runs = 0 AND ` + unseenSQL

const confirmMissingSQL = `
UPDATE pages SET next_check = :now
WHERE source = :source AND gone = 0
	AND missing_runs % :threshold = 0 AND next_check > :now AND excluded = '' AND ` + unseenSQL

// MarkMissing implements State in one transaction of three UPDATEs.
func (s *State) MarkMissing(ctx context.Context, source string, runStart, now time.Time, threshold int) (int, error) {
	const op = "mark missing"
	if err := check.Threshold(threshold); err != nil {
		return 0, err
	}
	args := []any{
		sql.Named("source", source),
		sql.Named("run_start", backend.EncTime(runStart)),
		sql.Named("now", backend.EncTime(now)),
		sql.Named("threshold", threshold),
	}
	var n int64
	err := s.withTx(ctx, op, func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, markMissingSQL, args...)
		if err != nil {
			return fmt.Errorf("crawlstate: %s: %w", op, err)
		}
		if n, err = res.RowsAffected(); err != nil {
			return fmt.Errorf("crawlstate: %s: %w", op, err)
		}
		if _, err := tx.ExecContext(ctx, confirmMissingSQL, args...); err != nil {
			return fmt.Errorf("crawlstate: %s: make due: %w", op, err)
		}
		if _, err := tx.ExecContext(ctx, absentTombstoneSQL, args...); err != nil {
			return fmt.Errorf("crawlstate: %s: flag absent tombstones: %w", op, err)
		}
		return nil
	})
	if err != nil {
		return 0, err
	}
	return int(n), nil
}

// dueSQL is the due queue: a range scan of pages_due after a keyset
// position. The row-value comparison lets SQLite start the scan at the
// position instead of skipping rows.
const dueSQL = `
SELECT ` + storedRowColumns + `
FROM pages
WHERE source = :source AND gone = 0 AND next_check <= :now
	AND (next_check, url) > (:after_next, :after_url)
ORDER BY next_check, url
LIMIT :limit`

// Due implements State. A limit below 1 is an error.
func (s *State) Due(ctx context.Context, source string, now time.Time, after crawlstate.Key, limit int) ([]crawlstate.Row, error) {
	const op = "due"
	if err := check.Limit(op, limit); err != nil {
		return nil, err
	}
	out, err := s.queryStampedRows(ctx, source, limit, dueSQL,
		sql.Named("source", source),
		sql.Named("now", backend.EncTime(now)),
		sql.Named("after_next", backend.EncTime(after.NextCheck)),
		sql.Named("after_url", after.URL),
		sql.Named("limit", limit))
	if err != nil {
		return nil, fmt.Errorf("crawlstate: %s: %w", op, err)
	}
	return out, nil
}

// queryRows runs a query that selects rowColumns of source's rows and
// reads them straight from the driver, on a connection of the read pool;
// it expects up to size rows (and allocates room for at most
// backend.MaxPrealloc of them up front). args are the query's arguments as
// database/sql takes them: sql.NamedArg or positional int, int64, bool,
// string values.
func (s *State) queryRows(ctx context.Context, source string, size int, query string, args ...any) ([]crawlstate.Row, error) {
	return s.readRows(ctx, source, size, wholeRows, query, args...)
}

// rowShape is what a query of rows selects: how many columns, and how
// one row's values are decoded into a Row (a zero Row, in place).
type rowShape struct {
	columns int
	decode  func(r *crawlstate.Row, source string, vals []driver.Value) error
	// stamped: the query selects storedRowColumns, and each row's LastSeen
	// is read through its document's stamp (queryStampedRows).
	stamped bool
}

var (
	wholeRows   = rowShape{columns: rowColumnCount, decode: decodeRow}
	stampedRows = rowShape{columns: rowColumnCount, decode: decodeRow, stamped: true}
)

// queryStampedRows is queryRows for a query that selects
// storedRowColumns: each row's LastSeen is then read through its
// document's stamp (seenSQL) in Go, from the source's stamped documents
// read once before the rows, instead of by a lookup in documents for every
// row. A stamp that lands between the two reads is missed, as it would be
// by a read just before it.
func (s *State) queryStampedRows(ctx context.Context, source string, size int, query string, args ...any) ([]crawlstate.Row, error) {
	return s.readRows(ctx, source, size, stampedRows, query, args...)
}

// stamp is a document's fetched_at and seen_at (see seenSQL).
type stamp struct{ fetched, seen int64 }

// stampsSQL reads the source's stamped documents.
const stampsSQL = `SELECT url, fetched_at, seen_at FROM documents WHERE source = ? AND seen_at > fetched_at`

// readRows runs query, which selects rows of shape's columns, and reads
// them straight from the driver (see queryRows).
func (s *State) readRows(ctx context.Context, source string, size int, shape rowShape, query string, args ...any) ([]crawlstate.Row, error) {
	named := make([]driver.NamedValue, len(args))
	for i, a := range args {
		named[i] = driver.NamedValue{Ordinal: i + 1, Value: a}
		if na, ok := a.(sql.NamedArg); ok {
			named[i].Name, named[i].Value = na.Name, na.Value
		}
		if n, ok := named[i].Value.(int); ok {
			named[i].Value = int64(n)
		}
	}
	conn, err := s.r.Conn(ctx)
	if err != nil {
		return nil, err
	}
	defer conn.Close()
	out := make([]crawlstate.Row, 0, backend.Prealloc(size))
	err = conn.Raw(func(dc any) error {
		q, ok := dc.(driver.QueryerContext)
		if !ok {
			return fmt.Errorf("driver connection %T cannot run queries", dc)
		}
		var stamps map[string]stamp
		if shape.stamped {
			var err error
			if stamps, err = readStamps(ctx, q, source); err != nil {
				return fmt.Errorf("stamped documents: %w", err)
			}
		}
		rows, err := q.QueryContext(ctx, query, named)
		if err != nil {
			return err
		}
		if n := len(rows.Columns()); n != shape.columns {
			_ = rows.Close()
			return fmt.Errorf("query selects %d columns; want the %d of a row", n, shape.columns)
		}
		vals := make([]driver.Value, shape.columns)
		for {
			if err := rows.Next(vals); err != nil {
				if errors.Is(err, io.EOF) {
					break
				}
				_ = rows.Close()
				return err
			}
			out = append(out, crawlstate.Row{})
			if stamps != nil {
				stampSeen(vals, stamps)
			}
			if err := shape.decode(&out[len(out)-1], source, vals); err != nil {
				_ = rows.Close()
				return err
			}
		}
		return rows.Close()
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// readStamps reads the source's stamped documents, or nil when none is.
func readStamps(ctx context.Context, q driver.QueryerContext, source string) (map[string]stamp, error) {
	rows, err := q.QueryContext(ctx, stampsSQL, []driver.NamedValue{{Ordinal: 1, Value: source}})
	if err != nil {
		return nil, err
	}
	var out map[string]stamp
	vals := make([]driver.Value, 3)
	for {
		if err := rows.Next(vals); err != nil {
			if errors.Is(err, io.EOF) {
				break
			}
			_ = rows.Close()
			return nil, err
		}
		u, ok1 := vals[0].(string)
		f, ok2 := vals[1].(int64)
		seen, ok3 := vals[2].(int64)
		if !ok1 || !ok2 || !ok3 {
			_ = rows.Close()
			return nil, fmt.Errorf("document row of types %T, %T, %T", vals[0], vals[1], vals[2])
		}
		if out == nil {
			out = map[string]stamp{}
		}
		out[u] = stamp{f, seen}
	}
	return out, rows.Close()
}

// stampSeen sets the last_seen of a row read as storedRowColumns to its
// LastSeen (seenSQL), given the source's stamps.
func stampSeen(vals []driver.Value, stamps map[string]stamp) {
	var st stamp
	var ok bool
	switch v := vals[colListedIn].(type) {
	case string:
		st, ok = stamps[v]
	case []byte:
		st, ok = stamps[string(v)] // no copy: a map index converts in place
	}
	if !ok {
		return
	}
	if seen, ok := vals[colLastSeen].(int64); ok && seen >= st.fetched && st.seen > seen {
		vals[colLastSeen] = st.seen
	}
}

// NextDue implements State.
func (s *State) NextDue(ctx context.Context, source string) (time.Time, bool, error) {
	var next sql.NullInt64
	err := s.r.QueryRowContext(ctx,
		`SELECT min(next_check) FROM pages WHERE source = ? AND gone = 0 AND next_check < 9223372036854775807`, source).Scan(&next)
	if err != nil {
		return time.Time{}, false, fmt.Errorf("crawlstate: next due: %w", err)
	}
	if !next.Valid {
		return time.Time{}, false, nil
	}
	return backend.DecTime(next.Int64), true, nil
}

// Get implements State.
func (s *State) Get(ctx context.Context, source, u string) (crawlstate.Row, error) {
	rows, err := s.queryRows(ctx, source, 1, `SELECT `+rowColumns+` FROM pages WHERE source = ? AND url = ?`, source, u)
	if err != nil {
		return crawlstate.Row{}, fmt.Errorf("crawlstate: get %q of source %q: %w", u, source, err)
	}
	if len(rows) == 0 {
		return crawlstate.Row{}, fmt.Errorf("crawlstate: get %q of source %q: %w", u, source, crawlstate.ErrNotFound)
	}
	return rows[0], nil
}

// Count implements State.
func (s *State) Count(ctx context.Context, source string) (total, gone int, err error) {
	err = s.r.QueryRowContext(ctx,
		`SELECT count(*), coalesce(sum(gone), 0) FROM pages WHERE source = ?`, source).Scan(&total, &gone)
	if err != nil {
		return 0, 0, fmt.Errorf("crawlstate: count: %w", err)
	}
	return total, gone, nil
}

// recordSQL stores one definitive answer. A Gone result only marks the
// tombstone (and when it was learned); any other result clears it and
// stores the hash, validators and schedule as Result documents. Title,
// canonical and alias change only with a body (:body: neither gone nor a
// 304), the change statistics only when the result carries them (:stats).
const recordSQL = `
UPDATE pages SET
	last_fetched    = :at,
	failures        = 0,
	gone            = :gone,
	visits          = visits + iif(:gone, 0, 1),
	changes         = changes + iif(NOT :gone AND :changed, 1, 0),
	content_hash    = iif(:gone OR :not_modified OR :hash = '', content_hash, :hash),
	etag            = iif(:gone OR (:not_modified AND :etag = ''), etag, :etag),
	last_modified   = iif(:gone OR (:not_modified AND :last_modified = ''), last_modified, :last_modified),
	interval_ns     = iif(:gone, interval_ns, :interval),
	next_check      = iif(:gone, next_check, :next_check),
	title           = iif(:body, :title, title),
	canonical       = iif(:body, :canonical, canonical),
	alias_of        = iif(:body, :alias_of, alias_of),
	last_changed    = iif(:stats, :last_changed, last_changed),
	elapsed_ns      = iif(:stats, :elapsed, elapsed_ns),
	recent          = iif(:stats, :recent, recent),
	origin_modified = iif(:stats, :origin_modified, origin_modified),
	change_rate     = iif(:stats, :change_rate, change_rate),
	weight          = iif(:stats, :weight, weight),
	excluded        = ''
WHERE source = :source AND url = :url`

// notModifiedSQL stores a 304 that carries its statistics and nothing
// else (no links, chunks or alert, not counted as a change): what
// recordSQL does for it, with positional parameters and only the columns
// a 304 changes, so the most frequent write binds 14 values instead of
// resolving 22 names.
const notModifiedSQL = `
UPDATE pages SET
	last_fetched    = ?1,
	failures        = 0,
	gone            = 0,
	visits          = visits + 1,
	etag            = iif(?2 = '', etag, ?2),
	last_modified   = iif(?3 = '', last_modified, ?3),
	interval_ns     = ?4,
	next_check      = ?5,
	last_changed    = ?6,
	elapsed_ns      = ?7,
	recent          = ?8,
	origin_modified = ?9,
	change_rate     = ?10,
	weight          = ?11,
	excluded        = ''
WHERE source = ?12 AND url = ?13`

// excludeSQL records an answer that is not a page (Result.Excluded): the
// row leaves the due queue for good (its next check is the largest
// instant, which no due query reaches) and keeps everything else.
const excludeSQL = `
UPDATE pages SET
	last_fetched = :at,
	failures     = 0,
	gone         = 0,
	next_check   = 9223372036854775807,
	excluded     = :excluded
WHERE source = :source AND url = :url`

// The statements of the parts of a result beside the row.
const (
	putLinksSQL = `
INSERT INTO links (source, url, links) VALUES (?, ?, ?)
ON CONFLICT (source, url) DO UPDATE SET links = excluded.links`
	deleteLinksSQL  = `DELETE FROM links WHERE source = ? AND url = ?`
	deleteChunksSQL = `DELETE FROM chunks WHERE source = ? AND url = ?`
	insertChunkSQL  = `
INSERT INTO chunks (source, url, ordinal, text_hash, record_id, heading_path, start_byte, end_byte, text)
VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`
	// An alert already stored is left as it is: a replay never duplicates
	// it nor makes a delivered one pending again.
	insertAlertSQL = `
INSERT INTO alerts (id, source, url, kind, created_at, payload) VALUES (?, ?, ?, ?, ?, ?)
ON CONFLICT (id) DO NOTHING`
)

// Record implements State: all results, with their links, chunks and
// alerts, in one transaction with prepared statements; an unknown URL
// rolls the whole batch back and the error wraps ErrNotFound. Results are
// checked before anything is written (see crawlstate.Result.Check).
func (s *State) Record(ctx context.Context, source string, results []crawlstate.Result) error {
	const op = "record"
	if err := check.Results(source, results); err != nil {
		return err
	}
	if len(results) == 0 {
		return ctx.Err()
	}
	return s.withTx(ctx, op, func(tx *sql.Tx) error {
		ps := s.txStmts(tx)
		defer ps.close()
		for _, r := range results {
			// As in load: no per-statement cancellation goroutine; ctx
			// is checked per result and bound to the transaction.
			if err := ctx.Err(); err != nil {
				return fmt.Errorf("crawlstate: %s: %w", op, err)
			}
			if err := recordOne(ctx, ps, source, r); errors.Is(err, crawlstate.ErrNotFound) {
				return err
			} else if err != nil {
				return fmt.Errorf("crawlstate: %s %q: %w", op, r.URL, err)
			}
		}
		return nil
	})
}

// recordOne writes one result: the row, then its links, chunks, alert and
// events.
func recordOne(ctx context.Context, ps *txStmts, source string, r crawlstate.Result) error {
	if err := recordRow(ctx, ps, source, r); err != nil {
		return err
	}
	for _, e := range r.Events {
		u := e.URL
		if u == "" {
			u = r.URL
		}
		if _, err := ps.exec(ctx, insertEventSQL, eventKey(source, u), source, u, backend.EncTime(e.At), e.Stage, e.Attempt, e.OK, e.Err, e.Detail); err != nil {
			return fmt.Errorf("event %s: %w", e.Stage, err)
		}
	}
	return nil
}

// recordRow writes the row of one result, then its links, chunks and
// alert.
func recordRow(ctx context.Context, ps *txStmts, source string, r crawlstate.Result) error {
	if r.Excluded != "" {
		res, err := ps.exec(ctx, excludeSQL, sql.Named("source", source), sql.Named("url", r.URL),
			sql.Named("at", backend.EncTime(r.At)), sql.Named("excluded", r.Excluded))
		return rowUpdated(res, err, source, r.URL)
	}
	if plainNotModified(r) {
		st := r.Stats
		var recent []byte // NULL for no checks
		if len(st.Recent) > 0 {
			ps.buf = appendChecks(ps.buf[:0], st.Recent)
			recent = ps.buf
		}
		res, err := ps.exec(ctx, notModifiedSQL, backend.EncTime(r.At), r.ETag, r.LastModified, int64(r.Interval),
			backend.EncTime(r.NextCheck), backend.EncTime(st.LastChanged), int64(st.Elapsed), recent,
			backend.EncTime(st.LastModified), st.ChangeRate, st.Weight, source, r.URL)
		return rowUpdated(res, err, source, r.URL)
	}
	return recordFull(ctx, ps, source, r)
}

// plainNotModified reports whether r is a 304 that notModifiedSQL stores
// as recordSQL would: statistics, no links, chunks or alert, no change.
func plainNotModified(r crawlstate.Result) bool {
	return r.NotModified && !r.Gone && !r.Changed && r.Stats != nil && r.Links == nil && !r.ReplaceChunks && r.Alert == nil
}

// rowUpdated turns an UPDATE of one row of Record into its error:
// ErrNotFound when no row matched.
func rowUpdated(res sql.Result, err error, source, u string) error {
	if err != nil {
		return err
	}
	if n, err := res.RowsAffected(); err != nil {
		return err
	} else if n == 0 {
		return check.NoSuchURL("record", source, u)
	}
	return nil
}

// recordFull writes any result other than an exclusion with recordSQL,
// then its links, chunks and alert.
func recordFull(ctx context.Context, ps *txStmts, source string, r crawlstate.Result) error {
	var st crawlstate.Stats
	if r.Stats != nil {
		st = *r.Stats
	}
	res, err := ps.exec(ctx, recordSQL,
		sql.Named("source", source),
		sql.Named("url", r.URL),
		sql.Named("at", backend.EncTime(r.At)),
		sql.Named("gone", r.Gone),
		sql.Named("not_modified", r.NotModified),
		sql.Named("changed", r.Changed),
		sql.Named("hash", r.ContentHash),
		sql.Named("etag", r.ETag),
		sql.Named("last_modified", r.LastModified),
		sql.Named("interval", int64(r.Interval)),
		sql.Named("next_check", backend.EncTime(r.NextCheck)),
		sql.Named("body", !r.Gone && !r.NotModified),
		sql.Named("title", r.Title),
		sql.Named("canonical", r.Canonical),
		sql.Named("alias_of", r.AliasOf),
		sql.Named("stats", r.Stats != nil),
		sql.Named("last_changed", backend.EncTime(st.LastChanged)),
		sql.Named("elapsed", int64(st.Elapsed)),
		sql.Named("recent", encodeChecks(st.Recent)),
		sql.Named("origin_modified", backend.EncTime(st.LastModified)),
		sql.Named("change_rate", st.ChangeRate),
		sql.Named("weight", st.Weight))
	if err := rowUpdated(res, err, source, r.URL); err != nil {
		return err
	}

	switch {
	case r.Links == nil:
	case len(r.Links) == 0:
		if _, err := ps.exec(ctx, deleteLinksSQL, source, r.URL); err != nil {
			return fmt.Errorf("links: %w", err)
		}
	default:
		if _, err := ps.exec(ctx, putLinksSQL, source, r.URL, encodeLinks(r.Links)); err != nil {
			return fmt.Errorf("links: %w", err)
		}
	}

	if r.Gone || r.ReplaceChunks {
		if _, err := ps.exec(ctx, deleteChunksSQL, source, r.URL); err != nil {
			return fmt.Errorf("chunks: %w", err)
		}
	}
	if r.ReplaceChunks && !r.Gone {
		for _, c := range r.Chunks {
			if _, err := ps.exec(ctx, insertChunkSQL, source, r.URL, c.Ordinal, c.TextHash, c.RecordID,
				c.HeadingPath, c.Start, c.End, c.Text); err != nil {
				return fmt.Errorf("chunk %d: %w", c.Ordinal, err)
			}
		}
	}

	if r.Alert != nil {
		a := backend.StoredAlert(source, &r)
		if _, err := ps.exec(ctx, insertAlertSQL, a.ID, a.Source, a.URL, a.Kind, backend.EncTime(a.CreatedAt), a.Payload); err != nil {
			return fmt.Errorf("alert %s: %w", a.ID, err)
		}
	}
	return nil
}

// preparedQueries are the per-row write statements, prepared once on the
// writer connection when the store opens: a transaction reuses them
// (Tx.StmtContext) instead of preparing them again, which for a Record of
// one result costs more than the update itself.
var preparedQueries = []string{
	recordSQL, notModifiedSQL, excludeSQL, putLinksSQL, deleteLinksSQL, deleteChunksSQL, insertChunkSQL, insertAlertSQL,
	recordFailureSQL, putVectorSQL, insertEventSQL,
}

// prepareWrites prepares preparedQueries on the writer connection.
func (s *State) prepareWrites(ctx context.Context) error {
	s.prepared = make(map[string]*sql.Stmt, len(preparedQueries))
	for _, q := range preparedQueries {
		st, err := s.w.PrepareContext(ctx, q)
		if err != nil {
			return fmt.Errorf("crawlstate: open %s: prepare: %w", s.path, err)
		}
		s.prepared[q] = st
	}
	return nil
}

// txStmts are the statements of one write transaction.
type txStmts struct {
	tx       *sql.Tx
	prepared map[string]*sql.Stmt // the store's, read only
	stmts    map[string]*sql.Stmt // bound to tx, closed with it
	buf      []byte               // a row's encoded checks, reused row after row
}

func (s *State) txStmts(tx *sql.Tx) *txStmts { return &txStmts{tx: tx, prepared: s.prepared} }

// exec runs query with args, with the store's prepared statement when
// there is one, else with one prepared on first use in this transaction.
// Like load, it executes without the caller's context, which only bounds
// the preparation: callers check ctx between statements, and the
// transaction itself is bound to it.
func (p *txStmts) exec(ctx context.Context, query string, args ...any) (sql.Result, error) {
	st, ok := p.stmts[query]
	if !ok {
		if shared, ok := p.prepared[query]; ok {
			st = p.tx.StmtContext(ctx, shared)
		} else {
			var err error
			if st, err = p.tx.PrepareContext(ctx, query); err != nil {
				return nil, fmt.Errorf("prepare: %w", err)
			}
		}
		if p.stmts == nil {
			p.stmts = make(map[string]*sql.Stmt)
		}
		p.stmts[query] = st
	}
	return st.ExecContext(context.Background(), args...)
}

func (p *txStmts) close() {
	for _, st := range p.stmts {
		_ = st.Close()
	}
}

const recordFailureSQL = `
UPDATE pages SET failures = failures + 1, last_error = ?, last_stage = ?, last_failure = ?,
	next_check = coalesce(?, next_check)
WHERE source = ? AND url = ?`

// RecordFailure implements State.
func (s *State) RecordFailure(ctx context.Context, source string, f crawlstate.Failure) error {
	const op = "record failure"
	msg := backend.LastError(f)
	return s.withTx(ctx, op, func(tx *sql.Tx) error {
		ps := s.txStmts(tx)
		defer ps.close()
		var retry any // NULL keeps next_check
		if !f.RetryAt.IsZero() {
			retry = backend.EncTime(f.RetryAt)
		}
		res, err := ps.exec(ctx, recordFailureSQL, msg, f.Stage, backend.EncTime(f.At), retry, source, f.URL)
		if err != nil {
			return fmt.Errorf("crawlstate: %s %q: %w", op, f.URL, err)
		}
		return mustHaveUpdated(res, op, source, f.URL)
	})
}

// mustHaveUpdated turns an UPDATE that matched no row into ErrNotFound.
func mustHaveUpdated(res sql.Result, op, source, u string) error {
	n, err := res.RowsAffected()
	if err != nil {
		return fmt.Errorf("crawlstate: %s %q: %w", op, u, err)
	}
	if n == 0 {
		return check.NoSuchURL(op, source, u)
	}
	return nil
}

// Lock implements State. The lock is held until, not including, now+ttl;
// the holder may Lock again to extend it.
func (s *State) Lock(ctx context.Context, source, owner string, now time.Time, ttl time.Duration) error {
	const op = "lock"
	if err := check.Lease(op, source, owner, ttl); err != nil {
		return err
	}
	return s.withTx(ctx, op, func(tx *sql.Tx) error {
		held, err := backend.ScanLock(tx.QueryRowContext(ctx, `SELECT `+backend.LockColumns+` FROM run_locks WHERE source = ?`, source))
		switch {
		case errors.Is(err, sql.ErrNoRows):
		case err != nil:
			return fmt.Errorf("crawlstate: %s %q: %w", op, source, err)
		default:
			// A takeover's new acquired_at is the statement's below.
			if _, err := check.Take(s.log, source, owner, now, held); err != nil {
				return err
			}
		}
		_, err = tx.ExecContext(ctx, `
INSERT INTO run_locks (source, owner, acquired_at, expires_at) VALUES (:source, :owner, :now, :expires)
ON CONFLICT (source) DO UPDATE SET
	acquired_at = iif(owner = excluded.owner, acquired_at, excluded.acquired_at),
	owner       = excluded.owner,
	expires_at  = excluded.expires_at`,
			sql.Named("source", source), sql.Named("owner", owner),
			sql.Named("now", backend.EncTime(now)), sql.Named("expires", backend.EncTime(now.Add(ttl))))
		if err != nil {
			return fmt.Errorf("crawlstate: %s %q: %w", op, source, err)
		}
		return nil
	})
}

// Refresh implements State. An owner whose lock expired but was not taken
// over keeps it: nobody else ran in between.
func (s *State) Refresh(ctx context.Context, source, owner string, now time.Time, ttl time.Duration) error {
	const op = "refresh lock"
	if err := check.Lease(op, source, owner, ttl); err != nil {
		return err
	}
	return s.withTx(ctx, op, func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx,
			`UPDATE run_locks SET expires_at = ? WHERE source = ? AND owner = ?`,
			backend.EncTime(now.Add(ttl)), source, owner)
		if err != nil {
			return fmt.Errorf("crawlstate: %s %q: %w", op, source, err)
		}
		n, err := res.RowsAffected()
		if err != nil {
			return fmt.Errorf("crawlstate: %s %q: %w", op, source, err)
		}
		if n == 0 {
			return fmt.Errorf("crawlstate: %s %q: %q no longer holds it: %w", op, source, owner, crawlstate.ErrLockLost)
		}
		return nil
	})
}

// Unlock implements State.
func (s *State) Unlock(ctx context.Context, source, owner string) error {
	const op = "unlock"
	return s.withTx(ctx, op, func(tx *sql.Tx) error {
		if _, err := tx.ExecContext(ctx,
			`DELETE FROM run_locks WHERE source = ? AND owner = ?`, source, owner); err != nil {
			return fmt.Errorf("crawlstate: %s %q: %w", op, source, err)
		}
		return nil
	})
}
