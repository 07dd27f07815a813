package recrawl

import (
	"maps"
	"sync"
	"time"
)

// tally is a run's report while the run goes on. Every count, flag and
// outcome event of the stages goes through it, under its own lock, so no
// stage touches the Report itself; the run hands the Report out once, at
// its end (close). Its methods are safe for concurrent use.
type tally struct {
	mu   sync.Mutex
	rep  *Report
	done int // due URLs finished so far: Event.Done
}

func newTally(source string, start time.Time) *tally {
	return &tally{rep: newReport(source, start)}
}

// with calls fn with the report under the tally's lock, the one place
// that takes it. fn must not block or call back into the run.
func (t *tally) with(fn func(rep *Report)) {
	t.mu.Lock()
	defer t.mu.Unlock()
	fn(t.rep)
}

// add applies count to the report. count only counts: it must not block
// or call back into the run.
func (t *tally) add(count func(rep *Report)) { t.with(count) }

// read returns what get reads of the report.
func read[T any](t *tally, get func(rep *Report) T) T {
	var v T
	t.with(func(rep *Report) { v = get(rep) })
	return v
}

// stage counts an attempt (delta 0), a success (1) or a failure (-1) of
// a pipeline stage.
func (t *tally) stage(name string, delta int) {
	t.add(func(rep *Report) {
		c := rep.Stages[name]
		switch delta {
		case 0:
			c.Attempts++
		case 1:
			c.Successes++
		default:
			c.Failures++
		}
		rep.Stages[name] = c
	})
}

// stop names what ended the run early; the first reason stays.
func (t *tally) stop(reason string) {
	t.add(func(rep *Report) {
		if rep.StoppedBy == "" {
			rep.StoppedBy = reason
		}
	})
}

// stoppedBy returns what stopped the run so far ("" if nothing).
func (t *tally) stoppedBy() string {
	return read(t, func(rep *Report) string { return rep.StoppedBy })
}

// end counts a due URL's end with count and returns the URL's event,
// stamped with the URLs finished so far and the due URLs read so far.
func (t *tally) end(ev Event, count func(rep *Report)) Event {
	t.with(func(rep *Report) {
		count(rep)
		t.done++
		ev.Done, ev.Due = t.done, rep.Due
	})
	return ev
}

// event returns an event that ends no due URL (a discovery skip), stamped
// as end stamps, after count.
func (t *tally) event(ev Event, count func(rep *Report)) Event {
	t.with(func(rep *Report) {
		count(rep)
		ev.Done, ev.Due = t.done, rep.Due
	})
	return ev
}

// close stamps the report's end and its request count, and returns a
// copy of it: what the run hands out, which nothing changes after.
func (t *tally) close(at time.Time, requests int) *Report {
	var c Report
	t.with(func(rep *Report) {
		rep.FinishedAt = at
		rep.Requests = requests
		c = *rep
		c.Failed, c.Skipped, c.Stages = maps.Clone(rep.Failed), maps.Clone(rep.Skipped), maps.Clone(rep.Stages)
	})
	return &c
}
