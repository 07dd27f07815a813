package recrawl

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync/atomic"
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
//
// A run is recorded (RunLog.RecordRun) only once its offer is complete,
// so no engine joins a run whose leader died before it offered every row:
// an engine that waited for a lock its holder never released (the
// holder's process is gone, or the lock expired) and finds no run
// recorded since it began to wait leads the run itself. The offer is fenced by the run lock
// (a leader that lost the lock offers nothing), and every write of a
// claimed row by its lease (Result.Lease): an engine paused past its
// leases checks each row before it requests it (Sharer.Renew) and records
// none that another engine took over (Report.Skipped[SkipLeaseLost]).

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

// shared is a run's share of a shared State: the leases it holds on the
// rows it claimed and the rows it must withdraw. Its methods are safe for
// the run's goroutines.
type shared struct {
	sh     crawlstate.Sharer
	source string
	owner  string
	ttl    time.Duration
	clk    clock.Clock
	log    *slog.Logger
	tally  *tally
	// working: the run is past its offer (or joined one): it holds no
	// run lock, and the heartbeat extends its leases instead.
	working atomic.Bool
	book    guarded[leaseBook]
}

// leaseBook is what a shared run knows of its leases.
type leaseBook struct {
	// leases holds the claimed rows whose outcome is not counted yet.
	leases map[string]lease
	// withdraw holds the claimed rows that the run ended without
	// recording them (robots.txt forbids them, ...), to withdraw from the
	// run's offer before it waits.
	withdraw []string
}

// lease is what a run knows of its lease on one row: until when it is
// sure to hold it, and whether it found it lost.
type lease struct {
	until time.Time
	lost  bool
}

func newShared(sh crawlstate.Sharer, r *run) *shared {
	s := &shared{sh: sh, source: r.source, owner: r.owner, ttl: r.e.cfg.LockTTL, clk: r.e.cfg.Clock, log: r.log, tally: r.tally}
	s.book.v.leases = map[string]lease{}
	return s
}

// latest returns the start of the latest run recorded for the source, or
// zero when none is.
func (s *shared) latest(ctx context.Context) (time.Time, error) {
	starts, err := s.sh.Runs(ctx, s.source, 1)
	if err != nil {
		return time.Time{}, fmt.Errorf("reading the latest run: %w", err)
	}
	if len(starts) == 0 {
		return time.Time{}, nil
	}
	return starts[0], nil
}

// claim leases rows of run to the run (Sharer.Claim) and notes their
// leases. A row the run holds already is not returned again: Claim hands
// an owner its own expired leases, which a run whose extensions failed
// has while the rows wait for a fetch worker.
func (s *shared) claim(ctx context.Context, run time.Time, limit int) ([]crawlstate.Row, int, time.Time, error) {
	now := s.clk.Now()
	rows, pending, next, err := s.sh.Claim(ctx, s.source, run, s.owner, now, s.ttl, limit)
	if err != nil {
		return nil, 0, time.Time{}, err
	}
	until := now.Add(s.ttl)
	s.book.with(func(b *leaseBook) {
		kept := rows[:0]
		for _, row := range rows {
			if l, ok := b.leases[row.URL]; ok && !l.lost {
				// Its own lease, expired before its turn came (its
				// extension failed): the row is on its way already.
				b.leases[row.URL] = lease{until: until}
				continue
			}
			b.leases[row.URL] = lease{until: until}
			kept = append(kept, row)
		}
		rows = kept
	})
	return rows, pending, next, nil
}

// leaseOf is the fence of a write of url's row (Result.Lease): the run's
// owner for a row it claimed, "" for any other (a leader's crawl).
func (s *shared) leaseOf(url string) string {
	if s == nil {
		return ""
	}
	var ok bool
	s.book.with(func(b *leaseBook) { _, ok = b.leases[url] })
	if ok {
		return s.owner
	}
	return ""
}

// holds reports whether the run still holds the lease on url's row, so
// that it may request it or use its answer. A lease younger than two
// thirds of LockTTL is held: no other engine takes it over before it
// expires, and the heartbeat extends it every third. An older one (the
// run was paused, or its State unreachable) is renewed in the State
// (Sharer.Renew); when another engine took it over, the run marks it lost
// and reports false. A row the run did not claim is its own. A failed
// renewal is logged and counted and reports true: the fenced write
// decides. Every row of a State that is not shared is held.
func (s *shared) holds(ctx context.Context, url string) bool {
	if s == nil {
		return true
	}
	now := s.clk.Now()
	var l lease
	var ok bool
	s.book.with(func(b *leaseBook) { l, ok = b.leases[url] })
	switch {
	case !ok:
		return true
	case l.lost:
		return false
	case now.Before(l.until.Add(-s.ttl / 3)):
		return true
	}
	held, err := s.sh.Renew(ctx, s.source, s.owner, []string{url}, now, s.ttl)
	if err != nil {
		if ctx.Err() == nil {
			s.log.WarnContext(ctx, "renewing the lease of a claimed row failed; its write is fenced", "url", url, "err", err)
			s.tally.add(func(rep *Report) { rep.StateWriteFailures.Leases++ })
		}
		return true
	}
	renewed := len(held) == 1
	s.book.with(func(b *leaseBook) {
		if _, ok := b.leases[url]; !ok {
			return
		}
		if renewed {
			b.leases[url] = lease{until: now.Add(s.ttl)}
		} else {
			b.leases[url] = lease{lost: true}
		}
	})
	if !renewed {
		s.log.WarnContext(ctx, "another engine took over a claimed row; leaving it", "url", url)
	}
	return renewed
}

