package backend

import (
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/recrawl/recrawl/crawlstate"
)

// Checker checks the arguments of a store's calls against the crawlstate
// contract and makes the store's errors. Its value names the store and
// begins every message ("crawlstate/postgres"); each message then names
// the call and says what to pass instead.
type Checker string

// errorf returns the error of call op: "<store>: <op>: <message>".
func (c Checker) errorf(op, format string, args ...any) error {
	return fmt.Errorf("%s: %s: %w", c, op, fmt.Errorf(format, args...))
}

// Upsert checks UpsertDiscovered's arguments: a source, a URL in every
// entry, and a batch KeyOrder can number.
func (c Checker) Upsert(source string, urls []crawlstate.Discovered) error {
	const op = "upsert discovered"
	if source == "" {
		return c.errorf(op, "empty source name")
	}
	for i, d := range urls {
		if d.URL == "" {
			return c.errorf(op, "urls[%d] has an empty URL; pass normalized URLs", i)
		}
	}
	if len(urls) > math.MaxInt32 {
		return c.errorf(op, "%d URLs in one batch; split it below %d", len(urls), math.MaxInt32)
	}
	return nil
}

// Limit checks the limit of call op (Due, Runs, PendingAlerts, PlanRows,
// LiveRows, Claim): at least 1. A larger one is never an error; see
// Prealloc for what it allocates.
func (c Checker) Limit(op string, limit int) error {
	if limit < 1 {
		return c.errorf(op, "limit %d; pass a page size of at least 1", limit)
	}
	return nil
}

// Threshold checks MarkMissing's threshold: at least 1.
func (c Checker) Threshold(threshold int) error {
	if threshold < 1 {
		return c.errorf("mark missing", "threshold %d; it must be at least 1 (runs of absence before a confirming fetch)", threshold)
	}
	return nil
}

// MinFailures checks DeadLetters' minFailures: at least 1.
func (c Checker) MinFailures(minFailures int) error {
	if minFailures < 1 {
		return c.errorf("dead letters", "minFailures %d; pass at least 1", minFailures)
	}
	return nil
}

// Results checks every result of a Record batch (crawlstate.Result.Check),
// naming the first that fails.
func (c Checker) Results(source string, results []crawlstate.Result) error {
	for i := range results {
		if err := results[i].Check(source); err != nil {
			return c.errorf("record", "results[%d] %q: %w", i, results[i].URL, err)
		}
	}
	return nil
}

// Lease checks the arguments of call op on a lock or a lease (Lock,
// Refresh, Claim, Extend; see crawlstate.CheckLease).
func (c Checker) Lease(op, source, owner string, ttl time.Duration) error {
	if err := crawlstate.CheckLease(source, owner, ttl); err != nil {
		return c.errorf(op, "%w", err)
	}
	return nil
}

// Claim checks Sharer.Claim's arguments: those of a lease, and a limit.
func (c Checker) Claim(source, owner string, ttl time.Duration, limit int) error {
	const op = "claim"
	if err := c.Lease(op, source, owner, ttl); err != nil {
		return err
	}
	return c.Limit(op, limit)
}

// Owner checks the source and owner of call op (Release, Withdraw).
func (c Checker) Owner(op, source, owner string) error {
	if source == "" || owner == "" {
		return c.errorf(op, "empty source (%q) or owner (%q)", source, owner)
	}
	return nil
}

// Run checks the source and run start of call op (RecordRun, Offer).
func (c Checker) Run(op, source string, start time.Time) error {
	switch {
	case source == "":
		return c.errorf(op, "empty source name")
	case start.IsZero():
		return c.errorf(op, "zero run start for source %q; pass the start of the run", source)
	}
	return nil
}

// Offer checks Sharer.Offer's arguments: a source, a run start and the
// owner of the run lock.
func (c Checker) Offer(source string, run time.Time, owner string) error {
	const op = "offer"
	if err := c.Run(op, source, run); err != nil {
		return err
	}
	if owner == "" {
		return c.errorf(op, "source %q: empty owner; pass the owner that holds the run lock", source)
	}
	return nil
}

