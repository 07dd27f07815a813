package recrawl

import (
	"context"
	"fmt"
	"runtime"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/recrawl/recrawl/crawlstate"
	"github.com/recrawl/recrawl/fetch"
	"github.com/recrawl/recrawl/schedule"
)

// stages are the fetch and extraction stages of a run, joined by bounded
// queues, in front of the run's committer: Workers goroutines fetch
// (I/O), GOMAXPROCS goroutines extract and index what came back with a
// body (CPU), and the committer writes outcomes in batches. Answers
// without a body (304, 404, failures) skip extraction.
type stages struct {
	r        *run
	ctx      context.Context
	jobs     chan crawlstate.Row
	bodies   chan fetched
	fetchers sync.WaitGroup
	extracts sync.WaitGroup
}

// startStages starts the fetch and extraction goroutines.
func (r *run) startStages(ctx context.Context) *stages {
	s := &stages{r: r, ctx: ctx, jobs: make(chan crawlstate.Row), bodies: make(chan fetched, extractQueue())}
	for range r.e.cfg.Workers {
		s.fetchers.Add(1)
		go func() {
			defer s.fetchers.Done()
			for row := range s.jobs {
				r.process(ctx, row, s.bodies)
			}
		}()
	}
	for range extractors() {
		s.extracts.Add(1)
		go func() {
			defer s.extracts.Done()
			for f := range s.bodies {
				r.handle(ctx, f.row, f.resp, nil, false)
				r.lock.refreshIfDue(ctx)
			}
		}()
	}
	return s
}

// send hands row to a fetch worker; false when ctx ended first.
func (s *stages) send(row crawlstate.Row) bool {
	select {
	case s.jobs <- row:
		return true
	case <-s.ctx.Done():
		return false
	}
}

// wait lets the rows sent finish: fetched, extracted and committed, their
// outcomes counted.
func (s *stages) wait() {
	close(s.jobs)
	s.fetchers.Wait()
	close(s.bodies)
	s.extracts.Wait()
	s.r.commits.flush()
}

// passes reports whether a selected row goes on to be fetched (or
// offered): a halted run skips it (it stays due), and a row a crawl of
// this run already requested leaves Report.Due.
func (r *run) passes(row *crawlstate.Row) bool {
	if r.halt.halted() {
		// The rest of the queue is not requested: each row is skipped
		// with its own event and stays due.
		r.skipDue(*row, r.halt.reason())
		return false
	}
	return !r.crawled(row.URL)
}

// route hands one selected row that passes on: a row without validators
// waits in *plain when the fetcher can batch, and any other goes to the
// fetch stage. It returns false when ctx ended.
func (r *run) route(ctx context.Context, s *stages, row *crawlstate.Row, plain *[]crawlstate.Row) bool {
	if ctx.Err() != nil {
		return false
	}
	if !r.passes(row) {
		return true
	}
	if r.e.batcher != nil && row.ETag == "" && row.LastModified == "" {
		*plain = append(*plain, *row)
		return true
	}
	return s.send(*row)
}

// fetchPlain fetches the rows without validators that route held back: in
// batch jobs when more than BatchThreshold of them wait and batch is set,
// else one by one through the fetch stage.
func (r *run) fetchPlain(ctx context.Context, s *stages, plain []crawlstate.Row, batch bool) {
	if len(plain) > r.e.cfg.BatchThreshold && batch && ctx.Err() == nil {
		r.fetchBatch(ctx, plain)
		return
	}
	for _, row := range plain {
		if !s.send(row) {
			return
		}
	}
}

// fetched is a page answer with a body, on its way to extraction.
type fetched struct {
	row  crawlstate.Row
	resp *fetch.Response
}

// extractors is the number of extraction goroutines: one per CPU the Go
// scheduler uses.
func extractors() int { return runtime.GOMAXPROCS(0) }

// extractQueue bounds the fetched bodies waiting for extraction: enough to
// keep every extractor busy, few enough to bound their memory.
func extractQueue() int { return 2 * extractors() }

// eachDue pages through source's rows due at now in (NextCheck, URL) order
// and calls fn for each until it returns false. An error of a cancelled
// context is not reported: the caller checks ctx.
func (e *Engine) eachDue(ctx context.Context, source string, now time.Time, fn func(crawlstate.Row) bool) error {
	return e.walkDue(ctx, source, now, nil, func(row *crawlstate.Row) bool { return fn(*row) })
}

