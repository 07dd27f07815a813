package crawlstate

import (
	"context"
	"time"
)

// The optional abilities of a State. An engine finds each by type
// assertion, as database/sql finds a driver's optional interfaces, and
// says in its documentation what it does without it. Every method of an
// ability is safe for concurrent use, like State's; an error means nothing
// the call would have written is stored.

// RunLog is the ability to remember when the runs of a source started, so
// a scheduler can plan with the source's real cadence. Without it every
// run is planned as if it were the first (no previous run, no cadence).
type RunLog interface {
	// RecordRun stores that a run of source started at start; a start
	// already recorded is stored once. Only the latest KeepRuns starts of
	// a source are kept. An empty source or a zero start is an error.
	RecordRun(ctx context.Context, source string, start time.Time) error
	// Runs returns the latest starts recorded for source, newest first, at
	// most limit of them (none: an empty slice). A limit below 1 is an
	// error.
	Runs(ctx context.Context, source string, limit int) ([]time.Time, error)
}

// PageDetails is the ability to keep what a page's last 200 carried beside
// its row: its outgoing links and its chunk list (Result.Links and
// Result.Chunks). Without it an engine's same-host crawl cannot continue
// through a page that answers 304, and a pipeline cannot tell which
// chunks changed, so an engine with a Pipeline needs it.
type PageDetails interface {
	// Links returns the outgoing links stored for a page (nil if none), or
	// ErrNotFound for an unknown row.
	Links(ctx context.Context, source, url string) ([]string, error)
	// Chunks returns a page's current chunk list in ordinal order (nil if
	// none), or ErrNotFound for an unknown row.
	Chunks(ctx context.Context, source, url string) ([]Chunk, error)
}

// VectorCache is the ability to cache embedding vectors by model and
// chunk text hash, so an unchanged chunk is not embedded again. Without it
// every chunk of a changed page is embedded.
type VectorCache interface {
	// Vectors returns the cached embedding vectors of the given chunk text
	// hashes for an embedder model; hashes without a vector are absent from
	// the map. An empty model is an error.
	Vectors(ctx context.Context, model string, textHashes []string) (map[string][]float32, error)
	// PutVectors caches embedding vectors by model and chunk text hash,
	// replacing cached ones. An empty model, hash or vector is an error,
	// and then nothing is stored.
	PutVectors(ctx context.Context, model string, vectors map[string][]float32) error
}

// AlertOutbox is the ability to keep page-change alerts (Result.Alert)
// until a sink acknowledges them, which is what makes delivery
// exactly-once per alert ID across crashes. An engine with an alert sink
// needs it.
type AlertOutbox interface {
	// PendingAlerts returns up to limit undelivered alerts of source,
	// oldest first (by CreatedAt, then ID). A limit below 1 is an error.
	PendingAlerts(ctx context.Context, source string, limit int) ([]Alert, error)
	// Alert returns a stored alert by ID, or ErrNotFound.
	Alert(ctx context.Context, id string) (Alert, error)
	// MarkDelivered records that the sink acknowledged the alert. It is
	// idempotent (the first DeliveredAt is kept); an unknown ID is
	// ErrNotFound; a zero at is an error.
	MarkDelivered(ctx context.Context, id string, at time.Time) error
	// MarkAlertFailed counts a failed delivery attempt (Attempts + 1,
	// LastError); the alert stays pending. A delivered alert is left as it
	// is; an unknown ID is ErrNotFound.
	MarkAlertFailed(ctx context.Context, id string, at time.Time, errMsg string) error
}

// DocumentStore is the ability to remember discovery's own documents
// (sitemap files), so they are requested conditionally and an unchanged
// one is not parsed again. Without it every document is fetched and read
// whole on every run.
type DocumentStore interface {
	// Document returns what discovery stored about one of its documents,
	// or ErrNotFound.
	Document(ctx context.Context, source, url string) (Document, error)
	// PutDocument stores it, replacing a stored one. An empty source or
	// URL is an error.
	PutDocument(ctx context.Context, source string, doc Document) error
	// TouchListed marks every row of source whose ListedIn is via as seen
	// at now (LastSeen = now, MissingRuns = 0), as UpsertDiscovered would:
	// the document answered 304, so it lists what it listed before. When a
	// Document is stored for via, only rows seen at or after its FetchedAt
	// (the document's last full read) are touched, so a URL the document
	// stopped listing stays missing. Gone rows are touched too and stay
	// gone. It returns how many rows it touched. An empty via is an error.
	TouchListed(ctx context.Context, source, via string, now time.Time) (int, error)
}

// EventLog is the ability to keep every pipeline stage attempt of every
// page (Result.Events and LogEvents), so an alert can be explained and
// repeated failures listed. Without it Engine.Explain and Engine.DeadLetters
// return an error that matches errors.ErrUnsupported.
type EventLog interface {
	// LogEvents appends stage events of source's pages in one
	// transaction. An empty source, or an event without URL or Stage, is
	// an error, and then nothing is stored.
	LogEvents(ctx context.Context, source string, events []StageEvent) error
	// Events returns the stage events of one page at or after since,
	// oldest first; events with equal times in the order they were logged.
	Events(ctx context.Context, source, url string, since time.Time) ([]StageEvent, error)
	// DeadLetters returns the rows of source that failed at least
	// minFailures times in a row, most failures first, then by URL. A
	// minFailures below 1 is an error.
	DeadLetters(ctx context.Context, source string, minFailures int) ([]Row, error)
}

