package recrawl_test

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/require"

	"github.com/recrawl/recrawl"
	"github.com/recrawl/recrawl/alert"
	"github.com/recrawl/recrawl/crawlstate"
	"github.com/recrawl/recrawl/crawlstate/memory"
	"github.com/recrawl/recrawl/crawlstate/postgres"
	"github.com/recrawl/recrawl/discover"
	"github.com/recrawl/recrawl/embed"
	"github.com/recrawl/recrawl/index"
	"github.com/recrawl/recrawl/internal/testsite"
	"github.com/recrawl/recrawl/schedule"
)

// shareFaultEnv carries a faultSpec to TestShareFaultChild.
const shareFaultEnv = "RECRAWL_SHARE_FAULT_CHILD"

// faultSpec is one worker process of the shared-run fault tests.
type faultSpec struct {
	DSN, Schema, Sitemap string
	Dir                  string // the test's directory: markers, reports, alerts
	Worker               int
	// Kill names where the worker dies (SIGKILL): "robots" (robots.txt
	// answered), "sitemap" (the sitemap answered), "offer" (one batch of
	// the offer stored, the next not), "offered" (the offer complete, at
	// the first claim); "" lives. At that point it writes the marker
	// at-<worker> and waits for the file "go" before it dies.
	Kill  string
	TTL   time.Duration
	Batch int
}

// faultResult is what a worker process leaves in report-<worker>.json.
type faultResult struct {
	Report *recrawl.Report
	Err    string
}

func (s faultSpec) path(name string) string { return filepath.Join(s.Dir, name) }

// die is the kill point: the marker, the wait for "go", SIGKILL.
func (s faultSpec) die() {
	_ = os.WriteFile(s.path(fmt.Sprintf("at-%d", s.Worker)), nil, 0o644)
	for deadline := time.Now().Add(60 * time.Second); time.Now().Before(deadline); time.Sleep(5 * time.Millisecond) {
		if _, err := os.Stat(s.path("go")); err == nil {
			break
		}
	}
	_ = syscall.Kill(os.Getpid(), syscall.SIGKILL)
	select {} // the signal is on its way
}

// leaderFaultTransport kills its worker once robots.txt or the sitemap answered.
type leaderFaultTransport struct {
	spec faultSpec
	base http.RoundTripper
}

func (f leaderFaultTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := f.base.RoundTrip(req)
	switch {
	case f.spec.Kill == "robots" && req.URL.Path == "/robots.txt",
		f.spec.Kill == "sitemap" && req.URL.String() == f.spec.Sitemap:
		f.spec.die()
	}
	return resp, err
}

// leaderFaultState kills its worker inside the offer or at its first claim.
type leaderFaultState struct {
	sharedState
	spec   faultSpec
	offers atomic.Int32
}

func (f *leaderFaultState) Offer(ctx context.Context, source string, run time.Time, owner string, urls []string) (int, error) {
	if f.spec.Kill == "offer" && f.offers.Add(1) == 2 {
		f.spec.die()
	}
	return f.sharedState.Offer(ctx, source, run, owner, urls)
}

func (f *leaderFaultState) Claim(ctx context.Context, source string, run time.Time, owner string, now time.Time, ttl time.Duration, limit int) ([]crawlstate.Row, int, time.Time, error) {
	if f.spec.Kill == "offered" {
		f.spec.die()
	}
	return f.sharedState.Claim(ctx, source, run, owner, now, ttl, limit)
}

