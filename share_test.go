package recrawl_test

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"net/http"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/require"

	"github.com/recrawl/recrawl"
	"github.com/recrawl/recrawl/alert"
	"github.com/recrawl/recrawl/clock"
	"github.com/recrawl/recrawl/crawlstate"
	"github.com/recrawl/recrawl/crawlstate/memory"
	"github.com/recrawl/recrawl/crawlstate/postgres"
	"github.com/recrawl/recrawl/crawlstate/statetest"
	"github.com/recrawl/recrawl/discover"
	"github.com/recrawl/recrawl/embed"
	"github.com/recrawl/recrawl/index"
	"github.com/recrawl/recrawl/internal/testsite"
	"github.com/recrawl/recrawl/schedule"
)

// shiftClock is the system clock moved forward by an offset a test sets:
// engines that share a State wait in real time (for the lock, for leases),
// and a test still jumps days between runs.
type shiftClock struct{ off atomic.Int64 }

func (c *shiftClock) Now() time.Time { return time.Now().Add(time.Duration(c.off.Load())) }

func (c *shiftClock) NewTimer(d time.Duration) clock.Timer { return clock.Real().NewTimer(d) }

func (c *shiftClock) Advance(d time.Duration) { c.off.Add(int64(d)) }

// sharedState is a State with every ability an engine uses, shared.
type sharedState interface {
	statetest.Full
	crawlstate.Sharer
}

// errDead is the error of every write of a worker that died.
var errDead = errors.New("the worker's process is gone")

// dyingState is one worker's handle on a shared State. Once dead, its
// writes fail, as a killed process's would never happen: what it claimed
// stays leased until the leases expire.
type dyingState struct {
	sharedState
	dead atomic.Bool
	// at, when set, is called before each Offer and Claim with the call's
	// name; the test kills the worker there.
	at func(call string)
	// failExtend makes every Extend and Renew fail, as a State that is
	// briefly unreachable would.
	failExtend atomic.Bool
}

func (d *dyingState) Renew(ctx context.Context, source, owner string, urls []string, now time.Time, ttl time.Duration) ([]string, error) {
	if err := d.check(); err != nil {
		return nil, err
	}
	if d.failExtend.Load() {
		return nil, errors.New("renew: connection reset")
	}
	return d.sharedState.Renew(ctx, source, owner, urls, now, ttl)
}

func (d *dyingState) check() error {
	if d.dead.Load() {
		return errDead
	}
	return nil
}

func (d *dyingState) Offer(ctx context.Context, source string, run time.Time, owner string, urls []string) (int, error) {
	if d.at != nil {
		d.at("offer")
	}
	if err := d.check(); err != nil {
		return 0, err
	}
	return d.sharedState.Offer(ctx, source, run, owner, urls)
}

func (d *dyingState) RecordRun(ctx context.Context, source string, start time.Time) error {
	if err := d.check(); err != nil {
		return err
	}
	return d.sharedState.RecordRun(ctx, source, start)
}

func (d *dyingState) Refresh(ctx context.Context, source, owner string, now time.Time, ttl time.Duration) error {
	if err := d.check(); err != nil {
		return err
	}
	return d.sharedState.Refresh(ctx, source, owner, now, ttl)
}

func (d *dyingState) Record(ctx context.Context, source string, rs []crawlstate.Result) error {
	if err := d.check(); err != nil {
		return err
	}
	return d.sharedState.Record(ctx, source, rs)
}

func (d *dyingState) RecordFailure(ctx context.Context, source string, f crawlstate.Failure) error {
	if err := d.check(); err != nil {
		return err
	}
	return d.sharedState.RecordFailure(ctx, source, f)
}

func (d *dyingState) Claim(ctx context.Context, source string, run time.Time, owner string, now time.Time, ttl time.Duration, limit int) ([]crawlstate.Row, int, time.Time, error) {
	if d.at != nil {
		d.at("claim")
	}
	if err := d.check(); err != nil {
		return nil, 0, time.Time{}, err
	}
	return d.sharedState.Claim(ctx, source, run, owner, now, ttl, limit)
}

