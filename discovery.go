package recrawl

import (
	"context"
	"errors"
	"fmt"
	"hash/maphash"
	"math"
	"sync"
	"time"

	"github.com/recrawl/recrawl/crawlstate"
	"github.com/recrawl/recrawl/discover"
)

// discoverBatch is how many discovered URLs are upserted per transaction.
const discoverBatch = 5000

// discovery is what the discovery phase learned.
type discovery struct {
	err       error // a *DiscoveryError: the listing was incomplete
	unchanged bool  // authoritative trust: the sitemap did not change, skip the due queue
	// kept: discovery changed no row but to mark it seen, and every live
	// row was seen (the listing answered 304 and nothing is missing), so
	// rows read before it are as stored once LastSeen and MissingRuns are
	// set to the run's start and zero.
	kept bool
}

// discover lists the source's URLs, normalizes and dedupes them, upserts
// them in batches, and counts the rows the listing lacked. The returned
// error means state could not be written (or ctx ended); an incomplete
// listing is reported in discovery.err and the run goes on.
func (r *run) discover(ctx context.Context, src discover.Source) (discovery, error) {
	e := r.e
	d := &discoverer{r: r, seed1: maphash.MakeSeed(), seed2: maphash.MakeSeed(), seen: map[[2]uint64]struct{}{}}
	docs := documents{st: e.st, at: r.start, d: d}
	env := discover.Env{
		Client:       e.client,
		MaxDepth:     capOrUnlimited(e.limits.MaxDepth),
		MaxDocuments: capOrUnlimited(e.limits.MaxPages),
		MaxBytes:     e.limits.MaxDocumentBytes,
		MaxPageBytes: e.limits.MaxBytes,
		MaxChildren:  capOrNone(e.limits.MaxSitemapChildren),
		MaxSitemaps:  capOrNone(e.limits.MaxSitemaps),
		Logger:       e.cfg.Logger,
		Documents:    docs,
		Source:       r.source,
		Normalize:    e.cfg.Normalize,
		OnUnchanged:  d.unchanged,
		TrustLastMod: e.cfg.SitemapTrust == TrustAuthoritative,
		Pages:        &pageHandler{r: r, d: d},
	}
	var entry string
	var before crawlstate.Document
	var hadBefore bool
	if en, ok := src.(discover.Entrier); ok {
		entry = en.EntryURL()
		var derr error
		if before, hadBefore, derr = docs.stored(ctx, r.source, entry); derr != nil {
			return discovery{}, derr
		}
	}
	err := src.Discover(ctx, env, func(l discover.Link) error { return d.yield(ctx, l) })
	if d.stateErr != nil {
		return discovery{}, d.stateErr
	}
	if ferr := d.flush(ctx); ferr != nil {
		return discovery{}, ferr
	}
	if ctx.Err() != nil {
		return discovery{}, ctx.Err()
	}
	var out discovery
	var le *discover.LimitError
	switch {
	case err == nil && r.halt.halted():
		// Shutdown, a cap or a fatal error cut a crawl short: what it did
		// not reach is not missing.
		r.tally.add(func(rep *Report) {
			rep.Incomplete = true
		})
		r.log.InfoContext(ctx, "run stopped during discovery; nothing counted missing", "stopped_by", r.halt.by())
		return out, nil
	case err == nil:
	case errors.As(err, &le):
		// Discovery ends at the cap; what it reached is still fetched.
		r.tally.add(func(rep *Report) {
			rep.Incomplete = true
			if rep.StoppedBy == "" {
				rep.StoppedBy = le.Limit
			}
		})
		r.log.InfoContext(ctx, "discovery stopped at a cap; nothing counted missing", "cap", le.Limit)
		return out, nil
	default:
		r.tally.add(func(rep *Report) { rep.Incomplete = true })
		out.err = &DiscoveryError{Source: r.source, Err: err}
		r.log.WarnContext(ctx, "discovery incomplete; nothing counted missing", "err", err)
		return out, nil
	}
	n, err := e.st.MarkMissing(ctx, r.source, r.start, r.start, e.cfg.MissingRuns)
	if err != nil {
		return discovery{}, fmt.Errorf("recrawl: marking missing URLs: %w", err)
	}
	r.tally.add(func(rep *Report) { rep.Missing = n })
	var upserts int
	d.locked(func() error { upserts = d.upserts; return nil })
	var crawled int
	r.book.with(func(b *book) { crawled = len(b.handled) })
	if out.kept = n == 0 && upserts == 0 && crawled == 0; out.kept {
		seen := r.start.Round(0).UTC() // as the state stores and reads it back
		for i := range r.handOn {
			r.handOn[i].LastSeen, r.handOn[i].MissingRuns = seen, 0
		}
	}
	if e.cfg.SitemapTrust == TrustAuthoritative && entry != "" && hadBefore {
		after, ok, err := docs.stored(ctx, r.source, entry)
		if err != nil {
			return discovery{}, err
		}
		same := ok && after.Entries == before.Entries && !after.NewestLastMod.IsZero() &&
			after.NewestLastMod.Equal(before.NewestLastMod) && d.rowsChanged() == 0
		// A sitemap without lastmod has nothing to compare: it is
		// refetched in full every run.
		if (d.entryUnchanged(entry) && !before.NewestLastMod.IsZero()) || same {
			out.unchanged = true
			r.log.InfoContext(ctx, "sitemap unchanged; authoritative trust ends the run")
		}
	}
	return out, nil
}

