package clock

import (
	"context"
	"sort"
	"sync"
	"time"
)

// Fake is a Clock whose time moves only when told to. It is safe for
// concurrent use. The zero value is not usable; call NewFake.
type Fake struct {
	mu      sync.Mutex
	now     time.Time
	auto    bool
	timers  []*fakeTimer
	changed chan struct{} // closed and replaced whenever the timer set changes
}

// NewFake returns a manual clock that starts at start.
func NewFake(start time.Time) *Fake {
	return &Fake{now: start, changed: make(chan struct{})}
}

// NewAutoFake returns a clock that starts at start and advances by itself:
// each new timer moves the clock forward to its deadline (if the clock is not
// already past it) and fires at once. Waits therefore cost no real time, yet
// Now still reflects every delay that was waited for, so a test can assert
// the spacing of paced requests or the length of a backoff.
func NewAutoFake(start time.Time) *Fake {
	f := NewFake(start)
	f.auto = true
	return f
}

// SelfAdvancing reports whether f is an auto fake (NewAutoFake), whose
// time moves forward whenever a timer is created.
func (f *Fake) SelfAdvancing() bool { return f.auto }

// Now returns the fake's current time.
func (f *Fake) Now() time.Time {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.now
}

// NewTimer returns a timer that fires when the fake reaches Now()+d.
func (f *Fake) NewTimer(d time.Duration) Timer {
	f.mu.Lock()
	defer f.mu.Unlock()
	t := &fakeTimer{f: f, deadline: f.now.Add(d), c: make(chan time.Time, 1)}
	if d <= 0 {
		t.fire(f.now)
		return t
	}
	if f.auto {
		if t.deadline.After(f.now) {
			f.now = t.deadline
		}
		t.fire(f.now)
		return t
	}
	f.timers = append(f.timers, t)
	f.notify()
	return t
}

// Advance moves the clock forward by d, firing every timer whose deadline
// is reached, in deadline order.
func (f *Fake) Advance(d time.Duration) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.setLocked(f.now.Add(d))
}

// Set moves the clock to t (never backwards: an earlier t is ignored),
// firing every timer whose deadline is reached.
func (f *Fake) Set(t time.Time) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.setLocked(t)
}

func (f *Fake) setLocked(t time.Time) {
	if t.Before(f.now) {
		return
	}
	f.now = t
	sort.SliceStable(f.timers, func(i, j int) bool { return f.timers[i].deadline.Before(f.timers[j].deadline) })
	kept := f.timers[:0]
	for _, tm := range f.timers {
		if !tm.deadline.After(t) {
			tm.fire(t)
			continue
		}
		kept = append(kept, tm)
	}
	for i := len(kept); i < len(f.timers); i++ {
		f.timers[i] = nil
	}
	f.timers = kept
	f.notify()
}

// Waiters returns the number of timers that have not fired or been stopped.
func (f *Fake) Waiters() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.timers)
}

// BlockUntil waits until at least n timers are pending, so a test can advance
// the clock exactly when the code under test is waiting. It returns ctx.Err()
// if ctx ends first.
func (f *Fake) BlockUntil(ctx context.Context, n int) error {
	for {
		f.mu.Lock()
		pending, changed := len(f.timers), f.changed
		f.mu.Unlock()
		if pending >= n {
			return nil
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-changed:
		}
	}
}

// AdvanceToNext moves the clock to the earliest pending timer's deadline and
// fires it. It reports false when no timer is pending.
func (f *Fake) AdvanceToNext() bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	if len(f.timers) == 0 {
		return false
	}
	next := f.timers[0].deadline
	for _, t := range f.timers[1:] {
		if t.deadline.Before(next) {
			next = t.deadline
		}
	}
	f.setLocked(next)
	return true
}

func (f *Fake) notify() {
	close(f.changed)
	f.changed = make(chan struct{})
}

func (f *Fake) stop(t *fakeTimer) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	for i, tm := range f.timers {
		if tm == t {
			f.timers = append(f.timers[:i], f.timers[i+1:]...)
			f.notify()
			return true
		}
	}
	return false
}

type fakeTimer struct {
	f        *Fake
	deadline time.Time
	c        chan time.Time
}

func (t *fakeTimer) C() <-chan time.Time { return t.c }

func (t *fakeTimer) Stop() bool { return t.f.stop(t) }

// fire delivers now; the channel has room for exactly one value and each
// timer fires at most once.
func (t *fakeTimer) fire(now time.Time) { t.c <- now }
