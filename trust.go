package recrawl

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/recrawl/recrawl/crawlstate"
	"github.com/recrawl/recrawl/schedule"
)

// trust is a run's view of its source's sitemap lastmod trust: what the
// state held at the start, and what this run's fetches add.
type trust struct {
	learned bool                  // Config.SitemapTrust is TrustLearned
	known   schedule.LastModTrust // stored at the run's start, decayed
	mu      sync.Mutex
	delta   schedule.LastModTrust // counted by this run
}

// loadTrust reads the source's trust counts.
func (r *run) loadTrust(ctx context.Context) error {
	r.trust.learned = r.e.cfg.SitemapTrust == TrustLearned
	c, err := r.e.st.LastModTrust(ctx, r.source)
	if err != nil {
		return fmt.Errorf("recrawl: reading the sitemap trust of %s: %w", r.source, err)
	}
	r.trust.known = schedule.LastModTrust(c).Decayed(schedule.DefaultTrustMemory)
	return nil
}

// countTrust counts one fetch of row that found (or not) a real change,
// when the row's sitemap lists a lastmod and the row was fetched before:
// had the lastmod moved since that fetch?
func (r *run) countTrust(row crawlstate.Row, changed bool) {
	if row.SitemapLastMod.IsZero() || row.ContentHash == "" || row.LastFetched.IsZero() {
		return
	}
	r.trust.mu.Lock()
	r.trust.delta.Add(row.SitemapLastMod.After(row.LastFetched), changed)
	r.trust.mu.Unlock()
}

// saveTrust adds the run's counts to the stored ones. It runs even when
// ctx is cancelled: the fetches it counts were recorded.
func (r *run) saveTrust(ctx context.Context) error {
	r.trust.mu.Lock()
	d := r.trust.delta
	r.trust.delta = schedule.LastModTrust{}
	r.trust.mu.Unlock()
	if d.Total() == 0 {
		return nil
	}
	err := r.e.st.AddLastModTrust(context.WithoutCancel(ctx), r.source, crawlstate.LastModCounts(d), schedule.DefaultTrustMemory)
	if err != nil {
		return fmt.Errorf("recrawl: storing the sitemap trust of %s: %w", r.source, err)
	}
	return nil
}

// hint is what the sitemap says of a page listed with lastmod, when the
// engine learns lastmod trust: the scheduler's ranking and next check then
// weigh the lastmod by the source's measured trust. The zero hint says
// nothing.
func (r *run) hint(p schedule.Page, lastmod time.Time) schedule.SitemapHint {
	if !r.trust.learned || lastmod.IsZero() {
		return schedule.SitemapHint{}
	}
	return schedule.SitemapHint{Listed: true, Moved: lastmod.After(p.LastFetched), Trust: r.trust.known}
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
