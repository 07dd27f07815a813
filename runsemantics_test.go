package recrawl_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/recrawl/recrawl"
	"github.com/recrawl/recrawl/alert"
	"github.com/recrawl/recrawl/crawlstate"
	"github.com/recrawl/recrawl/crawlstate/statetest"
	"github.com/recrawl/recrawl/discover"
	"github.com/recrawl/recrawl/internal/testsite"
	"github.com/recrawl/recrawl/normalize"
)

// Run and Shutdown called concurrently: -race finds no data race, every
// Run returns a report, and every run that started has finished when
// Shutdown returns.
func TestRunAndShutdownDoNotRace(t *testing.T) {
	f := newFixture(t, testsite.Options{Pages: 5}, recrawl.Config{})
	var wg sync.WaitGroup
	var running atomic.Int32
	errs := make(chan error, 40)
	for i := range 40 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			src := discover.Sitemap{URL: f.site.SitemapURL(), SourceName: fmt.Sprintf("s%d", i%8)}
			running.Add(1)
			rep, err := f.eng.Run(context.Background(), src)
			running.Add(-1)
			if rep == nil {
				errs <- fmt.Errorf("run %d: nil report with %v", i, err)
				return
			}
			if err != nil && !errors.Is(err, recrawl.ErrEngineClosed) && !errors.Is(err, recrawl.ErrRunInProgress) {
				errs <- err
			}
		}()
		if i == 20 {
			require.NoError(t, f.eng.Shutdown(context.Background()))
		}
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		require.NoError(t, err)
	}
	rep, err := f.eng.Run(context.Background(), f.src)
	require.ErrorIs(t, err, recrawl.ErrEngineClosed)
	require.NotNil(t, rep)
	require.Equal(t, f.src.Name(), rep.Source)
}

func TestRunReturnsAReportWithEveryError(t *testing.T) {
	f := newFixture(t, testsite.Options{Pages: 3}, recrawl.Config{})
	ctx := context.Background()
	require.NoError(t, f.state.Lock(ctx, f.src.Name(), "someone-else", f.clk.Now(), time.Hour))
	rep, err := f.eng.Run(ctx, f.src)
	require.ErrorIs(t, err, recrawl.ErrRunInProgress)
	require.NotNil(t, rep)
	require.Equal(t, f.src.Name(), rep.Source)
	require.NotNil(t, rep.Skipped, "a usable report, not a zero struct")

	rep, err = f.eng.Run(ctx, nil)
	require.Error(t, err)
	require.NotNil(t, rep)

	require.NoError(t, f.eng.Shutdown(ctx))
	rep, err = f.eng.Run(ctx, f.src)
	require.ErrorIs(t, err, recrawl.ErrEngineClosed)
	require.NotNil(t, rep)
	require.Equal(t, f.src.Name(), rep.Source)
}

// A shut-down or cancelled crawl did not reach every page: the pages it
// did not reach are not missing.
func TestStoppedCrawlCountsNothingMissing(t *testing.T) {
	for _, how := range []string{"shutdown", "cancel"} {
		t.Run(how, func(t *testing.T) {
			f := newFixture(t, testsite.Options{Pages: 30}, recrawl.Config{Workers: 1})
			f.src = discover.Crawl{URL: f.site.PageURL(f.site.Paths()[0]), SourceName: "crawl"}
			rep := f.run()
			require.Greater(t, rep.New, 10)
			for _, p := range f.site.Paths() {
				f.site.Slow(p, 20*time.Millisecond)
			}
			f.clk.Advance(25 * time.Hour)
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			done := make(chan *recrawl.Report, 1)
			go func() {
				rep, _ := f.eng.Run(ctx, f.src)
				done <- rep
			}()
			require.Eventually(t, func() bool { return len(f.site.PageRequests()) >= 3 }, 5*time.Second, time.Millisecond)
			if how == "shutdown" {
				require.NoError(t, f.eng.Shutdown(context.Background()))
			} else {
				cancel()
			}
			rep = <-done
			require.NotNil(t, rep)
			require.Zero(t, rep.Missing)
			rows, err := f.state.Due(context.Background(), f.src.Name(), f.clk.Now().Add(1000*time.Hour), crawlstate.Key{}, 1000)
			require.NoError(t, err)
			require.Greater(t, len(rows), 10)
			for _, row := range rows {
				require.Zero(t, row.MissingRuns, "%s: a stopped run counts nothing missing", row.URL)
			}
		})
	}
}

