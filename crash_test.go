//go:build cgo

// The crash test needs SQLite: child processes kill themselves mid-run and
// the next one reopens the same state file.

package recrawl_test

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/recrawl/recrawl"
	"github.com/recrawl/recrawl/alert"
	"github.com/recrawl/recrawl/clock"
	"github.com/recrawl/recrawl/crawlstate"
	"github.com/recrawl/recrawl/crawlstate/sqlite"
	"github.com/recrawl/recrawl/discover"
	"github.com/recrawl/recrawl/index"
	"github.com/recrawl/recrawl/internal/testsite"
)

// crashEnv carries a child's spec: the crash test re-executes its own test
// binary with it set, and TestCrashChild runs the engine once in that
// child, killing itself with SIGKILL at the chosen point.
const crashEnv = "RECRAWL_CRASH_CHILD"

// killPoint is where a child kills itself: at the N-th call of a kind,
// before or after the call's side effect.
type killPoint struct {
	Kind  string // "discovery", "fetch", "index", "alert", "commit"
	N     int64
	After bool
}

type childSpec struct {
	State, Index, Alerts, Sitemap string
	Now                           time.Time
	Kill                          *killPoint
}

// The kinds of kill points, and the range of N drawn for each: the number
// of such calls a run makes over the site (discovery documents, page
// requests, index writes of changed pages, alert deliveries, commit
// transactions).
var killKinds = []struct {
	kind string
	max  func(pages int) int64
}{
	{"discovery", func(pages int) int64 { return int64(pages/100) + 1 }},
	{"fetch", func(pages int) int64 { return int64(pages) * 3 / 4 }},
	{"index", func(pages int) int64 { return int64(pages) / 25 }},
	{"alert", func(pages int) int64 { return int64(pages) / 25 }},
	{"commit", func(int) int64 { return 4 }},
}

// killer counts the calls of each kind and kills the process at its point.
type killer struct {
	at     *killPoint
	counts map[string]*atomic.Int64
}

func newKiller(at *killPoint) *killer {
	k := &killer{at: at, counts: map[string]*atomic.Int64{}}
	for _, kk := range killKinds {
		k.counts[kk.kind] = &atomic.Int64{}
	}
	return k
}

// around runs fn as the next call of kind, dying before or after it when
// this is the kill point.
func (k *killer) around(kind string, fn func() error) error {
	hit := k.at != nil && k.at.Kind == kind && k.counts[kind].Add(1) == k.at.N
	if hit && !k.at.After {
		die()
	}
	err := fn()
	if hit {
		die()
	}
	return err
}

func die() {
	_ = syscall.Kill(os.Getpid(), syscall.SIGKILL)
	select {} // the signal is on its way
}

type killTransport struct {
	k    *killer
	base http.RoundTripper
}

func (t killTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	kind := "fetch"
	if strings.Contains(req.URL.Path, "sitemap") {
		kind = "discovery"
	} else if req.URL.Path == "/robots.txt" {
		return t.base.RoundTrip(req)
	}
	var resp *http.Response
	err := t.k.around(kind, func() (err error) {
		resp, err = t.base.RoundTrip(req)
		return err
	})
	return resp, err
}

type killIndex struct {
	*logIndex
	k *killer
}

func (x killIndex) Upsert(ctx context.Context, records []index.Record) error {
	return x.k.around("index", func() error { return x.logIndex.Upsert(ctx, records) })
}

type killSink struct {
	alert.Sink
	k *killer
}

func (s killSink) Deliver(ctx context.Context, a alert.Alert) error {
	return s.k.around("alert", func() error { return s.Sink.Deliver(ctx, a) })
}

// killState embeds the state (so every optional ability stays visible)
// and kills around commits.
type killState struct {
	testStore
	k *killer
}

func (s killState) Record(ctx context.Context, source string, results []crawlstate.Result) error {
	return s.k.around("commit", func() error { return s.testStore.Record(ctx, source, results) })
}