// capOrUnlimited maps a Limits cap (0: none) to a discover.Env bound.
func capOrUnlimited(n int) int {
	if n <= 0 {
		return math.MaxInt
	}
	return n
}

// capOrNone maps a Limits cap (0: none) to a discover.Env cap (negative:
// none).
func capOrNone(n int) int {
	if n <= 0 {
		return -1
	}
	return n
}

// discoverer receives the links of one discovery.
type discoverer struct {
	r            *run
	seed1, seed2 maphash.Seed

	mu        sync.Mutex // crawls may yield and prepare from several goroutines
	seen      map[[2]uint64]struct{}
	batch     []crawlstate.Discovered
	docs      []crawlstate.Document // documents whose URLs are all in batch or stored
	stateErr  error
	untouched map[string]bool // documents reported unchanged
	changed   int             // rows inserted, bumped or revived
	upserts   int             // UpsertDiscovered calls
	prepared  map[[2]uint64]bool
}

// locked calls fn under d.mu, the one place that takes it, and returns
// its error.
func (d *discoverer) locked(fn func() error) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	return fn()
}

func (d *discoverer) key(n string) [2]uint64 {
	return [2]uint64{maphash.String(d.seed1, n), maphash.String(d.seed2, n)}
}

// yield accepts one link: skipped links are counted, others normalized,
// deduplicated and queued for upsert.
func (d *discoverer) yield(ctx context.Context, l discover.Link) error {
	r := d.r
	r.tally.add(func(rep *Report) {
		rep.Discovered++
	})
	if l.Skip != "" && l.Skip != skipKnown {
		d.skip(l.URL, l.Skip)
		return nil
	}
	n, err := r.e.cfg.Normalize.URL(l.URL)
	if err != nil {
		r.e.cfg.Logger.Debug("discovered URL rejected", "url", l.URL, "err", err)
		d.skip(l.URL, SkipInvalid)
		return nil
	}
	return d.locked(func() error {
		k := d.key(n)
		if d.prepared[k] {
			// A crawl prepared the page before yielding it: count it now.
			delete(d.prepared, k)
			r.tally.add(func(rep *Report) {
				rep.Accepted++
			})
			return nil
		}
		if _, dup := d.seen[k]; dup {
			r.tally.add(func(rep *Report) {
				rep.Duplicates++
			})
			return nil
		}
		d.seen[k] = struct{}{}
		r.tally.add(func(rep *Report) {
			rep.Accepted++
		})
		if l.HasPriority && r.e.cfg.SitemapPriority && r.e.cfg.Weight == nil {
			r.setPriority(n, l.Priority)
		}
		d.batch = append(d.batch, crawlstate.Discovered{URL: n, OriginalURL: l.URL, LastMod: l.LastMod, Via: l.Via})
		if len(d.batch) >= discoverBatch {
			return d.flushLocked(ctx)
		}
		return nil
	})
}

func (d *discoverer) flush(ctx context.Context) error {
	return d.locked(func() error { return d.flushLocked(ctx) })
}

