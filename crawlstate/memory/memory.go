// Package memory is a crawlstate.State that keeps every row in the Go
// heap: for tests, for ephemeral crawls of small sites, and for builds
// with CGO_ENABLED=0, where crawlstate/sqlite is not available. It has
// every optional ability of crawlstate, Sharer included, so several
// engines in one process can share one *State.
//
// Nothing is written anywhere: the state is lost when the process ends
// or the State is closed, so a crawl of a new process starts from
// nothing (every page new and due). Use
// crawlstate/sqlite to keep state between runs on one machine, and
// crawlstate/postgres to share it between machines.
//
// A State is safe for concurrent use. Every call that writes does so
// atomically: it checks its whole input first, and either all of it is
// stored or none. Times keep their nanoseconds over their whole range and
// come back in UTC without a monotonic clock reading; the zero time stays
// zero. Slices go in and out as copies: a caller never shares storage
// with the State.
package memory

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/recrawl/recrawl/crawlstate"
	"github.com/recrawl/recrawl/crawlstate/internal/backend"
)

// ErrClosed is wrapped by the error of every call on a closed State.
var ErrClosed = errors.New("crawlstate/memory: state is closed")

// State is a crawlstate.State, with every optional ability, held in
// memory. Create it with New.
type State struct {
	opts crawlstate.Options

	mu      sync.RWMutex
	closed  bool
	sources map[string]*source
	alerts  map[string]*alertRec            // by ID
	pending map[string]map[string]*alertRec // undelivered alerts, by source and ID
	events  map[string]map[string][]crawlstate.StageEvent
	vectors map[string]map[string][]float32 // by model and text hash
	docs    map[string]map[string]crawlstate.Document
	runs    map[string][]time.Time // newest first
	trust   map[string]crawlstate.LastModCounts
	locks   map[string]backend.Lock
}

// Interfaces the State implements.
var (
	_ crawlstate.State         = (*State)(nil)
	_ crawlstate.RunLog        = (*State)(nil)
	_ crawlstate.PageDetails   = (*State)(nil)
	_ crawlstate.VectorCache   = (*State)(nil)
	_ crawlstate.AlertOutbox   = (*State)(nil)
	_ crawlstate.AlertHistory  = (*State)(nil)
	_ crawlstate.DocumentStore = (*State)(nil)
	_ crawlstate.EventLog      = (*State)(nil)
	_ crawlstate.TrustStore    = (*State)(nil)
	_ crawlstate.PlanLister    = (*State)(nil)
	_ crawlstate.LiveLister    = (*State)(nil)
	_ crawlstate.Sharer        = (*State)(nil)
)

// check checks the arguments of the State's calls and makes its errors.
const check = backend.Checker("crawlstate/memory")

// New returns an empty State with the given policies.
func New(opts crawlstate.Options) *State {
	return &State{
		opts:    opts,
		sources: make(map[string]*source),
		alerts:  make(map[string]*alertRec),
		pending: make(map[string]map[string]*alertRec),
		events:  make(map[string]map[string][]crawlstate.StageEvent),
		vectors: make(map[string]map[string][]float32),
		docs:    make(map[string]map[string]crawlstate.Document),
		runs:    make(map[string][]time.Time),
		trust:   make(map[string]crawlstate.LastModCounts),
		locks:   make(map[string]backend.Lock),
	}
}

// Close drops everything the State holds; every later call returns an
// error wrapping ErrClosed. Closing it again does nothing.
func (s *State) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return nil
	}
	s.closed = true
	s.sources, s.alerts, s.pending, s.events, s.vectors = nil, nil, nil, nil, nil
	s.docs, s.runs, s.trust, s.locks = nil, nil, nil, nil
	return nil
}

// page is one row with what is kept beside it.
type page struct {
	row    crawlstate.Row
	links  []string
	chunks []crawlstate.Chunk // in ordinal order

	// The row's place in the work sharing (Sharer): offered for the run
	// that started at offerRun, leased to leaseOwner ("" for nobody)
	// until leaseExpires.
	offered      bool
	offerRun     time.Time
	leaseOwner   string
	leaseExpires time.Time
}

// source holds the rows of one source and their indexes.
type source struct {
	pages map[string]*page
	due   sortedList                    // rows neither gone nor excluded, by (NextCheck, URL)
	live  sortedList                    // rows not gone, by URL
	byVia map[string]map[*page]struct{} // rows by ListedIn (non-empty)
	offer map[time.Time]*offer          // offered rows by run
}