// TestShareFaultChild is one worker process of the shared-run fault tests.
func TestShareFaultChild(t *testing.T) {
	raw := os.Getenv(shareFaultEnv)
	if raw == "" {
		t.Skip("a worker process of the shared-run fault tests")
	}
	var spec faultSpec
	require.NoError(t, json.Unmarshal([]byte(raw), &spec))
	ctx := context.Background()
	pg, err := postgres.Open(ctx, spec.DSN, postgres.WithSchema(spec.Schema))
	require.NoError(t, err)
	defer pg.Close()
	af, err := os.OpenFile(spec.path(fmt.Sprintf("alerts-%d", spec.Worker)), os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
	require.NoError(t, err)
	defer af.Close()
	var amu sync.Mutex
	sink := alert.Func(func(_ context.Context, a alert.Alert) error {
		amu.Lock()
		defer amu.Unlock()
		_, err := af.WriteString(a.ID + "\n")
		return err
	})
	emb, err := embed.NewHashing(32)
	require.NoError(t, err)
	l := recrawl.DefaultLimits()
	l.RequestDelay = 0
	l.HostConcurrency = 4
	l.MaxPages = 0
	cfg := recrawl.Config{
		State: &leaderFaultState{sharedState: pg, spec: spec}, Limits: &l, Workers: 4, LockTTL: spec.TTL, BatchSize: spec.Batch,
		Scheduler: schedule.DefaultHalving, HTTPClient: &http.Client{Transport: leaderFaultTransport{spec, http.DefaultTransport}},
		UserAgent: fmt.Sprintf("recrawl-worker-%d", spec.Worker),
		Embedder:  emb, Index: index.NewMemory(32), Alerts: sink, AlertOnNew: true,
	}
	eng, err := recrawl.New(cfg)
	require.NoError(t, err)
	rep, err := eng.Run(ctx, discover.Sitemap{URL: spec.Sitemap})
	res := faultResult{Report: rep}
	if err != nil {
		res.Err = err.Error()
	}
	b, err := json.Marshal(res)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(spec.path(fmt.Sprintf("report-%d.json", spec.Worker)), b, 0o644))
}

// faultCluster runs worker processes over one site and one PostgreSQL
// schema.
type faultCluster struct {
	t    *testing.T
	site *testsite.Site
	spec faultSpec
	pg   *postgres.State
}

func newFaultCluster(t *testing.T, pages int, ttl time.Duration) *faultCluster {
	t.Helper()
	dsn := os.Getenv("RECRAWL_TEST_POSTGRES_DSN")
	if dsn == "" {
		t.Skip("RECRAWL_TEST_POSTGRES_DSN is not set: no PostgreSQL server to test against")
	}
	b := make([]byte, 6)
	_, _ = rand.Read(b)
	schema := "recrawl_fault_test_" + hex.EncodeToString(b)
	t.Cleanup(func() {
		p, err := pgxpool.New(context.Background(), dsn)
		require.NoError(t, err)
		defer p.Close()
		_, err = p.Exec(context.Background(), `DROP SCHEMA IF EXISTS `+pgx.Identifier{schema}.Sanitize()+` CASCADE`)
		require.NoError(t, err)
	})
	site := testsite.New(testsite.Options{Pages: pages, Words: 40})
	t.Cleanup(site.Close)
	pg, err := postgres.Open(context.Background(), dsn, postgres.WithSchema(schema))
	require.NoError(t, err)
	t.Cleanup(func() { pg.Close() })
	return &faultCluster{t: t, site: site, pg: pg, spec: faultSpec{
		DSN: dsn, Schema: schema, Sitemap: site.SitemapURL(), Dir: t.TempDir(), TTL: ttl, Batch: 100,
	}}
}

// start starts worker w, dying at kill ("" lives).
func (c *faultCluster) start(w int, kill string) *exec.Cmd {
	c.t.Helper()
	spec := c.spec
	spec.Worker, spec.Kill = w, kill
	b, err := json.Marshal(spec)
	require.NoError(c.t, err)
	cmd := exec.Command(os.Args[0], "-test.run=^TestShareFaultChild$", "-test.count=1")
	cmd.Env = append(os.Environ(), shareFaultEnv+"="+string(b))
	var out strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &out
	require.NoError(c.t, cmd.Start())
	c.t.Cleanup(func() {
		if cmd.ProcessState == nil {
			_ = cmd.Process.Kill()
			_ = cmd.Wait()
		}
		if c.t.Failed() {
			c.t.Logf("worker %d:\n%s", w, out.String())
		}
	})
	return cmd
}

