package recrawl_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/recrawl/recrawl"
	"github.com/recrawl/recrawl/alert"
	"github.com/recrawl/recrawl/clock"
	"github.com/recrawl/recrawl/crawlstate"
	"github.com/recrawl/recrawl/discover"
	"github.com/recrawl/recrawl/embed"
	"github.com/recrawl/recrawl/fetch"
	"github.com/recrawl/recrawl/index"
	"github.com/recrawl/recrawl/internal/testsite"
)

// faults decides, with a seeded generator, which calls fail and how, and
// counts what it injected. Off, it injects nothing.
type faults struct {
	mu     sync.Mutex
	rng    *rand.Rand
	rate   float64
	on     atomic.Bool
	counts map[string]int // "component/kind"
}

// The kinds of fault: an error before the call, a timeout, a partial
// result, and a failure reported after the call took effect.
const (
	faultError   = "error"
	faultTimeout = "timeout"
	faultPartial = "partial"
	faultAfter   = "after_side_effect"
)

var errFault = errors.New("injected fault")

// errTimeout is an injected timeout: a net.Error that says so.
type errTimeout struct{}

func (errTimeout) Error() string   { return "injected fault: i/o timeout" }
func (errTimeout) Timeout() bool   { return true }
func (errTimeout) Temporary() bool { return true }
func (errTimeout) Unwrap() error   { return context.DeadlineExceeded }

// pick returns the fault to inject into this call of component, among
// kinds, or "" for none.
func (f *faults) pick(component string, kinds ...string) string {
	if !f.on.Load() {
		return ""
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.rng.Float64() >= f.rate {
		return ""
	}
	k := kinds[f.rng.IntN(len(kinds))]
	f.counts[component+"/"+k]++
	return k
}

func faultErr(kind string) error {
	if kind == faultTimeout {
		return errTimeout{}
	}
	return errFault
}

type faultFetcher struct {
	f     *faults
	inner fetch.Fetcher
}

func (x faultFetcher) Fetch(ctx context.Context, req fetch.Request) (*fetch.Response, error) {
	switch k := x.f.pick("fetcher", faultError, faultTimeout, faultPartial, faultAfter); k {
	case faultError, faultTimeout:
		return nil, faultErr(k)
	case faultPartial:
		// The body broke off: the transport reports it.
		resp, err := x.inner.Fetch(ctx, req)
		if err != nil {
			return nil, err
		}
		return nil, fmt.Errorf("reading %s after %d bytes: %w", req.URL, len(resp.Body)/2, io.ErrUnexpectedEOF)
	case faultAfter:
		if _, err := x.inner.Fetch(ctx, req); err != nil {
			return nil, err
		}
		return nil, errTimeout{}
	}
	return x.inner.Fetch(ctx, req)
}

type faultEmbedder struct {
	f *faults
	embed.Embedder
}

func (x faultEmbedder) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	switch k := x.f.pick("embedder", faultError, faultTimeout, faultPartial); k {
	case faultError, faultTimeout:
		return nil, faultErr(k)
	case faultPartial:
		v, err := x.Embedder.Embed(ctx, texts)
		if err != nil || len(v) < 2 {
			return nil, errFault
		}
		return v[:len(v)/2], nil // fewer vectors than texts
	}
	return x.Embedder.Embed(ctx, texts)
}

type faultIndex struct {
	f *faults
	index.Index
}

func (x faultIndex) Upsert(ctx context.Context, records []index.Record) error {
	switch k := x.f.pick("index", faultError, faultTimeout, faultPartial, faultAfter); k {
	case faultError, faultTimeout:
		return faultErr(k)
	case faultPartial:
		if err := x.Index.Upsert(ctx, records[:len(records)/2]); err != nil {
			return err
		}
		return errFault
	case faultAfter:
		if err := x.Index.Upsert(ctx, records); err != nil {
			return err
		}
		return errTimeout{}
	}
	return x.Index.Upsert(ctx, records)
}

func (x faultIndex) Delete(ctx context.Context, ids []string) error {
	switch k := x.f.pick("index", faultError, faultPartial, faultAfter); k {
	case faultError:
		return errFault
	case faultPartial:
		if err := x.Index.Delete(ctx, ids[:len(ids)/2]); err != nil {
			return err
		}
		return errFault
	case faultAfter:
		if err := x.Index.Delete(ctx, ids); err != nil {
			return err
		}
		return errTimeout{}
	}
	return x.Index.Delete(ctx, ids)
}

func (x faultIndex) Query(ctx context.Context, vector []float32, k int, filter index.Filter) ([]index.Hit, error) {
	if x.f.pick("index", faultError) != "" {
		return nil, errFault
	}
	return x.Index.Query(ctx, vector, k, filter)
}

type faultSink struct {
	f *faults
	alert.Sink
}

func (x faultSink) Deliver(ctx context.Context, a alert.Alert) error {
	switch k := x.f.pick("sink", faultError, faultTimeout, faultAfter); k {
	case faultError, faultTimeout:
		return faultErr(k)
	case faultAfter:
		if err := x.Sink.Deliver(ctx, a); err != nil {
			return err
		}
		return errTimeout{} // delivered, the acknowledgement lost
	}
	return x.Sink.Deliver(ctx, a)
}

// faultState embeds the state, so its optional abilities stay
// visible, and fails the calls of the run's main path.
type faultState struct {
	f *faults
	testStore
}

