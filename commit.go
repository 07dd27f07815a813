package recrawl

import (
	"context"
	"sync"
	"sync/atomic"
	"time"

	"github.com/recrawl/recrawl/crawlstate"
)

// maxCommitBatch bounds the results of one commit transaction, and
// maxBodyBatch those of them with a body (links, chunks, alerts: more
// memory held until the write). A large batch of 304s dirties fewer
// database pages per row: rows share their B-tree leaves, so the WAL
// written at COMMIT, and checkpointed later, shrinks.
const (
	maxCommitBatch = 1024
	maxBodyBatch   = 256
)

// commitLinger is how long a batch nobody waits for (304s, pages without
// alerts) may wait for more results before it is written: one transaction
// per maxCommitBatch results or per commitLinger, whichever comes first.
// Lingering costs no throughput (workers block only on a full queue, and
// a full queue is a full batch) and no durability (a result is counted
// only once committed; one not yet committed stays due); the end of a
// run's queue (flush) and a cancelled run write at once.
const commitLinger = 20 * time.Millisecond

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
	c := &committer{r: r, ctx: ctx, in: make(chan commitReq, maxBodyBatch), nudge: make(chan struct{}, 1), stopped: make(chan struct{})}
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
	batch := make([]commitReq, 0, maxCommitBatch)
	results := make([]crawlstate.Result, 0, maxCommitBatch)
	linger := time.NewTimer(commitLinger)
	linger.Stop()
	for req := range c.in {
		batch = append(batch[:0], req)
		waited := req.waited
		bodies := heavy(req)
		lingering := false
	fill:
		for len(batch) < maxCommitBatch && bodies < maxBodyBatch {
			select {
			case more, ok := <-c.in:
				if !ok {
					break fill
				}
				batch = append(batch, more)
				waited = waited || more.waited
				bodies += heavy(more)
				continue
			default:
			}
			if waited || c.ctx.Err() != nil || c.drain.Load() > 0 {
				break
			}
			if !lingering {
				linger.Reset(commitLinger)
				lingering = true
			}
			select {
			case more, ok := <-c.in:
				if !ok {
					break fill
				}
				batch = append(batch, more)
				waited = waited || more.waited
				bodies += heavy(more)
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
		results = results[:0]
		for _, b := range batch {
			results = append(results, b.res)
		}
		errs := c.write(results)
		for i, b := range batch {
			b.after(errs[i])
			c.pending.Done()
		}
		clear(batch) // drop the references to the pages
		clear(results)
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
// goes on) each result is recorded alone, so each gets its own error.
func (c *committer) write(results []crawlstate.Result) []error {
	st := c.r.e.cfg.State
	errs := make([]error, len(results))
	err := st.Record(c.ctx, c.r.source, results)
	if err == nil {
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
