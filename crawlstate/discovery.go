package crawlstate

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"
)

// Document implements State.
func (s *SQLite) Document(ctx context.Context, source, u string) (Document, error) {
	const op = "document"
	var (
		d                         Document
		newest, listed, fetchedAt int64
	)
	err := s.r.QueryRowContext(ctx, `
SELECT url, etag, last_modified, entries, newest_lastmod, listed_lastmod, fetched_at
FROM documents WHERE source = ? AND url = ?`, source, u).
		Scan(&d.URL, &d.ETag, &d.LastModified, &d.Entries, &newest, &listed, &fetchedAt)
	if errors.Is(err, sql.ErrNoRows) {
		return Document{}, fmt.Errorf("crawlstate: %s %q of source %q: %w", op, u, source, ErrNotFound)
	}
	if err != nil {
		return Document{}, fmt.Errorf("crawlstate: %s %q of source %q: %w", op, u, source, err)
	}
	d.NewestLastMod, d.ListedLastMod, d.FetchedAt = decTime(newest), decTime(listed), decTime(fetchedAt)
	return d, nil
}

// PutDocument implements State: it inserts the document or replaces every
// field of the stored one. An empty source or URL is an error.
func (s *SQLite) PutDocument(ctx context.Context, source string, doc Document) error {
	const op = "put document"
	if source == "" || doc.URL == "" {
		return fmt.Errorf("crawlstate: %s: empty source (%q) or document URL (%q)", op, source, doc.URL)
	}
	return s.withTx(ctx, op, func(tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, `
INSERT INTO documents (source, url, etag, last_modified, entries, newest_lastmod, listed_lastmod, fetched_at)
VALUES (?, ?, ?, ?, ?, ?, ?, ?)
ON CONFLICT (source, url) DO UPDATE SET
	etag           = excluded.etag,
	last_modified  = excluded.last_modified,
	entries        = excluded.entries,
	newest_lastmod = excluded.newest_lastmod,
	listed_lastmod = excluded.listed_lastmod,
	fetched_at     = excluded.fetched_at`,
			source, doc.URL, doc.ETag, doc.LastModified, doc.Entries,
			encTime(doc.NewestLastMod), encTime(doc.ListedLastMod), encTime(doc.FetchedAt))
		if err != nil {
			return fmt.Errorf("crawlstate: %s %q of source %q: %w", op, doc.URL, source, err)
		}
		return nil
	})
}

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

// TouchListed implements State in one UPDATE. An empty via is an error: it
// would name the rows no document listed.
func (s *SQLite) TouchListed(ctx context.Context, source, via string, now time.Time) (int, error) {
	const op = "touch listed"
	if via == "" {
		return 0, fmt.Errorf("crawlstate: %s: empty document URL; pass the document whose listing did not change", op)
	}
	var n int64
	err := s.withTx(ctx, op, func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, touchListedSQL,
			sql.Named("source", source), sql.Named("via", via), sql.Named("now", encTime(now)), sql.Named("zero", int64(zeroTime)))
		if err != nil {
			return fmt.Errorf("crawlstate: %s %q of source %q: %w", op, via, source, err)
		}
		if n, err = res.RowsAffected(); err != nil {
			return fmt.Errorf("crawlstate: %s %q of source %q: %w", op, via, source, err)
		}
		return nil
	})
	if err != nil {
		return 0, err
	}
	return int(n), nil
}