// waitFile waits for a file of the test's directory.
func (c *faultCluster) waitFile(name string) {
	c.t.Helper()
	require.Eventually(c.t, func() bool {
		_, err := os.Stat(c.spec.path(name))
		return err == nil
	}, 60*time.Second, 5*time.Millisecond, "waiting for %s", name)
}

// result reads worker w's result; it must have ended without error.
func (c *faultCluster) result(w int) *recrawl.Report {
	c.t.Helper()
	b, err := os.ReadFile(c.spec.path(fmt.Sprintf("report-%d.json", w)))
	require.NoError(c.t, err, "worker %d left no report", w)
	var res faultResult
	require.NoError(c.t, json.Unmarshal(b, &res))
	require.Empty(c.t, res.Err, "worker %d", w)
	return res.Report
}

// alerts counts the deliveries of each alert ID over every worker.
func (c *faultCluster) alerts() map[string]int {
	c.t.Helper()
	n := map[string]int{}
	files, err := filepath.Glob(c.spec.path("alerts-*"))
	require.NoError(c.t, err)
	for _, f := range files {
		b, err := os.ReadFile(f)
		require.NoError(c.t, err)
		for _, id := range strings.Fields(string(b)) {
			n[id]++
		}
	}
	return n
}

// requireRecordedOnce checks the state: every page's row recorded, by one
// fetch.
func (c *faultCluster) requireRecordedOnce() {
	c.t.Helper()
	src := discover.Sitemap{URL: c.spec.Sitemap}.Name()
	for _, u := range c.site.PageURLs() {
		row, err := c.pg.Get(context.Background(), src, u)
		require.NoError(c.t, err, u)
		require.Equal(c.t, 1, row.Visits, "%s recorded %d times", u, row.Visits)
	}
}

// killed requires cmd to have died of SIGKILL.
func killed(t *testing.T, cmd *exec.Cmd) {
	t.Helper()
	err := cmd.Wait()
	var ee *exec.ExitError
	require.ErrorAs(t, err, &ee)
	ws, ok := ee.Sys().(syscall.WaitStatus)
	require.True(t, ok && ws.Signaled() && ws.Signal() == syscall.SIGKILL, "the worker died of SIGKILL: %v", err)
}

// requireSurvivorsFinished checks the reports of the two survivors of a
// leader killed at stage: their numbers add up, one of them led the run
// again unless the dead leader's offer was complete ("offered"), and
// together they fetched every one of pages. It returns how many led.
func requireSurvivorsFinished(t *testing.T, stage string, pages int, reps []*recrawl.Report) int {
	t.Helper()
	leads := 0
	for _, rep := range reps {
		reconcile(t, rep)
		if !rep.Joined {
			leads++
		}
	}
	if stage == "offered" {
		require.Zero(t, leads, "the dead leader's offer was complete: both survivors join its run")
	} else {
		require.Equal(t, 1, leads, "one survivor leads the run the dead leader did not offer whole")
	}
	require.Equal(t, pages, sum(reps, func(r *recrawl.Report) int { return r.Fetched }), "the survivors fetched every page")
	return leads
}

