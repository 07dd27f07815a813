package recrawl_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/recrawl/recrawl"
	"github.com/recrawl/recrawl/clock"
	"github.com/recrawl/recrawl/crawlstate"
	"github.com/recrawl/recrawl/discover"
	"github.com/recrawl/recrawl/internal/testsite"
)

// holderDuringRun runs src once and returns the run lock's holder as
// another owner sees it in the middle of the run.
func holderDuringRun(t *testing.T, f *fixture) *crawlstate.LockHeldError {
	t.Helper()
	var once sync.Once
	var held *crawlstate.LockHeldError
	eng := mustEngine(t, recrawl.Config{State: f.state, Clock: f.clk, Limits: limits(func(*recrawl.Limits) {}),
		Observer: func(recrawl.Event) {
			once.Do(func() {
				err := f.state.Lock(context.Background(), f.src.Name(), "probe", f.clk.Now(), time.Minute)
				errors.As(err, &held)
			})
		}})
	_, err := eng.Run(context.Background(), f.src)
	require.NoError(t, err)
	require.NotNil(t, held, "the run held its lock")
	return held
}

func TestRunLockNamesHostPIDAndStart(t *testing.T) {
	f := newFixture(t, testsite.Options{Pages: 3}, recrawl.Config{})
	held := holderDuringRun(t, f)
	host, err := os.Hostname()
	require.NoError(t, err)
	require.Contains(t, held.Owner, "host="+host+" ")
	require.Contains(t, held.Owner, fmt.Sprintf(" pid=%d ", os.Getpid()))
	require.Contains(t, held.Owner, " start="+start.Format(time.RFC3339Nano)+" ")
	require.True(t, held.Acquired.Equal(start))
	// Released at the end.
	require.NoError(t, f.state.Lock(context.Background(), f.src.Name(), "after", f.clk.Now(), time.Minute))
}

// deadPID returns the PID of a process that has exited and been reaped.
func deadPID(t *testing.T) int {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	require.NoError(t, cmd.Run())
	return cmd.Process.Pid
}

var pidField = regexp.MustCompile(` pid=\d+ `)

// A crashed run's lock does not block a restart on the same host: the
// holder's process is gone, so the lock is taken over at once. A live
// holder, or one on another host, keeps it until it expires.
func TestRestartTakesOverTheLockOfADeadProcess(t *testing.T) {
	f := newFixture(t, testsite.Options{Pages: 3}, recrawl.Config{})
	owner := holderDuringRun(t, f).Owner
	ctx := context.Background()
	cases := []struct {
		name     string
		owner    string
		takeOver bool
	}{
		{"dead process on this host", pidField.ReplaceAllString(owner, " pid="+strconv.Itoa(deadPID(t))+" "), true},
		{"live process on this host", pidField.ReplaceAllString(owner, " pid="+strconv.Itoa(os.Getppid())+" "), false},
		{"another host", regexp.MustCompile(`host=\S+ `).ReplaceAllString(pidField.ReplaceAllString(owner, " pid="+strconv.Itoa(deadPID(t))+" "), "host=elsewhere.example "), false},
		{"another program", "some-other-tool", false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			f.clk.Advance(25 * time.Hour)
			require.NoError(t, f.state.Lock(ctx, f.src.Name(), tc.owner, f.clk.Now(), recrawl.DefaultLockTTL))
			rep, err := f.eng.Run(ctx, f.src)
			require.NotNil(t, rep)
			if tc.takeOver {
				require.NoError(t, err)
				require.Equal(t, 3, rep.Unchanged)
				return
			}
			require.ErrorIs(t, err, recrawl.ErrRunInProgress)
			require.NoError(t, f.state.Unlock(ctx, f.src.Name(), tc.owner))
		})
	}
}

// A run stalled on one slow answer keeps its lock: the heartbeat refreshes
// it every LockTTL/3 on the engine's clock.
func TestHeartbeatRefreshesTheLockOfAStalledRun(t *testing.T) {
	clk := clock.NewFake(start) // a manual clock: the test moves time while the run waits
	site := testsite.New(testsite.Options{Pages: 1, Clock: clk})
	t.Cleanup(site.Close)
	st := openState(t, filepath.Join(t.TempDir(), "state.sqlite"))
	t.Cleanup(func() { st.Close() })
	const ttl = 15 * time.Minute
	eng := mustEngine(t, recrawl.Config{State: st, Clock: clk, LockTTL: ttl, Limits: limits(func(l *recrawl.Limits) { l.RespectRobots = false })})
	site.Slow(site.Paths()[0], 4*time.Second)
	src := discover.Sitemap{URL: site.SitemapURL()}
	done := make(chan error, 1)
	go func() {
		_, err := eng.Run(context.Background(), src)
		done <- err
	}()
	expires := func() time.Time {
		err := st.Lock(context.Background(), src.Name(), "probe", start, time.Minute)
		var held *crawlstate.LockHeldError
		if !errors.As(err, &held) {
			return time.Time{}
		}
		return held.Expires
	}
	// The run locked before it requested anything; a probe before that
	// would take the lock itself.
	require.Eventually(t, func() bool { return len(site.Requests()) > 0 }, 3*time.Second, time.Millisecond)
	require.True(t, expires().Equal(start.Add(ttl)))
	for i := 1; i <= 2; i++ {
		require.NoError(t, clk.BlockUntil(context.Background(), 1), "the heartbeat waits on the clock")
		clk.Advance(ttl/3 + time.Second)
		want := clk.Now().Add(ttl)
		require.Eventually(t, func() bool { return expires().Equal(want) }, time.Second, time.Millisecond, "tick %d", i)
	}
	require.NoError(t, <-done)
}
