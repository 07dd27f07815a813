package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"log/slog"
	"time"
	// also registers the "sqlite3" driver
)

// applicationID marks a SQLite file as a recrawl state database
// (PRAGMA application_id; the bytes spell "rcrw").
const applicationID = 0x72637277

// migration is one step of the schema. Steps are applied in order, each in
// its own transaction, and PRAGMA user_version records the last one applied.
// To change the schema, append a step; never edit a released one.
type migration struct {
	version int
	name    string
	sql     string
	// foreignKeysOff runs the step with foreign key enforcement off, as
	// a rebuild of a parent table needs (see migrateStep).
	foreignKeysOff bool
}

// migrations is the schema history. migrations[i].version is i+1.
var migrations = []migration{
	{version: 1, name: "pages and run locks", sql: schemaV1},
	{version: 2, name: "page details and change statistics", sql: schemaV2},
	{version: 3, name: "links, chunks, vectors, alerts, documents and stage events", sql: schemaV3},
	{version: 4, name: "rows excluded from the due queue (not documents)", sql: schemaV4},
	{version: 5, name: "run starts", sql: schemaRuns},
	{version: 6, name: "sitemap lastmod trust", sql: schemaTrust},
	{version: 7, name: "pages as a rowid table", sql: schemaRowidPages, foreignKeysOff: true},
	{version: 8, name: "stage events indexed by a page key", sql: schemaEventKeys},
	{version: 9, name: "documents carry the time their listing was last vouched for", sql: schemaSeenAt},
}

// schemaRuns records when each run of a source started (RecordRun), so the
// scheduler knows the source's real cadence.
const schemaRuns = `
CREATE TABLE runs (
	source TEXT    NOT NULL,
	start  INTEGER NOT NULL, -- Unix nanoseconds
	PRIMARY KEY (source, start)
) WITHOUT ROWID;
`

// schemaTrust holds each source's sitemap lastmod trust counts
// (AddLastModTrust), which the scheduler learns from.
const schemaTrust = `
CREATE TABLE lastmod_trust (
	source        TEXT NOT NULL PRIMARY KEY,
	moved_changed REAL NOT NULL DEFAULT 0,
	moved_same    REAL NOT NULL DEFAULT 0,
	still_changed REAL NOT NULL DEFAULT 0,
	still_same    REAL NOT NULL DEFAULT 0
) WITHOUT ROWID;
`

// schemaV1 holds per-URL state and the per-source run locks.
//
// Times are INTEGER Unix nanoseconds (UTC). The zero time.Time is stored as
// -9223372036854775808 (the smallest int64), so it sorts before every real
// instant exactly as time.Time does; a NextCheck of zero means "due now".
// Durations are INTEGER nanoseconds.
const schemaV1 = `
CREATE TABLE pages (
	source          TEXT    NOT NULL,
	url             TEXT    NOT NULL, -- normalized URL, the identity
	original_url    TEXT    NOT NULL,
	first_seen      INTEGER NOT NULL,
	last_seen       INTEGER NOT NULL,
	last_fetched    INTEGER NOT NULL,
	next_check      INTEGER NOT NULL,
	interval_ns     INTEGER NOT NULL DEFAULT 0,
	content_hash    TEXT    NOT NULL DEFAULT '',
	etag            TEXT    NOT NULL DEFAULT '',
	last_modified   TEXT    NOT NULL DEFAULT '',
	sitemap_lastmod INTEGER NOT NULL,
	missing_runs    INTEGER NOT NULL DEFAULT 0,
	gone            INTEGER NOT NULL DEFAULT 0 CHECK (gone IN (0, 1)),
	visits          INTEGER NOT NULL DEFAULT 0,
	changes         INTEGER NOT NULL DEFAULT 0,
	failures        INTEGER NOT NULL DEFAULT 0,
	last_error      TEXT    NOT NULL DEFAULT '',
	PRIMARY KEY (source, url)
) WITHOUT ROWID;

-- The due queue: WHERE source = ? AND gone = 0 AND next_check <= ?
-- ORDER BY next_check, url is a range scan of this index, no sorting.
CREATE INDEX pages_due ON pages (source, gone, next_check, url);

CREATE TABLE run_locks (
	source      TEXT    NOT NULL PRIMARY KEY,
	owner       TEXT    NOT NULL,
	acquired_at INTEGER NOT NULL,
	expires_at  INTEGER NOT NULL
) WITHOUT ROWID;
`

