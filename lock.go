package recrawl

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/recrawl/recrawl/clock"
	"github.com/recrawl/recrawl/crawlstate"
)

// lockOwner is who holds a run lock: the host, the process and its start,
// and an ID unique to the run. It is stored as the lock's owner string, so
// a restart on the same host can tell that the holder's process is gone.
type lockOwner struct {
	Host  string
	PID   int
	Start time.Time
	ID    string
}

const ownerPrefix = "recrawl host="

func (o lockOwner) String() string {
	return fmt.Sprintf("%s%s pid=%d start=%s id=%s", ownerPrefix, o.Host, o.PID, o.Start.UTC().Format(time.RFC3339Nano), o.ID)
}

// parseOwner reads an owner string written by lockOwner.String; ok is
// false for any other (a lock taken by another program).
func parseOwner(s string) (lockOwner, bool) {
	rest, ok := strings.CutPrefix(s, ownerPrefix)
	if !ok {
		return lockOwner{}, false
	}
	f := strings.Split(rest, " ")
	if len(f) != 4 {
		return lockOwner{}, false
	}
	var o lockOwner
	o.Host = f[0]
	pid, ok1 := strings.CutPrefix(f[1], "pid=")
	start, ok2 := strings.CutPrefix(f[2], "start=")
	id, ok3 := strings.CutPrefix(f[3], "id=")
	if !ok1 || !ok2 || !ok3 {
		return lockOwner{}, false
	}
	var err error
	if o.PID, err = strconv.Atoi(pid); err != nil || o.PID <= 0 {
		return lockOwner{}, false
	}
	if o.Start, err = time.Parse(time.RFC3339Nano, start); err != nil {
		return lockOwner{}, false
	}
	o.ID = id
	return o, true
}

func newOwner(start time.Time) lockOwner {
	var b [8]byte
	_, _ = rand.Read(b[:])
	host, err := os.Hostname()
	if err != nil || host == "" || strings.Contains(host, " ") {
		host = "unknown"
	}
	return lockOwner{Host: host, PID: os.Getpid(), Start: start, ID: hex.EncodeToString(b[:])}
}

// runLock is a run's hold on its source's run lock: taking it, keeping
// it alive (the heartbeat, and the refresh after each page), releasing it.
// A shared run past its offer holds no lock: its keep-alive extends the
// leases of the rows it claimed instead.
type runLock struct {
	st     crawlstate.State
	source string
	owner  string
	ttl    time.Duration
	clk    clock.Clock
	log    *slog.Logger
	tally  *tally
	share  *shared      // nil when the State is not shared
	lost   func(error)  // called when the lock was taken over: the run ends
	last   atomic.Int64 // when the lock was last refreshed, Unix nanoseconds
	held   bool         // taken and not released; read and written by the run's goroutine
	// tookOver: take took the lock over from a process of this host that
	// is gone.
	tookOver bool
}

func newRunLock(r *run) *runLock {
	l := &runLock{st: r.e.st, source: r.source, owner: r.owner, ttl: r.e.cfg.LockTTL, clk: r.e.cfg.Clock,
		log: r.log, tally: r.tally, share: r.share, lost: r.halt.fail}
	l.last.Store(r.start.UnixNano())
	return l
}

// take takes the source's run lock at now. A lock held by a process of
// this host that no longer exists (a crashed run) is taken over at once
// instead of waiting for it to expire.
func (l *runLock) take(ctx context.Context, now time.Time) error {
	err := l.lock(ctx, now)
	if err == nil {
		l.held = true
		l.last.Store(now.UnixNano())
	}
	return err
}

func (l *runLock) lock(ctx context.Context, now time.Time) error {
	err := l.st.Lock(ctx, l.source, l.owner, now, l.ttl)
	var held *crawlstate.LockHeldError
	if !errors.As(err, &held) {
		return err
	}
	o, ok := parseOwner(held.Owner)
	me := newOwner(now)
	if !ok || o.Host != me.Host || me.Host == "unknown" || o.PID == me.PID || processAlive(o.PID) {
		return err
	}
	l.log.WarnContext(ctx, "taking over the run lock of a process that is gone",
		"previous_owner", held.Owner, "acquired", held.Acquired, "expires", held.Expires)
	if err := l.st.Unlock(ctx, l.source, held.Owner); err != nil {
		return err
	}
	if err := l.st.Lock(ctx, l.source, l.owner, now, l.ttl); err != nil {
		return err
	}
	l.tookOver = true
	return nil
}

// release releases the lock, even when ctx is cancelled; a failure is
// logged and counted (the lock expires after LockTTL). A run that does
// not hold it (any more) releases nothing.
func (l *runLock) release(ctx context.Context) {
	if !l.held {
		return
	}
	l.held = false
	if err := l.st.Unlock(context.WithoutCancel(ctx), l.source, l.owner); err != nil {
		l.log.WarnContext(ctx, "releasing the run lock failed; it expires after LockTTL", "err", err)
		l.tally.add(func(rep *Report) { rep.StateWriteFailures.Releases++ })
	}
}

// heartbeat refreshes the run lock every LockTTL/3 on the engine's clock
// while the run lives, so a run stalled on one slow request keeps its
// lock. The returned function stops it. On a self-advancing clock (an auto
// fake) no ticker runs; the refresh after each page (refreshIfDue) keeps
// the lock instead.
func (l *runLock) heartbeat(ctx context.Context) (stop func()) {
	if sa, ok := l.clk.(clock.SelfAdvancing); ok && sa.SelfAdvancing() {
		return func() {}
	}
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			if clock.Sleep(ctx, l.clk, l.ttl/3) != nil {
				return
			}
			if !l.refresh(ctx, l.clk.Now()) {
				return
			}
		}
	}()
	return func() {
		cancel()
		<-done
	}
}

// refreshIfDue keeps the run lock alive during long runs: it refreshes
// when a third of LockTTL passed since the last refresh.
func (l *runLock) refreshIfDue(ctx context.Context) {
	now := l.clk.Now()
	if now.Sub(time.Unix(0, l.last.Load())) > l.ttl/3 {
		l.refresh(ctx, now)
	}
}

// refresh extends the lock to now+LockTTL; a lost lock is fatal to the
// run. It reports whether the lock is still held. A shared run past its
// offer holds no lock: refresh extends the leases of the rows it claimed
// instead (a failure to is logged and counted; each claimed row is
// renewed before it is requested and its write fenced, so a row another
// engine took over meanwhile is neither requested again nor recorded
// twice).
func (l *runLock) refresh(ctx context.Context, now time.Time) bool {
	working := func() bool { return l.share != nil && l.share.working.Load() }
	if working() {
		if !l.share.extend(ctx, now) {
			return false
		}
	} else if err := l.st.Refresh(ctx, l.source, l.owner, now, l.ttl); err != nil {
		if ctx.Err() != nil {
			return false
		}
		if working() {
			return true // the lock was released for the work phase meanwhile
		}
		l.log.WarnContext(ctx, "refreshing the run lock failed", "err", err)
		if errors.Is(err, crawlstate.ErrLockLost) {
			l.lost(fmt.Errorf("recrawl: run %s: %w", l.source, err))
			return false
		}
		l.tally.add(func(rep *Report) { rep.StateWriteFailures.Lock++ })
		return true // a passing state error: the next tick tries again
	}
	for t := now.UnixNano(); ; {
		last := l.last.Load()
		if t <= last || l.last.CompareAndSwap(last, t) {
			return true
		}
	}
}
