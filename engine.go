package recrawl

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"hash/fnv"
	"hash/maphash"
	"math"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/recrawl/recrawl/crawlstate"
	"github.com/recrawl/recrawl/discover"
	"github.com/recrawl/recrawl/fetch"
	"github.com/recrawl/recrawl/schedule"
)

// ErrRunInProgress is returned by Run when another run of the same source
// holds the source's lock.
var ErrRunInProgress = crawlstate.ErrRunInProgress

// Engine runs incremental crawls. It is safe for concurrent use: runs of
// different sources proceed in parallel; a second concurrent run of the same
// source fails with ErrRunInProgress.
type Engine struct {
	cfg     Config
	limits  Limits
	polite  *fetch.Polite
	client  *http.Client
	fetcher fetch.Fetcher

	observerMu sync.Mutex // serializes Observer calls across runs
}

// New validates cfg and returns an Engine. Errors are *ConfigError.
func New(cfg Config) (*Engine, error) {
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	e := &Engine{cfg: cfg, limits: *cfg.Limits}
	base := cfg.HTTPClient
	e.polite = &fetch.Polite{
		Base:          transportOf(base),
		UserAgent:     cfg.UserAgent,
		IgnoreRobots:  !e.limits.RespectRobots,
		Delay:         e.limits.RequestDelay,
		RobotsTimeout: e.limits.RequestTimeout,
		Clock:         cfg.Clock,
		Logger:        cfg.Logger,
		Admit:         admit,
	}
	c := *base
	c.Transport = e.polite
	e.client = &c
	e.fetcher = cfg.Fetcher
	if e.fetcher == nil {
		e.fetcher = &fetch.HTTP{
			Client:    e.client,
			UserAgent: cfg.UserAgent,
			Timeout:   e.limits.RequestTimeout,
			MaxBytes:  e.limits.MaxBytes,
			Clock:     cfg.Clock,
			Logger:    cfg.Logger,
		}
	}
	return e, nil
}

func transportOf(c *http.Client) http.RoundTripper {
	if c.Transport != nil {
		return c.Transport
	}
	return http.DefaultTransport
}

// budget counts the page requests of a run against Limits.MaxPages.
type budget struct {
	max  int64 // 0: no cap
	used atomic.Int64
}

// take reserves one request; false once the cap is reached.
func (b *budget) take() bool {
	if b.max <= 0 {
		b.used.Add(1)
		return true
	}
	for {
		u := b.used.Load()
		if u >= b.max {
			return false
		}
		if b.used.CompareAndSwap(u, u+1) {
			return true
		}
	}
}

// ticket travels in the context of one page fetch. The engine reserves the
// fetch's first request before calling the fetcher (so fetchers that do not
// use the engine's transport are capped too); retries and redirect hops
// through the transport take further requests from the budget.
type ticket struct {
	b       *budget
	prepaid atomic.Bool
}

type ticketKey struct{}

// admit is the transport's hook: every page request sent needs a slot.
func admit(req *http.Request) error {
	t, ok := req.Context().Value(ticketKey{}).(*ticket)
	if !ok {
		return nil // not a page request (discovery documents)
	}
	if t.prepaid.CompareAndSwap(true, false) || t.b.take() {
		return nil
	}
	return fmt.Errorf("%w: %d page requests sent", fetch.ErrCapReached, t.b.max)
}

// DiscoveryError means the source's listing was incomplete: the run went on
// with the due queue, but no URL was counted missing.
type DiscoveryError struct {
	Source string
	Err    error
}

func (e *DiscoveryError) Error() string {
	return fmt.Sprintf("recrawl: discovery of %s incomplete: %v", e.Source, e.Err)
}

func (e *DiscoveryError) Unwrap() error { return e.Err }

// run is the state of one Run.
type run struct {
	e      *Engine
	source string
	owner  string
	start  time.Time

	budget  budget
	stopped atomic.Bool // a cap ended the run: dispatch no more rows

	mu        sync.Mutex
	rep       *Report
	done      int
	lastLock  time.Time
	lockError error
}

