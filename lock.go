package recrawl

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
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

// lock takes the source's run lock at now. A lock held by a process of
// this host that no longer exists (a crashed run) is taken over at once
// instead of waiting for it to expire.
func (r *run) lock(ctx context.Context, now time.Time) error {
	st := r.e.st
	err := st.Lock(ctx, r.source, r.owner, now, r.e.cfg.LockTTL)
	var held *crawlstate.LockHeldError
	if !errors.As(err, &held) {
		return err
	}
	o, ok := parseOwner(held.Owner)
	me := newOwner(r.start)
	if !ok || o.Host != me.Host || me.Host == "unknown" || o.PID == me.PID || processAlive(o.PID) {
		return err
	}
	r.log.WarnContext(ctx, "taking over the run lock of a process that is gone",
		"previous_owner", held.Owner, "acquired", held.Acquired, "expires", held.Expires)
	if err := st.Unlock(ctx, r.source, held.Owner); err != nil {
		return err
	}
	return st.Lock(ctx, r.source, r.owner, now, r.e.cfg.LockTTL)
}

// unlock releases the run lock execute took, even when ctx is cancelled;
// a failure is logged and counted (the lock expires after LockTTL). A
// run that does not hold it (any more) releases nothing.
func (r *run) unlock(ctx context.Context) {
	if !r.held {
		return
	}
	r.held = false
	if err := r.e.st.Unlock(context.WithoutCancel(ctx), r.source, r.owner); err != nil {
		r.log.WarnContext(ctx, "releasing the run lock failed; it expires after LockTTL", "err", err)
		r.tally.add(func(rep *Report) { rep.StateWriteFailures.Releases++ })
	}
}

// heartbeat refreshes the run lock every LockTTL/3 on the engine's clock
// while the run lives, so a run stalled on one slow request keeps its
// lock. The returned function stops it. On a self-advancing clock (an auto
// fake) no ticker runs; the refresh after each page (refreshLock) keeps
// the lock instead.
func (r *run) heartbeat(ctx context.Context) (stop func()) {
	clk := r.e.cfg.Clock
	if sa, ok := clk.(clock.SelfAdvancing); ok && sa.SelfAdvancing() {
		return func() {}
	}
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			if clock.Sleep(ctx, clk, r.e.cfg.LockTTL/3) != nil {
				return
			}
			if !r.refresh(ctx, clk.Now()) {
				return
			}
		}
	}()
	return func() {
		cancel()
		<-done
	}
}

// refreshLock keeps the run lock alive during long runs: it refreshes when
// a third of LockTTL passed since the last refresh.
func (r *run) refreshLock(ctx context.Context) {
	now := r.e.cfg.Clock.Now()
	if now.Sub(time.Unix(0, r.lastLock.Load())) > r.e.cfg.LockTTL/3 {
		r.refresh(ctx, now)
	}
}

// refresh extends the lock to now+LockTTL; a lost lock is fatal to the
// run. It reports whether the lock is still held. A shared run past its
// offer holds no lock: refresh extends the leases of the rows it claimed
// instead (a failure to is logged and counted; each claimed row is
// renewed before it is requested and its write fenced, so a row another
// engine took over meanwhile is neither requested again nor recorded
// twice).
func (r *run) refresh(ctx context.Context, now time.Time) bool {
	e := r.e
	working := func() bool { return r.share != nil && r.share.working.Load() }
	if working() {
		if !r.share.extend(ctx, now) {
			return false
		}
	} else if err := e.st.Refresh(ctx, r.source, r.owner, now, e.cfg.LockTTL); err != nil {
		if ctx.Err() != nil {
			return false
		}
		if working() {
			return true // the lock was released for the work phase meanwhile
		}
		r.log.WarnContext(ctx, "refreshing the run lock failed", "err", err)
		if errors.Is(err, crawlstate.ErrLockLost) {
			r.setFatal(fmt.Errorf("recrawl: run %s: %w", r.source, err))
			return false
		}
		r.tally.add(func(rep *Report) { rep.StateWriteFailures.Lock++ })
		return true // a passing state error: the next tick tries again
	}
	for t := now.UnixNano(); ; {
		last := r.lastLock.Load()
		if t <= last || r.lastLock.CompareAndSwap(last, t) {
			return true
		}
	}
}
