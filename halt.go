package recrawl

import "sync/atomic"

// halt is what stops a run: a cap, the budget, Shutdown or a fatal error.
// Once stopped, the run dispatches no further row. Its methods are safe for
// the run's goroutines.
type halt struct {
	tally   *tally       // where the first reason is reported (Report.StoppedBy)
	closing *atomic.Bool // the engine's: Shutdown began
	stopped atomic.Bool
	fatal   firstError // what stopped the run, if an error did
}

// by returns what stopped the run so far ("" if nothing).
func (h *halt) by() string { return h.tally.stoppedBy() }

// reason is the skip reason of a due URL a stopped run did not reach.
func (h *halt) reason() string {
	switch h.by() {
	case StopShutdown:
		return SkipShutdown
	case StopError:
		return SkipError
	case StopBudget:
		return SkipBudget
	default:
		return SkipMaxPages
	}
}

// stop ends the dispatch of rows; the first reason to stop is reported.
func (h *halt) stop(reason string) {
	h.tally.stop(reason)
	h.stopped.Store(true)
}

// halted reports whether the run must dispatch no further page: a cap, the
// budget or a fatal error stopped it, or the engine is shutting down.
func (h *halt) halted() bool {
	if h.closing.Load() && !h.stopped.Load() {
		h.stop(StopShutdown)
	}
	return h.stopped.Load()
}

// fail ends the run with err (the first one stays).
func (h *halt) fail(err error) {
	h.fatal.set(err)
	h.stop(StopError)
}

// err is the error that stopped the run; nil if none did.
func (h *halt) err() error { return h.fatal.get() }

// firstError holds the first error set, for any goroutine to set and
// read.
type firstError struct{ p atomic.Pointer[error] }

func (f *firstError) set(err error) { f.p.CompareAndSwap(nil, &err) }

func (f *firstError) get() error {
	if p := f.p.Load(); p != nil {
		return *p
	}
	return nil
}