// schemaV2 adds the page details of Row: the stage and time of the last
// failure, title, canonical, alias target, the discovery document that
// listed the page, and its change statistics (Stats). ADD COLUMN with a
// constant default only rewrites the schema, and existing rows read as "no
// details, no statistics"; upgrading a large database costs the one pass
// that builds the two new indexes.
//
// recent holds Stats.Recent in the compact binary form of encodeChecks
// (8 to 15 bytes a check); NULL or empty means no checks. weight is stored
// as given: 0 keeps meaning "the default of 1".
//
// pages_failing is a partial index of the rows that are failing, the only
// ones DeadLetters reads; a Record that resets a zero failure count does
// not touch it. pages_listed finds the rows of one listing document for
// TouchListed; UpsertDiscovered writes it only for new rows and rows whose
// listing document changed.
const schemaV2 = `
ALTER TABLE pages ADD COLUMN last_stage      TEXT    NOT NULL DEFAULT '';
ALTER TABLE pages ADD COLUMN last_failure    INTEGER NOT NULL DEFAULT -9223372036854775808;
ALTER TABLE pages ADD COLUMN title           TEXT    NOT NULL DEFAULT '';
ALTER TABLE pages ADD COLUMN canonical       TEXT    NOT NULL DEFAULT '';
ALTER TABLE pages ADD COLUMN alias_of        TEXT    NOT NULL DEFAULT '';
ALTER TABLE pages ADD COLUMN listed_in       TEXT    NOT NULL DEFAULT '';
ALTER TABLE pages ADD COLUMN last_changed    INTEGER NOT NULL DEFAULT -9223372036854775808;
ALTER TABLE pages ADD COLUMN elapsed_ns      INTEGER NOT NULL DEFAULT 0;
ALTER TABLE pages ADD COLUMN recent          BLOB;
ALTER TABLE pages ADD COLUMN origin_modified INTEGER NOT NULL DEFAULT -9223372036854775808; -- Stats.LastModified
ALTER TABLE pages ADD COLUMN change_rate     REAL    NOT NULL DEFAULT 0;
ALTER TABLE pages ADD COLUMN weight          REAL    NOT NULL DEFAULT 0;

CREATE INDEX pages_failing ON pages (source, failures DESC, url) WHERE failures > 0;

-- TouchListed: the rows one discovery document listed. Without it each
-- call would read every row of the source.
CREATE INDEX pages_listed ON pages (source, listed_in);
`

