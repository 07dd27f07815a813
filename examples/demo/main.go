// Command demo shows recrawl's main job offline: it starts a fake
// documentation site on loopback, crawls it, changes it between rounds
// (edits, a deletion, a page dropped from the sitemap, new pages), moves a
// simulated clock a day forward, and crawls again. Each round prints what the
// engine did and how many requests it saved against a full recrawl.
//
//	go run ./examples/demo
//
// It needs no network and no flags; -pages and -days change the scenario.
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/recrawl/recrawl"
	"github.com/recrawl/recrawl/clock"
	"github.com/recrawl/recrawl/crawlstate/sqlite"
	"github.com/recrawl/recrawl/discover"
	"github.com/recrawl/recrawl/internal/testsite"
)

func main() {
	pages := flag.Int("pages", 300, "pages on the fake site")
	days := flag.Int("days", 56, "days to simulate, one run a day")
	seed := flag.Uint64("seed", 1, "seed of the site's changes")
	flag.Parse()
	if err := run(os.Stdout, *pages, *days, *seed); err != nil {
		fmt.Fprintln(os.Stderr, "demo:", err)
		os.Exit(1)
	}
}

func run(out io.Writer, pages, days int, seed uint64) error {
	ctx := context.Background()
	clk := clock.NewAutoFake(time.Date(2026, 11, 2, 6, 0, 0, 0, time.UTC)) // pacing waits cost no real time
	// The site answers for a fixed host name, so its URLs (and the revisit
	// jitter the engine derives from them) are the same on every run.
	site := testsite.New(testsite.Options{Pages: pages, Clock: clk, Host: "docs.example.test"})
	defer site.Close()

	// Real sites are uneven: some pages carry volatile blocks (a render
	// timestamp and a CSRF token), some send no validators at all.
	paths := site.Paths()
	for i, p := range paths {
		switch i % 10 {
		case 3:
			site.Update(p, func(pg *testsite.Page) { pg.Volatile, pg.ETag, pg.LastMod = true, false, false })
		case 7:
			site.Update(p, func(pg *testsite.Page) { pg.ETag = false })
		}
	}

	dir, err := os.MkdirTemp("", "recrawl-demo-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	state, err := sqlite.Open(context.Background(), filepath.Join(dir, "state.sqlite"))
	if err != nil {
		return err
	}
	defer state.Close()

	// The embedded defaults, with one exception: no pacing delay, so the
	// simulated clock stands still during a run, every page of a run is
	// stamped with the run's start whatever order the pipeline finishes
	// in, and the output is the same on every run. On a loopback site the
	// delay protects nobody.
	limits := recrawl.DefaultLimits()
	limits.RequestDelay = 0
	eng, err := recrawl.New(recrawl.Config{State: state, Clock: clk, Limits: &limits, HTTPClient: site.Client(), Workers: 8, UserAgent: "recrawl-demo/1.0"})
	if err != nil {
		return err
	}
	src := discover.Sitemap{URL: site.SitemapURL()}

	fmt.Fprintf(out, "recrawl demo: %d pages at %s (served on loopback), one run a day for %d days (simulated clock)\n", pages, site.URL(), days)
	fmt.Fprintf(out, "Every night a few pages are edited; now and then one is deleted, dropped from the sitemap or added.\n")
	fmt.Fprintf(out, "10%% of pages carry a volatile block and no validators; 10%% send Last-Modified but no ETag.\n")
	fmt.Fprintf(out, "The first week is shown day by day, then a row sums up each week.\n\n")

	tw := tabwriter.NewWriter(out, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "days\tdue\tfetched\t304\tbodies\tnew\tchanged\tunchanged\tgone\tfailed\trequests\tfull recrawl\tsaving\t")
	rng := rand.New(rand.NewPCG(seed, 42))
	var total, row tally
	rowStart := 1
	for day := 1; day <= days; day++ {
		rep, err := eng.Run(ctx, src)
		if err != nil {
			return fmt.Errorf("day %d: %w", day, err)
		}
		full := rep.FullRecrawlRequests
		if day == 1 {
			full = rep.Requests // the first crawl is a full crawl
		}
		row.add(rep, full)
		total.add(rep, full)
		if day <= 7 || day%7 == 0 || day == days {
			label := fmt.Sprint(day)
			if day != rowStart {
				label = fmt.Sprintf("%d–%d", rowStart, day)
			}
			row.print(tw, label, day > 1)
			row, rowStart = tally{}, day+1
		}
		// The site changes overnight; the clock moves a day.
		mutate(site, rng, day)
		clk.Advance(24 * time.Hour)
	}
	tw.Flush()

	fmt.Fprintf(out, "\nOver %d days recrawl sent %d page requests; a daily full recrawl would have sent %d (%.1f× more).\n",
		days, total.requests, total.full, float64(total.full)/float64(max(total.requests, 1)))
	fmt.Fprintf(out, "It downloaded %d page bodies where a full recrawl downloads %d (%.1f× fewer): most revisits are answered 304.\n",
		total.bodies, total.full, float64(total.full)/float64(max(total.bodies, 1)))
	known, gone, err := state.Count(ctx, src.Name())
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "State now holds %d pages, %d of them tombstones (deleted pages stay known so stale links cannot revive them unnoticed).\n", known, gone)
	fmt.Fprintf(out, "Unchanged pages answer 304 and grow their revisit interval; edited pages are fetched again sooner.\n")
	return nil
}