// NotLocker is the error of an Offer by an owner that does not hold the
// run lock.
func (c Checker) NotLocker(source, owner string) error {
	return c.errorf("offer", "source %q: %q does not hold the run lock: %w", source, owner, crawlstate.ErrLeaseLost)
}

// Source checks the source of call op (LastModTrust).
func (c Checker) Source(op, source string) error {
	if source == "" {
		return c.errorf(op, "empty source name")
	}
	return nil
}

// Trust checks AddLastModTrust's arguments (see crawlstate.CheckTrust).
func (c Checker) Trust(source string, delta crawlstate.LastModCounts, keep float64) error {
	const op = "add lastmod trust"
	if err := c.Source(op, source); err != nil {
		return err
	}
	if err := crawlstate.CheckTrust(delta, keep); err != nil {
		return c.errorf(op, "source %q: %w", source, err)
	}
	return nil
}

// Events checks LogEvents' arguments: a source, and a URL and a stage in
// every event.
func (c Checker) Events(source string, events []crawlstate.StageEvent) error {
	const op = "log events"
	if source == "" {
		return c.errorf(op, "empty source name")
	}
	for i, e := range events {
		if e.URL == "" || e.Stage == "" {
			return c.errorf(op, "events[%d] has an empty URL (%q) or stage (%q)", i, e.URL, e.Stage)
		}
	}
	return nil
}

// Vectors checks the model of call op (Vectors, PutVectors) and, for
// PutVectors, the vectors: a text hash and a vector in every entry.
func (c Checker) Vectors(op, model string, vectors map[string][]float32) error {
	if model == "" {
		return c.errorf(op, "empty model name")
	}
	for h, v := range vectors {
		if h == "" {
			return c.errorf(op, "model %q: an empty text hash; key vectors by the chunk's text hash", model)
		}
		if len(v) == 0 {
			return c.errorf(op, "model %q: text hash %s has an empty vector", model, h)
		}
	}
	return nil
}

// Document checks PutDocument's arguments: a source and a document URL.
func (c Checker) Document(source string, doc crawlstate.Document) error {
	if source == "" || doc.URL == "" {
		return c.errorf("put document", "empty source (%q) or document URL (%q)", source, doc.URL)
	}
	return nil
}

// Via checks TouchListed's document URL: an empty one would name the rows
// no document listed.
func (c Checker) Via(via string) error {
	if via == "" {
		return c.errorf("touch listed", "empty document URL; pass the document whose listing did not change")
	}
	return nil
}

// Delivered checks MarkDelivered's time: a zero one means pending.
func (c Checker) Delivered(id string, at time.Time) error {
	if at.IsZero() {
		return c.errorf("mark delivered", "alert %q: zero delivery time; pass when the sink acknowledged the alert", id)
	}
	return nil
}

// AlertLease checks ClaimAlert's arguments: an alert ID, an owner and a
// positive ttl.
func (c Checker) AlertLease(id, owner string, ttl time.Duration) error {
	const op = "claim alert"
	switch {
	case id == "":
		return c.errorf(op, "empty alert ID")
	case owner == "":
		return c.errorf(op, "alert %q: empty owner; pass an identity unique to this worker", id)
	case ttl <= 0:
		return c.errorf(op, "alert %q: ttl %v; it must be positive", id, ttl)
	}
	return nil
}

// NoSuchURL is the error of call op on a URL source has no row of; it
// wraps crawlstate.ErrNotFound.
func (c Checker) NoSuchURL(op, source, u string) error {
	return c.errorf(op, "%q: no such URL in source %q (store it with UpsertDiscovered first): %w", u, source, crawlstate.ErrNotFound)
}

// NoSuchAlert is the error of call op on an unknown alert ID; it wraps
// crawlstate.ErrNotFound.
func (c Checker) NoSuchAlert(op, id string) error {
	return c.errorf(op, "%q: no such alert: %w", id, crawlstate.ErrNotFound)
}

// LastError is the Row.LastError a store keeps for a failure: "stage:
// err", or err alone without a stage.
func LastError(f crawlstate.Failure) string {
	if f.Stage == "" {
		return f.Err
	}
	return f.Stage + ": " + f.Err
}

// ErrCorrupt is wrapped by the errors of the decoders of stored values: a
// value this build cannot read.
var ErrCorrupt = errors.New("corrupt stored value")