// TestCrashChild is the child side of TestCrashRecovery.
func TestCrashChild(t *testing.T) {
	raw := os.Getenv(crashEnv)
	if raw == "" {
		t.Skip("the child process of TestCrashRecovery")
	}
	var spec childSpec
	require.NoError(t, json.Unmarshal([]byte(raw), &spec))
	k := newKiller(spec.Kill)
	st, err := sqlite.Open(context.Background(), spec.State)
	require.NoError(t, err)
	defer st.Close()
	idx := openLogIndex(t, spec.Index)
	af, err := os.OpenFile(spec.Alerts, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
	require.NoError(t, err)
	defer af.Close()
	cfg := oracleConfig(t, killState{st, k}, clock.NewAutoFake(spec.Now), killIndex{idx, k}, killSink{alert.JSONL(af), k})
	cfg.HTTPClient = &http.Client{Transport: killTransport{k, http.DefaultTransport}}
	// A lock that outlives the gap between runs: a restart must take over
	// the dead child's lock because its process is gone, not because the
	// lock expired.
	cfg.LockTTL = 24 * 365 * time.Hour
	eng, err := recrawl.New(cfg)
	require.NoError(t, err)
	rep, err := eng.Run(context.Background(), discover.Sitemap{URL: spec.Sitemap})
	require.NoError(t, err)
	out, _ := json.Marshal(rep)
	fmt.Printf("REPORT %s\n", out)
}

// TestCrashRecovery runs the engine in child processes over a changing
// site and SIGKILLs them at seeded points spread over discovery, fetch,
// index writes, commits and alert delivery. After every kill the state
// passes PRAGMA integrity_check; after the last, one clean run must leave
// state, index and alerts exactly where a fresh crawl of the site puts
// them: no page lost, no record or alert duplicated (an alert may be
// redelivered with its ID).
func TestCrashRecovery(t *testing.T) {
	if os.Getenv(crashEnv) != "" {
		t.Skip("in the child")
	}
	pages, kills := 2000, 32
	if testing.Short() || raceEnabled {
		pages, kills = 200, 8
	}
	clk := clock.NewFake(start)
	site := testsite.New(testsite.Options{Pages: pages, SitemapSplit: 100, Clock: clk, Words: 60})
	t.Cleanup(site.Close)
	dir := t.TempDir()
	spec := childSpec{
		State: filepath.Join(dir, "state.sqlite"), Index: filepath.Join(dir, "index.log"),
		Alerts: filepath.Join(dir, "alerts.jsonl"), Sitemap: site.SitemapURL(),
	}
	rng := rand.New(rand.NewPCG(12, 2026))
	byKind := map[string]int{}
	killed, runs, added := 0, 0, 0
	runChild := func(kill *killPoint) bool {
		t.Helper()
		runs++
		spec.Now = clk.Now()
		spec.Kill = kill
		b, err := json.Marshal(spec)
		require.NoError(t, err)
		cmd := exec.Command(os.Args[0], "-test.run=^TestCrashChild$", "-test.count=1")
		cmd.Env = append(os.Environ(), crashEnv+"="+string(b))
		out, err := cmd.CombinedOutput()
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() && ws.Signal() == syscall.SIGKILL {
				integrity(t, spec.State)
				return true
			}
		}
		require.NoError(t, err, "child run %d (kill %+v):\n%s", runs, kill, out)
		return false
	}
	edit := func() {
		paths := site.Paths()
		for range pages / 50 {
			p := paths[rng.IntN(len(paths))]
			if pg, _ := site.Page(p); pg.Status == http.StatusOK {
				site.Edit(p)
			}
		}
		for range 2 {
			p := paths[rng.IntN(len(paths))]
			site.Delete(p, http.StatusNotFound)
		}
		added++
		site.Add(fmt.Sprintf("/docs/added-%03d", added), "Added", fmt.Sprintf("<p>Page %d was added between runs, with a few words of its own.</p>", added))
	}
	// A first clean run knows the site; then the kills, with edits and
	// time between runs.
	require.False(t, runChild(nil))
	for attempt := 0; killed < kills && attempt < 3*kills; attempt++ {
		clk.Advance(13 * time.Hour)
		edit()
		kk := killKinds[attempt%len(killKinds)]
		kill := &killPoint{Kind: kk.kind, N: 1 + rng.Int64N(max(kk.max(pages), 1)), After: rng.IntN(2) == 1}
		if runChild(kill) {
			killed++
			byKind[kk.kind]++
		}
	}
	require.GreaterOrEqual(t, killed, kills, "kills that hit their point")
	for _, k := range killKinds {
		require.Positive(t, byKind[k.kind], "kills during %s", k.kind)
	}

	// One clean run, late enough that every page is due.
	clk.Advance(60 * 24 * time.Hour)
	require.False(t, runChild(nil))
	st, err := sqlite.Open(context.Background(), spec.State)
	require.NoError(t, err)
	defer st.Close()
	alerts := readAlerts(t, spec.Alerts)
	kinds := map[alert.Kind]int{}
	for _, a := range alerts {
		kinds[a.Kind]++
	}
	v := checkOracle(t, site, discover.Sitemap{URL: site.SitemapURL()}, st, replayIndex(t, spec.Index), alerts, clk.Now())
	require.Zero(t, v.Lost)
	require.Zero(t, v.Duplicated)
	t.Logf("crash test: %d pages, %d child runs, %d SIGKILLs (%v), integrity ok after each; oracle: %d live, %d gone, %d records, %d transitions alerted (deliveries by kind %v), %d redeliveries; lost %d, duplicated %d",
		pages, runs, killed, byKind, v.Live, v.Gone, v.Records, v.Transitions, kinds, v.Redeliveries, v.Lost, v.Duplicated)
}

// integrity runs PRAGMA integrity_check on a state file.
func integrity(t testing.TB, path string) {
	t.Helper()
	db, err := sql.Open("sqlite3", "file:"+path+"?mode=ro")
	require.NoError(t, err)
	defer db.Close()
	var res string
	require.NoError(t, db.QueryRow("PRAGMA integrity_check").Scan(&res))
	require.Equal(t, "ok", res, "PRAGMA integrity_check of %s", path)
}
