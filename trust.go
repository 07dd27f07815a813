package recrawl

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/recrawl/recrawl/crawlstate"
	"github.com/recrawl/recrawl/schedule"
)

// sourceTrust is a run's view of its source's sitemap lastmod trust,
// listing document by listing document (a sitemap index's child sitemaps
// may be written by different generators): what the state held at the
// start and what this run's fetches add. The state keeps each document's
// counts under documentTrustKey, and the source's sum under the source's
// name. Its methods are safe for concurrent use.
type sourceTrust struct {
	st      *store
	source  string
	start   time.Time
	learned bool // Config.SitemapTrust is TrustLearned

	mu    sync.Mutex
	total schedule.LastModTrust // the source's counts at the start, decayed
	docs  map[string]*docTrust
}

// docTrust is one listing document's trust in a run (guarded by its
// sourceTrust's mu).
type docTrust struct {
	known   schedule.LastModTrust // stored at the run's start, decayed
	delta   schedule.LastModTrust // counted by this run
	sampled int                   // moved rows this run dispatched for the document's sample
}

// documentTrustKey is the key under which the state keeps the lastmod
// trust of one listing document of a source.
func documentTrustKey(source, document string) string { return source + "\n" + document }

// with calls fn under the lock, the one place that takes it.
func (t *sourceTrust) with(fn func()) {
	t.mu.Lock()
	defer t.mu.Unlock()
	fn()
}

// loadTrust reads the source's trust counts.
func (r *run) loadTrust(ctx context.Context) error {
	t := &r.trust
	t.st, t.source, t.start = r.e.st, r.source, r.start
	t.learned = r.e.cfg.SitemapTrust == TrustLearned
	t.docs = map[string]*docTrust{}
	c, err := t.st.LastModTrust(ctx, t.source)
	if err != nil {
		return fmt.Errorf("recrawl: reading the sitemap trust of %s: %w", t.source, err)
	}
	t.total = schedule.LastModTrust(c).Decayed(schedule.DefaultTrustMemory)
	return nil
}

// document returns the trust of a listing document, read from the state
// the first time the run meets the document.
func (t *sourceTrust) document(ctx context.Context, doc string) (*docTrust, error) {
	var d *docTrust
	t.with(func() { d = t.docs[doc] })
	if d != nil {
		return d, nil
	}
	c, err := t.st.LastModTrust(ctx, documentTrustKey(t.source, doc))
	if err != nil {
		return nil, fmt.Errorf("recrawl: reading the sitemap trust of %s: %w", doc, err)
	}
	t.with(func() {
		if d = t.docs[doc]; d == nil {
			d = &docTrust{known: schedule.LastModTrust(c).Decayed(schedule.DefaultTrustMemory)}
			t.docs[doc] = d
		}
	})
	return d, nil
}

// known is the trust the run's ranking and next checks weigh a row of doc
// by: its document's as stored at the start, or the source's for a
// document the run has not read.
func (t *sourceTrust) known(doc string) schedule.LastModTrust {
	k := t.total
	t.with(func() {
		if d := t.docs[doc]; d != nil {
			k = d.known
		}
	})
	return k
}

// verdict is what d's evidence, this run's fetches included, says of its
// moved rows (schedule.LastModTrust.Verdict), and how many more of them
// this run may fetch for its sample.
func (t *sourceTrust) verdict(d *docTrust) (v schedule.Verdict, room int) {
	t.with(func() {
		e := d.known.Plus(d.delta)
		v = e.Verdict(schedule.DefaultLastModSample)
		if v == schedule.Sample {
			room = max(int(float64(schedule.DefaultLastModSample)-(e.MovedChanged+e.MovedSame))-d.sampled, 0)
		}
	})
	return v, room
}

// sampledOne counts a moved row dispatched for d's sample.
func (t *sourceTrust) sampledOne(d *docTrust) { t.with(func() { d.sampled++ }) }