func (x faultState) Record(ctx context.Context, source string, results []crawlstate.Result) error {
	switch k := x.f.pick("state", faultError, faultAfter); k {
	case faultError:
		return errFault
	case faultAfter:
		if err := x.testStore.Record(ctx, source, results); err != nil {
			return err
		}
		return errTimeout{} // committed, the answer lost
	}
	return x.testStore.Record(ctx, source, results)
}

func (x faultState) RecordFailure(ctx context.Context, source string, fl crawlstate.Failure) error {
	if x.f.pick("state", faultError) != "" {
		return errFault
	}
	return x.testStore.RecordFailure(ctx, source, fl)
}

func (x faultState) UpsertDiscovered(ctx context.Context, source string, now time.Time, urls []crawlstate.Discovered) (crawlstate.UpsertStats, error) {
	if x.f.pick("state", faultError) != "" {
		return crawlstate.UpsertStats{}, errFault
	}
	return x.testStore.UpsertDiscovered(ctx, source, now, urls)
}

func (x faultState) Chunks(ctx context.Context, source, url string) ([]crawlstate.Chunk, error) {
	if x.f.pick("state", faultError) != "" {
		return nil, errFault
	}
	return x.testStore.Chunks(ctx, source, url)
}

func (x faultState) MarkDelivered(ctx context.Context, id string, at time.Time) error {
	switch x.f.pick("state", faultError, faultAfter) {
	case faultError:
		return errFault
	case faultAfter:
		if err := x.testStore.MarkDelivered(ctx, id, at); err != nil {
			return err
		}
		return errFault
	}
	return x.testStore.MarkDelivered(ctx, id, at)
}

func (x faultState) PendingAlerts(ctx context.Context, source string, limit int) ([]crawlstate.Alert, error) {
	if x.f.pick("state", faultError) != "" {
		return nil, errFault
	}
	return x.testStore.PendingAlerts(ctx, source, limit)
}

// TestFaultSoak runs the engine over a changing site on the fake clock
// while every component it calls (fetcher, embedder, index, state, alert
// sink) fails a seeded share of calls: errors, timeouts, partial results,
// failures after the side effect. Once the faults stop, one clean run must
// leave state, index and alerts where a fresh crawl of the site puts them.
func TestFaultSoak(t *testing.T) {
	pages, runs := 2000, 300
	if testing.Short() || raceEnabled {
		pages, runs = 200, 40
	}
	clk := clock.NewAutoFake(start)
	site := testsite.New(testsite.Options{Pages: pages, SitemapSplit: 100, Clock: clk, Words: 60})
	t.Cleanup(site.Close)
	dir := t.TempDir()
	st := openState(t, filepath.Join(dir, "state.sqlite"))
	t.Cleanup(func() { st.Close() })
	idx := openLogIndex(t, filepath.Join(dir, "index.log"))
	t.Cleanup(func() { idx.f.Close() })
	af, err := os.Create(filepath.Join(dir, "alerts.jsonl"))
	require.NoError(t, err)
	t.Cleanup(func() { af.Close() })

	fl := &faults{rng: rand.New(rand.NewPCG(7, 2026)), rate: 0.08, counts: map[string]int{}}
	cfg := oracleConfig(t, faultState{fl, st}, clk, faultIndex{fl, idx}, faultSink{fl, alert.JSONL(af)})
	cfg.Embedder = faultEmbedder{fl, cfg.Embedder}
	cfg.Fetcher = faultFetcher{fl, &fetch.HTTP{Client: site.Client(), Clock: clk, Timeout: time.Minute, MaxBytes: 10 << 20}}
	eng, err := recrawl.New(cfg)
	require.NoError(t, err)
	src := discover.Sitemap{URL: site.SitemapURL()}
	rng := rand.New(rand.NewPCG(8, 2026))
	ctx := context.Background()

	fl.on.Store(true)
	runErrors, added := 0, 0
	for i := range runs {
		rep, err := eng.Run(ctx, src)
		require.NotNil(t, rep)
		if err != nil {
			runErrors++
		}
		// The site changes between runs: edits, deletions, new pages.
		clk.Advance(6 * time.Hour)
		paths := site.Paths()
		for range max(pages/200, 1) {
			if p := paths[rng.IntN(len(paths))]; pageLive(site, p) {
				site.Edit(p)
			}
		}
		if i%10 == 0 {
			site.Delete(paths[rng.IntN(len(paths))], http.StatusNotFound)
			added++
			site.Add(fmt.Sprintf("/docs/added-%03d", added), "Added", fmt.Sprintf("<p>Page %d was added between runs, with a few words of its own.</p>", added))
		}
	}
	fl.on.Store(false)

	// The faults stop: one clean run, late enough that every page is due
	// (backoffs included).
	clk.Advance(60 * 24 * time.Hour)
	rep, err := eng.Run(ctx, src)
	require.NoError(t, err)
	require.Zero(t, rep.FailedTotal(), "no fault, no failure")
	v := checkOracle(t, site, src, st, replayIndex(t, idx.f.Name()), readAlerts(t, af.Name()), clk.Now())
	require.Zero(t, v.Lost)
	require.Zero(t, v.Duplicated)
	total := 0
	for _, n := range fl.counts {
		total += n
	}
	require.Positive(t, total)
	t.Logf("fault soak: %d pages, %d runs (%d returned an error), %d faults injected %v; oracle: %d live, %d gone, %d records, %d transitions alerted, %d redeliveries; lost %d, duplicated %d",
		pages, runs, runErrors, total, fl.counts, v.Live, v.Gone, v.Records, v.Transitions, v.Redeliveries, v.Lost, v.Duplicated)
}

func pageLive(s *testsite.Site, path string) bool {
	p, ok := s.Page(path)
	return ok && p.Status == http.StatusOK
}