func newSource() *source {
	return &source{
		pages: make(map[string]*page),
		due:   newList(cmpDue),
		live:  newList(cmpURL),
		byVia: make(map[string]map[*page]struct{}),
		offer: make(map[time.Time]*offer),
	}
}

func inDue(r *crawlstate.Row) bool  { return !r.Gone && r.Excluded == "" }
func inLive(r *crawlstate.Row) bool { return !r.Gone }

// add indexes a new row; p.row must be complete.
func (src *source) add(p *page) {
	src.pages[p.row.URL] = p
	e := entry{at: p.row.NextCheck, url: p.row.URL, p: p}
	if inDue(&p.row) {
		src.due.insert(e)
	}
	if inLive(&p.row) {
		src.live.insert(e)
	}
	src.addVia(p)
}

// addVia files p under its ListedIn.
func (src *source) addVia(p *page) {
	if v := p.row.ListedIn; v != "" {
		m := src.byVia[v]
		if m == nil {
			m = make(map[*page]struct{})
			src.byVia[v] = m
		}
		m[p] = struct{}{}
	}
}

// removeVia takes p out of the rows listed in via.
func (src *source) removeVia(p *page, via string) {
	if via != "" {
		m := src.byVia[via]
		delete(m, p)
		if len(m) == 0 {
			delete(src.byVia, via)
		}
	}
}

// update runs fn on p's row and moves the row in the indexes its change
// moved it in.
func (src *source) update(p *page, fn func(r *crawlstate.Row)) {
	r := &p.row
	oldNext, oldDue, oldLive, oldVia := r.NextCheck, inDue(r), inLive(r), r.ListedIn
	fn(r)
	nextMoved := !oldNext.Equal(r.NextCheck)
	oldE := entry{at: oldNext, url: r.URL, p: p}
	newE := entry{at: r.NextCheck, url: r.URL, p: p}
	if nowDue := inDue(r); nowDue != oldDue || (nowDue && nextMoved) {
		if oldDue {
			src.due.delete(oldE)
		}
		if nowDue {
			src.due.insert(newE)
		}
	}
	if nowLive := inLive(r); nowLive != oldLive {
		if oldLive {
			src.live.delete(oldE)
		} else {
			src.live.insert(newE)
		}
	}
	if p.offered && p.leaseOwner == "" && nextMoved {
		o := src.offer[p.offerRun]
		o.free.delete(oldE)
		o.free.insert(newE)
	}
	if oldVia != r.ListedIn {
		src.removeVia(p, oldVia)
		src.addVia(p)
	}
}

// ut is t as the State keeps it: in UTC, without a monotonic reading.
func ut(t time.Time) time.Time { return t.UTC() }

// excludedNext is the NextCheck of an excluded row: the one the SQL
// stores keep (backend.Never), so a planner that reads it through
// LiveRows sees it as never due, with every store.
var excludedNext = backend.DecTime(backend.Never)

// read takes the read lock after checking ctx; the caller must call
// s.mu.RUnlock when it returns nil.
func (s *State) read(ctx context.Context, op string) error {
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("crawlstate/memory: %s: %w", op, err)
	}
	s.mu.RLock()
	if s.closed {
		s.mu.RUnlock()
		return fmt.Errorf("crawlstate/memory: %s: %w", op, ErrClosed)
	}
	return nil
}

// write takes the write lock after checking ctx; the caller must call
// s.mu.Unlock when it returns nil.
func (s *State) write(ctx context.Context, op string) error {
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("crawlstate/memory: %s: %w", op, err)
	}
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return fmt.Errorf("crawlstate/memory: %s: %w", op, ErrClosed)
	}
	return nil
}

// src returns the rows of name, created when create is set (else nil when
// there are none).
func (s *State) src(name string, create bool) *source {
	src := s.sources[name]
	if src == nil && create {
		src = newSource()
		s.sources[name] = src
	}
	return src
}

// lookup returns the page of (source, u), or nil.
func (s *State) lookup(source, u string) *page {
	if src := s.sources[source]; src != nil {
		return src.pages[u]
	}
	return nil
}

// copyRow returns the row of p with storage of its own.
func copyRow(p *page) crawlstate.Row {
	r := p.row
	r.Stats.Recent = slices.Clone(r.Stats.Recent)
	return r
}

