package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/recrawl/recrawl/crawlstate"
	"github.com/recrawl/recrawl/crawlstate/internal/backend"
)

// Document implements State.
func (s *State) Document(ctx context.Context, source, u string) (crawlstate.Document, error) {
	const op = "document"
	d, err := backend.ScanDocument(s.r.QueryRowContext(ctx, `SELECT `+backend.DocumentColumns+` FROM documents WHERE source = ? AND url = ?`, source, u))
	if errors.Is(err, sql.ErrNoRows) {
		return crawlstate.Document{}, check.NoSuchDocument(op, source, u)
	}
	if err != nil {
		return crawlstate.Document{}, fmt.Errorf("crawlstate: %s %q of source %q: %w", op, u, source, err)
	}
	return d, nil
}

// PutDocument implements State: it inserts the document or replaces every
// field of the stored one. An empty source or URL is an error.
func (s *State) PutDocument(ctx context.Context, source string, doc crawlstate.Document) error {
	const op = "put document"
	if err := check.Document(source, doc); err != nil {
		return err
	}
	return s.withTx(ctx, op, func(tx *sql.Tx) error {
		// A new full read (another FetchedAt) moves the line between the
		// rows the document vouches for and the rest: the time its stamp
		// vouched for them is written to those rows first (seenSQL).
		if _, err := tx.ExecContext(ctx, settleSeenSQL, source, doc.URL, backend.EncTime(doc.FetchedAt)); err != nil {
			return fmt.Errorf("crawlstate: %s %q of source %q: settle its rows' LastSeen: %w", op, doc.URL, source, err)
		}
		_, err := tx.ExecContext(ctx, `
INSERT INTO documents (source, `+backend.DocumentColumns+`)
VALUES (?, ?, ?, ?, ?, ?, ?, ?)
ON CONFLICT (source, url) DO UPDATE SET
	etag           = excluded.etag,
	last_modified  = excluded.last_modified,
	entries        = excluded.entries,
	newest_lastmod = excluded.newest_lastmod,
	listed_lastmod = excluded.listed_lastmod,
	seen_at        = CASE WHEN fetched_at = excluded.fetched_at THEN seen_at ELSE 0 END,
	fetched_at     = excluded.fetched_at`,
			backend.DocumentArgs(source, doc)...)
		if err != nil {
			return fmt.Errorf("crawlstate: %s %q of source %q: %w", op, doc.URL, source, err)
		}
		return nil
	})
}

// settleSeenSQL writes a document's seen_at into the last_seen of the
// rows it vouches for (those listed at its last full read: last_seen >=
// fetched_at), before a PutDocument with another FetchedAt ($3) moves that
// line. Only rows behind the stamp are written: after a full read, those
// the document no longer lists.
const settleSeenSQL = `
UPDATE pages INDEXED BY pages_listed SET last_seen = d.seen_at
FROM (SELECT fetched_at, seen_at FROM documents WHERE source = ?1 AND url = ?2 AND fetched_at != ?3) AS d
WHERE pages.source = ?1 AND pages.listed_in = ?2
	AND pages.last_seen >= d.fetched_at AND pages.last_seen < d.seen_at`

// touchListedSQL marks seen the rows a document listed, as the "mark
// seen" step of UpsertDiscovered does. INDEXED BY: without statistics
// (ANALYZE) SQLite prefers the primary key's source prefix, a scan of
// every row of the source, to the two-column index.
//
// Only rows seen at or after the document's FetchedAt are touched: a URL
// the document stopped listing at its last full read keeps an older
// LastSeen, so a later 304 of the same document does not bring it back.
const touchListedSQL = `
UPDATE pages INDEXED BY pages_listed SET last_seen = :now, missing_runs = 0
WHERE source = :source AND listed_in = :via
	AND last_seen >= COALESCE((SELECT fetched_at FROM documents WHERE source = :source AND url = :via), :zero)`

// listedCountSQL counts the rows a stored document vouches for (listed
// at its last full read, $3), and those of them counting an absence.
const listedCountSQL = `
SELECT count(*), count(NULLIF(missing_runs, 0)) FROM pages INDEXED BY pages_listed
WHERE source = ?1 AND listed_in = ?2 AND last_seen >= ?3`

// listedPresentSQL ends the absence count of those rows.
const listedPresentSQL = `
UPDATE pages INDEXED BY pages_listed SET missing_runs = 0
WHERE source = ?1 AND listed_in = ?2 AND last_seen >= ?3 AND missing_runs != 0`

// TouchListed implements State. When a Document is stored for via, the
// rows are not written: the document's seen_at is set to now, and a row's
// LastSeen is read through it (seenSQL) while the row is one the document
// listed at its last full read; only rows whose MissingRuns is not 0 are
// written. A million-row source whose sitemaps answer 304 costs a read of
// its rows instead of a rewrite of each (BenchmarkTouchListed). Without a
// stored document every listed row is written in one UPDATE. An empty via
// is an error: it would name the rows no document listed.
func (s *State) TouchListed(ctx context.Context, source, via string, now time.Time) (int, error) {
	const op = "touch listed"
	if err := check.Via(via); err != nil {
		return 0, err
	}
	var n int64
	err := s.withTx(ctx, op, func(tx *sql.Tx) error {
		var fetched int64
		err := tx.QueryRowContext(ctx, `SELECT fetched_at FROM documents WHERE source = ? AND url = ?`, source, via).Scan(&fetched)
		if errors.Is(err, sql.ErrNoRows) {
			// No stored document to stamp: every row it listed is written.
			res, err := tx.ExecContext(ctx, touchListedSQL,
				sql.Named("source", source), sql.Named("via", via), sql.Named("now", backend.EncTime(now)), sql.Named("zero", int64(backend.ZeroTime)))
			if err != nil {
				return fmt.Errorf("crawlstate: %s %q of source %q: %w", op, via, source, err)
			}
			if n, err = res.RowsAffected(); err != nil {
				return fmt.Errorf("crawlstate: %s %q of source %q: %w", op, via, source, err)
			}
			return nil
		}
		if err != nil {
			return fmt.Errorf("crawlstate: %s %q of source %q: %w", op, via, source, err)
		}
		// The document is stamped; its rows are only counted, and
		// written only where an absence was being counted.
		var absent int64
		if err := tx.QueryRowContext(ctx, listedCountSQL, source, via, fetched).Scan(&n, &absent); err != nil {
			return fmt.Errorf("crawlstate: %s %q of source %q: count its rows: %w", op, via, source, err)
		}
		if absent > 0 {
			if _, err := tx.ExecContext(ctx, listedPresentSQL, source, via, fetched); err != nil {
				return fmt.Errorf("crawlstate: %s %q of source %q: %w", op, via, source, err)
			}
		}
		if _, err := tx.ExecContext(ctx, `UPDATE documents SET seen_at = max(seen_at, ?) WHERE source = ? AND url = ?`,
			backend.EncTime(now), source, via); err != nil {
			return fmt.Errorf("crawlstate: %s %q of source %q: %w", op, via, source, err)
		}
		return nil
	})
	if err != nil {
		return 0, err
	}
	return int(n), nil
}