// TestSharedRunSurvivesDeadLeader: three worker processes share a
// PostgreSQL State; the leader is SIGKILLed at each stage of its lead
// while the others wait for the lock. The survivors finish the run in the
// same run: one leads it again when the dead leader's offer was not
// complete, both join it when it was; every page is fetched and recorded
// once and every alert delivered once.
func TestSharedRunSurvivesDeadLeader(t *testing.T) {
	if os.Getenv(shareFaultEnv) != "" {
		t.Skip("in the child")
	}
	pages := 600
	if testing.Short() {
		pages = 200
	}
	for _, stage := range []string{"robots", "sitemap", "offer", "offered"} {
		t.Run(stage, func(t *testing.T) {
			c := newFaultCluster(t, pages, 5*time.Second)
			began := time.Now()
			leader := c.start(0, stage)
			c.waitFile("at-0")
			survivors := []*exec.Cmd{c.start(1, ""), c.start(2, "")}
			time.Sleep(500 * time.Millisecond) // the survivors wait for the lock, or join
			require.NoError(t, os.WriteFile(c.spec.path("go"), nil, 0o644))
			killed(t, leader)
			died := time.Now()
			for i, cmd := range survivors {
				require.NoError(t, cmd.Wait(), "survivor %d", i+1)
			}
			finished := time.Now()
			reps := []*recrawl.Report{c.result(1), c.result(2)}
			leads := requireSurvivorsFinished(t, stage, pages, reps)
			gets := pageGets(c.site)
			require.Len(t, gets, pages)
			for path, n := range gets {
				require.Equal(t, 1, n, "%s requested %d times", path, n)
			}
			c.requireRecordedOnce()
			delivered := c.alerts()
			require.Len(t, delivered, pages, "one alert per new page")
			for id, n := range delivered {
				require.Equal(t, 1, n, "alert %s delivered %d times", id, n)
			}
			t.Logf("leader killed after %s: %d pages fetched once by the survivors (%d led, %d joined), %.2f s from the kill to the end of the run (%.2f s in all)",
				stage, pages, leads, 2-leads, finished.Sub(died).Seconds(), finished.Sub(began).Seconds())
		})
	}
}

// TestSharedRunPausedWorker: three worker processes share a PostgreSQL
// State over a site that answers in 20 ms; one is stopped (SIGSTOP) for
// three times the lease while it holds claimed rows, and resumed. The
// others take its rows over when its leases expire; once resumed it
// requests none of the rows it lost, records none, and counts them in
// Report.Skipped[SkipLeaseLost]. Only the pages it was fetching when it
// stopped are requested twice; every row is recorded once and every alert
// delivered once.
func TestSharedRunPausedWorker(t *testing.T) {
	if os.Getenv(shareFaultEnv) != "" {
		t.Skip("in the child")
	}
	pages := 1500
	if testing.Short() {
		pages = 600
	}
	const ttl = 2 * time.Second
	c := newFaultCluster(t, pages, ttl)
	c.site.Slow("*", 20*time.Millisecond)
	workers := []*exec.Cmd{c.start(0, ""), c.start(1, ""), c.start(2, "")}
	const paused = 2
	ua := fmt.Sprintf("recrawl-worker-%d", paused)
	before := func() []string {
		var sent []string
		for _, r := range c.site.PageRequests() {
			if r.UserAgent == ua {
				sent = append(sent, r.Path)
			}
		}
		return sent
	}
	require.Eventually(t, func() bool { return len(before()) >= 20 }, 60*time.Second, time.Millisecond, "worker %d fetches", paused)
	require.NoError(t, workers[paused].Process.Signal(syscall.SIGSTOP))
	// The site logs a request when its answer is written: the requests in
	// flight at the stop are logged 20 ms later, or later still on a
	// loaded machine (a race build, two cores): 200 ms was once too
	// little in CI.
	const logged = time.Second
	time.Sleep(logged)
	sentBefore := map[string]bool{}
	for _, p := range before() {
		sentBefore[p] = true
	}
	time.Sleep(3*ttl - logged)
	resumedAt := len(c.site.PageRequests())
	require.NoError(t, workers[paused].Process.Signal(syscall.SIGCONT))
	for i, cmd := range workers {
		require.NoError(t, cmd.Wait(), "worker %d", i)
	}
	reps := []*recrawl.Report{c.result(0), c.result(1), c.result(2)}
	for _, rep := range reps {
		reconcile(t, rep)
	}
	lost := reps[paused].Skipped[recrawl.SkipLeaseLost]
	require.Positive(t, lost, "the resumed worker left the rows it lost")
	require.Equal(t, pages, sum(reps, func(r *recrawl.Report) int { return r.Fetched }), "every page fetched (counted) once")
	// A fetch worker the stop caught after it checked its lease but
	// before its request reached the site sends that request at once
	// when resumed: it was in flight at the stop too. Each of the child's
	// four fetch workers has at most one such request, the first the
	// paused worker sends after resuming.
	afterResume := map[string]bool{}
	for _, r := range c.site.PageRequests()[resumedAt:] {
		if r.UserAgent == ua && len(afterResume) < 4 {
			afterResume[r.Path] = true
		}
	}
	gets := pageGets(c.site)
	twice := 0
	require.Len(t, gets, pages)
	for path, n := range gets {
		if n > 1 {
			require.Equal(t, 2, n, path)
			require.True(t, sentBefore[path] || afterResume[path], "%s requested twice (%v) but the paused worker had not requested it before it stopped, nor among its first requests when resumed", path, requesters(c.site, path))
			twice++
		}
	}
	require.LessOrEqual(t, twice, 16, "at most one claim of the paused worker is requested twice")
	c.requireRecordedOnce()
	delivered := c.alerts()
	require.Len(t, delivered, pages, "one alert per new page")
	for id, n := range delivered {
		require.Equal(t, 1, n, "alert %s delivered %d times", id, n)
	}
	t.Logf("worker paused %.1f s (lease %s) holding claimed rows: %d of its rows lost to the others, %d pages requested twice (in flight at the pause), every row recorded once, %d alerts delivered once",
		3*ttl.Seconds(), ttl, lost, twice, len(delivered))
}