// copyRows returns the rows of ps (as planRow makes them, when plan is
// set) with storage of their own: their checks share one allocation, each
// row's capped at its length, so appending to one writes into no other.
func copyRows(ps []*page, plan bool) []crawlstate.Row {
	n := 0
	for _, p := range ps {
		n += len(p.row.Stats.Recent)
	}
	checks := make([]crawlstate.Check, 0, n)
	out := make([]crawlstate.Row, len(ps))
	for i, p := range ps {
		r := &out[i]
		if plan {
			planRow(r, &p.row)
		} else {
			*r = p.row
		}
		r.Stats.Recent = nil
		if rc := p.row.Stats.Recent; len(rc) > 0 {
			k := len(checks)
			checks = append(checks, rc...)
			r.Stats.Recent = checks[k:len(checks):len(checks)]
		}
	}
	return out
}

// planRow sets *dst to the columns of src that planning reads
// (crawlstate.PlanLister), sharing src's checks.
func planRow(dst, src *crawlstate.Row) {
	*dst = crawlstate.Row{
		Source: src.Source, URL: src.URL, LastFetched: src.LastFetched, NextCheck: src.NextCheck, Interval: src.Interval,
		ContentHash: src.ContentHash, Visits: src.Visits, Changes: src.Changes, Stats: src.Stats,
	}
}

// copyStats returns st as the State keeps it: times in UTC, its own
// Recent (nil when empty).
func copyStats(st crawlstate.Stats) crawlstate.Stats {
	st.LastChanged, st.LastModified = ut(st.LastChanged), ut(st.LastModified)
	if len(st.Recent) == 0 {
		st.Recent = nil
	} else {
		st.Recent = slices.Clone(st.Recent)
	}
	return st
}

// UpsertDiscovered implements crawlstate.State. A URL listed twice counts
// once: its first entry wins.
func (s *State) UpsertDiscovered(ctx context.Context, source string, now time.Time, urls []crawlstate.Discovered) (crawlstate.UpsertStats, error) {
	const op = "upsert discovered"
	var st crawlstate.UpsertStats
	if err := check.Upsert(source, urls); err != nil {
		return st, err
	}
	if err := s.write(ctx, op); err != nil {
		return st, err
	}
	defer s.mu.Unlock()
	if len(urls) == 0 {
		return st, nil
	}
	now = ut(now)
	src := s.src(source, true)
	batch := make(map[string]struct{}, len(urls))
	var fresh []*page
	for _, d := range urls {
		if _, dup := batch[d.URL]; dup {
			continue
		}
		batch[d.URL] = struct{}{}
		lastmod := ut(d.LastMod)
		p := src.pages[d.URL]
		if p == nil {
			fresh = append(fresh, &page{row: crawlstate.Row{
				Source: source, URL: d.URL, OriginalURL: d.OriginalURL,
				FirstSeen: now, LastSeen: now, SitemapLastMod: lastmod, ListedIn: d.Via,
			}})
			continue
		}
		st.Seen++
		moved := !lastmod.IsZero() && !lastmod.Equal(p.row.SitemapLastMod)
		revive := p.row.Gone && !s.opts.KeepTombstones && (p.row.MissingRuns > 0 || moved)
		bump := !p.row.Gone && moved
		switch {
		case revive:
			st.Revived++
		case bump:
			st.Bumped++
		}
		src.update(p, func(r *crawlstate.Row) {
			r.LastSeen, r.MissingRuns = now, 0
			if moved {
				r.SitemapLastMod = lastmod
			}
			if d.Via != "" {
				r.ListedIn = d.Via
			}
			switch {
			case bump:
				r.NextCheck, r.Excluded = time.Time{}, ""
			case revive:
				r.Gone, r.NextCheck = false, time.Time{}
				r.ContentHash, r.ETag, r.LastModified = "", "", ""
			}
		})
	}
	st.New = len(fresh)
	s.insertFresh(src, fresh)
	return st, nil
}

// insertFresh adds new rows (due now, live): into an empty source they
// are indexed in one sorted pass.
func (s *State) insertFresh(src *source, fresh []*page) {
	if src.due.Len() > 0 || src.live.Len() > 0 || len(fresh) < 2*maxBlock {
		for _, p := range fresh {
			src.add(p)
		}
		return
	}
	es := make([]entry, len(fresh))
	for i, p := range fresh {
		src.pages[p.row.URL] = p
		src.addVia(p)
		es[i] = entry{url: p.row.URL, p: p}
	}
	// Every new row is due now: both orders are the URL order.
	slices.SortFunc(es, cmpURL)
	src.due.build(es)
	src.live.build(es)
}

