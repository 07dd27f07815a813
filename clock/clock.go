// Package clock is the time source of recrawl: every timestamp and every
// wait (pacing, backoff, polling) goes through a Clock, so tests and
// simulations move time without sleeping.
//
// Real returns the system clock. Fake is a manual clock for tests: time
// stands still until Advance or Set moves it, or, in auto-advance mode, jumps
// forward to each timer's deadline as soon as the timer is created.
package clock

import (
	"context"
	"time"
)

// Clock tells the time and makes timers. Implementations are safe for
// concurrent use.
type Clock interface {
	// Now returns the current time.
	Now() time.Time
	// NewTimer returns a timer that fires once, d after Now.
	// A d <= 0 fires immediately.
	NewTimer(d time.Duration) Timer
}

// Timer is a one-shot timer made by a Clock.
type Timer interface {
	// C delivers the time once the timer fires.
	C() <-chan time.Time
	// Stop prevents the timer from firing. It reports whether the call
	// stopped the timer (false if it had already fired or been stopped).
	Stop() bool
}

// Real returns the system clock.
func Real() Clock { return realClock{} }

type realClock struct{}

func (realClock) Now() time.Time { return time.Now() }

func (realClock) NewTimer(d time.Duration) Timer { return realTimer{time.NewTimer(d)} }

type realTimer struct{ t *time.Timer }

func (r realTimer) C() <-chan time.Time { return r.t.C }
func (r realTimer) Stop() bool          { return r.t.Stop() }

// Sleep waits for d on c, or until ctx is done, whichever comes first.
// It returns ctx.Err() when the context ended the wait, nil otherwise.
// A d <= 0 returns at once (with ctx.Err() if ctx is already done).
func Sleep(ctx context.Context, c Clock, d time.Duration) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if d <= 0 {
		return nil
	}
	t := c.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C():
		return nil
	}
}

// Or returns c, or the system clock when c is nil. Constructors use it to
// give an optional Clock field its default.
func Or(c Clock) Clock {
	if c == nil {
		return Real()
	}
	return c
}

// SelfAdvancing is the optional ability of a Clock whose time moves by
// itself whenever a timer is created (NewAutoFake). A background ticker
// must not run on such a clock: each tick would move its time. Code that
// runs one (the engine's lock heartbeat) checks this ability and falls
// back to work-driven ticks.
type SelfAdvancing interface {
	SelfAdvancing() bool
}
