package recrawl

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/recrawl/recrawl/crawlstate"
	"github.com/recrawl/recrawl/schedule"
)

// trust is a run's view of its source's sitemap lastmod trust, listing
// document by listing document (a sitemap index's child sitemaps may be
// written by different generators): what the state held at the start and
// what this run's fetches add. The state keeps each document's counts
// under documentTrustKey, and the source's sum under the source's name.
type trust struct {
	learned bool // Config.SitemapTrust is TrustLearned
	mu      sync.Mutex
	source  schedule.LastModTrust // the source's counts at the start, decayed
	docs    map[string]*docTrust
}

// docTrust is one listing document's trust in a run.
type docTrust struct {
	known   schedule.LastModTrust // stored at the run's start, decayed
	delta   schedule.LastModTrust // counted by this run
	sampled int                   // moved rows this run dispatched for the document's sample
}

// documentTrustKey is the key under which the state keeps the lastmod
// trust of one listing document of a source.
func documentTrustKey(source, document string) string { return source + "\n" + document }

// loadTrust reads the source's trust counts.
func (r *run) loadTrust(ctx context.Context) error {
	r.trust.learned = r.e.cfg.SitemapTrust == TrustLearned
	r.trust.docs = map[string]*docTrust{}
	c, err := r.e.st.LastModTrust(ctx, r.source)
	if err != nil {
		return fmt.Errorf("recrawl: reading the sitemap trust of %s: %w", r.source, err)
	}
	r.trust.source = schedule.LastModTrust(c).Decayed(schedule.DefaultTrustMemory)
	return nil
}

// document returns the trust of a listing document, read from the state
// the first time the run meets the document.
func (r *run) document(ctx context.Context, doc string) (*docTrust, error) {
	r.trust.mu.Lock()
	d := r.trust.docs[doc]
	r.trust.mu.Unlock()
	if d != nil {
		return d, nil
	}
	c, err := r.e.st.LastModTrust(ctx, documentTrustKey(r.source, doc))
	if err != nil {
		return nil, fmt.Errorf("recrawl: reading the sitemap trust of %s: %w", doc, err)
	}
	r.trust.mu.Lock()
	defer r.trust.mu.Unlock()
	if d = r.trust.docs[doc]; d == nil {
		d = &docTrust{known: schedule.LastModTrust(c).Decayed(schedule.DefaultTrustMemory)}
		r.trust.docs[doc] = d
	}
	return d, nil
}

// known is the trust the run's ranking and next checks weigh a row of doc
// by: its document's as stored at the start, or the source's for a
// document the run has not read.
func (r *run) known(doc string) schedule.LastModTrust {
	r.trust.mu.Lock()
	defer r.trust.mu.Unlock()
	if d := r.trust.docs[doc]; d != nil {
		return d.known
	}
	return r.trust.source
}

// verdict is what doc's evidence, this run's fetches included, says of
// its moved rows (schedule.LastModTrust.Verdict), and how many more of
// them this run may fetch for its sample.
func (r *run) verdict(d *docTrust) (schedule.Verdict, int) {
	r.trust.mu.Lock()
	defer r.trust.mu.Unlock()
	t := d.known.Plus(d.delta)
	v := t.Verdict(schedule.DefaultLastModSample)
	room := 0
	if v == schedule.Sample {
		room = max(int(float64(schedule.DefaultLastModSample)-(t.MovedChanged+t.MovedSame))-d.sampled, 0)
	}
	return v, room
}

// sampledOne counts a moved row dispatched for doc's sample.
func (r *run) sampledOne(d *docTrust) {
	r.trust.mu.Lock()
	d.sampled++
	r.trust.mu.Unlock()
}

// countTrust counts one fetch of row that found (or not) a real change,
// when the row's sitemap lists a lastmod and the row was fetched before:
// had the lastmod moved since that fetch? The count goes to the row's
// listing document.
func (r *run) countTrust(row crawlstate.Row, changed bool) {
	if r.lastMod(row).IsZero() || row.ContentHash == "" || row.LastFetched.IsZero() {
		return
	}
	r.trust.mu.Lock()
	defer r.trust.mu.Unlock()
	d := r.trust.docs[row.ListedIn]
	if d == nil {
		// A row the run did not meet in its due walk (a crawl's): its
		// document's stored counts are read when the run ends.
		d = &docTrust{known: r.trust.source}
		r.trust.docs[row.ListedIn] = d
	}
	d.delta.Add(r.moved(row), changed)
}

// saveTrust adds the run's counts to the stored ones, each document's and
// the source's sum. It runs even when ctx is cancelled: the fetches it
// counts were recorded.
func (r *run) saveTrust(ctx context.Context) error {
	r.trust.mu.Lock()
	deltas := map[string]schedule.LastModTrust{}
	var sum schedule.LastModTrust
	for doc, d := range r.trust.docs {
		if d.delta.Total() > 0 {
			deltas[doc] = d.delta
			sum = sum.Plus(d.delta)
		}
		d.delta = schedule.LastModTrust{}
	}
	r.trust.mu.Unlock()
	if sum.Total() == 0 {
		return nil
	}
	ctx = context.WithoutCancel(ctx)
	for doc, d := range deltas {
		if err := r.e.st.AddLastModTrust(ctx, documentTrustKey(r.source, doc), crawlstate.LastModCounts(d), schedule.DefaultTrustMemory); err != nil {
			return fmt.Errorf("recrawl: storing the sitemap trust of %s: %w", doc, err)
		}
	}
	if err := r.e.st.AddLastModTrust(ctx, r.source, crawlstate.LastModCounts(sum), schedule.DefaultTrustMemory); err != nil {
		return fmt.Errorf("recrawl: storing the sitemap trust of %s: %w", r.source, err)
	}
	return nil
}

// hint is what the sitemap says of a page that doc lists with lastmod,
// when the engine learns lastmod trust: the scheduler's ranking and next check then
// weigh the lastmod by the source's measured trust. The zero hint says
// nothing.
func (r *run) hint(p schedule.Page, doc string, lastmod time.Time) schedule.SitemapHint {
	if !r.trust.learned || lastmod.IsZero() {
		return schedule.SitemapHint{}
	}
	return schedule.SitemapHint{Listed: true, Moved: lastmod.After(p.LastFetched), Trust: r.known(doc)}
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

// setPriority keeps the weight a sitemap's priority gives url.
func (r *run) setPriority(url string, priority float64) {
	r.prioMu.Lock()
	defer r.prioMu.Unlock()
	if r.priorities == nil {
		r.priorities = map[string]float64{}
	}
	r.priorities[url] = max(priority, 0.005) / 0.5
}