// schemaV3 adds what the pipeline keeps beside the rows.
//
//	links      a page's outgoing links, one row per page (encodeLinks)
//	chunks     a page's current chunk list, one row per chunk
//	vectors    embedding vectors by (model, chunk text hash): float32
//	           little-endian, 4 bytes a dimension
//	alerts     change alerts, pending until delivered_at is set
//	documents  discovery's own documents (sitemap files)
//	events     stage events; the rowid keeps insertion order
//
// Tables whose rows can be large (text, vectors) keep a rowid; the small
// ones are WITHOUT ROWID, as pages was until version 7. links and chunks
// belong to a row of pages.
const schemaV3 = `
CREATE TABLE links (
	source TEXT NOT NULL,
	url    TEXT NOT NULL,
	links  BLOB NOT NULL, -- encodeLinks; a page without links has no row
	PRIMARY KEY (source, url),
	FOREIGN KEY (source, url) REFERENCES pages (source, url) ON DELETE CASCADE
);

CREATE TABLE chunks (
	source       TEXT    NOT NULL,
	url          TEXT    NOT NULL,
	ordinal      INTEGER NOT NULL,
	text_hash    TEXT    NOT NULL,
	record_id    TEXT    NOT NULL,
	heading_path TEXT    NOT NULL,
	start_byte   INTEGER NOT NULL,
	end_byte     INTEGER NOT NULL,
	text         TEXT    NOT NULL,
	PRIMARY KEY (source, url, ordinal),
	FOREIGN KEY (source, url) REFERENCES pages (source, url) ON DELETE CASCADE
);

CREATE TABLE vectors (
	model     TEXT NOT NULL,
	text_hash TEXT NOT NULL,
	vector    BLOB NOT NULL, -- float32 little-endian
	PRIMARY KEY (model, text_hash)
);

CREATE TABLE alerts (
	id           TEXT    NOT NULL PRIMARY KEY,
	source       TEXT    NOT NULL,
	url          TEXT    NOT NULL,
	kind         TEXT    NOT NULL,
	created_at   INTEGER NOT NULL,
	payload      BLOB    NOT NULL,
	delivered_at INTEGER NOT NULL DEFAULT -9223372036854775808, -- zero time: pending
	attempts     INTEGER NOT NULL DEFAULT 0,
	last_error   TEXT    NOT NULL DEFAULT '',
	last_attempt INTEGER NOT NULL DEFAULT -9223372036854775808  -- kept for diagnosis
);
-- PendingAlerts: the pending alerts of a source, oldest first.
CREATE INDEX alerts_pending ON alerts (source, created_at, id)
	WHERE delivered_at = -9223372036854775808;

CREATE TABLE documents (
	source         TEXT    NOT NULL,
	url            TEXT    NOT NULL,
	etag           TEXT    NOT NULL,
	last_modified  TEXT    NOT NULL,
	entries        INTEGER NOT NULL,
	newest_lastmod INTEGER NOT NULL,
	listed_lastmod INTEGER NOT NULL, -- the lastmod a parent sitemap index gave it
	fetched_at     INTEGER NOT NULL,
	PRIMARY KEY (source, url)
) WITHOUT ROWID;

CREATE TABLE events (
	id      INTEGER PRIMARY KEY, -- insertion order
	source  TEXT    NOT NULL,
	url     TEXT    NOT NULL,
	at      INTEGER NOT NULL,
	stage   TEXT    NOT NULL,
	attempt INTEGER NOT NULL,
	ok      INTEGER NOT NULL CHECK (ok IN (0, 1)),
	err     TEXT    NOT NULL,
	detail  TEXT    NOT NULL
);
-- Events of a page from a time on: (at, rowid) order straight from the index.
CREATE INDEX events_page ON events (source, url, at);
`

// schemaV4 adds Row.Excluded: the reason a URL is not a page (it answered
// with an image, an archive, a notebook...) and stays out of the due
// queue. An excluded row's next_check is the largest instant, so the due
// queries keep reading pages_due alone; a moved sitemap lastmod clears the
// exclusion (UpsertDiscovered's bump). Existing rows read as pages.
const schemaV4 = `
ALTER TABLE pages ADD COLUMN excluded TEXT NOT NULL DEFAULT '';
`