// Run performs one incremental run of src: discover and normalize URLs,
// upsert them, count missing ones, then fetch every due row conditionally,
// fingerprint what changed, record outcomes and reschedule.
//
// Run returns the report even when it also returns an error. A cancelled
// context stops the run promptly; pages whose outcome was not recorded
// stay due for the next run. An incomplete discovery is a *DiscoveryError
// returned after the due queue was processed.
func (e *Engine) Run(ctx context.Context, src discover.Source) (*Report, error) {
	if src == nil {
		return nil, errors.New("recrawl: Run needs a source")
	}
	r := &run{e: e, source: src.Name(), owner: newOwner(), start: e.cfg.Clock.Now()}
	r.budget.max = int64(e.limits.MaxPages)
	r.rep = newReport(r.source, r.start)
	r.lastLock = r.start
	st := e.cfg.State
	if err := st.Lock(ctx, r.source, r.owner, r.start, e.cfg.LockTTL); err != nil {
		return nil, fmt.Errorf("recrawl: run %s: %w", r.source, err)
	}
	defer func() {
		// Release even when ctx is cancelled.
		_ = st.Unlock(context.WithoutCancel(ctx), r.source, r.owner)
	}()
	log := e.cfg.Logger.With("source", r.source)
	log.InfoContext(ctx, "run started")
	if en, ok := src.(discover.Entrier); ok && e.limits.RespectRobots {
		// A site whose rules cannot be read is not touched at all.
		if _, err := e.polite.Rules(ctx, en.EntryURL()); err != nil {
			return r.finish(), fmt.Errorf("recrawl: run %s: %w", r.source, err)
		}
	}

	discErr := r.discover(ctx, src)
	if err := ctx.Err(); err != nil {
		return r.finish(), err
	}
	if discErr != nil && !isLimit(discErr) {
		var de *DiscoveryError
		if !errors.As(discErr, &de) {
			return r.finish(), discErr // state could not be written
		}
		r.rep.Incomplete = true
		log.WarnContext(ctx, "discovery incomplete; nothing counted missing", "err", discErr)
	} else if isLimit(discErr) {
		r.rep.Incomplete = true
		var le *discover.LimitError
		errors.As(discErr, &le)
		r.rep.StoppedBy = le.Limit
		log.InfoContext(ctx, "discovery stopped at a cap; nothing counted missing", "cap", le.Limit)
	} else {
		n, err := st.MarkMissing(ctx, r.source, r.start, r.start, e.cfg.MissingRuns)
		if err != nil {
			return r.finish(), fmt.Errorf("recrawl: marking missing URLs: %w", err)
		}
		r.rep.Missing = n
	}

	if err := r.fetchDue(ctx); err != nil {
		return r.finish(), err
	}
	total, gone, err := st.Count(ctx, r.source)
	if err != nil {
		return r.finish(), fmt.Errorf("recrawl: counting rows: %w", err)
	}
	r.rep.FullRecrawlRequests = total - gone
	rep := r.finish()
	log.InfoContext(ctx, "run finished", "due", rep.Due, "fetched", rep.Fetched, "changed", rep.Changed, "new", rep.New, "gone", rep.Gone, "failed", rep.FailedTotal())
	if discErr != nil && !isLimit(discErr) {
		return rep, discErr
	}
	return rep, nil
}

func isLimit(err error) bool {
	var le *discover.LimitError
	return errors.As(err, &le)
}