// Every due URL ends in one Observer event, skips at a cap or at shutdown
// included, and Done counts up to Due one by one.
func TestEveryDueURLHasOneEvent(t *testing.T) {
	type source struct {
		name string
		src  func(*testsite.Site) discover.Source
	}
	sources := []source{
		{"sitemap", func(s *testsite.Site) discover.Source { return discover.Sitemap{URL: s.SitemapURL()} }},
		{"llms.txt", func(s *testsite.Site) discover.Source { return discover.LLMsTxt{URL: s.LLMsURL()} }},
	}
	for _, sc := range sources {
		for _, stop := range []string{"none", recrawl.SkipMaxPages, recrawl.SkipShutdown, recrawl.SkipRobots} {
			t.Run(sc.name+"/"+stop, func(t *testing.T) {
				const pages = 20
				var mu sync.Mutex
				var events []recrawl.Event
				var eng atomic.Pointer[recrawl.Engine]
				cfg := recrawl.Config{Workers: 2, Observer: func(ev recrawl.Event) {
					mu.Lock()
					events = append(events, ev)
					n := len(events)
					mu.Unlock()
					if stop == recrawl.SkipShutdown && n == 5 {
						// Shutdown marks the engine closing before it waits;
						// an ended context makes it return at once (waiting
						// here, inside the run, would never end).
						done, cancel := context.WithCancel(context.Background())
						cancel()
						_ = eng.Load().Shutdown(done)
					}
				}}
				opts := testsite.Options{Pages: pages}
				if stop == recrawl.SkipMaxPages {
					cfg.Limits = limits(func(l *recrawl.Limits) { l.MaxPages = 7 })
				}
				if stop == recrawl.SkipRobots {
					opts.Robots = "User-agent: *\nDisallow: /docs/page-000\n"
				}
				f := newFixture(t, opts, cfg)
				eng.Store(f.eng)
				f.src = sc.src(f.site)
				if stop == recrawl.SkipShutdown {
					// Pages answer slowly, so the fetchers cannot have
					// reached every page when Shutdown is called.
					f.site.Slow("*", 30*time.Millisecond)
				}
				rep := f.run()
				byURL := map[string]int{}
				prev := 0
				for _, ev := range events {
					require.NotEmpty(t, ev.URL)
					byURL[ev.URL]++
					require.Equal(t, pages, ev.Due)
					require.Equal(t, prev+1, ev.Done, "Done counts one by one")
					prev = ev.Done
				}
				require.Len(t, byURL, pages, "one event per URL")
				for u, n := range byURL {
					require.Equal(t, 1, n, u)
				}
				require.Equal(t, pages, prev)
				switch stop {
				case "none":
					require.Equal(t, pages, rep.New)
				case recrawl.SkipRobots:
					require.Equal(t, 9, rep.Skipped[recrawl.SkipRobots])
				default:
					require.Positive(t, rep.Skipped[stop])
					require.Equal(t, pages, rep.Skipped[stop]+rep.Fetched)
				}
			})
		}
	}
}