// schemaRowidPages rebuilds pages as a rowid table with the same columns,
// in the same order, and (source, url) unique. A WITHOUT ROWID table keeps
// its whole rows in the interior pages of its B-tree too: rows of about
// 600 bytes made it 8 levels deep at a million rows, and every lookup from
// an index (the due queue, a listing) walked them all. A rowid table's
// interior pages hold only rowids, so the same rows are 3 levels deep, and
// new rows are appended instead of splitting pages all over the key order.
// The unique index is the parent key of links and chunks.
//
// The rows are copied in key order (the rowids follow it), the old table
// dropped and the new one renamed, as SQLite documents for a change
// ALTER TABLE cannot make: the step runs with foreign keys off, or
// dropping the old table would delete every row of links and chunks, and
// migrateStep checks the foreign keys before it commits.
const schemaRowidPages = `
CREATE TABLE pages_rowid (
	source          TEXT    NOT NULL,
	url             TEXT    NOT NULL, -- normalized URL, the identity
	original_url    TEXT    NOT NULL,
	first_seen      INTEGER NOT NULL,
	last_seen       INTEGER NOT NULL,
	last_fetched    INTEGER NOT NULL,
	next_check      INTEGER NOT NULL,
	interval_ns     INTEGER NOT NULL DEFAULT 0,
	content_hash    TEXT    NOT NULL DEFAULT '',
	etag            TEXT    NOT NULL DEFAULT '',
	last_modified   TEXT    NOT NULL DEFAULT '',
	sitemap_lastmod INTEGER NOT NULL,
	missing_runs    INTEGER NOT NULL DEFAULT 0,
	gone            INTEGER NOT NULL DEFAULT 0 CHECK (gone IN (0, 1)),
	visits          INTEGER NOT NULL DEFAULT 0,
	changes         INTEGER NOT NULL DEFAULT 0,
	failures        INTEGER NOT NULL DEFAULT 0,
	last_error      TEXT    NOT NULL DEFAULT '',
	last_stage      TEXT    NOT NULL DEFAULT '',
	last_failure    INTEGER NOT NULL DEFAULT -9223372036854775808,
	title           TEXT    NOT NULL DEFAULT '',
	canonical       TEXT    NOT NULL DEFAULT '',
	alias_of        TEXT    NOT NULL DEFAULT '',
	listed_in       TEXT    NOT NULL DEFAULT '',
	last_changed    INTEGER NOT NULL DEFAULT -9223372036854775808,
	elapsed_ns      INTEGER NOT NULL DEFAULT 0,
	recent          BLOB,
	origin_modified INTEGER NOT NULL DEFAULT -9223372036854775808, -- Stats.LastModified
	change_rate     REAL    NOT NULL DEFAULT 0,
	weight          REAL    NOT NULL DEFAULT 0,
	excluded        TEXT    NOT NULL DEFAULT '',
	UNIQUE (source, url)
);

INSERT INTO pages_rowid (
	source, url, original_url, first_seen, last_seen, last_fetched, next_check,
	interval_ns, content_hash, etag, last_modified, sitemap_lastmod, missing_runs,
	gone, visits, changes, failures, last_error, last_stage, last_failure, title,
	canonical, alias_of, listed_in, last_changed, elapsed_ns, recent,
	origin_modified, change_rate, weight, excluded)
SELECT
	source, url, original_url, first_seen, last_seen, last_fetched, next_check,
	interval_ns, content_hash, etag, last_modified, sitemap_lastmod, missing_runs,
	gone, visits, changes, failures, last_error, last_stage, last_failure, title,
	canonical, alias_of, listed_in, last_changed, elapsed_ns, recent,
	origin_modified, change_rate, weight, excluded
FROM pages ORDER BY source, url;

DROP TABLE pages;
ALTER TABLE pages_rowid RENAME TO pages;

-- As schemaV1 and schemaV2 defined them.
CREATE INDEX pages_due ON pages (source, gone, next_check, url);
CREATE INDEX pages_failing ON pages (source, failures DESC, url) WHERE failures > 0;
CREATE INDEX pages_listed ON pages (source, listed_in);
`

// schemaEventKeys indexes the stage-event log by a 64-bit key of the
// page (eventKey of its source and URL) instead of by the source and URL
// text. Every 304 appends an event, at a random place of this index: an
// entry of about 20 bytes instead of one of about 80 (with a
// documentation site's URLs) leaves a quarter of the leaf pages for a run
// to dirty and write to the WAL, and finds its place with integer
// comparisons instead of string ones (BenchmarkRecordNotModified: 44 ->
// 32 cpu-µs per 304). Events reads the key's entries and checks source
// and URL in the row, so two pages sharing a key only cost a row read.
// The existing events get their key from eventKey, registered on the
// writer's connections as the SQL function recrawl_event_key.
const schemaEventKeys = `
ALTER TABLE events ADD COLUMN page_key INTEGER NOT NULL DEFAULT 0;
UPDATE events SET page_key = recrawl_event_key(source, url);
DROP INDEX events_page;
CREATE INDEX events_page ON events (page_key, at);
`

// schemaSeenAt adds documents.seen_at: when TouchListed last vouched for
// the document's listing (a 304), so that the rows it listed at its last
// full read (last_seen >= fetched_at) count as seen then without a write
// to each of them (seenSQL). 0: never.
const schemaSeenAt = `
ALTER TABLE documents ADD COLUMN seen_at INTEGER NOT NULL DEFAULT 0;
`