// MarkMissing implements crawlstate.State.
func (s *State) MarkMissing(ctx context.Context, source string, runStart, now time.Time, threshold int) (int, error) {
	const op = "mark missing"
	if err := check.Threshold(threshold); err != nil {
		return 0, err
	}
	if err := s.write(ctx, op); err != nil {
		return 0, err
	}
	defer s.mu.Unlock()
	src := s.src(source, false)
	if src == nil {
		return 0, nil
	}
	runStart, now = ut(runStart), ut(now)
	n := 0
	for _, p := range src.pages {
		r := &p.row
		if cmpTime(r.LastSeen, runStart) >= 0 {
			continue
		}
		if r.Gone {
			if r.MissingRuns == 0 {
				r.MissingRuns = 1 // no index reads it
			}
			continue
		}
		n++
		src.update(p, func(r *crawlstate.Row) {
			r.MissingRuns++
			if r.MissingRuns%threshold == 0 && cmpTime(r.NextCheck, now) > 0 && r.Excluded == "" {
				r.NextCheck = now
			}
		})
	}
	return n, nil
}

// Due implements crawlstate.State: a range of the source's due index.
func (s *State) Due(ctx context.Context, source string, now time.Time, after crawlstate.Key, limit int) ([]crawlstate.Row, error) {
	const op = "due"
	if err := check.Limit(op, limit); err != nil {
		return nil, err
	}
	if err := s.read(ctx, op); err != nil {
		return nil, err
	}
	defer s.mu.RUnlock()
	src := s.src(source, false)
	if src == nil {
		return []crawlstate.Row{}, nil
	}
	now = ut(now)
	var ps []*page
	src.due.ascend(entry{at: after.NextCheck, url: after.URL}, true, func(e entry) bool {
		if cmpTime(e.at, now) > 0 {
			return false
		}
		if ps == nil {
			ps = make([]*page, 0, min(backend.Prealloc(limit), src.due.Len()))
		}
		ps = append(ps, e.p)
		return len(ps) < limit
	})
	return copyRows(ps, false), nil
}

// NextDue implements crawlstate.State.
func (s *State) NextDue(ctx context.Context, source string) (time.Time, bool, error) {
	if err := s.read(ctx, "next due"); err != nil {
		return time.Time{}, false, err
	}
	defer s.mu.RUnlock()
	src := s.src(source, false)
	if src == nil {
		return time.Time{}, false, nil
	}
	e, ok := src.due.first()
	return e.at, ok, nil
}

// Get implements crawlstate.State.
func (s *State) Get(ctx context.Context, source, u string) (crawlstate.Row, error) {
	const op = "get"
	if err := s.read(ctx, op); err != nil {
		return crawlstate.Row{}, err
	}
	defer s.mu.RUnlock()
	p := s.lookup(source, u)
	if p == nil {
		return crawlstate.Row{}, fmt.Errorf("crawlstate/memory: %s %q of source %q: %w", op, u, source, crawlstate.ErrNotFound)
	}
	return copyRow(p), nil
}

// Count implements crawlstate.State.
func (s *State) Count(ctx context.Context, source string) (total, gone int, err error) {
	if err := s.read(ctx, "count"); err != nil {
		return 0, 0, err
	}
	defer s.mu.RUnlock()
	src := s.src(source, false)
	if src == nil {
		return 0, 0, nil
	}
	return len(src.pages), len(src.pages) - src.live.Len(), nil
}

// Record implements crawlstate.State: every result is checked (see
// crawlstate.Result.Check) and every URL looked up before anything is
// written, so a failed batch leaves the State as it was. A URL recorded
// twice in a batch is written twice, in order.
func (s *State) Record(ctx context.Context, source string, results []crawlstate.Result) error {
	const op = "record"
	if err := check.Results(source, results); err != nil {
		return err
	}
	if err := s.write(ctx, op); err != nil {
		return err
	}
	defer s.mu.Unlock()
	if len(results) == 0 {
		return nil
	}
	src := s.src(source, false)
	pages := make([]*page, len(results))
	for i := range results {
		var p *page
		if src != nil {
			p = src.pages[results[i].URL]
		}
		if p == nil {
			return check.NoSuchURL(op, source, results[i].URL)
		}
		pages[i] = p
	}
	var lost *crawlstate.LeaseLostError
	for i := range results {
		r := &results[i]
		if !holds(pages[i], r.Lease) {
			if lost == nil {
				lost = &crawlstate.LeaseLostError{Source: source, Owner: r.Lease}
			}
			lost.URLs = append(lost.URLs, r.URL)
			continue
		}
		s.recordOne(src, source, pages[i], r)
	}
	if lost != nil {
		return lost
	}
	return nil
}