// eachDue is Engine.eachDue over the rows due at the start of the run,
// counting each page of rows read in Report.Due before fn sees its rows:
// every due row is dispatched or skipped with its own event, so the walk
// counts what a count query would, without its cost. fn gets each row in
// place (a row is a few hundred bytes): it copies what it keeps.
func (r *run) eachDue(ctx context.Context, fn func(*crawlstate.Row) bool) error {
	count := func(n int) {
		r.tally.add(func(rep *Report) {
			rep.Due += n
		})
	}
	if rows := r.handOn; rows != nil {
		r.handOn = nil
		r.e.walkHanded(ctx, rows, count, fn)
		return nil
	}
	return r.e.walkDue(ctx, r.source, r.start, count, fn)
}

// walkHanded is walkDue over the due rows planning read (run.handOn):
// the same rows in the same order, (NextCheck, URL), counted the same, a
// page of BatchSize rows at a time.
func (e *Engine) walkHanded(ctx context.Context, rows []*crawlstate.Row, page func(int), fn func(*crawlstate.Row) bool) {
	slices.SortFunc(rows, func(a, b *crawlstate.Row) int {
		if c := a.NextCheck.Compare(b.NextCheck); c != 0 {
			return c
		}
		return strings.Compare(a.URL, b.URL)
	})
	for lo := 0; lo < len(rows) || lo == 0; lo += e.cfg.BatchSize {
		if ctx.Err() != nil {
			return // as a due query would fail
		}
		batch := rows[lo:min(lo+e.cfg.BatchSize, len(rows))]
		page(len(batch))
		for _, row := range batch {
			if !fn(row) {
				return
			}
		}
	}
}

// walkDue is eachDue calling page, when not nil, with the number of rows
// of each page read, and fn with each row in place.
func (e *Engine) walkDue(ctx context.Context, source string, now time.Time, page func(int), fn func(*crawlstate.Row) bool) error {
	var after crawlstate.Key
	for {
		rows, err := e.st.Due(ctx, source, now, after, e.cfg.BatchSize)
		if err != nil {
			if ctx.Err() != nil {
				return nil
			}
			return fmt.Errorf("recrawl: reading the due queue of %s: %w", source, err)
		}
		if page != nil {
			page(len(rows))
		}
		for i := range rows {
			if !fn(&rows[i]) {
				return nil
			}
		}
		if len(rows) < e.cfg.BatchSize {
			return nil
		}
		after = crawlstate.KeyOf(rows[len(rows)-1])
	}
}

// runLimit returns how many due rows the run may fetch (negative: all)
// and how to rank them: the run plan's Limit and Priority when the
// scheduler is a schedule.RunPlan, Config.Budget and schedule.Gain
// otherwise; the smaller limit wins. capped reports that Config.Budget is
// the limit.
func (r *run) runLimit() (limit int, rank func(schedule.Page) float64, capped bool) {
	limit = -1
	if r.e.cfg.Budget > 0 {
		limit = r.e.cfg.Budget
	}
	rank = func(p schedule.Page) float64 { return schedule.Gain(p, r.start) }
	if plan, ok := r.sched.(schedule.RunPlan); ok {
		rank = plan.Priority
		if l := plan.Limit(); l >= 0 && (limit < 0 || l < limit) {
			return l, rank, false
		}
	}
	return limit, rank, limit >= 0
}

// gainEntry is a ranked row in a gainHeap: its gain, its URL (the tie
// break) and the row.
type gainEntry struct {
	gain float64
	url  string
	row  *crawlstate.Row
}

// stronger reports whether a ranks above b: a higher gain, or the same
// gain and the smaller URL, so which rows a budget keeps does not depend
// on the order the due queue lists rows of equal gain in.
func stronger(a, b gainEntry) bool {
	if a.gain != b.gain {
		return a.gain > b.gain
	}
	return a.url < b.url
}

// weaker is the heap order: the root is the weakest row kept.
func weaker(a, b gainEntry) bool {
	if a.gain != b.gain {
		return a.gain < b.gain
	}
	return a.url > b.url
}

