package recrawl_test

import (
	"context"
	"errors"
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
	"github.com/recrawl/recrawl/index"
	"github.com/recrawl/recrawl/internal/testsite"
	"github.com/recrawl/recrawl/schedule"
)

// coreOnly is a State with none of the optional abilities: what the
// smallest store does.
type coreOnly struct{ crawlstate.State }

// An engine runs on a State that has only the core, doing without each
// ability as crawlstate documents: pages are fetched conditionally and
// scheduled, discovery documents are read whole every run, and what needs
// an ability says so.
func TestEngineOnACoreOnlyState(t *testing.T) {
	ctx := context.Background()
	clk := clock.NewAutoFake(start)
	site := testsite.New(testsite.Options{Pages: 12, Clock: clk})
	t.Cleanup(site.Close)
	st := coreOnly{memory.New(crawlstate.Options{})}
	l := recrawl.DefaultLimits()
	l.RequestDelay = 0
	eng, err := recrawl.New(recrawl.Config{State: st, Clock: clk, Limits: &l, Scheduler: schedule.DefaultHalving})
	require.NoError(t, err)
	src := discover.Sitemap{URL: site.SitemapURL()}

	rep, err := eng.Run(ctx, src)
	require.NoError(t, err)
	reconcile(t, rep)
	require.Equal(t, 12, rep.New)
	require.False(t, rep.Joined, "without crawlstate.Sharer the run is the source's alone")
	require.Zero(t, rep.Offered)

	// A day later every page is due: revalidated with its validators.
	clk.Advance(25 * time.Hour)
	site.Edit(site.Paths()[0])
	site.ResetLog()
	rep, err = eng.Run(ctx, src)
	require.NoError(t, err)
	reconcile(t, rep)
	require.Equal(t, 12, rep.Fetched)
	require.Equal(t, 1, rep.Changed)
	require.Equal(t, 11, rep.NotModified)
	sitemaps := site.Count(func(r testsite.Request) bool { return r.Path == "/sitemap.xml" })
	require.Equal(t, 1, sitemaps)
	require.Zero(t, site.Count(func(r testsite.Request) bool { return r.Path == "/sitemap.xml" && r.Conditional() }),
		"no document store: the sitemap is requested without validators")

	_, err = eng.Explain(ctx, "some-alert")
	require.ErrorIs(t, err, errors.ErrUnsupported)
	_, err = eng.DeadLetters(ctx, src.Name())
	require.ErrorIs(t, err, errors.ErrUnsupported)

	// A pipeline needs PageDetails, alerts an AlertOutbox: New says so.
	emb, err := embed.NewHashing(16)
	require.NoError(t, err)
	_, err = recrawl.New(recrawl.Config{State: st, Embedder: emb, Index: index.NewMemory(16),
		Alerts: alert.Func(func(context.Context, alert.Alert) error { return nil })})
	var ce *recrawl.ConfigError
	require.ErrorAs(t, err, &ce)
	require.ErrorContains(t, err, "crawlstate.PageDetails")
	require.ErrorContains(t, err, "crawlstate.AlertOutbox")
}
