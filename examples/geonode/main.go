// Command geonode crawls a site incrementally through the Geonode Scraper
// API, alone or behind fetch.Hybrid, and prints how many billed Geonode
// requests each run cost.
//
// Offline, with a fake site and a fake Geonode API on loopback (three runs
// with a few edits in between, once with plain Geonode and once with
// Hybrid):
//
//	go run ./examples/geonode -fake
//
// Against the real API (one run per invocation; the state file makes the
// next invocation incremental):
//
//	GEONODE_API_KEY=... go run ./examples/geonode -site https://example.com/sitemap.xml [-hybrid]
//	GEONODE_API_KEY=... go run ./examples/geonode -map https://example.com/ [-hybrid]
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"text/tabwriter"
	"time"

	"github.com/recrawl/recrawl"
	"github.com/recrawl/recrawl/clock"
	"github.com/recrawl/recrawl/crawlstate/sqlite"
	"github.com/recrawl/recrawl/discover"
	"github.com/recrawl/recrawl/fetch/geonode"
	"github.com/recrawl/recrawl/internal/fakegeonode"
	"github.com/recrawl/recrawl/internal/testsite"
)

func main() {
	fake := flag.Bool("fake", false, "run the offline scenario against a fake site and a fake Geonode API")
	pages := flag.Int("pages", 50, "pages of the fake site")
	runs := flag.Int("runs", 3, "runs of the fake scenario")
	edits := flag.Int("edits", 3, "pages edited between two runs of the fake scenario")
	site := flag.String("site", "", "sitemap URL to crawl through the real API")
	mapURL := flag.String("map", "", "site URL to discover with Geonode's map endpoint instead of a sitemap")
	hybrid := flag.Bool("hybrid", false, "real API: ask the origin directly first (fetch.Hybrid)")
	statePath := flag.String("state", "recrawl-geonode.sqlite", "real API: state file, kept between invocations")
	flag.Parse()

	var err error
	switch {
	case *fake:
		_, err = runFake(os.Stdout, *pages, *runs, *edits)
	case *site != "" || *mapURL != "":
		err = runReal(os.Stdout, *site, *mapURL, *statePath, *hybrid)
	default:
		flag.Usage()
		err = errors.New("give -fake, or -site (or -map) with GEONODE_API_KEY set")
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "geonode:", err)
		os.Exit(1)
	}
}

// runReal makes one incremental run against the real API.
func runReal(out io.Writer, sitemapURL, mapURL, statePath string, hybrid bool) error {
	key, err := geonode.APIKeyFromEnv()
	if err != nil {
		return err
	}
	log := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelInfo}))
	client, err := geonode.New(key, geonode.WithLogger(log))
	if err != nil {
		return err
	}
	limits, err := recrawl.LimitsFromEnv()
	if err != nil {
		return err
	}
	state, err := sqlite.Open(context.Background(), statePath)
	if err != nil {
		return err
	}
	defer state.Close()
	cfg := recrawl.Config{State: state, Limits: &limits, Logger: log}
	if hybrid {
		// The engine asks the origin first, with its own robots.txt and
		// pacing policy, and calls Geonode only for changed pages.
		cfg.Remote = client
	} else {
		cfg.Fetcher = client
	}
	eng, err := recrawl.New(cfg)
	if err != nil {
		return err
	}
	var src discover.Source = discover.Sitemap{URL: sitemapURL}
	if mapURL != "" {
		src = discover.GeonodeMap{Mapper: client, URL: mapURL}
	}
	rep, err := eng.Run(context.Background(), src)
	if rep != nil {
		fmt.Fprintf(out, "%s: discovered %d, due %d, fetched %d, new %d, changed %d, unchanged %d (304: %d), gone %d, failed %d\n",
			rep.Source, rep.Discovered, rep.Due, rep.Fetched, rep.New, rep.Changed, rep.Unchanged, rep.NotModified, rep.Gone, rep.FailedTotal())
		fmt.Fprintf(out, "billed Geonode requests: %d\n", rep.Billed)
	}
	if geonode.IsFatal(err) {
		return fmt.Errorf("stopped: %w", err)
	}
	return err
}

