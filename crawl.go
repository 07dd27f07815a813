package recrawl

import (
	"context"
	"errors"
	"fmt"
	"net/http"

	"github.com/recrawl/recrawl/crawlstate"
	"github.com/recrawl/recrawl/discover"
	"github.com/recrawl/recrawl/fetch"
)

// pageHandler lets a crawling source take part in the incremental state:
// known pages are requested with their validators, every answer goes
// through the same outcome path as a fetch from the due queue, and a 304
// continues the crawl from the page's stored links.
type pageHandler struct {
	r *run
	d *discoverer
}

// Prepare implements discover.PageHandler.
func (h *pageHandler) Prepare(ctx context.Context, rawURL string, depth int) (context.Context, discover.Validators, string, error) {
	r, d := h.r, h.d
	if r.halt.halted() {
		return ctx, discover.Validators{}, r.halt.by(), nil
	}
	n, err := r.e.cfg.Normalize.URL(rawURL)
	if err != nil {
		return ctx, discover.Validators{}, SkipInvalid, nil
	}
	d.prepare(n, rawURL)
	if err := d.flush(ctx); err != nil {
		return ctx, discover.Validators{}, "", err
	}
	t := &ticket{b: &r.budget}
	dup := false
	r.book.with(func(b *book) {
		if dup = b.handled[n]; !dup {
			b.handled[n] = true
			b.tickets[n] = t
		}
	})
	if dup {
		return ctx, discover.Validators{}, SkipDuplicate, nil
	}
	r.tally.add(func(rep *Report) { rep.Due++ }) // a crawled page is due in this run by definition
	row, err := r.e.st.Get(ctx, r.source, n)
	if err != nil {
		return ctx, discover.Validators{}, "", fmt.Errorf("recrawl: reading %s: %w", n, err)
	}
	if row.Excluded != "" {
		// Known not to be a page: not requested, listed as it is.
		r.book.with(func(b *book) { delete(b.tickets, n) })
		r.tally.add(func(rep *Report) { rep.Due-- })
		return ctx, discover.Validators{}, skipKnown, nil
	}
	v := discover.Validators{}
	if !row.Gone {
		v = discover.Validators{ETag: row.ETag, LastModified: row.LastModified}
	}
	return context.WithValue(ctx, ticketKey{}, t), v, "", nil
}

// Known implements discover.PageLookup: the validators of a live page
// row, so that Entry requests a known start page conditionally.
func (h *pageHandler) Known(ctx context.Context, rawURL string) (discover.Validators, bool, error) {
	r := h.r
	n, err := r.e.cfg.Normalize.URL(rawURL)
	if err != nil {
		return discover.Validators{}, false, nil
	}
	row, err := r.e.st.Get(ctx, r.source, n)
	if errors.Is(err, crawlstate.ErrNotFound) {
		return discover.Validators{}, false, nil
	}
	if err != nil {
		return discover.Validators{}, false, fmt.Errorf("recrawl: reading %s: %w", n, err)
	}
	if row.Gone || row.Excluded != "" || row.ContentHash == "" {
		return discover.Validators{}, false, nil
	}
	return discover.Validators{ETag: row.ETag, LastModified: row.LastModified}, true, nil
}

// skipKnown is Prepare's skip for a crawled URL whose row is excluded
// (not a page): the crawl does not request it, and the engine accepts the
// link as listed, as a sitemap's listing of the same URL would be.
const skipKnown = "\x00known"

// Handle implements discover.PageHandler.
func (h *pageHandler) Handle(ctx context.Context, page discover.CrawledPage) ([]string, error) {
	r := h.r
	n, err := r.e.cfg.Normalize.URL(page.URL)
	if err != nil {
		return nil, nil
	}
	row, err := r.e.st.Get(ctx, r.source, n)
	if err != nil {
		return nil, fmt.Errorf("recrawl: reading %s: %w", n, err)
	}
	var t *ticket
	r.book.with(func(b *book) {
		t = b.tickets[n]
		delete(b.tickets, n)
	})
	if page.Prefetched && t != nil {
		// Entry's detection sent the start page's request, outside the
		// ticket's context: it counts against the page cap all the same.
		t.b.used.Add(1)
	}
	resp, ferr := crawledResponse(page)
	r.stage(StageFetch, 0)
	r.countRequests(t, resp, ferr)
	links := r.handle(ctx, row, resp, ferr, true)
	r.lock.refreshIfDue(ctx)
	if r.halt.stopped.Load() && r.halt.err() != nil {
		return nil, r.halt.err()
	}
	return links, nil
}

// crawledResponse turns a crawled answer into what a Fetcher would have
// returned: a Response for definitive answers, a *fetch.StatusError for the
// rest, the transport error as it is.
func crawledResponse(p discover.CrawledPage) (*fetch.Response, error) {
	if p.Err != nil {
		return nil, p.Err
	}
	resp := &fetch.Response{
		URL: p.URL, FinalURL: p.FinalURL, Status: p.Status, ContentType: p.ContentType,
		Header: p.Header, Body: p.Body, Attempts: 1,
	}
	if resp.FinalURL == "" {
		resp.FinalURL = p.URL
	}
	if p.Header != nil {
		resp.ETag, resp.LastModified = p.Header.Get("ETag"), p.Header.Get("Last-Modified")
		if resp.ContentType == "" {
			resp.ContentType = p.Header.Get("Content-Type")
		}
	}
	switch {
	case p.Status >= 200 && p.Status < 300, p.Status == http.StatusNotModified, resp.Gone():
		return resp, nil
	default:
		return nil, &fetch.StatusError{URL: p.URL, Status: p.Status, Attempts: 1}
	}
}

// prepare makes sure a crawled URL has a row before its answer is recorded.
// The crawl normally yields the link first; if it has not, the URL is
// queued here without being counted, and counted when it is yielded.
func (d *discoverer) prepare(n, raw string) {
	d.locked(func() error {
		k := d.key(n)
		if _, seen := d.seen[k]; seen {
			return nil
		}
		d.seen[k] = struct{}{}
		if d.prepared == nil {
			d.prepared = map[[2]uint64]bool{}
		}
		d.prepared[k] = true
		d.batch = append(d.batch, crawlstate.Discovered{URL: n, OriginalURL: raw})
		return nil
	})
}

// crawled reports whether a crawl of this run already requested url;
// such a row leaves Report.Due, which counted it.
func (r *run) crawled(url string) bool {
	var handled bool
	r.book.with(func(b *book) { handled = b.handled[url] })
	if handled {
		r.tally.add(func(rep *Report) { rep.Due-- })
	}
	return handled
}
