// Package crawlstate keeps what recrawl knows about every page between runs:
// identity, validators, content hash, revisit schedule, missing-run counts,
// tombstones and failures, plus a run lock per source. Beside the rows it
// keeps what the pipeline needs across runs: links, chunks, cached
// vectors, pending alerts, discovery documents and stage events.
//
// State is the interface the engine needs; nothing SQLite-specific leaks
// through it. crawlstate/sqlite is the default implementation, and the
// conformance suite in crawlstate/statetest pins the contract for any other.
//
// Rows are keyed by (source, normalized URL). The due queue is a query over
// the rows (next check in the past, not gone), so a crash loses no
// scheduled work.
package crawlstate

import (
	"context"
	"errors"
	"fmt"
	"math"
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

	Failures    int       // consecutive failed attempts
	LastError   string    // the last failure, "stage: message"
	LastStage   string    // the stage of the last failure
	LastFailure time.Time // when the last failure happened; zero if none

	Title     string // the page's title from the last 200
	Canonical string // the rel=canonical the page declared on its last 200
	AliasOf   string // the canonical URL this row is an alias of ("" if none)
	ListedIn  string // the discovery document that last listed the URL
	// Excluded is why the URL is not a page ("not_document": it answered
	// with an image, an archive, a notebook...); "" for a page. An
	// excluded row is never due again, unless discovery lists it with a
	// moved lastmod.
	Excluded string

	Stats Stats // change statistics for the scheduler's rate estimators
}

// Stats are a row's change statistics: what the scheduler's estimators need
// and nothing else. The engine maintains them; the state stores them.
type Stats struct {
	LastChanged  time.Time     // when the content last changed, as far as is known
	Elapsed      time.Duration // sum of the intervals between consecutive fetches
	Recent       []Check       // the latest checks, oldest first (bounded by the engine)
	LastModified time.Time     // the origin's Last-Modified at the latest fetch; zero if none
	ChangeRate   float64       // the estimated changes per day
	Weight       float64       // importance; 0 means the default of 1
}

// Check is one compared fetch in Stats.Recent.
type Check struct {
	Elapsed  time.Duration // since the previous fetch
	Changed  bool          // a real change was found
	Modified time.Duration // the Last-Modified estimator's term; 0 if unknown
	// CoChance is the co-change chance the fetch was made at
	// (schedule.Check.CoChance), in [0, 1]; states keep it to the nearest
	// 1/CoChanceSteps (RoundCoChance).
	CoChance float64
}

// CoChanceSteps is the resolution states keep Check.CoChance at.
const CoChanceSteps = 127

// RoundCoChance returns c as a state keeps it: within [0, 1] (0 when not
// a number), to the nearest 1/CoChanceSteps.
func RoundCoChance(c float64) float64 {
	return float64(CoChanceStep(c)) / CoChanceSteps
}

// CoChanceStep returns RoundCoChance(c) in steps of 1/CoChanceSteps, for a
// state's encoding.
func CoChanceStep(c float64) uint8 {
	if !(c > 0) {
		return 0
	}
	return uint8(math.Round(min(c, 1) * CoChanceSteps))
}

// Discovered is one URL listed by discovery.
type Discovered struct {
	URL         string    // normalized URL (the key)
	OriginalURL string    // as listed by the source
	LastMod     time.Time // sitemap lastmod; zero when absent
	// Via is the discovery document that listed the URL (a sitemap file),
	// stored as Row.ListedIn so TouchListed can mark the URLs of an
	// unchanged document seen; "" keeps the stored value.
	Via string
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

	// Stats, when not nil, replaces the row's change statistics.
	Stats *Stats
	// Title and Canonical, when the answer had a body, replace the stored
	// ones (also with ""); on a NotModified or Gone result they are kept.
	Title     string
	Canonical string
	// AliasOf replaces the stored alias target when the answer had a body.
	AliasOf string
	// Links, when not nil, replaces the page's stored outgoing links (a
	// crawl continues from them when the page answers 304).
	Links []string
	// Chunks, when ReplaceChunks is set, replaces the page's chunk list
	// (nil: no chunks); two chunks with one Ordinal are an error. A Gone
	// result always deletes the chunk list.
	Chunks        []Chunk
	ReplaceChunks bool
	// Excluded, when not empty, records an answer that is not a page: the
	// row gets LastFetched = At, Failures reset, Excluded set, and leaves
	// the due queue (Due and NextDue skip it) until
	// UpsertDiscovered bumps it with a moved lastmod; every other field
	// of the Result is ignored and the row keeps its content hash,
	// validators, links and chunks. Any other Result clears Excluded.
	Excluded string
	// Alert, when not nil, is stored pending in the same transaction, so a
	// committed change always has its alert. An alert whose ID is already
	// stored is left as it is (a delivered alert stays delivered). An
	// empty Source or URL means the recorded source and the result's URL;
	// an empty ID or another source is an error.
	Alert *Alert
	// Events are appended to the stage-event log in the same transaction
	// (as LogEvents would), so a page's events are stored exactly when its
	// outcome is. An event with an empty URL takes the result's; one
	// without Stage is an error. They are stored for an Excluded result
	// too.
	Events []StageEvent
	// Lease, when not empty, fences the write: the result is recorded only
	// while Lease (an owner of Sharer.Claim) holds the row's lease, checked
	// in the statement that writes it. A row whose lease another owner
	// took over, or that a Record ended, is left as it is and named in a
	// *LeaseLostError; the batch's other results are stored. A State that
	// is not a Sharer ignores it.
	Lease string
}

