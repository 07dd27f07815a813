package recrawl_test

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/recrawl/recrawl"
	"github.com/recrawl/recrawl/alert"
	"github.com/recrawl/recrawl/clock"
	"github.com/recrawl/recrawl/crawlstate"
	"github.com/recrawl/recrawl/crawlstate/memory"
	"github.com/recrawl/recrawl/discover"
	"github.com/recrawl/recrawl/embed"
	"github.com/recrawl/recrawl/index"
	"github.com/recrawl/recrawl/internal/testsite"
)

// What changed on a site since a time, with the evidence: the stored
// alerts, whether or not their sink still has them.
func ExampleEngine_Changes() {
	clk := clock.NewAutoFake(time.Date(2026, 11, 30, 6, 0, 0, 0, time.UTC))
	site := testsite.New(testsite.Options{Pages: 4, Clock: clk, Host: "docs.example.test"})
	defer site.Close()
	emb, _ := embed.NewHashing(64)
	eng, _ := recrawl.New(recrawl.Config{
		State: memory.New(crawlstate.Options{}), Clock: clk, HTTPClient: site.Client(),
		Embedder: emb, Index: index.NewMemory(64),
		Alerts: alert.Func(func(context.Context, alert.Alert) error { return nil }),
	})
	src := discover.Sitemap{URL: site.SitemapURL()}
	eng.Run(context.Background(), src)
	clk.Advance(48 * time.Hour)
	since := clk.Now()
	site.Edit("/docs/page-0002")
	site.Delete("/docs/page-0004", http.StatusGone)
	eng.Run(context.Background(), src)

	changes, more, err := eng.Changes(context.Background(), src.Name(), since, 10)
	if err != nil {
		fmt.Println(err)
		return
	}
	// Changes come in the order they were detected; the run's workers
	// detect them concurrently, so they are printed by URL here.
	slices.SortFunc(changes, func(a, b recrawl.Change) int { return strings.Compare(a.Alert.URL, b.Alert.URL) })
	for _, c := range changes {
		a := c.Alert
		fmt.Println(a.Kind, a.URL, a.OldHash != "", a.NewHash != "", len(a.Changed)+len(a.Added)+len(a.Removed) > 0, !c.Delivered.IsZero())
	}
	fmt.Println("more:", more)
	// Output:
	// changed http://docs.example.test/docs/page-0002 true true true true
	// removed http://docs.example.test/docs/page-0004 true false true true
	// more: false
}