func (d *dyingState) Extend(ctx context.Context, source, owner string, now time.Time, ttl time.Duration) (int, error) {
	if err := d.check(); err != nil {
		return 0, err
	}
	if d.failExtend.Load() {
		return 0, errors.New("extend: connection reset")
	}
	return d.sharedState.Extend(ctx, source, owner, now, ttl)
}

func (d *dyingState) Release(ctx context.Context, source, owner string, urls []string) error {
	if err := d.check(); err != nil {
		return err
	}
	return d.sharedState.Release(ctx, source, owner, urls)
}

func (d *dyingState) Withdraw(ctx context.Context, source, owner string, urls []string) error {
	if err := d.check(); err != nil {
		return err
	}
	return d.sharedState.Withdraw(ctx, source, owner, urls)
}

func (d *dyingState) Unlock(ctx context.Context, source, owner string) error {
	if err := d.check(); err != nil {
		return err
	}
	return d.sharedState.Unlock(ctx, source, owner)
}

// killAt is a transport that kills its worker when the worker sends its
// n-th page request. A dead worker sends nothing more: a page request
// another fetch worker starts after the kill fails, as it would in a
// process that is gone. It remembers the pages it sent.
type killAt struct {
	base  http.RoundTripper
	kill  func()
	pages string

	mu   sync.Mutex
	n    int      // the page request that kills; 0: none
	seen int      // page requests seen while the worker lived
	dead bool     // the kill has run: no page request goes out
	sent []string // paths of the page requests passed on to base since dieAtNext
}

func (k *killAt) RoundTrip(req *http.Request) (*http.Response, error) {
	if strings.HasPrefix(req.URL.Path, k.pages) {
		k.mu.Lock()
		if k.dead {
			k.mu.Unlock()
			return nil, errDead
		}
		k.seen++
		if k.seen == k.n {
			k.dead = true
			k.kill()
		}
		k.sent = append(k.sent, req.URL.Path)
		k.mu.Unlock()
	}
	return k.base.RoundTrip(req)
}

// dieAtNext arms k to kill its worker at its next page request and
// forgets the pages sent so far.
func (k *killAt) dieAtNext() {
	k.mu.Lock()
	defer k.mu.Unlock()
	k.n = k.seen + 1
	k.sent = nil
}

// sentPaths returns the paths of the page requests k passed on since it
// was armed.
func (k *killAt) sentPaths() []string {
	k.mu.Lock()
	defer k.mu.Unlock()
	return append([]string(nil), k.sent...)
}

// sharedCluster is a test site and several engines, each with its own
// handle on one shared State.
type sharedCluster struct {
	t       *testing.T
	clk     *shiftClock
	site    *testsite.Site
	src     discover.Source
	states  []*dyingState
	engines []*recrawl.Engine
	kills   []*killAt
	cancels []context.CancelFunc
	ctxs    []context.Context

	mu        sync.Mutex
	delivered map[string]int // alert ID -> deliveries, across engines
}

// newSharedCluster starts a site and workers engines on the States open
// returns (one call per engine); tweak, when not nil, changes engine i's
// Config.
func newSharedCluster(t *testing.T, opts testsite.Options, workers int, open func(t *testing.T) sharedState, tweak func(i int, cfg *recrawl.Config)) *sharedCluster {
	t.Helper()
	c := &sharedCluster{t: t, clk: &shiftClock{}, delivered: map[string]int{}}
	c.clk.Advance(time.Until(start)) // the site's and the engines' time starts at start
	opts.Clock = c.clk
	c.site = testsite.New(opts)
	t.Cleanup(c.site.Close)
	c.src = discover.Sitemap{URL: c.site.SitemapURL()}
	emb, err := embed.NewHashing(32)
	require.NoError(t, err)
	idx := index.NewMemory(32)
	sink := alert.Func(func(_ context.Context, a alert.Alert) error {
		c.mu.Lock()
		defer c.mu.Unlock()
		c.delivered[a.ID]++
		return nil
	})
	for i := range workers {
		st := &dyingState{sharedState: open(t)}
		ctx, cancel := context.WithCancel(context.Background())
		t.Cleanup(cancel)
		k := &killAt{base: http.DefaultTransport, pages: "/docs/", kill: func() { st.dead.Store(true); cancel() }}
		l := recrawl.DefaultLimits()
		l.RequestDelay = 0
		l.HostConcurrency = 4
		l.MaxPages = 0 // no cap: each engine takes what it claims
		cfg := recrawl.Config{
			State: st, Clock: c.clk, Limits: &l, Workers: 4, LockTTL: 5 * time.Second,
			Scheduler: schedule.DefaultHalving, HTTPClient: &http.Client{Transport: k},
			Embedder: emb, Index: idx, Alerts: sink,
		}
		if tweak != nil {
			tweak(i, &cfg)
		}
		eng, err := recrawl.New(cfg)
		require.NoError(t, err)
		c.states, c.engines, c.kills = append(c.states, st), append(c.engines, eng), append(c.kills, k)
		c.ctxs, c.cancels = append(c.ctxs, ctx), append(c.cancels, cancel)
	}
	return c
}