// Chunk is one chunk of a page's current version, as indexed.
type Chunk struct {
	Ordinal     int    // position in the page, unique among its chunks
	TextHash    string // hex sha256 of Text
	RecordID    string // the index record holding the chunk's vector
	HeadingPath string // "Install > Linux"
	Start, End  int    // byte range in the page's Markdown
	Text        string
}

// Alert is a stored page-change alert. The state does not interpret the
// payload; it remembers what was delivered.
type Alert struct {
	ID          string // alert.ID(url, old hash, new hash)
	Source      string
	URL         string
	Kind        string // "new", "changed", "removed"
	CreatedAt   time.Time
	Payload     []byte    // the alert as JSON
	DeliveredAt time.Time // zero while pending
	Attempts    int       // failed delivery attempts
	LastError   string
}

// Document is what discovery remembers about one of its own documents (a
// sitemap file): its validators, for conditional requests, and its summary,
// for cheap freshness checks.
type Document struct {
	URL           string
	ETag          string
	LastModified  string
	Entries       int       // URLs it listed
	NewestLastMod time.Time // the newest lastmod among them; zero if none
	ListedLastMod time.Time // the lastmod a parent sitemap index gave it; zero if none
	FetchedAt     time.Time
}

// StageEvent is one attempt of one pipeline stage for one page, kept so an
// alert can be explained: what was tried, what failed, what was written.
type StageEvent struct {
	URL     string
	At      time.Time
	Stage   string // "fetch", "extract", "embed", "index", "commit", "alert"
	Attempt int    // 1 for the first attempt of the stage for this page in a run
	OK      bool
	Err     string
	Detail  string // e.g. the HTTP status, the record IDs written
}

// Failure is an attempt that produced no definitive answer (5xx, timeout,
// network error, extraction failure...). Recording it leaves content hash,
// validators and interval as they were; it sets Failures + 1, LastError
// ("stage: err"), LastStage and LastFailure, and NextCheck = RetryAt when
// RetryAt is set (the failure's backoff). With a zero RetryAt the row
// keeps its NextCheck, so it stays due.
type Failure struct {
	URL   string
	At    time.Time
	Stage string // "fetch", "extract", ...
	Err   string
	// RetryAt, when not zero, is when the row is due again.
	RetryAt time.Time
	// Lease fences the write as Result.Lease does: a failure of a row
	// Lease no longer holds is not recorded, and the error is a
	// *LeaseLostError.
	Lease string
}

// Options are the policies of a State implementation.
type Options struct {
	// KeepTombstones keeps gone rows gone when discovery lists them again.
	// By default rediscovery revives a gone row (it becomes due now); see
	// UpsertDiscovered for what counts as rediscovery.
	KeepTombstones bool
}

// ErrNotFound is returned for an unknown row, alert or document.
var ErrNotFound = errors.New("crawlstate: row not found")

// ErrRunInProgress is returned by Lock when another holder has the source's
// run lock and it has not expired.
var ErrRunInProgress = errors.New("crawlstate: a run of this source is in progress")

