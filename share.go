package recrawl

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/recrawl/recrawl/clock"
	"github.com/recrawl/recrawl/crawlstate"
)

// A run of a source on a shared State (crawlstate.Sharer) is one of
// several engines' at once, on one machine or many. The engine that takes
// the source's run lock leads: it discovers the source, plans the run,
// offers the due rows it chose for the run (Sharer.Offer) and releases
// the lock. Every engine then claims offered rows in small batches under a
// lease (Sharer.Claim), fetches and records them, and asks again, until
// nothing is left to claim and no other engine holds a lease. An engine
// that finds the lock held waits for it and joins the run it waited for;
// one that takes the lock at once joins the latest recorded run while
// that run has rows to claim or leased, and leads a new run otherwise.
// So engines started together discover the source once,
// each due row is fetched by one engine, and the rows of an engine that
// dies return to the others when its leases expire.

// sharePoll bounds a shared run's waits: for the leader to release the
// lock, and for other engines to record the rows they leased. A waiting
// engine asks the State about ten times a second.
func (e *Engine) sharePoll() time.Duration { return min(100*time.Millisecond, e.cfg.LockTTL/8) }

// claimSize is how many rows a shared run claims at a time: a few per
// fetch worker, so the rows of a run spread evenly over its engines, or a
// page of BatchSize rows for a fetcher that fetches rows without
// validators in batch jobs.
func (e *Engine) claimSize() int {
	if e.batcher != nil {
		return e.cfg.BatchSize
	}
	return min(e.cfg.BatchSize, 4*e.cfg.Workers)
}

// errStoppedWaiting ends a shared run that Shutdown stopped while it
// waited for the lock: it has nothing to do, and reports StopShutdown.
var errStoppedWaiting = errors.New("recrawl: shut down while waiting for the run lock")

// lockOrJoin takes the source's run lock, waiting while another engine
// holds it. Holding it, it joins the latest recorded run when it waited
// for the lock (the run it waited for), or when that run still has rows
// to claim or rows other engines hold: it releases the lock and returns
// the rows it claimed, with join set. Otherwise the run leads and keeps
// the lock; a run that waited for the lock and finds no run recorded
// leads from when it got it.
func (r *run) lockOrJoin(ctx context.Context) ([]crawlstate.Row, bool, error) {
	e := r.e
	sh := e.st.sharer
	clk := e.cfg.Clock
	waited := false
	for {
		now := clk.Now()
		err := r.lock(ctx, now)
		if err == nil {
			if waited {
				r.start, r.run = now, now
				r.lastLock.Store(now.UnixNano())
				r.tally.add(func(rep *Report) { rep.StartedAt = now })
			}
			break
		}
		var held *crawlstate.LockHeldError
		if !errors.As(err, &held) {
			return nil, false, err
		}
		if r.halted() {
			return nil, false, errStoppedWaiting // Shutdown: stop waiting
		}
		// Another engine leads a run of the source: it releases the
		// lock once it has offered the run's rows.
		waited = true
		wait := e.sharePoll()
		if d := held.Expires.Sub(now); d > 0 && d < wait {
			wait = d
		}
		if err := clock.Sleep(ctx, clk, wait); err != nil {
			return nil, false, err
		}
	}
	unlock := func() {
		if err := e.st.Unlock(context.WithoutCancel(ctx), r.source, r.owner); err != nil {
			r.log.WarnContext(ctx, "releasing the run lock failed; it expires after LockTTL", "err", err)
			r.tally.add(func(rep *Report) { rep.StateWriteFailures.Releases++ })
		}
	}
	starts, err := sh.Runs(ctx, r.source, 1)
	if err != nil {
		unlock()
		return nil, false, fmt.Errorf("reading the latest run: %w", err)
	}
	if len(starts) == 0 {
		return nil, false, nil
	}
	rows, pending, _, err := sh.Claim(ctx, r.source, starts[0], r.owner, clk.Now(), e.cfg.LockTTL, e.claimSize())
	if err != nil {
		unlock()
		return nil, false, fmt.Errorf("claiming rows of the run of %s: %w", starts[0].Format(time.RFC3339Nano), err)
	}
	if len(rows) == 0 && pending == 0 && !waited {
		// The latest run is done: lead the next. A run that waited for
		// the lock belongs to the run it waited for, done or not, so
		// engines started together discover (or crawl) the source once.
		return nil, false, nil
	}
	r.run = starts[0]
	r.tally.add(func(rep *Report) { rep.Joined = true })
	r.working.Store(true) // before the unlock: the heartbeat extends leases now
	unlock()
	return rows, true, nil
}