// runAll resets the site's log and runs every engine on the source at
// once; it returns their reports and errors, in engine order.
func (c *sharedCluster) runAll() ([]*recrawl.Report, []error) {
	c.resetLog()
	all := make([]int, len(c.engines))
	for i := range all {
		all[i] = i
	}
	return c.runSome(all...)
}

func (c *sharedCluster) resetLog() {
	require.Eventually(c.t, func() bool { return c.site.InFlight() == 0 }, 5*time.Second, time.Millisecond)
	c.site.ResetLog()
}

// runSome runs the engines named at once and returns their reports and
// errors, in the order named.
func (c *sharedCluster) runSome(engines ...int) ([]*recrawl.Report, []error) {
	reps := make([]*recrawl.Report, len(engines))
	errs := make([]error, len(engines))
	var wg sync.WaitGroup
	for i, e := range engines {
		wg.Go(func() { reps[i], errs[i] = c.engines[e].Run(c.ctxs[e], c.src) })
	}
	wg.Wait()
	return reps, errs
}

// pageGets counts the site's GETs of each page path since the log was
// reset.
func (c *sharedCluster) pageGets() map[string]int { return pageGets(c.site) }

// pageGets counts site's GETs of each page path since its log was reset.
func pageGets(site *testsite.Site) map[string]int {
	n := map[string]int{}
	for _, r := range site.PageRequests() {
		n[r.Path]++
	}
	return n
}

// requireEachPageOnce checks that the site served every page exactly once.
func (c *sharedCluster) requireEachPageOnce() {
	c.t.Helper()
	gets := c.pageGets()
	require.Len(c.t, gets, len(c.site.Paths()), "every page requested")
	for path, n := range gets {
		require.Equal(c.t, 1, n, "%s requested %d times", path, n)
	}
}

// sum adds up a count over reports.
func sum(reps []*recrawl.Report, f func(*recrawl.Report) int) int {
	n := 0
	for _, r := range reps {
		n += f(r)
	}
	return n
}

