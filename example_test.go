//go:build cgo

// The examples show the default store, crawlstate/sqlite, which needs cgo.

package recrawl_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/recrawl/recrawl"
	"github.com/recrawl/recrawl/alert"
	"github.com/recrawl/recrawl/clock"
	"github.com/recrawl/recrawl/crawlstate/sqlite"
	"github.com/recrawl/recrawl/discover"
	"github.com/recrawl/recrawl/embed"
	"github.com/recrawl/recrawl/index"
	"github.com/recrawl/recrawl/internal/testsite"
	"github.com/recrawl/recrawl/schedule"
)

// A host opens a state file, builds an engine once, and calls Run from its
// own scheduler. The second run, a day later, finds every page unchanged
// with conditional requests and downloads no body.
func ExampleEngine_Run() {
	clk := clock.NewAutoFake(time.Date(2026, 11, 30, 6, 0, 0, 0, time.UTC)) // waits cost no real time
	site := testsite.New(testsite.Options{Pages: 25, Clock: clk})           // a fake site on loopback
	defer site.Close()

	dir, _ := os.MkdirTemp("", "recrawl-example-")
	defer os.RemoveAll(dir)
	state, err := sqlite.Open(context.Background(), filepath.Join(dir, "state.sqlite"))
	if err != nil {
		fmt.Println(err)
		return
	}
	defer state.Close()

	eng, err := recrawl.New(recrawl.Config{State: state, Clock: clk})
	if err != nil {
		fmt.Println(err)
		return
	}
	src := discover.Sitemap{URL: site.SitemapURL()}
	for day := 1; day <= 2; day++ {
		rep, err := eng.Run(context.Background(), src)
		if err != nil {
			fmt.Println(err)
			return
		}
		fmt.Printf("day %d: due %d, new %d, unchanged %d (304: %d), bodies %d\n",
			day, rep.Due, rep.New, rep.Unchanged, rep.NotModified, rep.Bodies)
		clk.Advance(25 * time.Hour)
	}
	// Output:
	// day 1: due 25, new 25, unchanged 0 (304: 0), bodies 25
	// day 2: due 25, new 0, unchanged 25 (304: 25), bodies 0
}

// Check is the "test connection" of an entry point: robots.txt, the format
// read from the document, and what it lists.
func ExampleEngine_Check() {
	site := testsite.New(testsite.Options{Pages: 12, SitemapSplit: 5})
	defer site.Close()
	dir, _ := os.MkdirTemp("", "recrawl-example-")
	defer os.RemoveAll(dir)
	state, _ := sqlite.Open(context.Background(), filepath.Join(dir, "state.sqlite"))
	defer state.Close()
	eng, _ := recrawl.New(recrawl.Config{State: state})

	for _, u := range []string{site.SitemapURL(), site.LLMsURL()} {
		res, err := eng.Check(context.Background(), discover.Entry{URL: u})
		if err != nil {
			fmt.Println(err)
			return
		}
		fmt.Println(res.Format, res.Pages, res.RobotsAllowed)
	}
	// Output:
	// sitemap 12 true
	// llms.txt 12 true
}

// NextDue tells a host scheduler when to run a source again.
func ExampleEngine_NextDue() {
	clk := clock.NewAutoFake(time.Date(2026, 11, 30, 6, 0, 0, 0, time.UTC))
	site := testsite.New(testsite.Options{Pages: 5, Clock: clk})
	defer site.Close()
	dir, _ := os.MkdirTemp("", "recrawl-example-")
	defer os.RemoveAll(dir)
	state, _ := sqlite.Open(context.Background(), filepath.Join(dir, "state.sqlite"))
	defer state.Close()
	eng, _ := recrawl.New(recrawl.Config{State: state, Clock: clk, Scheduler: schedule.DefaultHalving, Jitter: -1})
	src := discover.Sitemap{URL: site.SitemapURL()}

	next, _ := eng.NextDue(context.Background(), src)
	fmt.Println("before the first run:", next.IsZero())
	if _, err := eng.Run(context.Background(), src); err != nil {
		fmt.Println(err)
		return
	}
	next, _ = eng.NextDue(context.Background(), src)
	fmt.Println("next run in:", next.Sub(clk.Now()).Round(time.Hour))
	// Output:
	// before the first run: true
	// next run in: 24h0m0s
}