// Entries that discovery drops are counted under a named reason.
func TestDroppedEntriesAreCounted(t *testing.T) {
	f := newFixture(t, testsite.Options{Pages: 3}, recrawl.Config{})
	long := f.site.URL() + "/docs/" + strings.Repeat("x", 9000)
	urlset := `<?xml version="1.0" encoding="UTF-8"?>
<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">
<url><loc>` + f.site.PageURL(f.site.Paths()[0]) + `</loc></url>
<url><loc>` + long + `</loc></url>
<url><loc>` + f.site.URL() + `/docs/%zz</loc></url>
</urlset>`
	child := f.site.Serve("/child.xml", "application/xml", []byte(urlset))
	index := `<?xml version="1.0" encoding="UTF-8"?>
<sitemapindex xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">
<sitemap><loc>` + child + `</loc></sitemap>
<sitemap><loc>http://elsewhere.example/sitemap.xml</loc></sitemap>
</sitemapindex>`
	f.src = discover.Sitemap{URL: f.site.Serve("/index.xml", "application/xml", []byte(index))}
	var skipped []recrawl.Event
	f.eng = mustEngine(t, recrawl.Config{State: f.state, Clock: f.clk, Limits: limits(func(*recrawl.Limits) {}),
		Observer: func(ev recrawl.Event) {
			if ev.Outcome == recrawl.OutcomeSkipped {
				skipped = append(skipped, ev)
			}
		}})
	rep := f.run()
	require.Equal(t, 1, rep.Skipped[recrawl.SkipTooLong])
	require.Equal(t, 1, rep.Skipped[recrawl.SkipInvalid])
	require.Equal(t, 1, rep.Skipped[recrawl.SkipOffHost], "the off-host child sitemap")
	require.Equal(t, 1, rep.New)
	require.Len(t, skipped, 3)

	// A crawled link that does not parse is counted too; mailto: is not a page.
	f.site.Add("/docs/bad", "Bad links", `<p>See <a href="http://host:99999/">this</a>, <a href="mailto:a@b.example">mail</a>
and <a href="/docs/">the index</a>.</p>`)
	f.src = discover.Crawl{URL: f.site.PageURL("/docs/bad"), SourceName: "crawl"}
	rep = f.run()
	require.Equal(t, 1, rep.Skipped[recrawl.SkipInvalid])
}

// readFailingState fails chosen reads.
type readFailingState struct {
	statetest.Full
	document, chunks, links atomic.Bool
}

var errInjected = errors.New("injected state failure")

func (s *readFailingState) Document(ctx context.Context, source, url string) (crawlstate.Document, error) {
	if s.document.Load() {
		return crawlstate.Document{}, errInjected
	}
	return s.Full.Document(ctx, source, url)
}

func (s *readFailingState) Chunks(ctx context.Context, source, url string) ([]crawlstate.Chunk, error) {
	if s.chunks.Load() {
		return nil, errInjected
	}
	return s.Full.Chunks(ctx, source, url)
}

func (s *readFailingState) Links(ctx context.Context, source, url string) ([]string, error) {
	if s.links.Load() {
		return nil, errInjected
	}
	return s.Full.Links(ctx, source, url)
}

func TestStateReadErrorsAreNotSwallowed(t *testing.T) {
	ctx := context.Background()
	t.Run("discovery document", func(t *testing.T) {
		f := newFixture(t, testsite.Options{Pages: 3}, recrawl.Config{})
		st := &readFailingState{Full: f.state}
		st.document.Store(true)
		f.eng = mustEngine(t, recrawl.Config{State: st, Clock: f.clk, Limits: limits(func(*recrawl.Limits) {}), SitemapTrust: recrawl.TrustAuthoritative})
		rep, err := f.eng.Run(ctx, discover.Entry{URL: f.site.SitemapURL()})
		require.ErrorIs(t, err, errInjected)
		require.NotNil(t, rep)
	})
	t.Run("chunks of a removed page", func(t *testing.T) {
		f := newFixture(t, testsite.Options{Pages: 3}, recrawl.Config{})
		st := &readFailingState{Full: f.state}
		var got []recrawl.Alert
		f.eng = mustEngine(t, recrawl.Config{State: st, Clock: f.clk, Limits: limits(func(*recrawl.Limits) {}),
			Alerts: alert.Func(func(_ context.Context, a alert.Alert) error { got = append(got, a); return nil })})
		f.run()
		gone := f.site.Paths()[0]
		f.site.Delete(gone, http.StatusNotFound)
		f.clk.Advance(25 * time.Hour)
		st.chunks.Store(true)
		rep := f.run()
		require.Equal(t, 1, rep.Failed[recrawl.StageAlert], "the removed alert cannot be built: the page fails, it is not stored gone without its alert")
		require.False(t, f.row(gone).Gone)
		st.chunks.Store(false)
		f.clk.Advance(25 * time.Hour)
		rep = f.run()
		require.Equal(t, 1, rep.Gone)
		require.Equal(t, alert.Removed, got[len(got)-1].Kind)
		require.NotEmpty(t, got[len(got)-1].Removed)
	})
	t.Run("links of an unchanged crawled page", func(t *testing.T) {
		f := newFixture(t, testsite.Options{Pages: 5}, recrawl.Config{})
		st := &readFailingState{Full: f.state}
		f.eng = mustEngine(t, recrawl.Config{State: st, Clock: f.clk, Limits: limits(func(*recrawl.Limits) {})})
		f.src = discover.Crawl{URL: f.site.PageURL(f.site.Paths()[0]), SourceName: "crawl"}
		f.run()
		f.clk.Advance(25 * time.Hour)
		st.links.Store(true)
		rep, err := f.eng.Run(ctx, f.src)
		require.ErrorIs(t, err, errInjected)
		require.Equal(t, recrawl.StopError, rep.StoppedBy)
		require.Zero(t, rep.Missing)
	})
}