// runSharedProof is the proof that engines sharing a State split a
// source's work: a cold run, a run after edits (alerts exactly once), and
// a run in which one worker dies holding leases.
func runSharedProof(t *testing.T, pages int, open func(t *testing.T) sharedState) {
	const workers = 4
	c := newSharedCluster(t, testsite.Options{Pages: pages}, workers, open, nil)

	// Cold: every page is new; each is fetched by exactly one engine, and
	// the work is spread over all of them.
	reps, errs := c.runAll()
	leaders := 0
	for i, rep := range reps {
		require.NoError(t, errs[i], "engine %d", i)
		reconcile(t, rep)
		t.Logf("engine %d: joined %v offered %d due %d fetched %d started %s finished %s", i, rep.Joined, rep.Offered, rep.Due, rep.Fetched, rep.StartedAt.Format("15:04:05.000"), rep.FinishedAt.Format("15:04:05.000"))
		require.Positive(t, rep.Fetched, "engine %d fetched its share", i)
		if !rep.Joined {
			leaders++
			require.Equal(t, pages, rep.Offered, "the leader offered every new row")
			require.Equal(t, pages, rep.Discovered)
		} else {
			require.Zero(t, rep.Discovered, "a joined run does not discover")
		}
	}
	require.Equal(t, 1, leaders, "one engine discovered and offered")
	require.Equal(t, pages, sum(reps, func(r *recrawl.Report) int { return r.New }))
	require.Equal(t, pages, sum(reps, func(r *recrawl.Report) int { return r.Due }))
	c.requireEachPageOnce()

	// Every page due again, 2% edited: each page is revalidated once, and
	// each change alerted once, whichever engine found it.
	c.clk.Advance(60 * schedule.Day)
	edited := max(pages/50, 1)
	for _, p := range c.site.Paths()[:edited] {
		c.site.Edit(p)
	}
	reps, errs = c.runAll()
	for i, rep := range reps {
		require.NoError(t, errs[i], "engine %d", i)
		reconcile(t, rep)
	}
	require.Equal(t, pages, sum(reps, func(r *recrawl.Report) int { return r.Fetched }))
	require.Equal(t, edited, sum(reps, func(r *recrawl.Report) int { return r.Changed }))
	require.Equal(t, pages-edited, sum(reps, func(r *recrawl.Report) int { return r.NotModified }))
	c.requireEachPageOnce()
	c.mu.Lock()
	require.Len(t, c.delivered, edited, "one alert per changed page")
	for id, n := range c.delivered {
		require.Equal(t, 1, n, "alert %s delivered %d times", id, n)
	}
	c.mu.Unlock()

	// Every page due again. The last engine leads the run alone and dies
	// (its process is gone: nothing it writes lands, its leases stay) as
	// it sends its first page request, holding the rows it claimed. The
	// others join its run, fetch the rest, wait for its leases to expire
	// and take its rows over, so every row is recorded; only a row the
	// dead worker requested can be fetched twice.
	c.clk.Advance(60 * schedule.Day)
	roundStart := c.clk.Now()
	dying := workers - 1
	c.kills[dying].dieAtNext()
	c.resetLog()
	dead, derrs := c.runSome(dying)
	require.ErrorIs(t, derrs[0], context.Canceled)
	require.True(t, c.states[dying].dead.Load(), "the worker died")
	require.False(t, dead[0].Joined)
	require.Equal(t, pages, dead[0].Offered)
	// It claims 16 rows at a time (4 per fetch worker) and hands them to
	// its fetch stage; on a loaded machine it may claim again before a
	// fetch worker sends the first request.
	require.Positive(t, dead[0].Due)
	require.Zero(t, dead[0].Due%16, "it died holding whole claims: %d rows", dead[0].Due)
	survivors := make([]int, dying)
	for i := range survivors {
		survivors[i] = i
	}
	reps, errs = c.runSome(survivors...)
	for i, rep := range reps {
		require.NoError(t, errs[i], "engine %d", i)
		reconcile(t, rep)
		require.True(t, rep.Joined, "engine %d joined the dead worker's run", i)
	}
	require.Equal(t, pages, sum(reps, func(r *recrawl.Report) int { return r.Fetched }), "the survivors fetched every row, the dead worker's too")
	st := c.states[0]
	for _, u := range c.site.PageURLs() {
		row, err := st.Get(context.Background(), c.src.Name(), u)
		require.NoError(t, err)
		require.False(t, row.LastFetched.Before(roundStart), "%s recorded in the round", u)
	}
	// The dead worker sent its first page request and nothing after it.
	sent := c.kills[dying].sentPaths()
	require.Len(t, sent, 1, "the dead worker sent one page request: %v", sent)
	gets := c.pageGets()
	require.Len(t, gets, pages)
	for path, n := range gets {
		if n > 1 {
			require.Equal(t, 2, n, path)
			require.Equal(t, sent[0], path, "only the page the dead worker requested is fetched twice")
		}
	}
}