// stageKiller kills its worker once robots.txt or the sitemap answered.
type stageKiller struct {
	base  http.RoundTripper
	path  string // "/robots.txt", or the sitemap's
	kill  func()
	armed atomic.Bool
}

func (s *stageKiller) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := s.base.RoundTrip(req)
	if s.armed.Load() && (req.URL.Path == s.path || req.URL.String() == s.path) {
		s.armed.Store(false)
		s.kill()
	}
	return resp, err
}

// TestSharedRunSurvivesDeadLeaderInProcess is TestSharedRunSurvivesDeadLeader
// on the in-process memory Sharer: the leader dies (its writes fail, its
// context ends, its lock stays until it expires) at each stage of its
// lead, and two engines started after its death finish the run.
func TestSharedRunSurvivesDeadLeaderInProcess(t *testing.T) {
	const pages = 300
	for _, stage := range []string{"robots", "sitemap", "offer", "offered"} {
		t.Run(stage, func(t *testing.T) {
			st := memory.New(crawlstate.Options{})
			var killer *stageKiller
			c := newSharedCluster(t, testsite.Options{Pages: pages}, 3, func(*testing.T) sharedState { return st }, func(i int, cfg *recrawl.Config) {
				cfg.LockTTL = time.Second
				cfg.BatchSize = 50
				cfg.AlertOnNew = true
				if i == 0 {
					k := cfg.HTTPClient.Transport.(*killAt)
					killer = &stageKiller{base: k, kill: k.kill}
					cfg.HTTPClient = &http.Client{Transport: killer}
				}
			})
			switch stage {
			case "robots":
				killer.path = "/robots.txt"
				killer.armed.Store(true)
			case "sitemap":
				killer.path = c.site.SitemapURL()
				killer.armed.Store(true)
			default:
				offers := 0
				c.states[0].at = func(call string) {
					if call == "offer" {
						offers++
					}
					if (stage == "offer" && offers == 2) || (stage == "offered" && call == "claim") {
						c.kills[0].kill()
					}
				}
			}
			c.resetLog()
			dead, derrs := c.runSome(0)
			require.True(t, c.states[0].dead.Load(), "the leader died")
			require.Error(t, derrs[0])
			require.Zero(t, dead[0].Fetched)
			reps, errs := c.runSome(1, 2)
			for i := range reps {
				require.NoError(t, errs[i], "survivor %d", i+1)
			}
			requireSurvivorsFinished(t, stage, pages, reps)
			c.requireEachPageOnce()
			c.requireRecordedAndAlertedOnce(st)
		})
	}
}