// tally sums reports over one or more days.
type tally struct {
	due, fetched, notModified, bodies, added, changed, unchanged, gone, failed, requests, full int
}

func (t *tally) add(rep *recrawl.Report, full int) {
	t.due += rep.Due
	t.fetched += rep.Fetched
	t.notModified += rep.NotModified
	t.bodies += rep.Bodies
	t.added += rep.New
	t.changed += rep.Changed
	t.unchanged += rep.Unchanged
	t.gone += rep.Gone
	t.failed += rep.FailedTotal()
	t.requests += rep.Requests
	t.full += full
}

func (t tally) print(w io.Writer, label string, saving bool) {
	s := "-"
	if saving && t.requests > 0 {
		s = fmt.Sprintf("%.1f×", float64(t.full)/float64(t.requests))
	}
	fmt.Fprintf(w, "%s\t%d\t%d\t%d\t%d\t%d\t%d\t%d\t%d\t%d\t%d\t%d\t%s\t\n", label, t.due, t.fetched, t.notModified,
		t.bodies, t.added, t.changed, t.unchanged, t.gone, t.failed, t.requests, t.full, s)
}

// mutate applies a day's worth of changes to the site and describes them.
func mutate(site *testsite.Site, rng *rand.Rand, day int) string {
	paths := site.Paths()
	var did []string
	edits := 2 + rng.IntN(4)
	for range edits {
		site.Edit(paths[rng.IntN(len(paths))])
	}
	did = append(did, fmt.Sprintf("%d edits", edits))
	switch day % 4 {
	case 1:
		p := paths[rng.IntN(len(paths))]
		site.Delete(p, http.StatusNotFound)
		did = append(did, "1 deleted (404)")
	case 2:
		p := paths[rng.IntN(len(paths))]
		site.RemoveFromSitemap(p)
		site.Delete(p, http.StatusGone)
		did = append(did, "1 dropped from sitemap (410)")
	case 3:
		n := len(paths) + 1
		site.Add(fmt.Sprintf("/docs/new-%d", n), fmt.Sprintf("New page %d", n), "<p>A page published on day "+fmt.Sprint(day)+".</p><p>"+strings.Repeat("fresh content ", 30)+"</p>")
		did = append(did, "1 added")
	}
	return strings.Join(did, ", ")
}
