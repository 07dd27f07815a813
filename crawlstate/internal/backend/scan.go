package backend

import (
	"log/slog"
	"time"

	"github.com/recrawl/recrawl/crawlstate"
)

// This file decodes the rows the SQL stores share the shape of: alerts,
// discovery documents and run locks. Their tables have the same columns
// in both stores; only the queries around them differ by dialect.

// Scanner is a row a query returned (*sql.Row, *sql.Rows, pgx.Row,
// pgx.Rows).
type Scanner interface{ Scan(dest ...any) error }

// AlertColumns are the alerts columns ScanAlert reads, in order.
const AlertColumns = `id, source, url, kind, created_at, payload, delivered_at, attempts, last_error`

// ScanAlert reads an alert selected as AlertColumns; an empty payload is
// nil.
func ScanAlert(sc Scanner) (crawlstate.Alert, error) {
	var (
		a                  crawlstate.Alert
		created, delivered int64
	)
	if err := sc.Scan(&a.ID, &a.Source, &a.URL, &a.Kind, &created, &a.Payload, &delivered, &a.Attempts, &a.LastError); err != nil {
		return crawlstate.Alert{}, err
	}
	a.CreatedAt, a.DeliveredAt = DecTime(created), DecTime(delivered)
	if len(a.Payload) == 0 {
		a.Payload = nil
	}
	return a, nil
}

// StoredAlert is the alert of a checked result as a store keeps it, with
// the result's URL when the alert names none and a payload that is not
// nil (the column is NOT NULL).
func StoredAlert(source string, r *crawlstate.Result) crawlstate.Alert {
	a := *r.Alert
	a.Source = source
	if a.URL == "" {
		a.URL = r.URL
	}
	if a.Payload == nil {
		a.Payload = []byte{}
	}
	return a
}

// DocumentColumns are the documents columns ScanDocument reads, in order.
const DocumentColumns = `url, etag, last_modified, entries, newest_lastmod, listed_lastmod, fetched_at`

// DocumentArgs are the values of the documents row of doc of source:
// source, then DocumentColumns' in their order.
func DocumentArgs(source string, doc crawlstate.Document) []any {
	return []any{source, doc.URL, doc.ETag, doc.LastModified, doc.Entries,
		EncTime(doc.NewestLastMod), EncTime(doc.ListedLastMod), EncTime(doc.FetchedAt)}
}

// ScanDocument reads a document selected as DocumentColumns.
func ScanDocument(sc Scanner) (crawlstate.Document, error) {
	var (
		d                         crawlstate.Document
		newest, listed, fetchedAt int64
	)
	if err := sc.Scan(&d.URL, &d.ETag, &d.LastModified, &d.Entries, &newest, &listed, &fetchedAt); err != nil {
		return crawlstate.Document{}, err
	}
	d.NewestLastMod, d.ListedLastMod, d.FetchedAt = DecTime(newest), DecTime(listed), DecTime(fetchedAt)
	return d, nil
}

// LockColumns are the run_locks columns ScanLock reads, in order.
const LockColumns = `owner, acquired_at, expires_at`

// Lock is the stored run lock of a source.
type Lock struct {
	Owner             string
	Acquired, Expires time.Time
}

// ScanLock reads a run lock selected as LockColumns.
func ScanLock(sc Scanner) (Lock, error) {
	var (
		l                 Lock
		acquired, expires int64
	)
	if err := sc.Scan(&l.Owner, &acquired, &expires); err != nil {
		return Lock{}, err
	}
	l.Acquired, l.Expires = DecTime(acquired), DecTime(expires)
	return l, nil
}

// Take decides whether owner may take the stored lock l of source at now
// (crawlstate.State.Lock): a *crawlstate.LockHeldError while another
// owner holds it unexpired. Otherwise takeover reports whether owner
// takes over another owner's expired lock, which it logs as a warning
// to log, when not nil.
func (c Checker) Take(log *slog.Logger, source, owner string, now time.Time, l Lock) (takeover bool, err error) {
	switch {
	case l.Owner == owner:
		return false, nil
	case l.Expires.After(now):
		return false, &crawlstate.LockHeldError{Source: source, Owner: l.Owner, Acquired: l.Acquired, Expires: l.Expires}
	}
	if log != nil {
		log.Warn(string(c)+": took over an expired run lock",
			"source", source, "owner", owner, "previous_owner", l.Owner, "expired_at", l.Expires)
	}
	return true, nil
}

// NoSuchDocument is the error of call op on a document source has not
// stored; it wraps crawlstate.ErrNotFound.
func (c Checker) NoSuchDocument(op, source, u string) error {
	return c.errorf(op, "%q of source %q: %w", u, source, crawlstate.ErrNotFound)
}