// failingUpserts fails UpsertDiscovered while fail is set.
type failingUpserts struct {
	testStore
	fail atomic.Bool
}

func (s *failingUpserts) UpsertDiscovered(ctx context.Context, source string, now time.Time, urls []crawlstate.Discovered) (crawlstate.UpsertStats, error) {
	if s.fail.Load() {
		return crawlstate.UpsertStats{}, errors.New("disk full")
	}
	return s.testStore.UpsertDiscovered(ctx, source, now, urls)
}

// A sitemap whose URLs could not be stored is not remembered as seen:
// the next run requests it in full (no 304) and stores the page it lists.
func TestLostDiscoveryIsNotRememberedAsUnchanged(t *testing.T) {
	f := newFixture(t, testsite.Options{Pages: 3}, recrawl.Config{})
	st := &failingUpserts{testStore: f.state}
	l := recrawl.DefaultLimits()
	l.RequestDelay = 0
	eng, err := recrawl.New(recrawl.Config{State: st, Clock: f.clk, Limits: &l})
	require.NoError(t, err)
	ctx := context.Background()
	_, err = eng.Run(ctx, f.src)
	require.NoError(t, err)

	added := f.site.Add("/docs/added", "Added", "<p>A page added between runs.</p>")
	f.clk.Advance(time.Hour)
	st.fail.Store(true)
	_, err = eng.Run(ctx, f.src)
	require.ErrorContains(t, err, "disk full")
	st.fail.Store(false)

	f.clk.Advance(time.Hour)
	rep, err := eng.Run(ctx, f.src)
	require.NoError(t, err)
	require.Equal(t, 1, rep.NewURLs, "the page the failed run could not store")
	row, err := f.state.Get(ctx, f.src.Name(), added)
	require.NoError(t, err)
	require.NotEmpty(t, row.ContentHash, "and it was fetched")
}

// The engine's URL policy (Config.Normalize) is the one every source
// gets: a crawl dedupes the links a custom policy folds together exactly
// as the engine keys its rows.
func TestCrawlUsesTheEnginesURLPolicy(t *testing.T) {
	policy := normalize.Policy{Tracking: append(normalize.DefaultTracking(), "session")}
	f := newFixture(t, testsite.Options{Pages: 1}, recrawl.Config{Normalize: policy})
	for i := range 3 {
		f.site.Add(fmt.Sprintf("/docs/more-%d", i), "More", fmt.Sprintf(`<p>More %d.</p><a href="/docs/more-%d?session=a">next</a><a href="/docs/more-%d?session=b">next again</a>`, i, (i+1)%3, (i+1)%3))
	}
	f.src = discover.Crawl{URL: f.site.PageURL("/docs/more-0")}
	f.run()
	requested := map[string]int{}
	for _, r := range f.site.PageRequests() {
		requested[r.Path]++
	}
	for i := range 3 {
		require.Equal(t, 1, requested[fmt.Sprintf("/docs/more-%d", i)], "each page requested once, whatever its session")
	}
	for p := range requested {
		require.NotContains(t, p, "session", "a variant the policy folds is not requested")
	}
	for i := range 3 {
		_, err := f.state.Get(context.Background(), f.src.Name(), f.site.PageURL(fmt.Sprintf("/docs/more-%d", i)))
		require.NoError(t, err)
	}
}