func newOwner() string {
	var b [8]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

func (r *run) finish() *Report {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.rep.FinishedAt = r.e.cfg.Clock.Now()
	return r.rep
}

// discoverBatch is how many discovered URLs are upserted per transaction.
const discoverBatch = 5000

// discover lists the source's URLs, normalizes and dedupes them, and
// upserts them in batches. A *DiscoveryError means the listing is
// incomplete; any other error means state could not be written.
func (r *run) discover(ctx context.Context, src discover.Source) error {
	e := r.e
	seed1, seed2 := maphash.MakeSeed(), maphash.MakeSeed()
	seen := map[[2]uint64]struct{}{}
	batch := make([]crawlstate.Discovered, 0, discoverBatch)
	var stateErr error
	flush := func() error {
		if len(batch) == 0 {
			return nil
		}
		st, err := e.cfg.State.UpsertDiscovered(ctx, r.source, r.start, batch)
		if err != nil {
			stateErr = fmt.Errorf("recrawl: storing discovered URLs: %w", err)
			return stateErr
		}
		r.rep.NewURLs += st.New
		r.rep.Revived += st.Revived
		r.rep.Bumped += st.Bumped
		batch = batch[:0]
		return nil
	}
	env := discover.Env{
		Client:       e.client,
		MaxDepth:     capOrUnlimited(e.limits.MaxDepth),
		MaxDocuments: capOrUnlimited(e.limits.MaxPages),
		Logger:       e.cfg.Logger,
	}
	err := src.Discover(ctx, env, func(l discover.Link) error {
		r.rep.Discovered++
		if l.Skip != "" {
			r.skip(l.URL, l.Skip)
			return nil
		}
		n, err := e.cfg.Normalize.URL(l.URL)
		if err != nil {
			e.cfg.Logger.DebugContext(ctx, "discovered URL rejected", "url", l.URL, "err", err)
			r.skip(l.URL, SkipInvalid)
			return nil
		}
		k := [2]uint64{maphash.String(seed1, n), maphash.String(seed2, n)}
		if _, dup := seen[k]; dup {
			r.rep.Duplicates++
			return nil
		}
		seen[k] = struct{}{}
		r.rep.Accepted++
		batch = append(batch, crawlstate.Discovered{URL: n, OriginalURL: l.URL, LastMod: l.LastMod})
		if len(batch) == discoverBatch {
			return flush()
		}
		return nil
	})
	if stateErr != nil {
		return stateErr
	}
	if ferr := flush(); ferr != nil {
		return ferr
	}
	if err != nil {
		if isLimit(err) {
			return err
		}
		if ctx.Err() != nil {
			return ctx.Err()
		}
		return &DiscoveryError{Source: r.source, Err: err}
	}
	return nil
}

// capOrUnlimited maps a Limits cap (0: none) to a discover.Env bound.
func capOrUnlimited(n int) int {
	if n <= 0 {
		return math.MaxInt
	}
	return n
}

// skip counts a URL skipped at discovery. Discovery runs on one goroutine,
// but events are serialized with the workers' anyway.
func (r *run) skip(url, reason string) {
	r.mu.Lock()
	r.rep.Skipped[reason]++
	r.mu.Unlock()
	r.emit(Event{URL: url, Outcome: OutcomeSkipped, Reason: reason, At: r.e.cfg.Clock.Now()})
}

// fetchDue pages through the due queue and hands rows to the workers.
func (r *run) fetchDue(ctx context.Context) error {
	e := r.e
	st := e.cfg.State
	due, err := st.CountDue(ctx, r.source, r.start)
	if err != nil {
		return fmt.Errorf("recrawl: counting due rows: %w", err)
	}
	r.rep.Due = due

	jobs := make(chan crawlstate.Row)
	var wg sync.WaitGroup
	for range e.cfg.Workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for row := range jobs {
				r.process(ctx, row)
			}
		}()
	}
	var qerr error
	var after crawlstate.Key
loop:
	for {
		rows, err := st.Due(ctx, r.source, r.start, after, e.cfg.BatchSize)
		if err != nil {
			if ctx.Err() == nil {
				qerr = fmt.Errorf("recrawl: reading the due queue: %w", err)
			}
			break
		}
		for _, row := range rows {
			if r.stopped.Load() {
				break loop
			}
			select {
			case jobs <- row:
			case <-ctx.Done():
				break loop
			}
		}
		if len(rows) < e.cfg.BatchSize {
			break
		}
		after = crawlstate.KeyOf(rows[len(rows)-1])
	}
	close(jobs)
	wg.Wait()
	if err := ctx.Err(); err != nil {
		return err
	}
	if r.stopped.Load() {
		// Rows the cap kept from being requested stay due for the next run.
		r.mu.Lock()
		r.rep.Skipped[SkipMaxPages] += r.rep.Due - r.done
		r.rep.StoppedBy = StopMaxPages
		r.mu.Unlock()
	}
	if qerr != nil {
		return qerr
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.lockError
}

