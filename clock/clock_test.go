package clock_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/recrawl/recrawl/clock"
)

var t0 = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

func TestFakeAdvanceFiresInDeadlineOrder(t *testing.T) {
	f := clock.NewFake(t0)
	late := f.NewTimer(2 * time.Second)
	early := f.NewTimer(time.Second)
	require.Equal(t, 2, f.Waiters())

	f.Advance(500 * time.Millisecond)
	select {
	case <-early.C():
		t.Fatal("fired before its deadline")
	default:
	}
	f.Advance(time.Second)
	require.Equal(t, t0.Add(1500*time.Millisecond), <-early.C())
	require.Equal(t, 1, f.Waiters())
	require.True(t, f.AdvanceToNext())
	require.Equal(t, t0.Add(2*time.Second), <-late.C())
	require.False(t, f.AdvanceToNext())
}

func TestFakeStopAndSetNeverGoesBack(t *testing.T) {
	f := clock.NewFake(t0)
	tm := f.NewTimer(time.Second)
	require.True(t, tm.Stop())
	require.False(t, tm.Stop())
	f.Set(t0.Add(-time.Hour))
	require.Equal(t, t0, f.Now())
	f.Set(t0.Add(time.Hour))
	require.Equal(t, t0.Add(time.Hour), f.Now())
	select {
	case <-tm.C():
		t.Fatal("stopped timer fired")
	default:
	}
}

func TestSleepHonoursContextAndFakeTime(t *testing.T) {
	f := clock.NewFake(t0)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- clock.Sleep(ctx, f, time.Minute) }()
	require.NoError(t, f.BlockUntil(context.Background(), 1))
	cancel()
	require.True(t, errors.Is(<-done, context.Canceled))
	require.Equal(t, 0, f.Waiters(), "a cancelled sleep stops its timer")

	go func() { done <- clock.Sleep(context.Background(), f, time.Minute) }()
	require.NoError(t, f.BlockUntil(context.Background(), 1))
	f.Advance(time.Minute)
	require.NoError(t, <-done)
	require.NoError(t, clock.Sleep(context.Background(), f, 0))
}

func TestAutoFakeJumpsToDeadlines(t *testing.T) {
	f := clock.NewAutoFake(t0)
	var wg sync.WaitGroup
	for i := 0; i < 4; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			require.NoError(t, clock.Sleep(context.Background(), f, 2*time.Second))
		}()
	}
	wg.Wait()
	// Concurrent sleeps of 2 s that start at the same instant end at the
	// same instant; the clock never moves backwards.
	require.False(t, f.Now().Before(t0.Add(2*time.Second)))
	require.NoError(t, clock.Sleep(context.Background(), f, 3*time.Second))
	require.False(t, f.Now().Before(t0.Add(5*time.Second)))
}

func TestRealClock(t *testing.T) {
	c := clock.Or(nil)
	before := time.Now()
	require.False(t, c.Now().Before(before))
	require.NoError(t, clock.Sleep(context.Background(), c, time.Millisecond))
	tm := c.NewTimer(time.Hour)
	require.True(t, tm.Stop())
}
