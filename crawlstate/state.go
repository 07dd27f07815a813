// Package crawlstate keeps what recrawl knows about every page between runs:
// identity, validators, content hash, revisit schedule, missing-run counts,
// tombstones and failures, plus a run lock per source.
//
// State is the interface the engine needs; nothing SQLite-specific leaks
// through it. SQLite (OpenSQLite) is the default implementation, and the
// conformance suite in crawlstate/statetest pins the contract for any other.
//
// Rows are keyed by (source, normalized URL). The due queue is a query over
// the rows (next check in the past, not gone), so a crash loses no
// scheduled work.
package crawlstate

import (
	"context"
	"errors"
	"time"
)

// Row is the state of one page of one source. Its times round-trip to the
// nanosecond (compare them with Equal); a zero time stays zero.
type Row struct {
	Source      string // the source (site) the row belongs to
	URL         string // normalized URL: the page's identity within the source
	OriginalURL string // the URL as first discovered, kept for diagnosis

	FirstSeen   time.Time // when discovery first listed the URL
	LastSeen    time.Time // the last discovery run that listed the URL
	LastFetched time.Time // the last fetch with a definitive answer; zero if never
	NextCheck   time.Time // when the row is due; zero means due now
	Interval    time.Duration

	ContentHash    string    // fingerprint of the last stored content; "" if none
	ETag           string    // validator from the last 200
	LastModified   string    // validator from the last 200 (HTTP-date, as sent)
	SitemapLastMod time.Time // lastmod from discovery; zero when none

	MissingRuns int  // consecutive discovery runs that did not list the URL
	Gone        bool // tombstone: the origin answered 404 or 410

	Visits  int // fetches with a definitive answer (200, 304)
	Changes int // of those, fetches that found a real change

	Failures  int    // consecutive failed attempts
	LastError string // the last failure, "stage: message"
}

// Discovered is one URL listed by discovery.
type Discovered struct {
	URL         string    // normalized URL (the key)
	OriginalURL string    // as listed by the source
	LastMod     time.Time // sitemap lastmod; zero when absent
}

// UpsertStats counts what UpsertDiscovered did. Each distinct URL counts
// once, as New or as Seen; Bumped and Revived are parts of Seen.
type UpsertStats struct {
	New     int // rows inserted
	Seen    int // existing rows seen again (gone ones included)
	Bumped  int // existing rows made due now because their lastmod moved
	Revived int // gone rows brought back by rediscovery
}

// Key is a position in the due queue, which is ordered by (NextCheck, URL).
// The zero Key is the start of the queue.
type Key struct {
	NextCheck time.Time
	URL       string
}

// KeyOf returns the queue position of a row, for paging with Due.
func KeyOf(r Row) Key { return Key{NextCheck: r.NextCheck, URL: r.URL} }

// Result is a fetch with a definitive answer, to be recorded.
type Result struct {
	URL string    // normalized URL of the row
	At  time.Time // when the answer arrived

	// Gone marks a 404 or 410: the row becomes a tombstone and leaves the
	// due queue. Hash, validators and schedule fields are ignored. A
	// result that is not Gone clears a tombstone: the page answered.
	Gone bool
	// NotModified marks a 304 answer: the stored content hash is kept, and
	// empty ETag/LastModified keep the stored validators.
	NotModified bool
	// Changed marks a real change (hash differs from the stored one). It
	// counts towards Changes.
	Changed bool

	// ContentHash is the new fingerprint; "" keeps the stored one.
	ContentHash string
	// ETag and LastModified replace the stored validators (an empty value
	// clears one: the origin stopped sending it), except on a NotModified
	// result, where an empty value keeps the stored one.
	ETag         string
	LastModified string

	// Interval and NextCheck are the new schedule.
	Interval  time.Duration
	NextCheck time.Time
}

// Failure is an attempt that produced no definitive answer (5xx, timeout,
// network error, extraction failure...). Recording it leaves content hash,
// validators and schedule as they were, so the row stays due.
type Failure struct {
	URL   string
	At    time.Time
	Stage string // "fetch", "extract", ...
	Err   string
}

// Options are the policies of a State implementation.
type Options struct {
	// KeepTombstones keeps gone rows gone when discovery lists them again.
	// By default rediscovery revives a gone row (it becomes due now); see
	// UpsertDiscovered for what counts as rediscovery.
	KeepTombstones bool
}