// offerDue is a leading run's selection of the due rows: what fetchDue
// would fetch is offered for the run instead, a page of BatchSize rows at
// a time; rows the selection leaves out (a budget) are skipped here as
// fetchDue skips them. The offered rows leave Report.Due, which counts
// them when they are claimed. It releases the run lock once the offer is
// complete, so that waiting engines join.
func (r *run) offerDue(ctx context.Context) error {
	e := r.e
	sh := e.st.sharer
	var batch []string
	offered, sent := 0, 0
	var oerr error
	flush := func() bool {
		if len(batch) == 0 {
			return true
		}
		n, err := sh.Offer(ctx, r.source, r.run, batch)
		if err != nil {
			if ctx.Err() == nil {
				oerr = fmt.Errorf("recrawl: offering the due rows of %s: %w", r.source, err)
			}
			return false
		}
		offered += n
		sent += len(batch)
		batch = batch[:0]
		return true
	}
	qerr := r.selectDue(ctx, func(row *crawlstate.Row) bool {
		if ctx.Err() != nil {
			return false
		}
		if !r.passes(row) {
			return true
		}
		batch = append(batch, row.URL)
		return len(batch) < e.cfg.BatchSize || flush()
	})
	if qerr == nil && oerr == nil {
		flush()
	}
	r.tally.add(func(rep *Report) {
		rep.Due -= sent
		rep.Offered = offered
	})
	r.log.DebugContext(ctx, "offered the due rows", "rows", offered)
	r.working.Store(true) // before the unlock: the heartbeat extends leases now
	if err := e.st.Unlock(context.WithoutCancel(ctx), r.source, r.owner); err != nil {
		r.log.WarnContext(ctx, "releasing the run lock failed; it expires after LockTTL", "err", err)
		r.tally.add(func(rep *Report) { rep.StateWriteFailures.Releases++ })
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	if qerr != nil {
		return qerr
	}
	return oerr
}

// work is a shared run's fetch phase: it claims offered rows of the run,
// claimed first, in batches, and fetches them through the run's stages,
// until none is left to claim and no other engine holds one, or the run
// halts. While other engines hold rows it waits (sharePoll at most, or
// until their earliest lease expires) and asks again, so it takes over
// the rows of an engine whose leases expired. It ends the leases it still
// holds (endShare).
func (r *run) work(ctx context.Context, claimed []crawlstate.Row) error {
	e := r.e
	sh := e.st.sharer
	clk := e.cfg.Clock
	r.working.Store(true)
	s := r.startStages(ctx)
	var err error
	for {
		if len(claimed) > 0 {
			r.tally.add(func(rep *Report) {
				rep.Due += len(claimed)
			})
			var plain []crawlstate.Row
			for i := range claimed {
				if !r.route(ctx, s, &claimed[i], &plain) {
					break
				}
			}
			r.fetchPlain(ctx, s, plain, true)
			claimed = nil
		}
		if ctx.Err() != nil || r.halted() {
			break
		}
		now := clk.Now()
		rows, pending, next, cerr := sh.Claim(ctx, r.source, r.run, r.owner, now, e.cfg.LockTTL, e.claimSize())
		if cerr != nil {
			if ctx.Err() == nil {
				err = fmt.Errorf("recrawl: claiming rows of %s: %w", r.source, cerr)
			}
			break
		}
		if len(rows) > 0 {
			claimed = rows
			continue
		}
		if pending == 0 {
			break
		}
		// Other engines hold the rest. Rows this run ended unrecorded
		// are withdrawn first, or engines could wait on each other.
		r.withdrawSkipped(ctx)
		wait := e.sharePoll()
		if d := next.Sub(now); d > 0 && d < wait {
			wait = d
		}
		if clock.Sleep(ctx, clk, max(wait, time.Millisecond)) != nil {
			break
		}
	}
	s.wait()
	r.endShare(ctx)
	if cerr := ctx.Err(); cerr != nil {
		return cerr
	}
	return err
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

// skippedShared notes a claimed row a shared run ended without recording
// it, for withdrawSkipped: robots.txt forbids it or it
// redirects off the site, which another engine would find again. Rows
// skipped because the run halted are released instead (endShare), for
// another engine to fetch.
func (r *run) skippedShared(url, reason string) {
	if r.working.Load() && (reason == SkipRobots || reason == SkipOffHostRedirect) {
		r.book.with(func(b *book) { b.withdraw = append(b.withdraw, url) })
	}
}

// withdrawSkipped withdraws the rows noted by skippedShared from the run's
// offer. A failure is logged: the rows return to the others when their
// leases expire.
func (r *run) withdrawSkipped(ctx context.Context) {
	var urls []string
	r.book.with(func(b *book) { urls, b.withdraw = b.withdraw, nil })
	if len(urls) == 0 {
		return
	}
	if err := r.e.st.sharer.Withdraw(context.WithoutCancel(ctx), r.source, r.owner, urls); err != nil {
		r.log.WarnContext(ctx, "withdrawing skipped rows failed; they return to the others when their leases expire", "rows", len(urls), "err", err)
		r.tally.add(func(rep *Report) { rep.StateWriteFailures.Releases++ })
	}
}

// endShare ends what a shared run holds: it withdraws the rows it
// skipped and releases every other lease it still holds (rows a halt or a
// cancellation left unfetched), so the other engines take them at once. A
// run that holds nothing does nothing.
func (r *run) endShare(ctx context.Context) {
	if !r.working.Load() {
		return
	}
	r.withdrawSkipped(ctx)
	if err := r.e.st.sharer.Release(context.WithoutCancel(ctx), r.source, r.owner, nil); err != nil {
		r.log.WarnContext(ctx, "releasing claimed rows failed; they return to the others when their leases expire", "err", err)
		r.tally.add(func(rep *Report) { rep.StateWriteFailures.Releases++ })
	}
}

// claimAlert leases a pending alert to this run for delivery when the
// State is shared, so that of the engines that see it pending (its
// committer, and every engine that starts a run of the source) one
// delivers it. It reports whether this run may deliver it.
func (r *run) claimAlert(ctx context.Context, id string) bool {
	sh := r.e.st.sharer
	if sh == nil {
		return true
	}
	ok, err := sh.ClaimAlert(ctx, id, r.owner, r.e.cfg.Clock.Now(), r.e.cfg.LockTTL)
	if err != nil {
		if ctx.Err() == nil {
			r.log.WarnContext(ctx, "claiming an alert for delivery failed; it stays pending", "alert", id, "err", err)
		}
		return false
	}
	return ok
}