// TestSharedRunsOnPostgres: four engines, each with its own connection
// pool, share a PostgreSQL State over a 5,000-page site.
func TestSharedRunsOnPostgres(t *testing.T) {
	dsn := os.Getenv("RECRAWL_TEST_POSTGRES_DSN")
	if dsn == "" {
		t.Skip("RECRAWL_TEST_POSTGRES_DSN is not set: no PostgreSQL server to test against")
	}
	pages := 5000
	if testing.Short() {
		pages = 500
	}
	b := make([]byte, 6)
	_, _ = rand.Read(b)
	schema := "recrawl_share_test_" + hex.EncodeToString(b)
	t.Cleanup(func() {
		p, err := pgxpool.New(context.Background(), dsn)
		require.NoError(t, err)
		defer p.Close()
		_, err = p.Exec(context.Background(), `DROP SCHEMA IF EXISTS `+pgx.Identifier{schema}.Sanitize()+` CASCADE`)
		require.NoError(t, err)
	})
	runSharedProof(t, pages, func(t *testing.T) sharedState {
		st, err := postgres.Open(context.Background(), dsn, postgres.WithSchema(schema))
		require.NoError(t, err)
		t.Cleanup(func() { st.Close() })
		return st
	})
}

// TestSharedRuns: four engines in one process share a memory State.
func TestSharedRuns(t *testing.T) {
	pages := 2000
	if testing.Short() {
		pages = 400
	}
	st := memory.New(crawlstate.Options{})
	runSharedProof(t, pages, func(*testing.T) sharedState { return st })
}

// A shared run withdraws the rows it may not fetch (robots.txt), so no
// other engine claims them again and no engine waits for them; rows a
// capped engine could not fetch return to the others at once.
func TestSharedRunWithdrawsAndReleases(t *testing.T) {
	const pages = 300
	st := memory.New(crawlstate.Options{})
	open := func(*testing.T) sharedState { return st }
	c := newSharedCluster(t, testsite.Options{Pages: pages, Robots: "User-agent: *\nDisallow: /docs/page-01\n"}, 3, open, func(i int, cfg *recrawl.Config) {
		if i == 0 {
			cfg.Limits.MaxPages = 20
		}
	})
	disallowed := 0
	for _, p := range c.site.Paths() {
		if strings.HasPrefix(p, "/docs/page-01") {
			disallowed++
		}
	}
	require.Positive(t, disallowed)
	// The capped engine leads alone: it offers every row, fetches 20
	// and releases the rest of its claim.
	c.resetLog()
	reps, errs := c.runSome(0)
	require.NoError(t, errs[0])
	reconcile(t, reps[0])
	require.False(t, reps[0].Joined)
	require.Equal(t, pages, reps[0].Offered)
	require.Equal(t, 20, reps[0].Fetched, "the capped engine stopped at its cap")
	require.Equal(t, recrawl.StopMaxPages, reps[0].StoppedBy)
	// The others join its run and fetch the rest.
	more, errs := c.runSome(1, 2)
	for i, rep := range more {
		require.NoError(t, errs[i], "engine %d", i+1)
		reconcile(t, rep)
		require.True(t, rep.Joined)
	}
	reps = append(reps, more...)
	require.Equal(t, pages-disallowed, sum(reps, func(r *recrawl.Report) int { return r.Fetched }), "the others fetched what it could not")
	require.Equal(t, disallowed, sum(reps, func(r *recrawl.Report) int { return r.Skipped[recrawl.SkipRobots] }), "each disallowed row skipped once")
	gets := c.pageGets()
	require.Len(t, gets, pages-disallowed)
	for path, n := range gets {
		require.Equal(t, 1, n, path)
	}
	// The disallowed rows stay due for a later run, offered to nobody.
	due := 0
	var after crawlstate.Key
	for {
		rows, err := st.Due(context.Background(), c.src.Name(), c.clk.Now(), after, 100)
		require.NoError(t, err)
		for _, r := range rows {
			require.True(t, strings.Contains(r.URL, "/docs/page-01"), r.URL)
		}
		due += len(rows)
		if len(rows) < 100 {
			break
		}
		after = crawlstate.KeyOf(rows[len(rows)-1])
	}
	require.Equal(t, disallowed, due)
}