// LockHeldError is the error of Lock while another owner holds the lock:
// it names the holder, so a caller that can tell the holder is gone (its
// process died) may Unlock on its behalf and Lock again. It matches
// ErrRunInProgress.
type LockHeldError struct {
	Source   string
	Owner    string    // the holder's owner string, as it passed it to Lock
	Acquired time.Time // when the holder took the lock
	Expires  time.Time // when the lock expires unless refreshed
}

// Error describes the failure.
func (e *LockHeldError) Error() string {
	return fmt.Sprintf("crawlstate: lock %q: held by %q since %s until %s: %v", e.Source, e.Owner,
		e.Acquired.Format(time.RFC3339Nano), e.Expires.Format(time.RFC3339Nano), ErrRunInProgress)
}

// Unwrap returns ErrRunInProgress.
func (e *LockHeldError) Unwrap() error { return ErrRunInProgress }

// ErrLeaseLost is matched by the errors of writes fenced by a lease
// (Result.Lease, Failure.Lease) and of a Sharer.Offer by an owner that
// no longer holds the run lock.
var ErrLeaseLost = errors.New("crawlstate: lease lost")

// LeaseLostError names the rows of a fenced Record or RecordFailure that
// were not written because their lease was not the writer's any more:
// another owner took it over after it expired, or a Record ended it. The
// other results of the call were stored.
type LeaseLostError struct {
	Source string
	Owner  string
	URLs   []string
}

// Error describes the failure.
func (e *LeaseLostError) Error() string {
	first := ""
	if len(e.URLs) > 0 {
		first = e.URLs[0]
	}
	return fmt.Sprintf("crawlstate: %d rows of %q (first %q) are no longer leased to %q: %v", len(e.URLs), e.Source, first, e.Owner, ErrLeaseLost)
}

// Unwrap returns ErrLeaseLost.
func (e *LeaseLostError) Unwrap() error { return ErrLeaseLost }

// ErrLockLost is returned by Refresh when the lock expired and was taken
// by another holder.
var ErrLockLost = errors.New("crawlstate: run lock lost")

// State stores per-URL crawl state: the rows, the due queue, the results
// and the run lock, which is what every store must do. Implementations are
// safe for concurrent use. Every method that writes several rows does so in
// one transaction: either all of it is stored or none. What a store may do
// beside (cache vectors, keep alerts, discovery documents, stage events,
// run starts, lastmod trust; share a source between workers) are the
// optional abilities of abilities.go, found by type assertion. Result
// fields that belong to an ability the store lacks (Links, Chunks, Alert,
// Events) are ignored by it.
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

	// Due returns up to limit rows of source that are neither gone nor
	// excluded and whose NextCheck is at or before now, ordered by (NextCheck, URL), starting
	// after the position after (the zero Key starts at the beginning).
	// A limit below 1 is an error.
	Due(ctx context.Context, source string, now time.Time, after Key, limit int) ([]Row, error)

	// NextDue returns the earliest NextCheck among rows of source that are
	// neither gone nor excluded; ok is false when there are none.
	NextDue(ctx context.Context, source string) (t time.Time, ok bool, err error)

	// Get returns one row, or ErrNotFound.
	Get(ctx context.Context, source, url string) (Row, error)

	// Count returns the number of rows of source, and how many are gone.
	Count(ctx context.Context, source string) (total, gone int, err error)

	// Record stores fetch results: LastFetched = At, Visits + 1 (not for
	// Gone), Changes + 1 when Changed, Failures reset (LastError, LastStage
	// and LastFailure are kept for diagnosis), and the fields the Result
	// documents. All results are written in one transaction.
	// Results for unknown rows are an error that names the URL.
	Record(ctx context.Context, source string, results []Result) error

	// RecordFailure counts a failed attempt: Failures + 1, LastError,
	// LastStage and LastFailure set, and NextCheck = f.RetryAt when it is
	// not zero; nothing else changes.
	RecordFailure(ctx context.Context, source string, f Failure) error

	// Lock takes the run lock of source for owner until now+ttl. It
	// returns ErrRunInProgress (as a *LockHeldError naming the holder)
	// while another owner holds an unexpired lock;
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

// LastModCounts is a source's confusion table of sitemap lastmods against
// fetched content: fetches of pages whose sitemap listed a lastmod, by
// whether it had moved since the previous fetch and whether the content
// had changed.
type LastModCounts struct {
	MovedChanged, MovedSame, StillChanged, StillSame float64
}

// KeepRuns is how many run starts per source RecordRun keeps.
const KeepRuns = 64