// gainHeap is a min-heap on gain of the rows a budget keeps. It moves
// small entries; the rows (a few hundred bytes each) are copied once into
// slabs of gainSlab rows, and a row left out gives its place to the one
// that replaces it, so the heap holds no more rows than it keeps (not the
// due walk's pages they came in) and never copies them again.
type gainHeap struct {
	entries []gainEntry
	slab    []crawlstate.Row // the newest slab, filled to len
}

// gainSlab is how many rows one allocation of a gainHeap holds.
const gainSlab = 256

func (h *gainHeap) len() int { return len(h.entries) }

// push keeps a copy of row with gain g.
func (h *gainHeap) push(row *crawlstate.Row, g float64) {
	if len(h.slab) == cap(h.slab) {
		h.slab = make([]crawlstate.Row, 0, gainSlab)
	}
	h.slab = append(h.slab, *row)
	kept := &h.slab[len(h.slab)-1]
	h.entries = append(h.entries, gainEntry{gain: g, url: kept.URL, row: kept})
	h.up(len(h.entries) - 1)
}

// replaceWeakest keeps a copy of row with gain g in place of the weakest
// row, which it returns.
func (h *gainHeap) replaceWeakest(row *crawlstate.Row, g float64) crawlstate.Row {
	kept := h.entries[0].row
	out := *kept
	*kept = *row
	h.entries[0] = gainEntry{gain: g, url: kept.URL, row: kept}
	h.down(0)
	return out
}

// pop removes the weakest entry and returns its row.
func (h *gainHeap) pop() *crawlstate.Row {
	n := len(h.entries) - 1
	top := h.entries[0]
	h.entries[0] = h.entries[n]
	h.entries[n] = gainEntry{}
	h.entries = h.entries[:n]
	if n > 0 {
		h.down(0)
	}
	return top.row
}

func (h *gainHeap) up(j int) {
	for j > 0 {
		i := (j - 1) / 2
		if i == j || !weaker(h.entries[j], h.entries[i]) {
			break
		}
		h.entries[i], h.entries[j] = h.entries[j], h.entries[i]
		j = i
	}
}

func (h *gainHeap) down(i int) {
	n := len(h.entries)
	for {
		j := 2*i + 1
		if j >= n || j < 0 {
			break
		}
		if k := j + 1; k < n && weaker(h.entries[k], h.entries[j]) {
			j = k
		}
		if !weaker(h.entries[j], h.entries[i]) {
			break
		}
		h.entries[i], h.entries[j] = h.entries[j], h.entries[i]
		i = j
	}
}

// fetchBatch sends rows without validators to the batch fetcher and
// records each result through the same path as a single fetch. Rows the
// job left without a result stay due and count as failed fetches.
func (r *run) fetchBatch(ctx context.Context, rows []crawlstate.Row) {
	e := r.e
	var admitted []crawlstate.Row
	for _, row := range rows {
		if ctx.Err() != nil {
			return
		}
		if r.halt.halted() {
			r.skipDue(row, r.halt.reason())
			continue
		}
		if r.admitRow(ctx, row) {
			admitted = append(admitted, row)
		}
	}
	if len(admitted) == 0 {
		return
	}
	reqs := make([]fetch.Request, len(admitted))
	for i, row := range admitted {
		reqs[i] = fetch.Request{URL: row.OriginalURL} // a batch carries no per-URL validators
	}
	got := make([]bool, len(admitted))
	r.log.DebugContext(ctx, "batch fetch", "urls", len(reqs))
	err := e.batcher.FetchBatch(ctx, reqs, func(i int, resp *fetch.Response, ferr error) {
		if i < 0 || i >= len(admitted) || got[i] {
			return
		}
		got[i] = true
		r.stage(StageFetch, 0)
		r.countRequests(nil, resp, ferr)
		r.handle(ctx, admitted[i], resp, ferr, false)
		r.lock.refreshIfDue(ctx)
	})
	if ctx.Err() != nil {
		return
	}
	if err != nil && fatalError(err) {
		r.halt.fail(fmt.Errorf("recrawl: batch fetch: %w", err))
		return
	}
	for i, row := range admitted {
		if got[i] {
			continue
		}
		cause := err
		if cause == nil {
			cause = fmt.Errorf("batch job returned no result for %s", row.OriginalURL)
		}
		r.stage(StageFetch, 0)
		r.stage(StageFetch, -1)
		r.fail(ctx, row, StageFetch, 0, cause)
	}
}