// process fetches one due row and records its outcome.
func (r *run) process(ctx context.Context, row crawlstate.Row) {
	e := r.e
	if r.stopped.Load() {
		return
	}
	if e.limits.RespectRobots {
		allowed, err := e.polite.Allowed(ctx, row.OriginalURL)
		if err != nil {
			if ctx.Err() == nil {
				r.stage(StageFetch, 0)
				r.stage(StageFetch, -1)
				r.fail(ctx, row, StageFetch, 0, err)
			}
			return
		}
		if !allowed {
			r.skipDue(row, SkipRobots)
			return
		}
	}
	if !r.budget.take() {
		r.stopped.Store(true)
		return
	}
	t := &ticket{b: &r.budget}
	t.prepaid.Store(true)
	req := fetch.Request{URL: row.OriginalURL, ETag: row.ETag, LastModified: row.LastModified}
	r.stage(StageFetch, 0)
	resp, err := e.fetcher.Fetch(context.WithValue(ctx, ticketKey{}, t), req)
	r.countRequests(resp, err)
	if err != nil {
		if ctx.Err() != nil {
			return // interrupted: the row stays due, nothing to record
		}
		if errors.Is(err, fetch.ErrCapReached) {
			// A retry or redirect hop met the cap: the row stays due.
			r.stopped.Store(true)
			r.stage(StageFetch, -1)
			return
		}
		r.stage(StageFetch, -1)
		r.fail(ctx, row, StageFetch, 0, err)
		return
	}
	r.stage(StageFetch, 1)
	now := e.cfg.Clock.Now()
	res := crawlstate.Result{URL: row.URL, At: now}
	var outcome Outcome
	page := schedule.Page{Interval: row.Interval, LastFetched: row.LastFetched, Visits: row.Visits, Changes: row.Changes}
	switch {
	case resp.Gone():
		res.Gone = true
		outcome = OutcomeGone
	case resp.NotModified():
		res.NotModified = true
		res.ETag, res.LastModified = resp.ETag, resp.LastModified
		res.Interval = e.cfg.Scheduler.Next(page, schedule.Observation{At: now})
		outcome = OutcomeUnchanged
	default:
		r.stage(StageExtract, 0)
		doc, err := pageContent(resp, 0)
		if err != nil {
			r.stage(StageExtract, -1)
			r.fail(ctx, row, StageExtract, resp.Status, err)
			return
		}
		r.stage(StageExtract, 1)
		hash := e.cfg.Fingerprint.For(row.URL).Of(doc.Markdown)
		obs := schedule.Observation{At: now}
		switch {
		case row.ContentHash == "":
			outcome, obs.First, obs.Changed, res.Changed = OutcomeNew, true, true, true
		case hash != row.ContentHash:
			outcome, obs.Changed, res.Changed = OutcomeChanged, true, true
		default:
			outcome = OutcomeUnchanged
		}
		res.ContentHash = hash
		res.ETag, res.LastModified = resp.ETag, resp.LastModified
		res.Interval = e.cfg.Scheduler.Next(page, obs)
	}
	if !res.Gone {
		res.NextCheck = now.Add(r.e.jittered(row.URL, row.Visits, res.Interval))
	}
	r.stage(StageCommit, 0)
	if err := r.record(ctx, res); err != nil {
		if ctx.Err() != nil {
			return
		}
		r.stage(StageCommit, -1)
		r.fail(ctx, row, StageCommit, resp.Status, err)
		return
	}
	r.stage(StageCommit, 1)
	r.finishURL(Event{URL: row.URL, Outcome: outcome, Status: resp.Status, At: now}, resp)
}

// jittered returns the wait before a row's next check: the interval, less
// up to Config.Jitter of it, by an amount fixed by the URL and visit count.
// It is never below one second.
func (e *Engine) jittered(url string, visits int, interval time.Duration) time.Duration {
	if e.cfg.Jitter > 0 {
		h := fnv.New64a()
		fmt.Fprintf(h, "%s\x00%d", url, visits)
		u := float64(h.Sum64()>>11) / (1 << 53) // uniform in [0, 1)
		interval -= time.Duration(float64(interval) * e.cfg.Jitter * u)
	}
	return max(interval, time.Second)
}

