package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"io"
	"net/http"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"text/tabwriter"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/recrawl/recrawl"
	"github.com/recrawl/recrawl/clock"
	"github.com/recrawl/recrawl/crawlstate"
	"github.com/recrawl/recrawl/crawlstate/memory"
	"github.com/recrawl/recrawl/crawlstate/postgres"
	"github.com/recrawl/recrawl/discover"
	"github.com/recrawl/recrawl/internal/cputime"
	"github.com/recrawl/recrawl/internal/testsite"
)

// The -workers mode: how a source's run scales with the engines that share
// it. For each worker count, a fresh site and a fresh shared State; the
// engines run the source at once (cold: every page new), then again once
// every page is due (all-due: 304s). Each engine is as polite as one
// engine alone (one connection per host, Limits.HostConcurrency 1; no
// pacing delay), and every answer of the site takes -latency, as a real
// site's round trip and serving do: a worker is bound by the site's
// response time, as a worker on its own machine would be, so the ratio
// against one worker is what N machines would gain.

// workersOptions are the flags of the -workers mode.
type workersOptions struct {
	Workers string        // comma-separated worker counts
	State   string        // "postgres" or "memory"
	DSN     string        // PostgreSQL; default RECRAWL_TEST_POSTGRES_DSN
	Latency time.Duration // per answer of the site
}

// WorkerRow is one worker count in one scenario.
type WorkerRow struct {
	Scenario    string  `json:"scenario"`
	Workers     int     `json:"workers"`
	Pages       int     `json:"pages"`    // rows fetched by all engines
	Requests    int     `json:"requests"` // requests the site answered
	WallSec     float64 `json:"wall_s"`
	CPUSec      float64 `json:"cpu_s"` // the process's, the site's serving included
	PagesPerSec float64 `json:"pages_per_s"`
	VsOne       float64 `json:"pages_per_s_vs_one_worker"`
}

// WorkersResult is the -workers benchmark.
type WorkersResult struct {
	Pages     int         `json:"pages"`
	State     string      `json:"state"`
	Latency   string      `json:"latency"`
	PerEngine int         `json:"fetch_workers_per_engine"`
	Rows      []WorkerRow `json:"rows"`
}

// shiftClock is the system clock moved forward by an offset: engines that
// share a State wait in real time, and the benchmark jumps to the day
// every page is due.
type shiftClock struct{ off atomic.Int64 }

func (c *shiftClock) Now() time.Time                       { return time.Now().Add(time.Duration(c.off.Load())) }
func (c *shiftClock) NewTimer(d time.Duration) clock.Timer { return clock.Real().NewTimer(d) }
func (c *shiftClock) advance(d time.Duration)              { c.off.Add(int64(d)) }

// parseWorkers reads "1,2,4".
func parseWorkers(s string) ([]int, error) {
	var out []int
	for _, f := range strings.Split(s, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n < 1 {
			return nil, fmt.Errorf("-workers: %q is not a positive count", f)
		}
		out = append(out, n)
	}
	return out, nil
}

// sharedStates opens the States of one worker count: one per engine (its
// own pool) in a fresh schema for postgres, one shared for memory. done
// drops the schema.
type sharedStates struct {
	open func() (crawlstate.State, error)
	done func()
}

func newSharedStates(ctx context.Context, wo workersOptions) (sharedStates, error) {
	switch wo.State {
	case "memory":
		st := memory.New(crawlstate.Options{})
		return sharedStates{open: func() (crawlstate.State, error) { return st, nil }, done: func() { st.Close() }}, nil
	case "postgres":
		dsn := wo.DSN
		if dsn == "" {
			dsn = os.Getenv("RECRAWL_TEST_POSTGRES_DSN")
		}
		if dsn == "" {
			return sharedStates{}, fmt.Errorf("-state postgres needs -dsn or RECRAWL_TEST_POSTGRES_DSN")
		}
		b := make([]byte, 6)
		_, _ = rand.Read(b)
		schema := "recrawl_bench_" + hex.EncodeToString(b)
		var mu sync.Mutex
		var opened []*postgres.State
		return sharedStates{
			open: func() (crawlstate.State, error) {
				st, err := postgres.Open(ctx, dsn, postgres.WithSchema(schema))
				if err != nil {
					return nil, err
				}
				mu.Lock()
				opened = append(opened, st)
				mu.Unlock()
				return st, nil
			},
			done: func() {
				for _, st := range opened {
					st.Close()
				}
				if p, err := pgxpool.New(context.Background(), dsn); err == nil {
					_, _ = p.Exec(context.Background(), `DROP SCHEMA IF EXISTS `+pgx.Identifier{schema}.Sanitize()+` CASCADE`)
					p.Close()
				}
			},
		}, nil
	default:
		return sharedStates{}, fmt.Errorf("-state: %q is not postgres or memory", wo.State)
	}
}

