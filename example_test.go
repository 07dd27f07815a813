package recrawl_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/recrawl/recrawl"
	"github.com/recrawl/recrawl/clock"
	"github.com/recrawl/recrawl/crawlstate"
	"github.com/recrawl/recrawl/discover"
	"github.com/recrawl/recrawl/internal/testsite"
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
	state, err := crawlstate.OpenSQLite(filepath.Join(dir, "state.sqlite"))
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

// New reports every invalid field of a Config at once.
func ExampleNew() {
	_, err := recrawl.New(recrawl.Config{Workers: -2})
	var ce *recrawl.ConfigError
	if errors.As(err, &ce) {
		for _, p := range ce.Problems {
			fmt.Println(p.Field+":", p.Reason)
		}
	}
	// Output:
	// State: required: open one with crawlstate.OpenSQLite
	// Workers: must be >= 0 (0 means 4), got -2
}