// ErrNotFound is returned by Get for an unknown row.
var ErrNotFound = errors.New("crawlstate: row not found")

// ErrRunInProgress is returned by Lock when another holder has the source's
// run lock and it has not expired.
var ErrRunInProgress = errors.New("crawlstate: a run of this source is in progress")

// ErrLockLost is returned by Refresh when the lock expired and was taken
// by another holder.
var ErrLockLost = errors.New("crawlstate: run lock lost")

// State stores per-URL crawl state. Implementations are safe for concurrent
// use. Every method that writes several rows does so in one transaction:
// either all of it is stored or none.
type State interface {
	// UpsertDiscovered records that discovery listed urls at now: new URLs
	// are inserted due now; existing rows get LastSeen = now and
	// MissingRuns = 0; a row whose non-zero LastMod differs from the stored
	// SitemapLastMod becomes due now; a gone row is revived (due now) unless
	// Options.KeepTombstones, when it is rediscovered: listed again after
	// at least one listing lacked it since it went gone, or listed with a
	// moved LastMod. A tombstone that a stale sitemap keeps listing stays
	// gone, so it is not refetched on every run.
	//
	// "Due now" means NextCheck is zero. A non-zero LastMod is stored; a
	// zero one keeps the stored SitemapLastMod. A revived row forgets its
	// content hash and validators, so its next fetch is unconditional and
	// counts as new. A URL listed twice counts once. An empty source or
	// URL is an error, and then nothing of the batch is stored.
	UpsertDiscovered(ctx context.Context, source string, now time.Time, urls []Discovered) (UpsertStats, error)

	// MarkMissing adds one to MissingRuns of every row of source that is
	// not gone and was not seen since runStart. A row whose MissingRuns
	// reaches a multiple of threshold becomes due at now, so the origin can
	// confirm the deletion with a fetch; absence alone never marks a row
	// gone. It returns how many rows were counted missing. A row already
	// due before now keeps its NextCheck; a threshold below 1 is an error.
	// A gone row not seen since runStart gets MissingRuns of at least 1 (it
	// is not counted in the result): its next listing is a rediscovery.
	MarkMissing(ctx context.Context, source string, runStart, now time.Time, threshold int) (int, error)

	// Due returns up to limit rows of source that are not gone and whose
	// NextCheck is at or before now, ordered by (NextCheck, URL), starting
	// after the position after (the zero Key starts at the beginning).
	// A limit below 1 is an error.
	Due(ctx context.Context, source string, now time.Time, after Key, limit int) ([]Row, error)

	// CountDue returns how many rows of source are due at now.
	CountDue(ctx context.Context, source string, now time.Time) (int, error)

	// NextDue returns the earliest NextCheck among rows of source that are
	// not gone; ok is false when there are none.
	NextDue(ctx context.Context, source string) (t time.Time, ok bool, err error)

	// Get returns one row, or ErrNotFound.
	Get(ctx context.Context, source, url string) (Row, error)

	// Count returns the number of rows of source, and how many are gone.
	Count(ctx context.Context, source string) (total, gone int, err error)

	// Record stores fetch results: LastFetched = At, Visits + 1 (not for
	// Gone), Changes + 1 when Changed, Failures reset (LastError is kept
	// for diagnosis), and the fields the Result documents. All results are written in one transaction.
	// Results for unknown rows are an error that names the URL.
	Record(ctx context.Context, source string, results []Result) error

	// RecordFailure counts a failed attempt: Failures + 1 and LastError set;
	// nothing else changes.
	RecordFailure(ctx context.Context, source string, f Failure) error

	// Lock takes the run lock of source for owner until now+ttl. It
	// returns ErrRunInProgress while another owner holds an unexpired lock;
	// an expired lock (a crashed holder) is taken over. The lock is held
	// until, not including, now+ttl; the holder may Lock again to extend
	// it. An empty source or owner, or a ttl <= 0, is an error.
	Lock(ctx context.Context, source, owner string, now time.Time, ttl time.Duration) error
	// Refresh extends owner's lock to now+ttl, or returns ErrLockLost when
	// another owner took it or it was released. An expired lock nobody
	// took is still owner's and is extended.
	Refresh(ctx context.Context, source, owner string, now time.Time, ttl time.Duration) error
	// Unlock releases owner's lock; releasing a lock not held is not an
	// error.
	Unlock(ctx context.Context, source, owner string) error

	// Close releases the store.
	Close() error
}