// With an embedder, an index and a sink, every committed change becomes an
// alert; Explain returns the evidence behind it.
func ExampleEngine_Explain() {
	clk := clock.NewAutoFake(time.Date(2026, 11, 30, 6, 0, 0, 0, time.UTC))
	site := testsite.New(testsite.Options{Pages: 3, Clock: clk})
	defer site.Close()
	dir, _ := os.MkdirTemp("", "recrawl-example-")
	defer os.RemoveAll(dir)
	state, _ := sqlite.Open(context.Background(), filepath.Join(dir, "state.sqlite"))
	defer state.Close()
	emb, _ := embed.NewHashing(128)
	var alerts []recrawl.Alert
	eng, _ := recrawl.New(recrawl.Config{
		State: state, Clock: clk,
		Embedder: emb, Index: index.NewMemory(128),
		Alerts: alert.Func(func(_ context.Context, a alert.Alert) error { alerts = append(alerts, a); return nil }),
	})
	src := discover.Sitemap{URL: site.SitemapURL()}
	eng.Run(context.Background(), src) // first sightings: no alert (AlertOnNew is off)
	site.Edit(site.Paths()[1])
	clk.Advance(2 * 24 * time.Hour)
	eng.Run(context.Background(), src)

	a := alerts[0]
	fmt.Println(len(alerts), a.Kind, a.URL == site.PageURL(site.Paths()[1]), a.ID == alert.ID(a.URL, a.OldHash, a.NewHash))
	x, err := eng.Explain(context.Background(), a.ID)
	if err != nil {
		fmt.Println(err)
		return
	}
	var stages []string
	for _, ev := range x.Events {
		if ev.At.After(a.DetectedAt.Add(-time.Minute)) {
			stages = append(stages, ev.Stage)
		}
	}
	fmt.Println(stages)
	fmt.Println(len(x.RecordIDs) == len(x.Chunks), x.Page.ContentHash == a.NewHash)
	// Output:
	// 1 changed true true
	// [fetch extract chunk embed index index commit alert]
	// true true
}

// The default learns how far a source's sitemap lastmods can be trusted:
// after a few runs over a site whose lastmods move exactly when a page is
// edited, a moved lastmod has always meant a change and no change came
// without one.
func ExampleEngine_LastModTrust() {
	clk := clock.NewAutoFake(time.Date(2026, 11, 30, 6, 0, 0, 0, time.UTC))
	site := testsite.New(testsite.Options{Pages: 10, Clock: clk})
	defer site.Close()
	dir, _ := os.MkdirTemp("", "recrawl-example-")
	defer os.RemoveAll(dir)
	state, err := sqlite.Open(context.Background(), filepath.Join(dir, "state.sqlite"))
	if err != nil {
		fmt.Println(err)
		return
	}
	defer state.Close()
	eng, err := recrawl.New(recrawl.Config{State: state, Clock: clk})
	if err != nil {
		fmt.Println(err)
		return
	}
	src := discover.Sitemap{URL: site.SitemapURL()}
	for day := range 20 {
		site.Edit(site.Paths()[day%10])
		if _, err := eng.Run(context.Background(), src); err != nil {
			fmt.Println(err)
			return
		}
		clk.Advance(24 * time.Hour)
	}
	trust, err := eng.LastModTrust(context.Background(), src.Name())
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("changes announced by a moved lastmod: %.0f, unannounced: %.0f\n", trust.MovedChanged, trust.StillChanged)
	fmt.Printf("precision > 0.8: %v, recall > 0.9: %v\n", trust.Precision() > 0.8, trust.Recall() > 0.9)
	// Output:
	// changes announced by a moved lastmod: 19, unannounced: 0
	// precision > 0.8: true, recall > 0.9: true
}