// runWorkers is the -workers benchmark.
func runWorkers(ctx context.Context, o options, wo workersOptions) (*WorkersResult, error) {
	counts, err := parseWorkers(wo.Workers)
	if err != nil {
		return nil, err
	}
	if o.Pages <= 0 || o.Concurrency <= 0 {
		return nil, fmt.Errorf("-pages and -concurrency must be positive")
	}
	res := &WorkersResult{Pages: o.Pages, State: wo.State, Latency: wo.Latency.String(), PerEngine: o.Concurrency}
	one := map[string]float64{}
	for _, n := range counts {
		rows, err := workersRound(ctx, o, wo, n)
		if err != nil {
			return nil, fmt.Errorf("%d workers: %w", n, err)
		}
		for _, r := range rows {
			if _, ok := one[r.Scenario]; !ok && n == 1 {
				one[r.Scenario] = r.PagesPerSec
			}
			if base := one[r.Scenario]; base > 0 {
				r.VsOne = r.PagesPerSec / base
			}
			res.Rows = append(res.Rows, r)
		}
	}
	return res, nil
}

// workersRound measures n engines on a fresh site and State: cold, then
// all due.
func workersRound(ctx context.Context, o options, wo workersOptions, n int) ([]WorkerRow, error) {
	clk := &shiftClock{}
	site := testsite.New(testsite.Options{Pages: o.Pages, Clock: clk})
	defer site.Close()
	if wo.Latency > 0 {
		site.Slow("*", wo.Latency)
	}
	states, err := newSharedStates(ctx, wo)
	if err != nil {
		return nil, err
	}
	defer states.done()
	engines := make([]*recrawl.Engine, n)
	for i := range engines {
		st, err := states.open()
		if err != nil {
			return nil, err
		}
		l := recrawl.DefaultLimits()
		l.RequestDelay, l.MaxPages = 0, 0 // pacing off, no cap; one connection per host
		tr := http.DefaultTransport.(*http.Transport).Clone()
		defer tr.CloseIdleConnections()
		engines[i], err = recrawl.New(recrawl.Config{State: st, Clock: clk, Limits: &l, Workers: o.Concurrency,
			LockTTL: time.Minute, HTTPClient: &http.Client{Transport: tr}})
		if err != nil {
			return nil, err
		}
	}
	src := discover.Sitemap{URL: site.SitemapURL()}
	var rows []WorkerRow
	for _, sc := range []string{scCold, scAllDue} {
		if sc == scAllDue {
			clk.advance(400 * 24 * time.Hour) // past every interval
		}
		site.ResetLog()
		cpu0 := cputime.Process()
		t0 := time.Now()
		reps := make([]*recrawl.Report, n)
		errs := make([]error, n)
		var wg sync.WaitGroup
		for i, eng := range engines {
			wg.Go(func() { reps[i], errs[i] = eng.Run(ctx, src) })
		}
		wg.Wait()
		row := WorkerRow{Scenario: sc, Workers: n, WallSec: time.Since(t0).Seconds(), CPUSec: (cputime.Process() - cpu0).Seconds()}
		for i, rep := range reps {
			if errs[i] != nil {
				return nil, fmt.Errorf("%s: engine %d: %w", sc, i, errs[i])
			}
			if f := rep.FailedTotal(); f > 0 {
				return nil, fmt.Errorf("%s: engine %d: %d pages failed: %v", sc, i, f, rep.Failed)
			}
			row.Pages += rep.Fetched
		}
		if row.Pages != o.Pages {
			return nil, fmt.Errorf("%s: the engines fetched %d rows of %d", sc, row.Pages, o.Pages)
		}
		row.Requests = len(site.Requests())
		row.PagesPerSec = float64(row.Pages) / row.WallSec
		rows = append(rows, row)
	}
	return rows, nil
}

func (r *WorkersResult) table(w io.Writer) error {
	fmt.Fprintf(w, "%d pages, state %s, site latency %s, %d fetch workers per engine, one connection per host per engine, no pacing\n\n",
		r.Pages, r.State, r.Latency, r.PerEngine)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "scenario\tworkers\trequests\twall s\tCPU s\tpages/s\tvs 1 worker\t")
	for _, row := range r.Rows {
		fmt.Fprintf(tw, "%s\t%d\t%d\t%.2f\t%.2f\t%.0f\t%s\t\n", row.Scenario, row.Workers, row.Requests, row.WallSec, row.CPUSec, row.PagesPerSec, ratio(row.VsOne))
	}
	return tw.Flush()
}