// lose marks url's lease lost: a fenced write found it so.
func (s *shared) lose(url string) {
	if s == nil {
		return
	}
	s.book.with(func(b *leaseBook) {
		if _, ok := b.leases[url]; ok {
			b.leases[url] = lease{lost: true}
		}
	})
}

// done forgets url's lease once its outcome is counted.
func (s *shared) done(url string) {
	if s == nil {
		return
	}
	s.book.with(func(b *leaseBook) { delete(b.leases, url) })
}

// skipped notes a claimed row the run ended without recording it, for
// withdrawSkipped: robots.txt forbids it or it redirects off the site,
// which another engine would find again. Rows skipped because the run
// halted are released instead (end), for another engine to fetch.
func (s *shared) skipped(url, reason string) {
	if s != nil && s.working.Load() && (reason == SkipRobots || reason == SkipOffHostRedirect) {
		s.book.with(func(b *leaseBook) { b.withdraw = append(b.withdraw, url) })
	}
}

// withdrawSkipped withdraws the rows noted by skipped from the run's
// offer. A failure is logged: the rows return to the others when their
// leases expire.
func (s *shared) withdrawSkipped(ctx context.Context) {
	var urls []string
	s.book.with(func(b *leaseBook) { urls, b.withdraw = b.withdraw, nil })
	if len(urls) == 0 {
		return
	}
	if err := s.sh.Withdraw(context.WithoutCancel(ctx), s.source, s.owner, urls); err != nil {
		s.log.WarnContext(ctx, "withdrawing skipped rows failed; they return to the others when their leases expire", "rows", len(urls), "err", err)
		s.tally.add(func(rep *Report) { rep.StateWriteFailures.Releases++ })
	}
}

// end ends what the run holds: it withdraws the rows it skipped and
// releases every other lease it still holds (rows a halt or a
// cancellation left unfetched), so the other engines take them at once. A
// run that holds nothing (or is not shared) does nothing.
func (s *shared) end(ctx context.Context) {
	if s == nil || !s.working.Load() {
		return
	}
	s.withdrawSkipped(ctx)
	if err := s.sh.Release(context.WithoutCancel(ctx), s.source, s.owner, nil); err != nil {
		s.log.WarnContext(ctx, "releasing claimed rows failed; they return to the others when their leases expire", "err", err)
		s.tally.add(func(rep *Report) { rep.StateWriteFailures.Releases++ })
	}
}

// extend moves the expiry of the run's leases (the heartbeat's tick of a
// working run). A failure is logged and counted; it reports false only
// when ctx ended.
func (s *shared) extend(ctx context.Context, now time.Time) bool {
	if _, err := s.sh.Extend(ctx, s.source, s.owner, now, s.ttl); err != nil {
		if ctx.Err() != nil {
			return false
		}
		s.log.WarnContext(ctx, "extending the leases of claimed rows failed; each row is renewed before it is requested", "err", err)
		s.tally.add(func(rep *Report) { rep.StateWriteFailures.Leases++ })
	}
	return true
}

// claimAlert leases a pending alert to the run for delivery, so that of
// the engines that see it pending (its committer, and every engine that
// starts a run of the source) one delivers it. It reports whether the run
// may deliver it; a run of a State that is not shared may.
func (s *shared) claimAlert(ctx context.Context, id string) bool {
	if s == nil {
		return true
	}
	ok, err := s.sh.ClaimAlert(ctx, id, s.owner, s.clk.Now(), s.ttl)
	if err != nil {
		if ctx.Err() == nil {
			s.log.WarnContext(ctx, "claiming an alert for delivery failed; it stays pending", "alert", id, "err", err)
		}
		return false
	}
	return ok
}