// stallTransport holds every request of its worker while stalled, as a
// paused process holds the requests it had in flight.
type stallTransport struct {
	base    http.RoundTripper
	sent    atomic.Int32  // page requests passed on
	stalled atomic.Bool   // requests wait for resume
	resume  chan struct{} // closed when the stall ends
}

func (s *stallTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	if strings.HasPrefix(req.URL.Path, "/docs/") {
		s.sent.Add(1)
	}
	resp, err := s.base.RoundTrip(req)
	if s.stalled.Load() {
		<-s.resume
	}
	return resp, err
}

// TestSharedRunStalledWorkerInProcess is TestSharedRunPausedWorker on the
// in-process memory Sharer: one engine stalls for three leases with its
// requests in flight and its lease extensions failing, as a paused
// process would; the others take its rows over. Resumed, it requests
// none of the rows it lost and records none: each row is recorded once,
// each alert delivered once, and its report counts the rows it lost.
func TestSharedRunStalledWorkerInProcess(t *testing.T) {
	const pages, ttl = 400, 500 * time.Millisecond
	st := memory.New(crawlstate.Options{})
	stall := &stallTransport{resume: make(chan struct{})}
	c := newSharedCluster(t, testsite.Options{Pages: pages}, 3, func(*testing.T) sharedState { return st }, func(i int, cfg *recrawl.Config) {
		cfg.LockTTL = ttl
		cfg.AlertOnNew = true
		if i == 2 {
			stall.base = cfg.HTTPClient.Transport
			cfg.HTTPClient = &http.Client{Transport: stall}
		}
	})
	c.site.Slow("*", 5*time.Millisecond)
	c.resetLog()
	go func() {
		for stall.sent.Load() < 10 {
			time.Sleep(time.Millisecond)
		}
		c.states[2].failExtend.Store(true)
		stall.stalled.Store(true)
		time.Sleep(3 * ttl)
		c.states[2].failExtend.Store(false)
		close(stall.resume)
	}()
	reps, errs := c.runSome(0, 1, 2)
	for i, rep := range reps {
		require.NoError(t, errs[i], "engine %d", i)
		reconcile(t, rep)
	}
	lost := reps[2].Skipped[recrawl.SkipLeaseLost]
	require.Positive(t, lost, "the stalled engine left the rows it lost")
	require.Equal(t, pages, sum(reps, func(r *recrawl.Report) int { return r.Fetched }))
	gets := c.pageGets()
	require.Len(t, gets, pages)
	twice := 0
	for path, n := range gets {
		if n > 1 {
			require.Equal(t, 2, n, path)
			twice++
		}
	}
	require.LessOrEqual(t, twice, 4, "only the requests in flight at the stall (4 fetch workers) are sent twice")
	c.requireRecordedAndAlertedOnce(st)
	t.Logf("stalled engine: %d rows lost to the others, %d pages requested twice", lost, twice)
}

// requireRecordedAndAlertedOnce checks a cold run of the cluster: every
// page's row recorded by one fetch, and one alert per page (AlertOnNew)
// delivered once.
func (c *sharedCluster) requireRecordedAndAlertedOnce(st crawlstate.State) {
	c.t.Helper()
	for _, u := range c.site.PageURLs() {
		row, err := st.Get(context.Background(), c.src.Name(), u)
		require.NoError(c.t, err)
		require.Equal(c.t, 1, row.Visits, u)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	require.Len(c.t, c.delivered, len(c.site.Paths()), "one alert per new page")
	for id, n := range c.delivered {
		require.Equal(c.t, 1, n, "alert %s delivered %d times", id, n)
	}
}

// requesters lists who requested path, in the order the site logged them:
// each request's user agent and arrival time.
func requesters(site *testsite.Site, path string) []string {
	var out []string
	for _, r := range site.PageRequests() {
		if r.Path == path {
			out = append(out, fmt.Sprintf("%s at %s", r.UserAgent, r.At.Format("15:04:05.000")))
		}
	}
	return out
}