// SchemaVersionError is returned by OpenSQLite for a database written by a
// newer recrawl: its schema version is beyond the migrations this build
// knows, and opening it could damage data the newer version relies on.
type SchemaVersionError struct {
	Path      string // the database file
	Version   int    // the schema version found in the file
	Supported int    // the newest version this build knows
}

// Error says which versions met and what to do.
func (e *SchemaVersionError) Error() string {
	return fmt.Sprintf("crawlstate: %s has schema version %d but this build of recrawl knows versions up to %d; open it with a newer recrawl or use another file",
		e.Path, e.Version, e.Supported)
}

// ErrNotStateDB is returned by OpenSQLite for a SQLite file that holds some
// other application's data.
var ErrNotStateDB = errors.New("crawlstate: not a recrawl state database")

// migrate brings the database at path up to the last of steps. Each step
// runs in its own transaction, which re-reads the version first, so two
// processes opening a new file at once apply every step exactly once.
// Every step runs on one connection of db, which migrate leaves with
// foreign keys enforced.
//
// A new file starts in rollback-journal mode until the first connection
// switches it to WAL; meanwhile SQLite answers other connections
// SQLITE_BUSY without waiting in their busy handler. A step that meets
// this, or the connection's own setup (which switches the journal mode),
// is retried every busyRetry until busyTimeout has been spent.
func migrate(ctx context.Context, db *sql.DB, path string, steps []migration, busyTimeout time.Duration, log *slog.Logger) (err error) {
	waited := time.Duration(0)
	pause := func() error {
		t := time.NewTimer(busyRetry)
		defer t.Stop()
		select {
		case <-ctx.Done():
			return fmt.Errorf("crawlstate: migrate %s: %w", path, ctx.Err())
		case <-t.C:
		}
		waited += busyRetry
		return nil
	}
	conn, err := db.Conn(ctx)
	for isBusy(err) && waited < busyTimeout {
		if err := pause(); err != nil {
			return err
		}
		conn, err = db.Conn(ctx)
	}
	if err != nil {
		return fmt.Errorf("crawlstate: migrate %s: %w", path, err)
	}
	defer func() {
		// A step may have turned enforcement off; the connection stays in
		// the pool and every write relies on it.
		if _, e := conn.ExecContext(context.Background(), `PRAGMA foreign_keys = ON`); e != nil && err == nil {
			err = fmt.Errorf("crawlstate: migrate %s: enforce foreign keys: %w", path, e)
		}
		if e := conn.Close(); e != nil && err == nil {
			err = fmt.Errorf("crawlstate: migrate %s: %w", path, e)
		}
	}()
	for {
		done, err := migrateStep(ctx, conn, path, steps, log)
		if isBusy(err) && waited < busyTimeout {
			if err := pause(); err != nil {
				return err
			}
			continue
		}
		if err != nil || done {
			return err
		}
	}
}

// busyRetry is the pause between attempts of a migration step that found
// the new database file busy.
const busyRetry = 10 * time.Millisecond