func (d *discoverer) flushLocked(ctx context.Context) error {
	if d.stateErr != nil {
		return d.stateErr
	}
	r := d.r
	if len(d.batch) == 0 {
		return d.storeDocsLocked(ctx)
	}
	d.upserts++
	st, err := r.e.st.UpsertDiscovered(ctx, r.source, r.start, d.batch)
	if err != nil {
		d.stateErr = fmt.Errorf("recrawl: storing discovered URLs: %w", err)
		return d.stateErr
	}
	r.tally.add(func(rep *Report) {
		rep.NewURLs += st.New
		rep.Revived += st.Revived
		rep.Bumped += st.Bumped
	})
	d.changed += st.New + st.Revived + st.Bumped
	d.batch = d.batch[:0]
	return d.storeDocsLocked(ctx)
}

// storeDocsLocked stores the documents held back until their URLs were
// written (d.mu held).
func (d *discoverer) storeDocsLocked(ctx context.Context) error {
	r := d.r
	for i, doc := range d.docs {
		if err := r.e.st.PutDocument(ctx, r.source, doc); err != nil {
			d.docs = d.docs[i:]
			d.stateErr = fmt.Errorf("recrawl: storing the state of %s: %w", doc.URL, err)
			return d.stateErr
		}
	}
	d.docs = d.docs[:0]
	return nil
}

func (d *discoverer) rowsChanged() int {
	var n int
	d.locked(func() error { n = d.changed; return nil })
	return n
}

// unchanged marks the URLs an unchanged document listed before as seen.
func (d *discoverer) unchanged(ctx context.Context, docURL string) error {
	r := d.r
	n, err := r.e.st.TouchListed(ctx, r.source, docURL, r.start)
	if err != nil {
		return fmt.Errorf("recrawl: marking the URLs of unchanged %s seen: %w", docURL, err)
	}
	d.locked(func() error {
		if d.untouched == nil {
			d.untouched = map[string]bool{}
		}
		d.untouched[docURL] = true
		return nil
	})
	r.tally.add(func(rep *Report) {
		rep.Unlisted += n
	})
	return nil
}

func (d *discoverer) entryUnchanged(entry string) bool {
	var u bool
	d.locked(func() error { u = d.untouched[entry]; return nil })
	return u
}

// skip counts a URL skipped at discovery.
func (d *discoverer) skip(url, reason string) {
	r := d.r
	at := r.e.cfg.Clock.Now()
	r.outcome(func() Event {
		return r.tally.event(Event{URL: url, Outcome: OutcomeSkipped, Reason: reason, At: at}, func(rep *Report) { rep.Skipped[reason]++ })
	})
}

// stored is what the state holds of a discovery document of source; ok
// is false when it holds nothing.
func (d documents) stored(ctx context.Context, source, url string) (doc crawlstate.Document, ok bool, err error) {
	doc, err = d.st.Document(ctx, source, url)
	if errors.Is(err, crawlstate.ErrNotFound) {
		return crawlstate.Document{}, false, nil
	}
	if err != nil {
		return crawlstate.Document{}, false, fmt.Errorf("recrawl: reading the stored state of %s: %w", url, err)
	}
	return doc, true, nil
}

// documents is the state's crawlstate.DocumentStore as a run's discovery
// uses it. A document stored in a run is stamped with the run's start,
// the LastSeen of the URLs it listed, which TouchListed relies on.
type documents struct {
	st *store
	at time.Time
	// d, when set, holds each stored document back until the batch of
	// URLs it listed has been written (discoverer.flushLocked): were its
	// validators stored first and the URLs then lost (a failed write, a
	// crash), the next run's 304 would say the document is unchanged and
	// its new URLs would never be stored.
	d *discoverer
}

// Document implements crawlstate.DocumentStore.
func (d documents) Document(ctx context.Context, source, url string) (crawlstate.Document, error) {
	return d.st.Document(ctx, source, url)
}

// TouchListed implements crawlstate.DocumentStore.
func (d documents) TouchListed(ctx context.Context, source, via string, now time.Time) (int, error) {
	return d.st.TouchListed(ctx, source, via, now)
}

// PutDocument implements crawlstate.DocumentStore.
func (d documents) PutDocument(ctx context.Context, source string, doc crawlstate.Document) error {
	doc.FetchedAt = d.at
	if d.d != nil {
		return d.d.locked(func() error {
			if d.d.stateErr != nil {
				return d.d.stateErr
			}
			d.d.docs = append(d.d.docs, doc)
			return nil
		})
	}
	return d.st.PutDocument(ctx, source, doc)
}
