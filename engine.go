package recrawl

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"net/http"
	"slices"
	"strings"
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
// different sources proceed in parallel. A second concurrent run of the
// same source fails with ErrRunInProgress, unless the State is shared
// (crawlstate.Sharer): then it joins the first, as the run of another
// engine on the same State would (see Run).
type Engine struct {
	cfg     Config
	st      *store // cfg.State and the abilities the engine found in it
	limits  Limits
	polite  *fetch.Polite
	client  *http.Client
	fetcher fetch.Fetcher
	batcher fetch.BatchFetcher // the fetcher's batch ability, if any

	observerMu sync.Mutex // serializes Observer calls across runs

	// reread holds the sources whose last run's discovery changed rows
	// (as keys), so that the rows planning read could not be handed on to
	// the due walk. Their next run plans over the planning columns alone
	// and reads the due queue, as a source whose listing changes every
	// run must.
	reread sync.Map

	// mu guards the start of runs against Shutdown, as http.Server does:
	// a run is added to runs only under mu and only while not closing, so
	// runs.Add never races with runs.Wait.
	mu      sync.Mutex
	closing atomic.Bool    // Shutdown was called (read lock-free by runs in progress)
	runs    sync.WaitGroup // runs in progress
}

// ErrEngineClosed is returned by Run after Shutdown.
var ErrEngineClosed = errors.New("recrawl: engine shut down")