// migrateStep applies the step after the current version, if any, and
// reports whether the schema was already up to date.
//
// A step marked foreignKeysOff runs with enforcement off, which SQLite
// only lets a connection change outside a transaction: the version is read
// first to set it, and read again in the transaction; should another
// process have applied a step in between, and the mode not suit the next
// one, the attempt is abandoned and the caller tries again. Before such a
// step commits, PRAGMA foreign_key_check must find no violation.
func migrateStep(ctx context.Context, conn *sql.Conn, path string, steps []migration, log *slog.Logger) (done bool, err error) {
	var peek int
	if err := conn.QueryRowContext(ctx, `PRAGMA user_version`).Scan(&peek); err != nil {
		return false, fmt.Errorf("crawlstate: migrate %s: read schema version: %w", path, err)
	}
	fkOff := needsForeignKeysOff(steps, peek)
	mode := "ON"
	if fkOff {
		mode = "OFF"
	}
	if _, err := conn.ExecContext(ctx, `PRAGMA foreign_keys = `+mode); err != nil {
		return false, fmt.Errorf("crawlstate: migrate %s: set foreign_keys %s: %w", path, mode, err)
	}

	tx, err := conn.BeginTx(ctx, nil) // BEGIN IMMEDIATE: the write lock first
	if err != nil {
		return false, fmt.Errorf("crawlstate: migrate %s: begin: %w", path, err)
	}
	defer func() {
		if err != nil {
			_ = tx.Rollback()
		}
	}()

	var version, appID int
	if err := tx.QueryRowContext(ctx, `PRAGMA user_version`).Scan(&version); err != nil {
		return false, fmt.Errorf("crawlstate: migrate %s: read schema version: %w", path, err)
	}
	if err := tx.QueryRowContext(ctx, `PRAGMA application_id`).Scan(&appID); err != nil {
		return false, fmt.Errorf("crawlstate: migrate %s: read application id: %w", path, err)
	}
	switch {
	case version == 0 && appID == 0:
		var tables int
		if err := tx.QueryRowContext(ctx, `SELECT count(*) FROM sqlite_schema`).Scan(&tables); err != nil {
			return false, fmt.Errorf("crawlstate: migrate %s: inspect schema: %w", path, err)
		}
		if tables > 0 {
			return false, fmt.Errorf("%w: %s already holds %d schema objects and no recrawl schema version; pass a new file or an existing state database", ErrNotStateDB, path, tables)
		}
	case appID != applicationID:
		return false, fmt.Errorf("%w: %s has application_id %#x, not recrawl's %#x; pass a new file or an existing state database", ErrNotStateDB, path, appID, applicationID)
	}
	if version > len(steps) {
		return false, &SchemaVersionError{Path: path, Version: version, Supported: len(steps)}
	}
	if version == len(steps) {
		return true, tx.Commit()
	}

	step := steps[version]
	if step.version != version+1 {
		return false, fmt.Errorf("crawlstate: migrate %s: step %d is numbered %d; migrations must be numbered 1, 2, 3... in order", path, version+1, step.version)
	}
	if step.foreignKeysOff != fkOff {
		// Another process applied a step since the peek: start over
		// with the mode this one needs.
		return false, tx.Rollback()
	}
	if _, err := tx.ExecContext(ctx, step.sql); err != nil {
		return false, fmt.Errorf("crawlstate: migrate %s to version %d (%s): %w", path, step.version, step.name, err)
	}
	if step.foreignKeysOff {
		if err := foreignKeyCheck(ctx, tx); err != nil {
			return false, fmt.Errorf("crawlstate: migrate %s to version %d (%s): %w", path, step.version, step.name, err)
		}
	}
	// PRAGMA arguments cannot be bound parameters; both values are ints.
	if _, err := tx.ExecContext(ctx, fmt.Sprintf(`PRAGMA application_id = %d; PRAGMA user_version = %d`, applicationID, step.version)); err != nil {
		return false, fmt.Errorf("crawlstate: migrate %s: set version %d: %w", path, step.version, err)
	}
	if err := tx.Commit(); err != nil {
		return false, fmt.Errorf("crawlstate: migrate %s to version %d: commit: %w", path, step.version, err)
	}
	log.Info("crawlstate: schema migrated", "path", path, "version", step.version, "step", step.name)
	return false, nil
}

// needsForeignKeysOff reports whether the step after version runs with
// foreign keys off.
func needsForeignKeysOff(steps []migration, version int) bool {
	return version >= 0 && version < len(steps) && steps[version].foreignKeysOff
}

// foreignKeyCheck returns an error naming the first row that violates a
// foreign key (PRAGMA foreign_key_check), if any.
func foreignKeyCheck(ctx context.Context, tx *sql.Tx) error {
	rows, err := tx.QueryContext(ctx, `PRAGMA foreign_key_check`)
	if err != nil {
		return fmt.Errorf("foreign key check: %w", err)
	}
	defer rows.Close()
	if rows.Next() {
		var table, parent string
		var rowid sql.NullInt64
		var fk int
		if err := rows.Scan(&table, &rowid, &parent, &fk); err != nil {
			return fmt.Errorf("foreign key check: %w", err)
		}
		return fmt.Errorf("foreign key check: row %d of %s has no parent row in %s", rowid.Int64, table, parent)
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("foreign key check: %w", err)
	}
	return nil
}