// record writes one result and keeps the run lock fresh.
func (r *run) record(ctx context.Context, res crawlstate.Result) error {
	e := r.e
	if err := e.cfg.State.Record(ctx, r.source, []crawlstate.Result{res}); err != nil {
		return err
	}
	now := e.cfg.Clock.Now()
	r.mu.Lock()
	refresh := now.Sub(r.lastLock) > e.cfg.LockTTL/3
	if refresh {
		r.lastLock = now
	}
	r.mu.Unlock()
	if refresh {
		if err := e.cfg.State.Refresh(ctx, r.source, r.owner, now, e.cfg.LockTTL); err != nil {
			r.mu.Lock()
			r.lockError = fmt.Errorf("recrawl: run %s: %w", r.source, err)
			r.mu.Unlock()
		}
	}
	return nil
}

// fail records a failed stage: the row keeps its hash, validators and
// schedule, so it stays due for the next run.
func (r *run) fail(ctx context.Context, row crawlstate.Row, stage string, status int, cause error) {
	e := r.e
	now := e.cfg.Clock.Now()
	e.cfg.Logger.DebugContext(ctx, "page failed", "url", row.URL, "stage", stage, "err", cause)
	if err := e.cfg.State.RecordFailure(ctx, r.source, crawlstate.Failure{URL: row.URL, At: now, Stage: stage, Err: cause.Error()}); err != nil {
		e.cfg.Logger.WarnContext(ctx, "recording a failure failed", "url", row.URL, "err", err)
	}
	r.finishURL(Event{URL: row.URL, Outcome: OutcomeFailed, Stage: stage, Status: status, Err: cause, At: now}, nil)
}

// stage counts a stage attempt (delta 0), success (1) or failure (-1).
func (r *run) stage(name string, delta int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	c := r.rep.Stages[name]
	switch delta {
	case 0:
		c.Attempts++
	case 1:
		c.Successes++
	default:
		c.Failures++
	}
	r.rep.Stages[name] = c
}

func (r *run) countRequests(resp *fetch.Response, err error) {
	n := 0
	var se *fetch.StatusError
	switch {
	case resp != nil:
		n = max(resp.Attempts, 1)
	case errors.As(err, &se):
		n = max(se.Attempts, 1)
	case err != nil:
		n = 1
	}
	r.mu.Lock()
	r.rep.Requests += n
	r.mu.Unlock()
}

// skipDue counts a due URL that was not requested (robots.txt denies it);
// the row is left as it was.
func (r *run) skipDue(row crawlstate.Row, reason string) {
	r.mu.Lock()
	r.rep.Skipped[reason]++
	r.done++
	ev := Event{URL: row.URL, Outcome: OutcomeSkipped, Reason: reason, At: r.e.cfg.Clock.Now(), Done: r.done, Due: r.rep.Due}
	r.mu.Unlock()
	r.emit(ev)
}

// finishURL counts a due URL's outcome and tells the observer.
func (r *run) finishURL(ev Event, resp *fetch.Response) {
	r.mu.Lock()
	rep := r.rep
	rep.Fetched++
	if resp != nil {
		switch {
		case resp.NotModified():
			rep.NotModified++
		case !resp.Gone():
			rep.Bodies++
		}
	}
	switch ev.Outcome {
	case OutcomeNew:
		rep.New++
	case OutcomeChanged:
		rep.Changed++
	case OutcomeUnchanged:
		rep.Unchanged++
	case OutcomeGone:
		rep.Gone++
	case OutcomeFailed:
		rep.Failed[ev.Stage]++
	}
	r.done++
	ev.Done, ev.Due = r.done, rep.Due
	r.mu.Unlock()
	r.emit(ev)
}

func (r *run) emit(ev Event) {
	obs := r.e.cfg.Observer
	if obs == nil {
		return
	}
	ev.Source = r.source
	r.e.observerMu.Lock()
	defer r.e.observerMu.Unlock()
	obs(ev)
}