// One engine alone on a shared State runs as it would under the run lock,
// planned by the default scheduler: it leads every run, and a run with
// nothing due sends no page request.
func TestSharedStateAlone(t *testing.T) {
	mem := memory.New(crawlstate.Options{})
	stores := map[string]func(t *testing.T) sharedState{"memory": func(*testing.T) sharedState { return mem }}
	if dsn := os.Getenv("RECRAWL_TEST_POSTGRES_DSN"); dsn != "" {
		stores["postgres"] = func(t *testing.T) sharedState {
			p, err := pgxpool.New(context.Background(), dsn)
			require.NoError(t, err)
			t.Cleanup(p.Close)
			b := make([]byte, 6)
			_, _ = rand.Read(b)
			schema := "recrawl_alone_test_" + hex.EncodeToString(b)
			t.Cleanup(func() {
				_, err := p.Exec(context.Background(), `DROP SCHEMA IF EXISTS `+pgx.Identifier{schema}.Sanitize()+` CASCADE`)
				require.NoError(t, err)
			})
			st, err := postgres.OpenPool(context.Background(), p, postgres.WithSchema(schema))
			require.NoError(t, err)
			return st
		}
	}
	for name, open := range stores {
		t.Run(name, func(t *testing.T) {
			c := newSharedCluster(t, testsite.Options{Pages: 30}, 1, open, func(_ int, cfg *recrawl.Config) { cfg.Scheduler = nil })
			reps, errs := c.runAll()
			require.NoError(t, errs[0])
			reconcile(t, reps[0])
			require.False(t, reps[0].Joined)
			require.Equal(t, 30, reps[0].Offered)
			require.Equal(t, 30, reps[0].New)
			require.Equal(t, "index", reps[0].Scheduler)
			c.clk.Advance(time.Hour)
			c.resetLog()
			reps, errs = c.runAll()
			require.NoError(t, errs[0])
			require.False(t, reps[0].Joined, "the last run is done: the next one leads")
			require.Zero(t, reps[0].Due)
			require.Zero(t, reps[0].Offered)
			require.Empty(t, c.site.PageRequests())
			// Every page due a year later: planned over every row and
			// revalidated.
			c.clk.Advance(365 * schedule.Day)
			reps, errs = c.runAll()
			require.NoError(t, errs[0])
			reconcile(t, reps[0])
			require.Equal(t, 30, reps[0].Fetched)
			require.Equal(t, 30, reps[0].NotModified)
		})
	}
}

// A crawl source on a shared State: the leader's crawl fetches the pages
// it reaches (that is its discovery) and the rows due besides are
// offered; a page is fetched once per run whoever fetches it.
func TestSharedCrawl(t *testing.T) {
	st := memory.New(crawlstate.Options{})
	c := newSharedCluster(t, testsite.Options{Pages: 60}, 3, func(*testing.T) sharedState { return st }, nil)
	c.src = discover.Crawl{URL: c.site.PageURL(c.site.Paths()[0])}
	reps, errs := c.runAll()
	crawled := 0
	for i, rep := range reps {
		require.NoError(t, errs[i], "engine %d", i)
		reconcile(t, rep)
		crawled += rep.Fetched
	}
	require.Positive(t, crawled)
	for path, n := range c.pageGets() {
		require.Equal(t, 1, n, path)
	}
	// A day later the crawl is the leader's again; the pages it does not
	// reach but that are due go to the others through the offer.
	c.clk.Advance(2 * schedule.Day)
	c.resetLog()
	reps, errs = c.runAll()
	fetched := 0
	for i, rep := range reps {
		require.NoError(t, errs[i], "engine %d", i)
		reconcile(t, rep)
		fetched += rep.Fetched
	}
	require.Equal(t, crawled, fetched, "every page known is revalidated once")
	for path, n := range c.pageGets() {
		require.Equal(t, 1, n, path)
	}
}

// lockCounter counts the Lock calls on a shared State.
type lockCounter struct {
	sharedState
	locks atomic.Int32
}