// TrustStore is the ability to keep, per source, how often a sitemap's
// lastmod told the truth, so an engine learns which sites' lastmods to
// trust. Without it every run starts from the prior.
type TrustStore interface {
	// LastModTrust returns the sitemap lastmod trust counts stored for
	// source; zero counts when none are. An empty source is an error.
	LastModTrust(ctx context.Context, source string) (LastModCounts, error)
	// AddLastModTrust adds delta to the counts of source in one
	// transaction, then scales them down so that they add up to at most
	// keep (keep <= 0: no scaling). An empty source, or a negative or
	// non-finite count, is an error, and then nothing is stored.
	AddLastModTrust(ctx context.Context, source string, delta LastModCounts, keep float64) error
}

// Sharer is the ability of a state that several engines (workers, on one
// machine or many) use at once for one source. One of them, the run's
// leader, discovers the source, plans the run and offers the rows it
// chose; every worker, the leader included, then claims offered rows and
// records them. A claimed row is leased to its claimer until the lease
// expires: no other owner can claim it before, so the workers fetch
// disjoint shares, and the rows of a worker that died return to the
// others when its leases expire. Record and RecordFailure end the offer
// and the lease of every row they write; a write fenced by a lease
// (Result.Lease) is made only while its writer still holds the row.
//
// A Sharer is a RunLog: the leader records the run's start, and a worker
// that arrives later finds it there and joins that run instead of
// discovering the source again. Leases and offers are not kept by Lock,
// which a Sharer still serves: the engine holds the run lock only while it
// leads (discovers and offers).
type Sharer interface {
	RunLog

	// Offer makes the rows of urls the work of the run of source that
	// started at run, for Claim to hand out, and returns how many rows it
	// offered. It replaces an earlier offer of those rows and ends their
	// leases. URLs of source without a row are skipped (not counted). The
	// offer is fenced by the run lock: owner must hold the source's lock
	// (Lock, not taken over since; an expired lock nobody took is still
	// held, as Refresh sees it), checked in the statement that offers, or
	// nothing is offered and the error wraps ErrLeaseLost. An empty source
	// or owner or a zero run is an error.
	Offer(ctx context.Context, source string, run time.Time, owner string, urls []string) (int, error)
	// Claim leases to owner, until now+ttl, up to limit rows of source
	// offered for run that nobody holds (a lease that expired at or
	// before now is taken over; owner's own unexpired leases are not
	// returned again), and returns them whole in (NextCheck,
	// URL) order. Two Claims at once never return the same row. pending
	// is how many offered rows of run stay leased to other owners, and
	// next the earliest expiry among their leases (zero when pending is
	// 0): a worker that claimed nothing while pending > 0 asks again at
	// next. A limit below 1, an empty source or owner, or a ttl <= 0 is an
	// error.
	Claim(ctx context.Context, source string, run time.Time, owner string, now time.Time, ttl time.Duration, limit int) (rows []Row, pending int, next time.Time, err error)
	// Extend moves the expiry of every lease owner holds on rows of source
	// to now+ttl and returns how many it extended; expired leases nobody
	// took over are extended too. A row that a concurrent call is writing
	// (a Record, which ends its lease) may be skipped rather than waited
	// for. A ttl <= 0 is an error.
	Extend(ctx context.Context, source, owner string, now time.Time, ttl time.Duration) (int, error)
	// Renew is Extend for the rows of urls, checked one by one: it moves
	// the expiry of owner's leases among them to now+ttl and returns the
	// URLs owner still holds, in the order given. A row whose lease
	// another owner took over, that a Record, Withdraw or Offer ended, or
	// that owner never held is left out. A worker that may have been
	// paused past its leases asks before it requests a row. A ttl <= 0 is
	// an error.
	Renew(ctx context.Context, source, owner string, urls []string, now time.Time, ttl time.Duration) ([]string, error)
	// Release ends owner's leases on the rows of urls, or on every row of
	// source when urls is nil; the rows stay offered, for another owner
	// to claim. Releasing a lease not held is not an error.
	Release(ctx context.Context, source, owner string, urls []string) error

	// Withdraw ends the offer and the lease of the rows of urls that owner
	// holds, without recording anything: the run will not fetch them
	// (robots.txt forbids them, say) and no other owner may claim them in
	// this run; they keep their NextCheck, so they stay due for a later
	// run. Rows owner does not hold are left as they are. An empty source
	// or owner is an error.
	Withdraw(ctx context.Context, source, owner string, urls []string) error

	// ClaimAlert leases a pending alert to owner for delivery until
	// now+ttl. It reports false when the alert was delivered or another
	// owner holds an unexpired lease on it; an unknown ID is ErrNotFound.
	// MarkDelivered and MarkAlertFailed end the lease. With it, workers
	// that deliver the same outbox deliver each alert once.
	ClaimAlert(ctx context.Context, id, owner string, now time.Time, ttl time.Duration) (bool, error)
}

// AlertHistory is the ability to list the alerts stored for a source,
// delivered or pending, by when they were made: what changed since a
// given time. Without it Engine.Changes returns an error that matches
// errors.ErrUnsupported.
type AlertHistory interface {
	// AlertsSince returns up to limit alerts of source, delivered or
	// pending, that follow the position (since, afterID) in (CreatedAt,
	// ID) order: created after since, or at since with an ID greater than
	// afterID ("" includes every alert created at since). They come oldest
	// first, by CreatedAt then ID, so the last one returned is where the
	// next call starts. A limit below 1 or an empty source is an error.
	AlertsSince(ctx context.Context, source string, since time.Time, afterID string, limit int) ([]Alert, error)
}
