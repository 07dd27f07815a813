// Command scheduler shows recrawl embedded in a long-running service: a
// loop per source asks the engine when the source is next due
// (Engine.NextDue), sleeps until then and runs it. Runs of different
// sources proceed concurrently; a source never runs twice at once. SIGINT
// or SIGTERM shuts the service down gracefully: no new run starts, runs in
// progress let their in-flight pages finish (Engine.Shutdown), and every
// page they did not reach stays due for the next start, so nothing is lost.
//
//	go run ./examples/scheduler              # runs 15 s, or until Ctrl-C
//	go run ./examples/scheduler -for 0       # until Ctrl-C
//
// The sites are fake (internal/testsite, on loopback) and change every few
// seconds; revisit intervals are scaled down to seconds so that a few
// seconds of watching show the adaptive schedule at work.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"os"
	"os/signal"
	"path/filepath"
	"sync"
	"syscall"
	"time"

	"github.com/recrawl/recrawl"
	"github.com/recrawl/recrawl/clock"
	"github.com/recrawl/recrawl/crawlstate"
	"github.com/recrawl/recrawl/crawlstate/sqlite"
	"github.com/recrawl/recrawl/discover"
	"github.com/recrawl/recrawl/internal/testsite"
	"github.com/recrawl/recrawl/schedule"
)

func main() {
	sites := flag.Int("sites", 3, "fake sites, one source each")
	pages := flag.Int("pages", 40, "pages per site")
	runFor := flag.Duration("for", 15*time.Second, "stop after this long (0: until SIGINT/SIGTERM)")
	dbPath := flag.String("db", "", "state file (default: a temporary file)")
	flag.Parse()

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if *runFor > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, *runFor)
		defer cancel()
	}
	if err := serve(ctx, os.Stdout, *sites, *pages, *dbPath); err != nil {
		fmt.Fprintln(os.Stderr, "scheduler:", err)
		os.Exit(1)
	}
}

// serve runs the service until ctx ends, then shuts it down gracefully.
func serve(ctx context.Context, out io.Writer, nSites, pages int, dbPath string) error {
	if dbPath == "" {
		dir, err := os.MkdirTemp("", "recrawl-scheduler-")
		if err != nil {
			return err
		}
		defer os.RemoveAll(dir)
		dbPath = filepath.Join(dir, "state.sqlite")
	}
	state, err := sqlite.Open(context.Background(), dbPath)
	if err != nil {
		return err
	}
	defer state.Close()

	limits := recrawl.DefaultLimits()
	limits.RequestDelay = 20 * time.Millisecond // our own loopback sites: polite but quick
	eng, err := recrawl.New(recrawl.Config{
		State:     state,
		Limits:    &limits,
		UserAgent: "recrawl-scheduler-example/1.0",
		// Intervals in seconds instead of hours, so the demo moves.
		Scheduler: schedule.Halving{Start: 2 * time.Second, Min: time.Second, Max: 20 * time.Second, Grow: 1.5},
		Logger:    slog.New(slog.NewTextHandler(io.Discard, nil)),
	})
	if err != nil {
		return err
	}

	var sources []discover.Source
	var sites []*testsite.Site
	for i := range nSites {
		s := testsite.New(testsite.Options{Pages: pages, Clock: clock.Real()})
		defer s.Close()
		sites = append(sites, s)
		sources = append(sources, discover.Sitemap{URL: s.SitemapURL(), SourceName: fmt.Sprintf("site-%d", i+1)})
	}
	fmt.Fprintf(out, "serving %d sources; Ctrl-C shuts down gracefully\n", len(sources))

	var print sync.Mutex
	logf := func(format string, args ...any) {
		print.Lock()
		defer print.Unlock()
		fmt.Fprintf(out, "%s  "+format+"\n", append([]any{time.Now().Format("15:04:05.000")}, args...)...)
	}

	// The sites change while the service runs.
	go func() {
		rng := rand.New(rand.NewPCG(7, 7))
		t := time.NewTicker(1500 * time.Millisecond)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
				s := sites[rng.IntN(len(sites))]
				paths := s.Paths()
				s.Edit(paths[rng.IntN(len(paths))])
			}
		}
	}()

	var wg sync.WaitGroup
	for _, src := range sources {
		wg.Add(1)
		go func() {
			defer wg.Done()
			loop(ctx, eng, src, logf)
		}()
	}
	<-ctx.Done()
	logf("shutting down: no new runs; in-flight pages finish")
	shutdownCtx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := eng.Shutdown(shutdownCtx); err != nil {
		return fmt.Errorf("shutdown: %w", err)
	}
	wg.Wait()

	for _, src := range sources {
		total, gone, err := state.Count(context.Background(), src.Name())
		if err != nil {
			return err
		}
		rows, err := state.Due(context.Background(), src.Name(), time.Now(), crawlstate.Key{}, total+1)
		if err != nil {
			return err
		}
		due := len(rows)
		logf("[%s] %d pages known (%d gone), %d due: they are fetched first on the next start", src.Name(), total, gone, due)
	}
	return nil
}

// coalesce is how long past NextDue a source waits, so a run picks up the
// rows that fall due right after the first.
const coalesce = 500 * time.Millisecond

// loop runs one source whenever it falls due, until ctx ends.
func loop(ctx context.Context, eng *recrawl.Engine, src discover.Source, logf func(string, ...any)) {
	for {
		next, err := eng.NextDue(ctx, src)
		if err != nil {
			if ctx.Err() == nil {
				logf("[%s] next due: %v", src.Name(), err)
			}
			return
		}
		// Rows fall due one by one (revisits are jittered); waiting a
		// moment longer lets one run take several of them.
		if wait := max(time.Until(next), 0) + coalesce; wait > 0 {
			select {
			case <-ctx.Done():
				return
			case <-time.After(wait):
			}
		}
		if ctx.Err() != nil {
			return
		}
		// The run gets its own context: a shutdown stops it gracefully
		// through Engine.Shutdown instead of cancelling pages mid-flight.
		rep, err := eng.Run(context.WithoutCancel(ctx), src)
		switch {
		case errors.Is(err, recrawl.ErrEngineClosed):
			return
		case err != nil:
			logf("[%s] run failed: %v", src.Name(), err)
		default:
			note := ""
			if rep.StoppedBy != "" {
				note = " (stopped by " + rep.StoppedBy + ")"
			}
			logf("[%s] due %3d  fetched %3d  304 %3d  changed %2d  new %3d  requests %3d of %d%s",
				src.Name(), rep.Due, rep.Fetched, rep.NotModified, rep.Changed, rep.New, rep.Requests, rep.FullRecrawlRequests, note)
		}
	}
}
