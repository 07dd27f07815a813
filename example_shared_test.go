package recrawl_test

import (
	"context"
	"fmt"
	"sync"

	"github.com/recrawl/recrawl"
	"github.com/recrawl/recrawl/crawlstate"
	"github.com/recrawl/recrawl/crawlstate/memory"
	"github.com/recrawl/recrawl/discover"
	"github.com/recrawl/recrawl/internal/testsite"
)

// Engines on one shared State (a crawlstate.Sharer: crawlstate/postgres
// across machines, crawlstate/memory in one process) run a source
// together: one leads (discovers and offers the due rows), the others
// join, and each page is fetched by one of them.
func ExampleEngine_Run_shared() {
	site := testsite.New(testsite.Options{Pages: 200})
	defer site.Close()
	state := memory.New(crawlstate.Options{})
	src := discover.Sitemap{URL: site.SitemapURL()}

	reports := make([]*recrawl.Report, 3)
	var wg sync.WaitGroup
	for i := range reports {
		limits := recrawl.DefaultLimits()
		limits.RequestDelay = 0
		eng, err := recrawl.New(recrawl.Config{State: state, Limits: &limits})
		if err != nil {
			fmt.Println(err)
			return
		}
		wg.Go(func() {
			var err error
			if reports[i], err = eng.Run(context.Background(), src); err != nil {
				fmt.Println(err)
			}
		})
	}
	wg.Wait()
	leaders, fetched := 0, 0
	for _, rep := range reports {
		if !rep.Joined {
			leaders++
		}
		fetched += rep.Fetched
	}
	fmt.Println("leaders:", leaders, "pages fetched:", fetched, "requests the site got:", len(site.PageRequests()))
	// Output: leaders: 1 pages fetched: 200 requests the site got: 200
}