// lockOrJoin takes the source's run lock, waiting while another engine
// holds it. Holding it, it joins the latest recorded run while that run
// still has rows to claim or rows other engines hold, or when that run
// was recorded while it waited (the run it waited for, done or not): it
// releases the lock and returns the rows it claimed, with join set.
// Otherwise the run leads and keeps the lock: no run is recorded, the
// latest is done, or the leader it waited for died before its offer was
// complete (a run is recorded once its offer is).
func (r *run) lockOrJoin(ctx context.Context) ([]crawlstate.Row, bool, error) {
	e := r.e
	sh := r.share
	clk := e.cfg.Clock
	before, err := sh.latest(ctx)
	if err != nil {
		return nil, false, err
	}
	waited := false
	// abandoned: the lock this run waited for was not released: its
	// holder's process is gone, or the lock expired.
	var abandoned bool
	var last *crawlstate.LockHeldError
	for {
		now := clk.Now()
		err := r.lock.take(ctx, now)
		if err == nil {
			abandoned = r.lock.tookOver || (last != nil && !now.Before(last.Expires))
			if waited {
				r.start, r.run = now, now
				r.tally.add(func(rep *Report) { rep.StartedAt = now })
			}
			break
		}
		var held *crawlstate.LockHeldError
		if !errors.As(err, &held) {
			return nil, false, err
		}
		if r.halt.halted() {
			return nil, false, errStoppedWaiting // Shutdown: stop waiting
		}
		// Another engine leads a run of the source: it releases the
		// lock once it has offered the run's rows.
		waited, last = true, held
		wait := e.sharePoll()
		if d := held.Expires.Sub(now); d > 0 && d < wait {
			wait = d
		}
		if err := clock.Sleep(ctx, clk, wait); err != nil {
			return nil, false, err
		}
	}
	unlock := func() { r.lock.release(ctx) }
	latest, err := sh.latest(ctx)
	if err != nil {
		unlock()
		return nil, false, err
	}
	if latest.IsZero() {
		return nil, false, nil
	}
	rows, pending, _, err := sh.claim(ctx, latest, e.claimSize())
	if err != nil {
		unlock()
		return nil, false, fmt.Errorf("claiming rows of the run of %s: %w", latest.Format(time.RFC3339Nano), err)
	}
	if len(rows) == 0 && pending == 0 {
		// The latest run is done: lead the next, unless this run waited
		// for it: engines started together discover (or crawl) the
		// source once. A run that waited for a lock its holder never
		// released (its process is gone, or the lock expired) and finds
		// no run recorded since was waiting for a leader that ended
		// before its offer was complete: it leads. (One whose holder
		// released the lock waited for an engine that joined, or for a
		// leader that failed and said so.)
		if !waited {
			return nil, false, nil
		}
		if latest.Equal(before) && abandoned {
			r.log.WarnContext(ctx, "the leader this run waited for ended before its offer was complete; leading the run", "latest_run", latest)
			return nil, false, nil
		}
	}
	r.run = latest
	r.tally.add(func(rep *Report) { rep.Joined = true })
	sh.working.Store(true) // before the unlock: the heartbeat extends leases now
	unlock()
	return rows, true, nil
}

// offerDue is a leading run's selection of the due rows: what fetchDue
// would fetch is offered for the run instead, a page of BatchSize rows at
// a time; rows the selection leaves out (a budget) are skipped here as
// fetchDue skips them. The offered rows leave Report.Due, which counts
// them when they are claimed. A complete offer is recorded and the lock
// released (completeOffer); an incomplete one only releases the lock, so
// that a waiting engine leads the run again.
func (r *run) offerDue(ctx context.Context) error {
	e := r.e
	sh := r.share
	var batch []string
	offered, sent := 0, 0
	var oerr error
	flush := func() bool {
		if len(batch) == 0 {
			return true
		}
		n, err := sh.sh.Offer(ctx, r.source, r.run, r.owner, batch)
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
	err := ctx.Err()
	if err == nil {
		err = cmp.Or(qerr, oerr)
	}
	if err != nil {
		r.lock.release(ctx)
		return err
	}
	return r.completeOffer(ctx)
}

// completeOffer ends a leading run's offer: it records the run, which
// others may join from now on, and releases the run lock. A run that
// cannot record its start offered rows nobody joins: the error says so.
func (r *run) completeOffer(ctx context.Context) error {
	if err := r.share.sh.RecordRun(ctx, r.source, r.run); err != nil {
		r.lock.release(ctx)
		return fmt.Errorf("recrawl: recording the run of %s: %w", r.source, err)
	}
	r.share.working.Store(true) // before the unlock: the heartbeat extends leases now
	r.lock.release(ctx)
	return nil
}

// work is a shared run's fetch phase: it claims offered rows of the run,
// claimed first, in batches, and fetches them through the run's stages,
// until none is left to claim and no other engine holds one, or the run
// halts. While other engines hold rows it waits (sharePoll at most, or
// until their earliest lease expires) and asks again, so it takes over
// the rows of an engine whose leases expired. It ends the leases it still
// holds (shared.end).
func (r *run) work(ctx context.Context, claimed []crawlstate.Row) error {
	e := r.e
	sh := r.share
	clk := e.cfg.Clock
	sh.working.Store(true)
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
		if ctx.Err() != nil || r.halt.halted() {
			break
		}
		now := clk.Now()
		rows, pending, next, cerr := sh.claim(ctx, r.run, e.claimSize())
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
		sh.withdrawSkipped(ctx)
		wait := e.sharePoll()
		if d := next.Sub(now); d > 0 && d < wait {
			wait = d
		}
		if clock.Sleep(ctx, clk, max(wait, time.Millisecond)) != nil {
			break
		}
	}
	s.wait()
	sh.end(ctx)
	if cerr := ctx.Err(); cerr != nil {
		return cerr
	}
	return err
}
