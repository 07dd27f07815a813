package recrawl

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"time"

	"github.com/recrawl/recrawl/crawlstate"
)

// maxCommitBatch bounds the results of one commit transaction, and
// maxBodyBatch those of them with a body (links, chunks, alerts: more
// memory held until the write). A large batch of 304s dirties fewer
// database pages per row: rows share their B-tree leaves, so the WAL
// written at COMMIT, and checkpointed later, shrinks. Against a state of
// 2,000 rows, SQLite's CPU time per 304 (row update, event row, commit)
// is about 29 µs in transactions of 500, 23 µs in transactions of 1,000
// and 20 µs in one of 2,000.
const (
	maxCommitBatch = 4096
	maxBodyBatch   = 256
)

// commitQueue is how many results wait for the committer while it
// writes a transaction: a whole batch (maxCommitBatch), so that the
// workers do not wait while a large batch of 304s is written. At 1,024
// the fetch workers of a run of 10,000 304s spent 460 ms together
// blocked on a full queue (go run ./examples/bench -only all-due
// -profile DIR, then go tool trace -pprof=sync DIR/all-due.trace), and
// the run took 0.36 s instead of 0.33 s. A queued 304 holds a few
// hundred bytes.
const commitQueue = maxCommitBatch

// commitLinger is how long a batch nobody waits for (pages without
// alerts) may wait for more results before it is written, and
// notModifiedLinger how long one of 304s alone may: one transaction per
// maxCommitBatch results or per linger, whichever comes first. Lingering
// costs no throughput (workers block only on a full queue, and the
// committer empties the queue while it lingers) and no durability (a
// result is counted only once committed; one not yet committed stays
// due); the end of a run's queue (flush) and a cancelled run write at
// once. A quarter of a second holds the 304s of a 2,000-page run over 8
// connections to a fast site in one transaction: for a 304 the batch
// size, not the wait, is what its write costs. A page with a body, whose
// outcome is worth more sooner, waits the shorter linger.
const (
	commitLinger      = 20 * time.Millisecond
	notModifiedLinger = 250 * time.Millisecond
)

// committer is a run's state-write stage. Workers hand it page results
// with their stage events (submit); it writes them with group commit: one
// transaction holds every result handed in while the previous transaction
// was being written, up to maxCommitBatch (maxBodyBatch of them with a
// body), so under load a transaction
// carries many pages. A batch that no caller waits for lingers up to
// commitLinger for more; one a caller waits for (commit) is written at
// once. Each
// result's callback runs after its transaction, in submission order, with
// nil once the result is stored. A failed batch is written again result by
// result, so one bad result fails only its own page. Nothing is counted or
// reported before it is committed: a crash loses at most the results not
// yet committed, and their rows stay due.
type committer struct {
	r       *run
	ctx     context.Context
	in      chan commitReq
	pending sync.WaitGroup // submitted, callback not yet returned
	drain   atomic.Int32   // flushes waiting: no batch lingers
	nudge   chan struct{}  // a flush began: a lingering batch is written now
	stopped chan struct{}
	once    sync.Once
}

type commitReq struct {
	res    crawlstate.Result
	after  func(error) // nil error: committed
	waited bool        // a caller blocks until it is written
}

func newCommitter(ctx context.Context, r *run) *committer {
	c := &committer{r: r, ctx: ctx, in: make(chan commitReq, commitQueue), nudge: make(chan struct{}, 1), stopped: make(chan struct{})}
	go c.loop()
	return c
}

// submit queues res; after is called once it is committed or failed. It
// blocks while the queue is full (backpressure on the workers).
func (c *committer) submit(res crawlstate.Result, after func(error)) {
	c.pending.Add(1)
	c.in <- commitReq{res: res, after: after}
}

// commit writes res and waits for it: the error of its transaction.
func (c *committer) commit(res crawlstate.Result) error {
	done := make(chan error, 1)
	c.pending.Add(1)
	c.in <- commitReq{res: res, after: func(err error) { done <- err }, waited: true}
	return <-done
}

// flush waits until every submitted result is committed (or failed) and
// its callback returned. No batch lingers meanwhile.
func (c *committer) flush() {
	c.drain.Add(1)
	defer c.drain.Add(-1)
	select {
	case c.nudge <- struct{}{}:
	default:
	}
	c.pending.Wait()
}

// close flushes and stops the committer. Later submits panic.
func (c *committer) close() {
	c.once.Do(func() {
		c.flush()
		close(c.in)
		<-c.stopped
	})
}

func (c *committer) loop() {
	defer close(c.stopped)
	// The batch, grown to the largest of the run: the results to write
	// and their callbacks, side by side.
	var results []crawlstate.Result
	var afters []func(error)
	linger := time.NewTimer(commitLinger)
	linger.Stop()
	for req := range c.in {
		results, afters = append(results[:0], req.res), append(afters[:0], req.after)
		waited := req.waited
		bodies := heavy(req)
		add := func(more commitReq) {
			results, afters = append(results, more.res), append(afters, more.after)
			waited = waited || more.waited
			bodies += heavy(more)
		}
		lingering, short := false, false
		var since time.Time // when the batch began to linger
	fill:
		for len(results) < maxCommitBatch && bodies < maxBodyBatch {
			select {
			case more, ok := <-c.in:
				if !ok {
					break fill
				}
				add(more)
				continue
			default:
			}
			if waited || c.ctx.Err() != nil || c.drain.Load() > 0 {
				break
			}
			if !lingering || (!short && bodies > 0) {
				// A batch of 304s lingers longer; its first page with a
				// body brings the write forward.
				wait := notModifiedLinger
				if short = bodies > 0; short {
					wait = commitLinger
				}
				if lingering {
					linger.Stop()
					wait = max(commitLinger-time.Since(since), 0)
				} else {
					since = time.Now()
				}
				linger.Reset(wait)
				lingering = true
			}
			select {
			case more, ok := <-c.in:
				if !ok {
					break fill
				}
				add(more)
			case <-linger.C:
				lingering = false
				break fill
			case <-c.nudge:
				break fill
			case <-c.ctx.Done():
				break fill
			}
		}
		if lingering {
			linger.Stop()
		}
		errs := c.write(results)
		for i, after := range afters {
			after(errs[i])
			c.pending.Done()
		}
		clear(results) // drop the references to the pages
		clear(afters)
	}
}

// heavy is 1 for a result that carries more than a row update (anything
// but a 304), else 0.
func heavy(req commitReq) int {
	if req.res.NotModified && req.res.Alert == nil && req.res.Links == nil {
		return 0
	}
	return 1
}

// write records results in one transaction; when it fails (and the run
// goes on) each result is recorded alone, so each gets its own error. A
// fenced batch that lost leases (*crawlstate.LeaseLostError) stored its
// other results: only the lost ones get the error.
func (c *committer) write(results []crawlstate.Result) []error {
	st := c.r.e.st
	errs := make([]error, len(results))
	err := st.Record(c.ctx, c.r.source, results)
	if err == nil {
		return errs
	}
	var lost *crawlstate.LeaseLostError
	if errors.As(err, &lost) {
		gone := make(map[string]bool, len(lost.URLs))
		for _, u := range lost.URLs {
			gone[u] = true
		}
		for i := range results {
			if results[i].Lease == lost.Owner && gone[results[i].URL] {
				errs[i] = err
			}
		}
		return errs
	}
	if len(results) == 1 || c.ctx.Err() != nil {
		for i := range errs {
			errs[i] = err
		}
		return errs
	}
	for i := range results {
		errs[i] = st.Record(c.ctx, c.r.source, results[i:i+1])
	}
	return errs
}
