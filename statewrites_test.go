package recrawl_test

import (
	"context"
	"errors"
	"net/http"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/recrawl/recrawl"
	"github.com/recrawl/recrawl/alert"
	"github.com/recrawl/recrawl/clock"
	"github.com/recrawl/recrawl/crawlstate"
	"github.com/recrawl/recrawl/crawlstate/memory"
	"github.com/recrawl/recrawl/discover"
	"github.com/recrawl/recrawl/embed"
	"github.com/recrawl/recrawl/fetch"
	"github.com/recrawl/recrawl/index"
	"github.com/recrawl/recrawl/internal/testsite"
)

var errWrite = errors.New("disk full")

// writeFailing fails the state writes a run survives: stage events,
// failure records, cached vectors and alert outcomes.
type writeFailing struct{ testStore }

func (writeFailing) LogEvents(context.Context, string, []crawlstate.StageEvent) error {
	return errWrite
}
func (writeFailing) RecordFailure(context.Context, string, crawlstate.Failure) error { return errWrite }
func (writeFailing) PutVectors(context.Context, string, map[string][]float32) error  { return errWrite }
func (writeFailing) MarkDelivered(context.Context, string, time.Time) error          { return errWrite }

// The writes of the state that fail while a run goes on are counted in
// its Report, a field per kind, and the run still ends well.
func TestStateWriteFailuresCounted(t *testing.T) {
	clk := clock.NewAutoFake(start)
	site := testsite.New(testsite.Options{Pages: 6, Clock: clk})
	t.Cleanup(site.Close)
	st := writeFailing{openState(t, filepath.Join(t.TempDir(), "state.sqlite"))}
	var delivered int
	sink := alert.Func(func(context.Context, alert.Alert) error { delivered++; return nil })
	emb, err := embed.NewHashing(32)
	require.NoError(t, err)
	eng, err := recrawl.New(recrawl.Config{State: st, Clock: clk, HTTPClient: site.Client(), Limits: limits(func(*recrawl.Limits) {}),
		Embedder: emb, Index: index.NewMemory(32), Alerts: sink})
	require.NoError(t, err)
	src := discover.Sitemap{URL: site.SitemapURL()}
	rep, err := eng.Run(context.Background(), src)
	require.NoError(t, err)
	require.Equal(t, 6, rep.New)
	require.Positive(t, rep.StateWriteFailures.Vectors, "the vectors of the new pages")

	paths := site.Paths()
	site.Fail(paths[0], http.StatusInternalServerError, 10, "")
	site.Edit(paths[1])
	clk.Advance(48 * time.Hour)
	rep, err = eng.Run(context.Background(), src)
	require.NoError(t, err)
	t.Logf("%+v", rep.StateWriteFailures)
	require.Equal(t, 1, rep.Failed[recrawl.StageFetch])
	require.Equal(t, 1, rep.StateWriteFailures.Failures, "the failure's record")
	require.Positive(t, rep.StateWriteFailures.Events, "the failed page's and the alerted page's events")
	require.Equal(t, 1, rep.StateWriteFailures.Alerts, "the delivered alert's record")
	require.Equal(t, 1, delivered)
	require.Zero(t, rep.RetriesDeferred, "the backoff was not stored")
	require.Equal(t, rep.StateWriteFailures.Total(), rep.StateWriteFailures.Events+rep.StateWriteFailures.Failures+rep.StateWriteFailures.Vectors+rep.StateWriteFailures.Alerts)
}

// leaseFailing is a shared State whose lease extensions fail.
type leaseFailing struct{ *memory.State }

func (leaseFailing) Extend(context.Context, string, string, time.Time, time.Duration) (int, error) {
	return 0, errWrite
}

// stepFetcher moves the clock on at every fetch, so that a run outlasts a
// third of its lease.
type stepFetcher struct {
	fetch.Fetcher
	clk  *clock.Fake
	step time.Duration
}

func (f stepFetcher) Fetch(ctx context.Context, req fetch.Request) (*fetch.Response, error) {
	f.clk.Advance(f.step)
	return f.Fetcher.Fetch(ctx, req)
}

// A shared run whose lease extensions fail counts them, and ends well.
func TestLeaseExtensionFailuresCounted(t *testing.T) {
	clk := clock.NewFake(start)
	site := testsite.New(testsite.Options{Pages: 40, Clock: clk})
	t.Cleanup(site.Close)
	st := leaseFailing{memory.New(crawlstate.Options{})}
	l := recrawl.DefaultLimits()
	l.RequestDelay = 0
	cfg := recrawl.Config{State: st, Clock: clk, HTTPClient: site.Client(), Limits: &l, LockTTL: 10 * time.Minute, Workers: 1}
	base, err := recrawl.New(cfg)
	require.NoError(t, err)
	cfg.Fetcher = stepFetcher{Fetcher: &fetch.HTTP{Client: base.Client()}, clk: clk, step: 11 * time.Second}
	eng, err := recrawl.New(cfg)
	require.NoError(t, err)
	rep, err := eng.Run(context.Background(), discover.Sitemap{URL: site.SitemapURL()})
	require.NoError(t, err)
	t.Logf("%+v", rep.StateWriteFailures)
	require.Equal(t, 40, rep.New)
	require.Positive(t, rep.StateWriteFailures.Leases)
}