// Shutdown stops the engine gracefully, as http.Server.Shutdown does: runs
// in progress dispatch no further page, let the pages in flight finish and
// be recorded, and return with StoppedBy "shutdown"; the rows they did not
// reach stay due. Shutdown waits for them, or for ctx to end. Later calls to
// Run return ErrEngineClosed.
func (e *Engine) Shutdown(ctx context.Context) error {
	e.mu.Lock()
	e.closing.Store(true)
	e.mu.Unlock()
	done := make(chan struct{})
	go func() {
		e.runs.Wait()
		close(done)
	}()
	select {
	case <-done:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// New validates cfg and returns an Engine. Errors are *ConfigError.
func New(cfg Config) (*Engine, error) {
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	cfg = cfg.withDefaults()
	e := &Engine{cfg: cfg, limits: *cfg.Limits, st: newStore(cfg.State)}
	base := cfg.HTTPClient
	rt := transportOf(base, e.limits.hostConcurrency())
	if e.limits.BlockPrivate {
		ht, _ := rt.(*http.Transport) // validate checked it
		guarded, err := (&fetch.Guard{}).Transport(ht)
		if err != nil {
			return nil, &ConfigError{Problems: []ConfigProblem{{Field: "Limits", Reason: "BlockPrivate: " + err.Error()}}}
		}
		rt = guarded
	}
	e.polite = &fetch.Polite{
		Base:          rt,
		UserAgent:     cfg.UserAgent,
		IgnoreRobots:  !e.limits.RespectRobots,
		Delay:         e.limits.RequestDelay,
		PerHost:       e.limits.hostConcurrency(),
		Timeout:       e.limits.RequestTimeout, // discovery documents and crawled pages
		RobotsTimeout: e.limits.RequestTimeout,
		Clock:         cfg.Clock,
		Logger:        cfg.Logger,
		Admit:         admit,
		Unsent:        unsent,
	}
	c := *base
	c.Transport = e.polite
	if !cfg.FollowOffHostRedirects {
		c.CheckRedirect = fetch.StayOnSite(base.CheckRedirect)
	}
	e.client = &c
	e.fetcher = cfg.Fetcher
	if e.fetcher == nil {
		e.fetcher = &fetch.HTTP{
			Client:    e.client,
			UserAgent: cfg.UserAgent,
			Timeout:   e.limits.RequestTimeout,
			MaxBytes:  e.limits.MaxBytes,
			Accept:    func(ct string) bool { return ct == "" || isDocument(ct, nil, false) },

			AllowOffHostRedirects: cfg.FollowOffHostRedirects,
			Clock:                 cfg.Clock,
			Logger:                cfg.Logger,
		}
		if cfg.Remote != nil {
			e.fetcher = &fetch.Hybrid{Direct: e.fetcher, Remote: cfg.Remote, Clock: cfg.Clock, Logger: cfg.Logger}
		}
	}
	e.batcher, _ = e.fetcher.(fetch.BatchFetcher)
	return e, nil
}

// Client returns the engine's polite HTTP client: robots.txt, per-host
// pacing and the User-Agent apply to every request it sends. Use it to build
// fetchers (fetch.HTTP, fetch.Hybrid's direct side) that must obey the same
// policy as the engine.
func (e *Engine) Client() *http.Client { return e.client }

// transportOf returns c's transport. Without one it is http.DefaultTransport,
// or a copy of it that keeps perHost idle connections per host when
// http.DefaultTransport would keep fewer (so parallel requests to one host
// reuse their connections instead of opening new ones).
func transportOf(c *http.Client, perHost int) http.RoundTripper {
	if c.Transport != nil {
		return c.Transport
	}
	dt, ok := http.DefaultTransport.(*http.Transport)
	if !ok || perHost <= max(dt.MaxIdleConnsPerHost, http.DefaultMaxIdleConnsPerHost) {
		return http.DefaultTransport
	}
	t := dt.Clone()
	t.MaxIdleConnsPerHost = perHost
	t.MaxIdleConns = max(t.MaxIdleConns, perHost)
	return t
}

// budget counts the page requests of a run against Limits.MaxPages.
type budget struct {
	max  int64 // 0: no cap
	used atomic.Int64
	sent atomic.Int64 // page requests the transport sent: Report.Requests
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

// ticket travels in the context of page requests. For a fetch of the due
// queue the engine reserves the first request before calling the fetcher
// (so fetchers that do not use the engine's transport are capped too);
// retries and redirect hops through the transport take further requests
// from the budget. A crawl's requests all take from the budget.
type ticket struct {
	b       *budget
	prepaid atomic.Bool
	sent    atomic.Int64 // requests the engine's transport sent
	routed  atomic.Bool  // a request went through the engine's transport, which counted it (sent or not)
}

type ticketKey struct{}

// admit is the transport's hook: every page request sent needs a slot.
func admit(req *http.Request) error {
	t, ok := req.Context().Value(ticketKey{}).(*ticket)
	if !ok {
		return nil // not a page request (robots.txt, discovery documents)
	}
	t.routed.Store(true)
	if t.prepaid.CompareAndSwap(true, false) || t.b.take() {
		t.sent.Add(1)
		t.b.sent.Add(1)
		return nil
	}
	return fmt.Errorf("%w: %d page requests sent", fetch.ErrCapReached, t.b.max)
}

// unsent is the transport's hook for an admitted page request that never
// reached a server (a dial refused by the private-address guard or by the
// network, a run cancelled during the pacing wait): it is not counted in
// Report.Requests, and its slot goes back to the page budget, since
// Limits.MaxPages bounds the load put on sites and this request put none.
func unsent(req *http.Request, _ error) {
	t, ok := req.Context().Value(ticketKey{}).(*ticket)
	if !ok {
		return
	}
	t.sent.Add(-1)
	t.b.sent.Add(-1)
	t.b.used.Add(-1)
}

// DiscoveryError means the source's listing was incomplete: the run went on
// with the due queue, but no URL was counted missing.
type DiscoveryError struct {
	Source string
	Err    error
}

// Error describes the failure.
func (e *DiscoveryError) Error() string {
	return fmt.Sprintf("recrawl: discovery of %s incomplete: %v", e.Source, e.Err)
}

// Unwrap returns the underlying cause, for errors.Is and errors.As.
func (e *DiscoveryError) Unwrap() error { return e.Err }

// run is the state of one Run.
type run struct {
	e      *Engine
	source string
	owner  string
	start  time.Time
	log    *slog.Logger
	// run is the start of the run this one works on: its own start, or,
	// when it joined a shared run, the start its leader recorded.
	run time.Time
	// lock is the run's hold on the source's run lock.
	lock *runLock
	// alerts delivers the run's alerts.
	alerts *alerter
	// share is the run's share of a shared State (crawlstate.Sharer); nil
	// when the State is not shared.
	share *shared

	budget     budget
	halt       halt // what stops the run: a cap, the budget, Shutdown or a fatal error
	scheduling      // the plan, the rescheduling chain, the co-change model
	// exposed holds the rows not due that planning found exposed to
	// their siblings' changes and worth a look, for the first wave.
	exposed []crawlstate.Row
	trust   sourceTrust // the source's sitemap lastmod trust

	// tally is the run's report, counted by every stage.
	tally *tally

	discErr       error        // the discovery's *DiscoveryError, set by execute
	direct        atomic.Int64 // requests sent by fetchers that bypass the engine's transport
	stopHeartbeat func()       // set by execute, called by end

	// book is what the run's goroutines share of its coordination (not
	// the report): the URLs a crawl handled and their tickets.
	book guarded[book]

	commits *committer // the state-write stage

	// handOn holds the rows due at the start that planning read whole
	// (see Engine.planRun), for the due walk to take instead of reading
	// them again; nil when the walk reads the due queue.
	handOn []*crawlstate.Row
}

// Run performs one incremental run of src: discover and normalize URLs,
// upsert them, count missing ones, then fetch every due row conditionally,
// extract and fingerprint what changed, index it and alert when configured,
// record outcomes and reschedule.
//
// Run returns a non-nil report even when it also returns an error
// (ErrRunInProgress and ErrEngineClosed included). A cancelled
// context stops the run promptly; pages whose outcome was not recorded stay
// due for the next run. A robots.txt that cannot be read fails the run
// before anything else is requested (*fetch.RobotsError). An incomplete
// discovery is a *DiscoveryError returned after the due queue was processed.
// A fatal fetcher error (an error with a Fatal() bool method that reports
// true, such as a rejected API key or an exhausted balance) stops the run
// and is returned; the rows not fetched stay due.
//
// On a shared State (a crawlstate.Sharer, such as crawlstate/postgres)
// several engines, in one process or many, run a source together. The
// engine that takes the source's run lock leads the run: it discovers the
// source, plans the run and offers the due rows it chose (Report.Offered),
// then releases the lock. An engine that finds the lock held waits for it
// and then joins that run (Report.Joined; it does not discover); one that
// finds it free joins the latest run while that run has rows left, and
// leads the next otherwise. A run is recorded only once its offer is
// complete: an engine that waited for a leader that died before leads the
// run itself. Every engine of the run, its
// leader included, claims offered rows a few at a time under a lease of
// Config.LockTTL, extended while it works, fetches and records them, and
// returns once no row is left to claim and no other engine holds one. So
// each due row is fetched by one engine; the rows of an engine that dies
// go to the others when its leases expire, and those a cap or Shutdown
// left unfetched at once. Writes of a claimed row are fenced by its lease:
// an engine paused past its leases neither requests nor records a row
// another engine took over (Report.Skipped[SkipLeaseLost]). Limits,
// Budget and the pacing delay are each engine's own: N engines put up to
// N times one engine's load on a site.
func (e *Engine) Run(ctx context.Context, src discover.Source) (*Report, error) {
	now := e.cfg.Clock.Now()
	if src == nil {
		return finished(newReport("", now), now), errors.New("recrawl: Run needs a source")
	}
	e.mu.Lock()
	if e.closing.Load() {
		e.mu.Unlock()
		return finished(newReport(src.Name(), now), now), ErrEngineClosed
	}
	e.runs.Add(1)
	e.mu.Unlock()
	defer e.runs.Done()
	// Every request of the run, a back end's own (Config.Fetcher, Remote,
	// a Geonode map) included, is bounded by the request timeout.
	ctx = fetch.WithRequestTimeout(ctx, e.limits.RequestTimeout)
	r := &run{e: e, source: src.Name(), owner: newOwner(now).String(), start: now, run: now}
	r.book.v = book{handled: map[string]bool{}, tickets: map[string]*ticket{}}
	r.scheduling = scheduling{cfg: &e.cfg, trust: &r.trust}
	r.budget.max = int64(e.limits.MaxPages)
	r.tally = newTally(r.source, r.start)
	r.halt = halt{tally: r.tally, closing: &e.closing}
	r.log = e.cfg.Logger.With("source", r.source)
	if e.st.sharer != nil {
		r.share = newShared(e.st.sharer, r)
	}
	r.lock = newRunLock(r)
	r.alerts = newAlerter(r)
	err := r.execute(ctx, src)
	// The run's lifetime ends in one order: the heartbeat stops, the lock
	// is released, the committer drains, and only then is the report
	// read, a copy that nothing changes after.
	rep := r.end(ctx)
	if err == nil {
		err = r.halt.err()
	}
	if err == nil {
		err = r.discErr
	}
	r.log.InfoContext(ctx, "run finished", "due", rep.Due, "fetched", rep.Fetched, "changed", rep.Changed,
		"new", rep.New, "gone", rep.Gone, "failed", rep.FailedTotal(), "stopped_by", rep.StoppedBy, "err", err)
	return rep, err
}

// execute is the body of Run: lock, plan, discover, fetch. What it
// starts, end stops.
func (r *run) execute(ctx context.Context, src discover.Source) error {
	e := r.e
	st := e.st
	var claimed []crawlstate.Row // a joined shared run's first claim
	var join bool
	var err error
	if r.share != nil {
		claimed, join, err = r.lockOrJoin(ctx)
	} else {
		err = r.lock.take(ctx, r.start)
	}
	if errors.Is(err, errStoppedWaiting) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("recrawl: run %s: %w", r.source, err)
	}
	r.stopHeartbeat = r.lock.heartbeat(ctx)
	r.log.InfoContext(ctx, "run started", "joined", join)
	r.commits = newCommitter(ctx, r)
	if en, ok := src.(discover.Entrier); ok && e.limits.RespectRobots {
		// A site whose rules cannot be read is not touched at all.
		if _, err := e.polite.Rules(ctx, en.EntryURL()); err != nil {
			r.share.end(ctx)
			return fmt.Errorf("recrawl: run %s: %w", r.source, err)
		}
	}
	var handOn *[]*crawlstate.Row
	if !join && !e.rereads(r.source) {
		handOn = &r.handOn
	}
	// A joined run plans as its leader did, over the run's start, which
	// the leader recorded; a shared run's leader records it once its
	// offer is complete (completeOffer).
	pl, err := e.planRun(ctx, r.source, r.run, handOn, r.share == nil)
	if err != nil {
		r.share.end(ctx)
		return err
	}
	sched := pl.sched
	r.scheduling.start = r.start // a shared run that waited for the lock started when it got it
	r.plan(sched, pl.co)
	if !join && st.sharer == nil {
		if r.exposed, err = e.exposedRows(ctx, r.source, r.start, pl); err != nil {
			return err
		}
	}
	r.tally.add(func(rep *Report) { rep.Scheduler = schedulerName(sched) })
	if err := r.loadTrust(ctx); err != nil {
		r.share.end(ctx)
		return err
	}
	// Alerts a crash or a failing sink left undelivered go out first.
	if err := r.alerts.deliverPending(ctx); err != nil {
		r.share.end(ctx)
		return err
	}

	if join {
		err = r.work(ctx, claimed)
	} else {
		var disc discovery
		disc, err = r.discover(ctx, src)
		if err != nil {
			return err
		}
		if ctx.Err() != nil {
			return ctx.Err()
		}
		r.discErr = disc.err
		e.setRereads(r.source, !disc.kept)
		if !disc.kept {
			r.handOn = nil // discovery changed rows: the due walk reads them
		}
		switch {
		case r.share != nil:
			if disc.unchanged {
				err = r.completeOffer(ctx) // nothing to offer
			} else {
				err = r.offerDue(ctx)
			}
			if err == nil {
				err = r.work(ctx, nil)
			} else {
				r.share.end(ctx)
			}
		case disc.unchanged:
		default:
			err = r.fetchDue(ctx)
		}
	}
	if serr := r.trust.save(ctx); serr != nil && err == nil {
		err = serr
	}
	if err != nil {
		return err
	}
	total, gone, err := st.Count(ctx, r.source)
	if err != nil {
		return fmt.Errorf("recrawl: counting rows: %w", err)
	}
	r.tally.add(func(rep *Report) { rep.FullRecrawlRequests = total - gone })
	return nil
}

// end ends the run's lifetime, in this order: the heartbeat stops (it can
// no longer end the run), the run lock is released (even when ctx is
// cancelled; a run that no longer holds it, a shared run past its offer,
// releases nothing), the committer commits and counts every outcome, and
// the report is closed. It returns the report, a copy.
func (r *run) end(ctx context.Context) *Report {
	if r.stopHeartbeat != nil {
		r.stopHeartbeat()
	}
	r.lock.release(ctx)
	if r.commits != nil {
		r.commits.close() // every outcome is committed and counted
	}
	return r.tally.close(r.e.cfg.Clock.Now(), int(r.budget.sent.Load())+int(r.direct.Load()))
}

// rereads reports whether the last run of source changed rows in its
// discovery (see Engine.reread).
func (e *Engine) rereads(source string) bool {
	_, ok := e.reread.Load(source)
	return ok
}

func (e *Engine) setRereads(source string, changed bool) {
	if changed {
		e.reread.Store(source, true)
	} else {
		e.reread.Delete(source)
	}
}

// finished stamps a report that no run filled.
func finished(rep *Report, at time.Time) *Report {
	rep.FinishedAt = at
	return rep
}

// guarded is a value that goroutines share under a mutex, taken in one
// place: with.
type guarded[T any] struct {
	mu sync.Mutex
	v  T
}

// with calls fn with the value under the lock. fn must not block.
func (g *guarded[T]) with(fn func(v *T)) {
	g.mu.Lock()
	defer g.mu.Unlock()
	fn(&g.v)
}

// book is a run's shared coordination.
type book struct {
	handled map[string]bool    // URLs whose outcome this run already recorded (crawls)
	tickets map[string]*ticket // crawled URLs prepared and not yet handled
}

// fatalError reports errors that must stop a run: the fetcher says so.
func fatalError(err error) bool {
	var f interface{ Fatal() bool }
	return errors.As(err, &f) && f.Fatal()
}

// stage counts a stage attempt (delta 0), success (1) or failure (-1).
func (r *run) stage(name string, delta int) { r.tally.stage(name, delta) }

// outcome counts one URL outcome with count (which counts it in the
// tally and returns its event) and tells the observer. Counting and
// delivery happen under the observer lock, so events arrive in the order
// of their Done.
func (r *run) outcome(count func() Event) {
	obs := r.e.cfg.Observer
	if obs != nil {
		r.e.observerMu.Lock()
		defer r.e.observerMu.Unlock()
	}
	ev := count()
	r.share.done(ev.URL)
	if obs != nil {
		ev.Source = r.source
		obs(ev)
	}
}

// NextDue tells a host scheduler when the next row of src falls due, so it
// need not poll: run src at (or after) that time. A time at or before now
// means rows are due already. The zero time means the source has no live
// rows yet: run it now to discover them.
func (e *Engine) NextDue(ctx context.Context, src discover.Source) (time.Time, error) {
	t, ok, err := e.st.NextDue(ctx, src.Name())
	if err != nil {
		return time.Time{}, fmt.Errorf("recrawl: next due of %s: %w", src.Name(), err)
	}
	if !ok {
		return time.Time{}, nil
	}
	if t.IsZero() {
		// Due now (new, bumped or revived rows).
		return e.cfg.Clock.Now(), nil
	}
	return t, nil
}

// planRuns is how many recorded run starts measure a source's cadence.
const planRuns = 16

// plan records the run's start and returns its scheduler. A
// schedule.Planner (the default, schedule.Index, is one) plans the run over
// every live row of the source (its change-rate estimate, weight and last
// fetch; read through crawlstate.PlanLister when the state has it) with
// the source's real run times: the previous run's start and the cadence
// measured from the recorded starts. Other schedulers are used as they
// are.
func (e *Engine) plan(ctx context.Context, source string, start time.Time) (schedule.Scheduler, error) {
	pl, err := e.planRun(ctx, source, start, nil, true)
	return pl.sched, err
}

// planned is what planning a run found: the run's scheduler, the
// source's co-change model (nil for a scheduler that does not plan) and
// the rows not due that the model exposed.
type planned struct {
	sched   schedule.Scheduler
	co      *schedule.CoChange
	exposed []exposure
}

// exposure is a row not due whose co-change chance is positive.
type exposure struct {
	url    string
	page   schedule.Page
	chance float64
}

// exposedCap bounds the exposed rows planning keeps for the first wave.
const exposedCap = 4096

// exposedRows reads whole the exposed rows of pl worth a look at the
// run's start (schedule.IndexPlan.Worth), highest priority first, as many
// as the plan's limit.
func (e *Engine) exposedRows(ctx context.Context, source string, start time.Time, pl planned) ([]crawlstate.Row, error) {
	plan, ok := pl.sched.(schedule.RunPlan)
	if !ok || len(pl.exposed) == 0 {
		return nil, nil
	}
	worth, _ := pl.sched.(interface{ Worth(schedule.Page) bool })
	type cand struct {
		url  string
		prio float64
	}
	var cands []cand
	for _, x := range pl.exposed {
		p := x.page
		p.CoChange = x.chance
		if worth != nil && !worth.Worth(p) {
			continue
		}
		cands = append(cands, cand{x.url, plan.Priority(p)})
	}
	slices.SortFunc(cands, func(a, b cand) int {
		if c := cmp.Compare(b.prio, a.prio); c != 0 {
			return c
		}
		return strings.Compare(a.url, b.url)
	})
	if l := plan.Limit(); len(cands) > l {
		cands = cands[:l]
	}
	var out []crawlstate.Row
	for _, c := range cands {
		row, err := e.st.Get(ctx, source, c.url)
		if errors.Is(err, crawlstate.ErrNotFound) {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("recrawl: reading %s: %w", c.url, err)
		}
		if row.Gone || row.Excluded != "" || !row.NextCheck.After(start) {
			continue // gone, not a page, or due already
		}
		out = append(out, row)
	}
	return out, nil
}

// handOnRows bounds the live rows planning reads whole to hand the due
// ones on to the due walk: a source of fewer live rows is read once per
// run (the pages of rows read are held until the due walk, about a
// megabyte and a half for every thousand rows); a larger one is read for
// planning and then through the due queue, a page at a time.
const handOnRows = 10_000

// planRun is plan. With due not nil and a state that lists rows whole
// (crawlstate.LiveLister) as well as for planning (crawlstate.PlanLister),
// planning reads the rows whole while the source has at most handOnRows
// live rows and at least a quarter of the rows read are due at
// start, and leaves the rows due at start in *due; otherwise *due is nil.
// Against SQLite, reading a row whole costs about a third more than
// reading its planning columns, and reading it again from the due queue
// half as much again as those. With record false the start is not
// recorded (a joined shared run: its leader recorded it).
func (e *Engine) planRun(ctx context.Context, source string, start time.Time, due *[]*crawlstate.Row, record bool) (planned, error) {
	st := e.st
	recorded, err := st.Runs(ctx, source, planRuns)
	if err != nil {
		return planned{}, fmt.Errorf("recrawl: planning: %w", err)
	}
	starts := recorded[:0:0]
	for _, t := range recorded {
		if !t.Equal(start) {
			starts = append(starts, t)
		}
	}
	if record {
		if err := st.RecordRun(ctx, source, start); err != nil {
			return planned{}, fmt.Errorf("recrawl: planning: %w", err)
		}
	}
	s := e.cfg.Scheduler
	if s == nil {
		s = schedule.Index{}
	}
	planner, ok := s.(schedule.Planner)
	if !ok {
		return planned{sched: s}, nil
	}
	// The co-change model is learned from the rows' histories as
	// planning reads them; the rows not due it exposes are kept for the
	// first wave.
	var exposed []exposure
	learn := schedule.NewCoChangeBuilder(start, e.cfg.Cluster, func(url string, p schedule.Page, chance float64) {
		if len(exposed) < exposedCap && p.LastFetched.Add(p.Interval).After(start) {
			exposed = append(exposed, exposure{url, p, chance})
		}
	})
	run := schedule.Run{Start: start, Cadence: schedule.Cadence(append(starts, start))}
	for _, t := range starts {
		if t.Before(start) {
			run.Previous = t // newest first: the latest earlier start
			break
		}
	}
	var inputs []schedule.PlanInput
	var checks []schedule.Check // one row's checks at a time: Input keeps none
	add := func(row crawlstate.Row) bool {
		var in schedule.PlanInput
		var p schedule.Page
		in, p, checks = e.planInput(row, checks)
		inputs = append(inputs, in)
		if row.ContentHash != "" {
			learn.Add(row.URL, p)
		}
		return true
	}
	pl, planLister := st.State.(crawlstate.PlanLister)
	ll, liveLister := st.State.(crawlstate.LiveLister)
	switch {
	case due != nil && planLister && liveLister:
		err = e.eachLiveRow(ctx, ll, pl, source, start, add, due)
	case planLister:
		err = e.eachPlanRow(ctx, pl, source, "", add)
	default:
		everything := time.Date(2200, 1, 1, 0, 0, 0, 0, time.UTC) // the due queue at the end of time holds every live row
		err = e.eachDue(ctx, source, everything, add)
	}
	if err != nil {
		return planned{}, fmt.Errorf("recrawl: planning: %w", err)
	}
	if err := ctx.Err(); err != nil {
		return planned{}, err
	}
	co := learn.Model()
	return planned{sched: planner.PlanRun(run, inputs), co: co, exposed: exposed}, nil
}

// eachLiveRow calls fn for every live row of source, read whole through
// ll a page of BatchSize rows at a time, and keeps the rows due at start
// in *due, until the source proves too large or too little of it due to
// be worth it (see planRun): *due is then nil and the rest is read
// through pl.
func (e *Engine) eachLiveRow(ctx context.Context, ll crawlstate.LiveLister, pl crawlstate.PlanLister, source string, start time.Time, fn func(crawlstate.Row) bool, due *[]*crawlstate.Row) error {
	*due = nil
	size := e.cfg.BatchSize
	after := ""
	read := 0
	// The first page is read alone: it shows whether the rows are worth
	// holding. Once one has, the next page is read while fn works through
	// the current one (readAhead); a page read ahead is lost only when a
	// later page shows the source too large or too little of it due.
	var next func() ([]crawlstate.Row, error)
	stop := func() {}
	defer func() { stop() }()
	for {
		var rows []crawlstate.Row
		var err error
		if next != nil {
			rows, err = next()
		} else {
			rows, err = ll.LiveRows(ctx, source, after, size)
		}
		if err != nil {
			*due = nil
			return fmt.Errorf("recrawl: listing the rows of %s: %w", source, err)
		}
		for i := range rows {
			if !fn(rows[i]) {
				*due = nil
				return nil
			}
			if !rows[i].NextCheck.After(start) {
				*due = append(*due, &rows[i]) // held in place, in its page
			}
		}
		read += len(rows)
		if len(rows) < size {
			return nil
		}
		after = rows[len(rows)-1].URL
		// A full page at the bound may be the last: only a row past it
		// shows the source too large.
		if read > handOnRows || 4*len(*due) < read {
			*due = nil
			stop()
			return e.eachPlanRow(ctx, pl, source, after, fn)
		}
		if next == nil && read+size <= handOnRows {
			next, stop = readAhead(ctx, size, after, func(ctx context.Context, after string) ([]crawlstate.Row, error) {
				return ll.LiveRows(ctx, source, after, size)
			})
		}
	}
}

// eachPlanRow calls fn for every live row of source whose URL sorts after
// after, as pl lists it for planning, a page of BatchSize rows at a time,
// until fn returns false. The next page is read while fn works through
// one (readAhead).
func (e *Engine) eachPlanRow(ctx context.Context, pl crawlstate.PlanLister, source, after string, fn func(crawlstate.Row) bool) error {
	size := e.cfg.BatchSize
	next, stop := readAhead(ctx, size, after, func(ctx context.Context, after string) ([]crawlstate.Row, error) {
		return pl.PlanRows(ctx, source, after, size)
	})
	defer stop()
	for {
		rows, err := next()
		if err != nil {
			return fmt.Errorf("recrawl: listing the rows of %s: %w", source, err)
		}
		for _, row := range rows {
			if !fn(row) {
				return nil
			}
		}
		if len(rows) < size {
			return nil
		}
	}
}

// readAhead lists rows a page of size at a time through list, starting
// after the URL after, one page ahead of its caller: a goroutine reads
// the next page while the caller works through the one next returned, so
// that the state's reading and the caller's work overlap. next returns
// the pages in order; after a page shorter than size it is not called
// again. stop ends the reading (the page read ahead is dropped) and waits
// for it; it may be called more than once.
func readAhead(ctx context.Context, size int, after string, list func(ctx context.Context, after string) ([]crawlstate.Row, error)) (next func() ([]crawlstate.Row, error), stop func()) {
	type page struct {
		rows []crawlstate.Row
		err  error
	}
	ctx, cancel := context.WithCancel(ctx)
	pages := make(chan page, 1)
	done := make(chan struct{})
	go func() {
		defer close(done)
		defer close(pages)
		for {
			rows, err := list(ctx, after)
			select {
			case pages <- page{rows, err}:
			case <-ctx.Done():
				return
			}
			if err != nil || len(rows) < size {
				return
			}
			after = rows[len(rows)-1].URL
		}
	}()
	next = func() ([]crawlstate.Row, error) {
		p, ok := <-pages
		if !ok {
			// Only a cancelled reading ends without its last page.
			if err := ctx.Err(); err != nil {
				return nil, err
			}
			return nil, errors.New("the reading ended early")
		}
		return p.rows, p.err
	}
	stop = func() {
		cancel()
		<-done
	}
	return next, stop
}

// planInput is a row as a Planner sees it: its cached estimate (or the
// estimate of its statistics), weight and last fetch; a row never stored
// counts as never fetched. The row's checks are copied into checks's
// storage, which it returns for the next row.
func (e *Engine) planInput(row crawlstate.Row, checks []schedule.Check) (schedule.PlanInput, schedule.Page, []schedule.Check) {
	p := pageOf(crawlstate.Row{Interval: row.Interval, LastFetched: row.LastFetched, Visits: row.Visits, Changes: row.Changes,
		Stats: crawlstate.Stats{LastChanged: row.Stats.LastChanged, Elapsed: row.Stats.Elapsed, LastModified: row.Stats.LastModified,
			ChangeRate: row.Stats.ChangeRate, Weight: row.Stats.Weight}})
	// The checks in checks's storage: Input reads them and keeps none.
	checks = checks[:0]
	for _, c := range row.Stats.Recent {
		checks = append(checks, schedule.Check{Elapsed: c.Elapsed, Changed: c.Changed, Modified: c.Modified, CoChance: c.CoChance})
	}
	p.Recent = checks
	if e.cfg.Weight != nil {
		p.Weight = sanitizedWeight(e.cfg.Weight(row.URL))
	}
	in := schedule.InputOf(p)
	if row.ContentHash == "" {
		in.LastFetched = time.Time{}
	}
	return in, p, checks
}

// sanitizedWeight is w, or 0 (the default weight) when it is not
// positive and finite.
func sanitizedWeight(w float64) float64 {
	if !(w > 0) || math.IsInf(w, 0) {
		return 0
	}
	return w
}

// schedulerName names a scheduler in the report: its Name() string
// method, else its type.
func schedulerName(s schedule.Scheduler) string {
	if n, ok := s.(interface{ Name() string }); ok {
		return n.Name()
	}
	return fmt.Sprintf("%T", s)
}
