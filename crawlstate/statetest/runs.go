package statetest

import (
	"math"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/recrawl/recrawl/crawlstate"
)

// testRuns pins RecordRun and Runs: newest first, a repeated start stored
// once, sources apart, at most KeepRuns kept, bad arguments rejected.
func testRuns(t *testing.T, open Opener) {
	s := freshFull(t, open, crawlstate.Options{})
	ctx := ctxT(t)
	got, err := s.Runs(ctx, "a", 10)
	require.NoError(t, err)
	require.Empty(t, got, "no runs recorded yet")
	require.NotNil(t, got)

	t0 := time.Date(2025, 3, 1, 6, 0, 0, 123, time.UTC)
	for _, h := range []int{0, 6, 12, 12, 18} {
		require.NoError(t, s.RecordRun(ctx, "a", t0.Add(time.Duration(h)*time.Hour)))
	}
	require.NoError(t, s.RecordRun(ctx, "b", t0.Add(time.Minute)))

	got, err = s.Runs(ctx, "a", 3)
	require.NoError(t, err)
	require.Len(t, got, 3)
	for i, h := range []int{18, 12, 6} {
		requireTime(t, t0.Add(time.Duration(h)*time.Hour), got[i], "run start")
	}
	got, err = s.Runs(ctx, "a", 100)
	require.NoError(t, err)
	require.Len(t, got, 4, "a repeated start is stored once")
	got, err = s.Runs(ctx, "b", 100)
	require.NoError(t, err)
	require.Len(t, got, 1, "sources are apart")

	for i := range crawlstate.KeepRuns + 5 {
		require.NoError(t, s.RecordRun(ctx, "c", t0.Add(time.Duration(i)*time.Hour)))
	}
	got, err = s.Runs(ctx, "c", 1000)
	require.NoError(t, err)
	require.Len(t, got, crawlstate.KeepRuns)
	requireTime(t, t0.Add(time.Duration(crawlstate.KeepRuns+4)*time.Hour), got[0], "newest kept")
	requireTime(t, t0.Add(5*time.Hour), got[len(got)-1], "oldest kept")

	require.Error(t, s.RecordRun(ctx, "", t0))
	require.Error(t, s.RecordRun(ctx, "a", time.Time{}))
	_, err = s.Runs(ctx, "a", 0)
	require.Error(t, err)
}

// testLastModTrust pins LastModTrust and AddLastModTrust: zero counts for
// a source without any, deltas added, sources apart, the total scaled down
// to keep, bad arguments rejected with nothing stored.
func testLastModTrust(t *testing.T, open Opener) {
	s := freshFull(t, open, crawlstate.Options{})
	ctx := ctxT(t)
	got, err := s.LastModTrust(ctx, "a")
	require.NoError(t, err)
	require.Equal(t, crawlstate.LastModCounts{}, got, "no counts yet")

	require.NoError(t, s.AddLastModTrust(ctx, "a", crawlstate.LastModCounts{MovedChanged: 3, StillSame: 1}, 0))
	require.NoError(t, s.AddLastModTrust(ctx, "a", crawlstate.LastModCounts{MovedChanged: 1, MovedSame: 2, StillChanged: 0.5}, 0))
	require.NoError(t, s.AddLastModTrust(ctx, "b", crawlstate.LastModCounts{StillChanged: 7}, 0))
	got, err = s.LastModTrust(ctx, "a")
	require.NoError(t, err)
	require.Equal(t, crawlstate.LastModCounts{MovedChanged: 4, MovedSame: 2, StillChanged: 0.5, StillSame: 1}, got)
	got, err = s.LastModTrust(ctx, "b")
	require.NoError(t, err)
	require.Equal(t, crawlstate.LastModCounts{StillChanged: 7}, got, "sources are apart")

	// 7.5 + 2.5 = 10 counted, at most 5 kept: every count halves.
	require.NoError(t, s.AddLastModTrust(ctx, "a", crawlstate.LastModCounts{StillSame: 2.5}, 5))
	got, err = s.LastModTrust(ctx, "a")
	require.NoError(t, err)
	require.InDelta(t, 2, got.MovedChanged, 1e-9)
	require.InDelta(t, 1, got.MovedSame, 1e-9)
	require.InDelta(t, 0.25, got.StillChanged, 1e-9)
	require.InDelta(t, 1.75, got.StillSame, 1e-9)
	require.NoError(t, s.AddLastModTrust(ctx, "a", crawlstate.LastModCounts{}, 100))
	again, err := s.LastModTrust(ctx, "a")
	require.NoError(t, err)
	require.Equal(t, got, again, "counts under keep are left as they are")

	require.Error(t, s.AddLastModTrust(ctx, "", crawlstate.LastModCounts{MovedSame: 1}, 0))
	require.Error(t, s.AddLastModTrust(ctx, "a", crawlstate.LastModCounts{MovedSame: -1}, 0))
	require.Error(t, s.AddLastModTrust(ctx, "a", crawlstate.LastModCounts{StillSame: math.NaN()}, 0))
	require.Error(t, s.AddLastModTrust(ctx, "a", crawlstate.LastModCounts{StillSame: math.Inf(1)}, 0))
	again, err = s.LastModTrust(ctx, "a")
	require.NoError(t, err)
	require.Equal(t, got, again, "a rejected delta stores nothing")
	_, err = s.LastModTrust(ctx, "")
	require.Error(t, err)
}
