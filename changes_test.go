package recrawl_test

import (
	"context"
	"errors"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/recrawl/recrawl"
	"github.com/recrawl/recrawl/alert"
	"github.com/recrawl/recrawl/clock"
	"github.com/recrawl/recrawl/crawlstate"
	"github.com/recrawl/recrawl/crawlstate/memory"
	"github.com/recrawl/recrawl/discover"
	"github.com/recrawl/recrawl/index"
	"github.com/recrawl/recrawl/internal/testsite"
)

// Changes lists the stored alerts after a time, delivered or not, with
// the evidence they were delivered with.
func TestChanges(t *testing.T) {
	ctx := context.Background()
	clk := clock.NewFake(start)
	site := testsite.New(testsite.Options{Pages: 8, Clock: clk})
	t.Cleanup(site.Close)
	st := memory.New(crawlstate.Options{})
	var delivered []alert.Alert
	cfg := oracleConfig(t, st, clk, index.NewMemory(oracleDims), alert.Func(func(_ context.Context, a alert.Alert) error {
		delivered = append(delivered, a)
		return nil
	}))
	cfg.AlertOnNew = false
	eng, err := recrawl.New(cfg)
	require.NoError(t, err)
	src := discover.Sitemap{URL: site.SitemapURL()}
	_, err = eng.Run(ctx, src)
	require.NoError(t, err)
	changes, more, err := eng.Changes(ctx, src.Name(), time.Time{}, 10)
	require.NoError(t, err)
	require.Empty(t, changes, "a first run alerts nothing without AlertOnNew")
	require.False(t, more)

	clk.Advance(48 * time.Hour)
	second := clk.Now()
	paths := site.Paths()
	site.Edit(paths[1])
	site.Edit(paths[4])
	site.Delete(paths[6], http.StatusNotFound)
	_, err = eng.Run(ctx, src)
	require.NoError(t, err)
	require.Len(t, delivered, 3)

	changes, more, err = eng.Changes(ctx, src.Name(), second, 10)
	require.NoError(t, err)
	require.False(t, more)
	require.Len(t, changes, 3)
	kinds := map[alert.Kind]int{}
	for i, c := range changes {
		require.False(t, c.Delivered.IsZero(), "the sink acknowledged it")
		require.Equal(t, alert.ID(c.Alert.URL, c.Alert.OldHash, c.Alert.NewHash), c.Alert.ID)
		kinds[c.Alert.Kind]++
		if c.Alert.Kind == alert.Changed {
			require.NotEmpty(t, c.Alert.Diff)
			require.NotEmpty(t, c.Alert.Changed)
		}
		if i > 0 {
			require.False(t, c.Alert.DetectedAt.Before(changes[i-1].Alert.DetectedAt), "oldest first")
		}
	}
	require.Equal(t, map[alert.Kind]int{alert.Changed: 2, alert.Removed: 1}, kinds)

	first, more, err := eng.Changes(ctx, src.Name(), second, 2)
	require.NoError(t, err)
	require.True(t, more)
	require.Equal(t, changes[:2], first)
	later, _, err := eng.Changes(ctx, src.Name(), second.Add(time.Hour), 10)
	require.NoError(t, err)
	require.Empty(t, later)

	_, _, err = eng.Changes(ctx, src.Name(), second, 0)
	require.ErrorContains(t, err, "limit 0")

	// Without the ability, Changes says so.
	core, err := recrawl.New(recrawl.Config{State: coreOnly{memory.New(crawlstate.Options{})}})
	require.NoError(t, err)
	_, _, err = core.Changes(ctx, src.Name(), second, 1)
	require.True(t, errors.Is(err, errors.ErrUnsupported), "%v", err)
}