// lastMod is the sitemap lastmod of row the run believes: zero for none,
// and for one after the run's start by more than schedule's clock skew (a
// date in the future would read as moved after every fetch).
func (t *sourceTrust) lastMod(row crawlstate.Row) time.Time {
	if row.SitemapLastMod.After(t.start.Add(schedule.DefaultClockSkew)) {
		return time.Time{}
	}
	return row.SitemapLastMod
}

// moved reports whether row's believed sitemap lastmod moved after its
// last fetch.
func (t *sourceTrust) moved(row crawlstate.Row) bool {
	lm := t.lastMod(row)
	return !lm.IsZero() && row.ContentHash != "" && lm.After(row.LastFetched)
}

// count counts one fetch of row that found (or not) a real change, when
// the row's sitemap lists a lastmod and the row was fetched before: had
// the lastmod moved since that fetch? The count goes to the row's listing
// document.
func (t *sourceTrust) count(row crawlstate.Row, changed bool) {
	if t.lastMod(row).IsZero() || row.ContentHash == "" || row.LastFetched.IsZero() {
		return
	}
	moved := t.moved(row)
	t.with(func() {
		d := t.docs[row.ListedIn]
		if d == nil {
			// A row the run did not meet in its due walk (a crawl's): the
			// counts are added to its document's when the run ends.
			d = &docTrust{known: t.total}
			t.docs[row.ListedIn] = d
		}
		d.delta.Add(moved, changed)
	})
}

// save adds the run's counts to the stored ones, each document's and the
// source's sum. It runs even when ctx is cancelled: the fetches it counts
// were recorded.
func (t *sourceTrust) save(ctx context.Context) error {
	deltas := map[string]schedule.LastModTrust{}
	var sum schedule.LastModTrust
	t.with(func() {
		for doc, d := range t.docs {
			if d.delta.Total() > 0 {
				deltas[doc] = d.delta
				sum = sum.Plus(d.delta)
			}
			d.delta = schedule.LastModTrust{}
		}
	})
	if sum.Total() == 0 {
		return nil
	}
	ctx = context.WithoutCancel(ctx)
	for doc, d := range deltas {
		if err := t.st.AddLastModTrust(ctx, documentTrustKey(t.source, doc), crawlstate.LastModCounts(d), schedule.DefaultTrustMemory); err != nil {
			return fmt.Errorf("recrawl: storing the sitemap trust of %s: %w", doc, err)
		}
	}
	if err := t.st.AddLastModTrust(ctx, t.source, crawlstate.LastModCounts(sum), schedule.DefaultTrustMemory); err != nil {
		return fmt.Errorf("recrawl: storing the sitemap trust of %s: %w", t.source, err)
	}
	return nil
}

// hint is what the sitemap says of a page that doc lists with lastmod,
// when the engine learns lastmod trust: the scheduler's ranking and next
// check then weigh the lastmod by the source's measured trust. The zero
// hint says nothing.
func (t *sourceTrust) hint(p schedule.Page, doc string, lastmod time.Time) schedule.SitemapHint {
	if !t.learned || lastmod.IsZero() {
		return schedule.SitemapHint{}
	}
	return schedule.SitemapHint{Listed: true, Moved: lastmod.After(p.LastFetched), Trust: t.known(doc)}
}

// LastModTrust returns what src's sitemap lastmods have proven worth so
// far: the stored counts of fetches by whether the lastmod had moved and
// whether the content had changed (schedule.LastModTrust's Precision and
// Recall summarize them). The engine counts them under every SitemapTrust;
// TrustLearned uses them.
func (e *Engine) LastModTrust(ctx context.Context, src string) (schedule.LastModTrust, error) {
	c, err := e.st.LastModTrust(ctx, src)
	if err != nil {
		return schedule.LastModTrust{}, fmt.Errorf("recrawl: sitemap trust of %s: %w", src, err)
	}
	return schedule.LastModTrust(c), nil
}