// Scenario is the outcome of the offline scenario: billed requests per
// run, with plain Geonode and with Hybrid.
type Scenario struct {
	Plain, Hybrid []int
}

// runFake runs the same three-run scenario twice on fresh fakes: once with
// the Geonode client as the engine's fetcher, once with Hybrid in front of
// it.
func runFake(out io.Writer, pages, runs, edits int) (Scenario, error) {
	fmt.Fprintf(out, "Offline scenario: a %d-page site, %d runs a week apart, %d pages edited before each later run.\n", pages, runs, edits)
	fmt.Fprintf(out, "Billed = extractions the fake Geonode API charged (1 per page extracted, 304 and 404 included).\n\n")
	var sc Scenario
	tw := tabwriter.NewWriter(out, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "fetcher\trun\tdue\tfetched\tnew\tchanged\tunchanged\t304\tbilled\t")
	for _, hybrid := range []bool{false, true} {
		billed, err := scenario(tw, pages, runs, edits, hybrid)
		if err != nil {
			return sc, err
		}
		if hybrid {
			sc.Hybrid = billed
		} else {
			sc.Plain = billed
		}
	}
	tw.Flush()
	total := func(xs []int) (n int) {
		for _, x := range xs {
			n += x
		}
		return n
	}
	fmt.Fprintf(out, "\nTotal billed: %d with Geonode alone, %d with Hybrid.\n", total(sc.Plain), total(sc.Hybrid))
	fmt.Fprintf(out, "Geonode exposes no ETag or Last-Modified, so alone it re-extracts (and bills) every due page;\n")
	fmt.Fprintf(out, "Hybrid asks the origin with a free conditional request first and pays only for changed pages.\n")
	return sc, nil
}

func scenario(tw io.Writer, pages, runs, edits int, hybrid bool) ([]int, error) {
	ctx := context.Background()
	// Every wait (pacing, polling, backoff) jumps the simulated clock
	// forward instead of sleeping.
	clk := clock.NewAutoFake(time.Date(2026, 11, 2, 6, 0, 0, 0, time.UTC))
	site := testsite.New(testsite.Options{Pages: pages, Clock: clk})
	defer site.Close()
	api := fakegeonode.New(fakegeonode.Options{Clock: clk, ItemsPerPoll: 25})
	defer api.Close()
	client, err := geonode.New(api.APIKey(), geonode.WithBaseURL(api.URL()), geonode.WithClock(clk))
	if err != nil {
		return nil, err
	}
	name := "geonode"
	cfg := recrawl.Config{Clock: clk, Workers: 4, UserAgent: "recrawl-example/1.0"}
	if hybrid {
		name = "hybrid"
		cfg.Remote = client // behind the engine's own polite direct fetcher
	} else {
		cfg.Fetcher = client
	}
	dir, err := os.MkdirTemp("", "recrawl-geonode-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	state, err := sqlite.Open(context.Background(), filepath.Join(dir, "state.sqlite"))
	if err != nil {
		return nil, err
	}
	defer state.Close()
	cfg.State = state
	eng, err := recrawl.New(cfg)
	if err != nil {
		return nil, err
	}
	src := discover.Sitemap{URL: site.SitemapURL()}
	paths := site.Paths()
	var billed []int
	for run := 1; run <= runs; run++ {
		before := api.Billed()
		rep, err := eng.Run(ctx, src)
		if err != nil {
			return nil, fmt.Errorf("%s run %d: %w", name, run, err)
		}
		n := rep.Billed
		if charged := api.Billed() - before; charged != n {
			return nil, fmt.Errorf("%s run %d: the report counts %d billed requests, the API charged %d", name, run, n, charged)
		}
		billed = append(billed, n)
		fmt.Fprintf(tw, "%s\t%d\t%d\t%d\t%d\t%d\t%d\t%d\t%d\t\n", name, run, rep.Due, rep.Fetched, rep.New, rep.Changed, rep.Unchanged, rep.NotModified, n)
		// A week passes (every page is due again); a few pages change.
		clk.Advance(7 * 24 * time.Hour)
		for k := range edits {
			site.Edit(paths[(run*7+k*11)%len(paths)])
		}
	}
	return billed, nil
}