func (l *lockCounter) Lock(ctx context.Context, source, owner string, now time.Time, ttl time.Duration) error {
	l.locks.Add(1)
	return l.sharedState.Lock(ctx, source, owner, now, ttl)
}

// Shutdown stops a shared run that waits for another engine's lock: it
// returns at once, stopped by the shutdown, having done nothing.
func TestSharedRunWaitingStopsOnShutdown(t *testing.T) {
	st := &lockCounter{sharedState: memory.New(crawlstate.Options{})}
	c := newSharedCluster(t, testsite.Options{Pages: 10}, 1, func(*testing.T) sharedState { return st }, nil)
	// Another engine leads and holds the lock for a long while.
	require.NoError(t, st.Lock(context.Background(), c.src.Name(), "another worker", c.clk.Now(), time.Hour))
	done := make(chan *recrawl.Report, 1)
	go func() {
		rep, err := c.engines[0].Run(context.Background(), c.src)
		require.NoError(t, err)
		done <- rep
	}()
	require.Eventually(t, func() bool { return st.locks.Load() >= 3 }, 10*time.Second, time.Millisecond, "the run waits, asking for the lock again")
	select {
	case <-done:
		t.Fatal("the run did not wait for the lock")
	default:
	}
	require.NoError(t, c.engines[0].Shutdown(context.Background()))
	rep := <-done
	require.Equal(t, recrawl.StopShutdown, rep.StoppedBy)
	require.Zero(t, rep.Due)
	require.Empty(t, c.site.PageRequests())
}

// A page that answers slower than a lease lasts keeps its lease while it
// is fetched (the heartbeat extends it), so no other engine fetches it
// again.
func TestSharedRunSlowPageKeepsItsLease(t *testing.T) {
	st := memory.New(crawlstate.Options{})
	c := newSharedCluster(t, testsite.Options{Pages: 40}, 3, func(*testing.T) sharedState { return st }, func(_ int, cfg *recrawl.Config) {
		cfg.LockTTL = time.Second
	})
	slow := c.site.Paths()[5]
	c.site.Slow(slow, 2500*time.Millisecond) // two and a half leases
	reps, errs := c.runAll()
	for i, rep := range reps {
		require.NoError(t, errs[i], "engine %d", i)
		reconcile(t, rep)
	}
	require.Equal(t, 40, sum(reps, func(r *recrawl.Report) int { return r.Fetched }))
	gets := c.pageGets()
	require.Len(t, gets, 40)
	for path, n := range gets {
		require.Equal(t, 1, n, path)
	}
}

// An engine whose lease extensions and renewals fail holds rows whose
// leases expire while they wait for a fetch worker; Claim hands an owner
// its own expired leases again. The engine neither fetches such a row
// twice nor loses it: a claim does not return a row the run holds
// already, and the fenced write records it. The failures are counted.
func TestSharedRunFailingExtendFetchesOnce(t *testing.T) {
	const pages = 20
	st := memory.New(crawlstate.Options{})
	c := newSharedCluster(t, testsite.Options{Pages: pages}, 1, func(*testing.T) sharedState { return st }, func(_ int, cfg *recrawl.Config) {
		cfg.LockTTL = 300 * time.Millisecond
		cfg.Workers = 1
		cfg.Limits.HostConcurrency = 1
	})
	c.states[0].failExtend.Store(true)
	c.site.Slow("*", 110*time.Millisecond) // a claim of 4 rows outlives its lease
	reps, errs := c.runAll()
	require.NoError(t, errs[0])
	reconcile(t, reps[0])
	require.Equal(t, pages, reps[0].Fetched)
	require.Zero(t, reps[0].Skipped[recrawl.SkipLeaseLost], "nobody took a row over")
	require.Positive(t, reps[0].StateWriteFailures.Leases, "the failed extensions are counted")
	c.requireEachPageOnce()
	for _, u := range c.site.PageURLs() {
		row, err := st.Get(context.Background(), c.src.Name(), u)
		require.NoError(t, err)
		require.Equal(t, 1, row.Visits, u)
	}
}