// recordOne writes one checked result of an existing row.
func (s *State) recordOne(src *source, source string, p *page, r *crawlstate.Result) {
	at := ut(r.At)
	src.unoffer(p)
	s.logEvents(source, r.URL, r.Events)
	if r.Excluded != "" {
		src.update(p, func(row *crawlstate.Row) {
			row.LastFetched, row.Failures, row.Gone = at, 0, false
			row.NextCheck, row.Excluded = excludedNext, r.Excluded
		})
		return
	}
	src.update(p, func(row *crawlstate.Row) {
		row.LastFetched, row.Failures, row.Gone, row.Excluded = at, 0, r.Gone, ""
		if r.Gone {
			return
		}
		row.Visits++
		if r.Changed {
			row.Changes++
		}
		if !r.NotModified && r.ContentHash != "" {
			row.ContentHash = r.ContentHash
		}
		if !r.NotModified || r.ETag != "" {
			row.ETag = r.ETag
		}
		if !r.NotModified || r.LastModified != "" {
			row.LastModified = r.LastModified
		}
		row.Interval, row.NextCheck = r.Interval, ut(r.NextCheck)
		if !r.NotModified {
			row.Title, row.Canonical, row.AliasOf = r.Title, r.Canonical, r.AliasOf
		}
	})
	if r.Stats != nil {
		p.row.Stats = copyStats(*r.Stats) // no index reads it
	}
	switch {
	case r.Links == nil:
	case len(r.Links) == 0:
		p.links = nil
	default:
		p.links = slices.Clone(r.Links)
	}
	if r.Gone || r.ReplaceChunks {
		p.chunks = nil
	}
	if r.ReplaceChunks && !r.Gone && len(r.Chunks) > 0 {
		p.chunks = slices.Clone(r.Chunks)
		slices.SortFunc(p.chunks, func(a, b crawlstate.Chunk) int { return a.Ordinal - b.Ordinal })
	}
	if a := r.Alert; a != nil {
		s.putAlert(source, r.URL, a)
	}
}

// RecordFailure implements crawlstate.State; it ends the row's offer and
// lease.
func (s *State) RecordFailure(ctx context.Context, source string, f crawlstate.Failure) error {
	const op = "record failure"
	if err := s.write(ctx, op); err != nil {
		return err
	}
	defer s.mu.Unlock()
	p := s.lookup(source, f.URL)
	if p == nil {
		return check.NoSuchURL(op, source, f.URL)
	}
	if !holds(p, f.Lease) {
		return &crawlstate.LeaseLostError{Source: source, Owner: f.Lease, URLs: []string{f.URL}}
	}
	msg := backend.LastError(f)
	src := s.sources[source]
	src.unoffer(p)
	src.update(p, func(r *crawlstate.Row) {
		r.Failures++
		r.LastError, r.LastStage, r.LastFailure = msg, f.Stage, ut(f.At)
		if !f.RetryAt.IsZero() {
			r.NextCheck = ut(f.RetryAt)
		}
	})
	return nil
}

// Lock implements crawlstate.State.
func (s *State) Lock(ctx context.Context, source, owner string, now time.Time, ttl time.Duration) error {
	const op = "lock"
	if err := check.Lease(op, source, owner, ttl); err != nil {
		return err
	}
	if err := s.write(ctx, op); err != nil {
		return err
	}
	defer s.mu.Unlock()
	now = ut(now)
	l, held := s.locks[source]
	take := !held
	if held {
		var err error
		if take, err = check.Take(nil, source, owner, now, l); err != nil {
			return err
		}
	}
	if take {
		l = backend.Lock{Owner: owner, Acquired: now}
	}
	l.Expires = now.Add(ttl)
	s.locks[source] = l
	return nil
}

// Refresh implements crawlstate.State.
func (s *State) Refresh(ctx context.Context, source, owner string, now time.Time, ttl time.Duration) error {
	const op = "refresh lock"
	if err := check.Lease(op, source, owner, ttl); err != nil {
		return err
	}
	if err := s.write(ctx, op); err != nil {
		return err
	}
	defer s.mu.Unlock()
	l, held := s.locks[source]
	if !held || l.Owner != owner {
		return fmt.Errorf("crawlstate/memory: %s %q: %q no longer holds it: %w", op, source, owner, crawlstate.ErrLockLost)
	}
	l.Expires = ut(now).Add(ttl)
	s.locks[source] = l
	return nil
}

// Unlock implements crawlstate.State.
func (s *State) Unlock(ctx context.Context, source, owner string) error {
	if err := s.write(ctx, "unlock"); err != nil {
		return err
	}
	defer s.mu.Unlock()
	if l, held := s.locks[source]; held && l.Owner == owner {
		delete(s.locks, source)
	}
	return nil
}
