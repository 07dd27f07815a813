package sqlite

import (
	"cmp"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/recrawl/recrawl/crawlstate"
)

// Document implements State.
func (s *State) Document(ctx context.Context, source, u string) (crawlstate.Document, error) {
	const op = "document"
	var (
		d                         crawlstate.Document
		newest, listed, fetchedAt int64
	)
	err := s.r.QueryRowContext(ctx, `
SELECT url, etag, last_modified, entries, newest_lastmod, listed_lastmod, fetched_at
FROM documents WHERE source = ? AND url = ?`, source, u).
		Scan(&d.URL, &d.ETag, &d.LastModified, &d.Entries, &newest, &listed, &fetchedAt)
	if errors.Is(err, sql.ErrNoRows) {
		return crawlstate.Document{}, fmt.Errorf("crawlstate: %s %q of source %q: %w", op, u, source, crawlstate.ErrNotFound)
	}
	if err != nil {
		return crawlstate.Document{}, fmt.Errorf("crawlstate: %s %q of source %q: %w", op, u, source, err)
	}
	d.NewestLastMod, d.ListedLastMod, d.FetchedAt = decTime(newest), decTime(listed), decTime(fetchedAt)
	return d, nil
}

// PutDocument implements State: it inserts the document or replaces every
// field of the stored one. An empty source or URL is an error.
func (s *State) PutDocument(ctx context.Context, source string, doc crawlstate.Document) error {
	const op = "put document"
	if source == "" || doc.URL == "" {
		return fmt.Errorf("crawlstate: %s: empty source (%q) or document URL (%q)", op, source, doc.URL)
	}
	return s.withTx(ctx, op, func(tx *sql.Tx) error {
		// A new full read (another FetchedAt) moves the line between the
		// rows the document vouches for and the rest: the time its stamp
		// vouched for them is written to those rows first (seenSQL).
		if _, err := tx.ExecContext(ctx, settleSeenSQL, source, doc.URL, encTime(doc.FetchedAt)); err != nil {
			return fmt.Errorf("crawlstate: %s %q of source %q: settle its rows' LastSeen: %w", op, doc.URL, source, err)
		}
		_, err := tx.ExecContext(ctx, `
INSERT INTO documents (source, url, etag, last_modified, entries, newest_lastmod, listed_lastmod, fetched_at)
VALUES (?, ?, ?, ?, ?, ?, ?, ?)
ON CONFLICT (source, url) DO UPDATE SET
	etag           = excluded.etag,
	last_modified  = excluded.last_modified,
	entries        = excluded.entries,
	newest_lastmod = excluded.newest_lastmod,
	listed_lastmod = excluded.listed_lastmod,
	seen_at        = CASE WHEN fetched_at = excluded.fetched_at THEN seen_at ELSE 0 END,
	fetched_at     = excluded.fetched_at`,
			source, doc.URL, doc.ETag, doc.LastModified, doc.Entries,
			encTime(doc.NewestLastMod), encTime(doc.ListedLastMod), encTime(doc.FetchedAt))
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
	if via == "" {
		return 0, fmt.Errorf("crawlstate: %s: empty document URL; pass the document whose listing did not change", op)
	}
	var n int64
	err := s.withTx(ctx, op, func(tx *sql.Tx) error {
		var fetched int64
		err := tx.QueryRowContext(ctx, `SELECT fetched_at FROM documents WHERE source = ? AND url = ?`, source, via).Scan(&fetched)
		if errors.Is(err, sql.ErrNoRows) {
			// No stored document to stamp: every row it listed is written.
			res, err := tx.ExecContext(ctx, touchListedSQL,
				sql.Named("source", source), sql.Named("via", via), sql.Named("now", encTime(now)), sql.Named("zero", int64(zeroTime)))
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
			encTime(now), source, via); err != nil {
			return fmt.Errorf("crawlstate: %s %q of source %q: %w", op, via, source, err)
		}
		return nil
	})
	if err != nil {
		return 0, err
	}
	return int(n), nil
}

// keyOrder returns the positions in urls of each distinct URL's first
// entry, in URL byte order (SQLite's BINARY collation, the order of the
// pages key), so that loading the batch appends to the B-trees instead of
// splitting pages all over them.
//
// It is a most-significant-digit radix sort with 8-byte digits: the URLs
// of one batch share long prefixes (scheme, host, section), which a
// comparison sort reads again on every comparison; here the shared prefix
// is skipped once, each round sorts 64-bit integers, and only the URLs
// still tied read their next 8 bytes.
func keyOrder(urls []crawlstate.Discovered) []int32 {
	keys := make([]radixKey, len(urls))
	for i := range keys {
		keys[i] = radixKey{url: urls[i].URL, i: int32(i)}
	}
	radixSort(keys, sharedPrefix(keys))
	order := make([]int32, 0, len(urls))
	for _, k := range keys {
		if k.i >= 0 {
			order = append(order, k.i)
		}
	}
	return order
}

// radixKey is a URL of a batch, its position in the batch (-1 once it is
// known to repeat an earlier entry) and its digit: the 8 bytes from the
// current offset, big-endian, zero-padded.
type radixKey struct {
	digit uint64
	url   string
	i     int32
}

// radixSort sorts keys, whose URLs agree on their first off bytes, by
// URL and then by position, and marks every entry after the first of a
// URL with position -1.
func radixSort(keys []radixKey, off int) {
	if len(keys) < 2 {
		return
	}
	for j := range keys {
		keys[j].digit = digitAt(keys[j].url, off)
	}
	slices.SortFunc(keys, func(a, b radixKey) int { return cmp.Compare(a.digit, b.digit) })
	end := off + 8
	for len(keys) > 0 {
		n := 1
		for n < len(keys) && keys[n].digit == keys[0].digit {
			n++
		}
		tied := keys[:n]
		keys = keys[n:]
		if n == 1 {
			continue
		}
		// Of URLs with the same digit, one that ends within it is a
		// prefix of every longer one (its padding is zero bytes, which
		// theirs match): those come first, shortest first, and equal
		// URLs (same length) in batch order. The others are tied on 8
		// more bytes.
		slices.SortFunc(tied, func(a, b radixKey) int {
			ea, eb := len(a.url) <= end, len(b.url) <= end
			switch {
			case ea && eb:
				return cmp.Or(cmp.Compare(len(a.url), len(b.url)), cmp.Compare(a.i, b.i))
			case ea:
				return -1
			case eb:
				return 1
			}
			return 0
		})
		k := 0
		for ; k < n && len(tied[k].url) <= end; k++ {
			if k > 0 && len(tied[k].url) == len(tied[k-1].url) {
				tied[k].i = -1
			}
		}
		radixSort(tied[k:], end)
	}
}

// sharedPrefix returns how many leading bytes every URL of keys has in
// common.
func sharedPrefix(keys []radixKey) int {
	if len(keys) == 0 {
		return 0
	}
	p := keys[0].url
	for _, k := range keys[1:] {
		if len(k.url) >= len(p) && k.url[:len(p)] == p {
			continue
		}
		j := 0
		for j < min(len(p), len(k.url)) && k.url[j] == p[j] {
			j++
		}
		p = p[:j]
		if j == 0 {
			break
		}
	}
	return len(p)
}

// digitAt returns the 8 bytes of s from off as a big-endian integer,
// padded with zero bytes past the end of s.
func digitAt(s string, off int) uint64 {
	if off+8 <= len(s) {
		b := s[off : off+8]
		return uint64(b[0])<<56 | uint64(b[1])<<48 | uint64(b[2])<<40 | uint64(b[3])<<32 |
			uint64(b[4])<<24 | uint64(b[5])<<16 | uint64(b[6])<<8 | uint64(b[7])
	}
	var d uint64
	for j := range 8 {
		d <<= 8
		if off+j < len(s) {
			d |= uint64(s[off+j])
		}
	}
	return d
}
