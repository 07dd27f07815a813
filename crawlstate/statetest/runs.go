package statetest

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/recrawl/recrawl/crawlstate"
)

// testRuns pins RecordRun and Runs: newest first, a repeated start stored
// once, sources apart, at most KeepRuns kept, bad arguments rejected.
func testRuns(t *testing.T, open Opener) {
	s := fresh(t, open, crawlstate.Options{})
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
