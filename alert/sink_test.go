package alert_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/recrawl/recrawl/alert"
)

func TestJSONLGolden(t *testing.T) {
	var buf bytes.Buffer
	s := alert.JSONL(&buf)
	for _, a := range sampleAlerts() {
		require.NoError(t, s.Deliver(context.Background(), a))
	}
	golden := filepath.Join("testdata", "alerts.golden.jsonl")
	if *update {
		require.NoError(t, os.WriteFile(golden, buf.Bytes(), 0o644))
	}
	want, err := os.ReadFile(golden)
	require.NoError(t, err, "run go test -update to create it")
	require.Equal(t, string(want), buf.String())

	// Each line decodes back to the alert that was delivered.
	sc := bufio.NewScanner(&buf)
	var got []alert.Alert
	for sc.Scan() {
		var a alert.Alert
		require.NoError(t, json.Unmarshal(sc.Bytes(), &a))
		got = append(got, a)
	}
	require.Equal(t, sampleAlerts(), got)
}

func TestJSONLConcurrentLinesDoNotInterleave(t *testing.T) {
	var buf bytes.Buffer
	s := alert.JSONL(&buf)
	base := sampleAlerts()[1]
	const n = 64
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := 0; i < n; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			a := base
			a.URL = fmt.Sprintf("https://example.com/page/%d", i)
			a.ID = alert.ID(a.URL, a.OldHash, a.NewHash)
			errs[i] = s.Deliver(context.Background(), a)
		}()
	}
	wg.Wait()
	require.NoError(t, errors.Join(errs...))
	ids := map[string]bool{}
	for _, line := range strings.Split(strings.TrimSuffix(buf.String(), "\n"), "\n") {
		var a alert.Alert
		require.NoError(t, json.Unmarshal([]byte(line), &a))
		ids[a.ID] = true
	}
	require.Len(t, ids, n)
}

// flakyWriter fails its first Write after writing `partial` bytes.
type flakyWriter struct {
	buf     bytes.Buffer
	partial int
	failed  bool
	short   bool // report a short write without an error
}

var errDiskFull = errors.New("disk full")

func (w *flakyWriter) Write(p []byte) (int, error) {
	if !w.failed {
		w.failed = true
		n := min(w.partial, len(p))
		w.buf.Write(p[:n])
		if w.short {
			return n, nil
		}
		return n, errDiskFull
	}
	return w.buf.Write(p)
}

func TestJSONLWriteErrors(t *testing.T) {
	alerts := sampleAlerts()
	t.Run("error is returned", func(t *testing.T) {
		w := &flakyWriter{}
		err := alert.JSONL(w).Deliver(context.Background(), alerts[0])
		require.ErrorIs(t, err, errDiskFull)
		require.ErrorContains(t, err, alerts[0].ID)
	})
	t.Run("short write is an error", func(t *testing.T) {
		w := &flakyWriter{partial: 5, short: true}
		err := alert.JSONL(w).Deliver(context.Background(), alerts[0])
		require.ErrorIs(t, err, io.ErrShortWrite)
	})
	t.Run("line after a partial write starts fresh", func(t *testing.T) {
		w := &flakyWriter{partial: 20}
		s := alert.JSONL(w)
		require.Error(t, s.Deliver(context.Background(), alerts[1]))
		// The engine redelivers the same alert.
		require.NoError(t, s.Deliver(context.Background(), alerts[1]))
		require.NoError(t, s.Deliver(context.Background(), alerts[2]))
		lines := strings.Split(strings.TrimSuffix(w.buf.String(), "\n"), "\n")
		require.Len(t, lines, 3)
		require.False(t, json.Valid([]byte(lines[0])), "the torn line")
		var a alert.Alert
		require.NoError(t, json.Unmarshal([]byte(lines[1]), &a))
		require.Equal(t, alerts[1].ID, a.ID)
		require.NoError(t, json.Unmarshal([]byte(lines[2]), &a))
		require.Equal(t, alerts[2].ID, a.ID)
	})
}

func TestJSONLRefuses(t *testing.T) {
	var buf bytes.Buffer
	s := alert.JSONL(&buf)
	bad := sampleAlerts()[1]
	bad.ID = "not-the-id"
	require.ErrorIs(t, s.Deliver(context.Background(), bad), alert.ErrInvalid)

	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	require.ErrorIs(t, s.Deliver(ctx, sampleAlerts()[0]), context.Canceled)
	require.Zero(t, buf.Len(), "nothing written")

	require.ErrorContains(t, alert.JSONL(nil).Deliver(context.Background(), sampleAlerts()[0]), "nil writer")
}

func TestFunc(t *testing.T) {
	var got []string
	boom := errors.New("receiver down")
	s := alert.Func(func(_ context.Context, a alert.Alert) error {
		got = append(got, a.ID)
		if a.Kind == alert.Removed {
			return boom
		}
		return nil
	})
	alerts := sampleAlerts()
	require.NoError(t, s.Deliver(context.Background(), alerts[0]))
	require.ErrorIs(t, s.Deliver(context.Background(), alerts[2]), boom)
	require.Equal(t, []string{alerts[0].ID, alerts[2].ID}, got)

	require.ErrorContains(t, alert.Func(nil).Deliver(context.Background(), alerts[0]), "nil function")
}

// countingSink counts deliveries per ID and fails while fail is set.
type countingSink struct {
	mu    sync.Mutex
	calls map[string]int
	fail  atomic.Bool
}

func newCounting() *countingSink { return &countingSink{calls: map[string]int{}} }

func (c *countingSink) Deliver(_ context.Context, a alert.Alert) error {
	c.mu.Lock()
	c.calls[a.ID]++
	c.mu.Unlock()
	if c.fail.Load() {
		return errors.New("unavailable")
	}
	return nil
}

func (c *countingSink) count(id string) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.calls[id]
}

func TestMulti(t *testing.T) {
	ctx := context.Background()
	a := sampleAlerts()[1]

	t.Run("all acknowledge", func(t *testing.T) {
		s1, s2 := newCounting(), newCounting()
		require.NoError(t, alert.Multi(s1, s2).Deliver(ctx, a))
		require.Equal(t, 1, s1.count(a.ID))
		require.Equal(t, 1, s2.count(a.ID))
	})

	t.Run("one fails; redelivery skips the sink that acknowledged", func(t *testing.T) {
		s1, s2 := newCounting(), newCounting()
		s2.fail.Store(true)
		m := alert.Multi(s1, s2)
		err := m.Deliver(ctx, a)
		require.ErrorContains(t, err, "sink 2 of 2")
		require.NotContains(t, err.Error(), "sink 1 of 2")

		require.Error(t, m.Deliver(ctx, a)) // still failing
		s2.fail.Store(false)
		require.NoError(t, m.Deliver(ctx, a))
		require.Equal(t, 1, s1.count(a.ID), "acknowledged once, not sent again")
		require.Equal(t, 3, s2.count(a.ID))

		// Fully delivered alerts are forgotten: a (misbehaving) caller
		// that sends again reaches every sink, and the receivers dedupe.
		require.NoError(t, m.Deliver(ctx, a))
		require.Equal(t, 2, s1.count(a.ID))
	})

	t.Run("a new Multi (a restart) reaches every sink again", func(t *testing.T) {
		s1, s2 := newCounting(), newCounting()
		s2.fail.Store(true)
		require.Error(t, alert.Multi(s1, s2).Deliver(ctx, a))
		s2.fail.Store(false)
		require.NoError(t, alert.Multi(s1, s2).Deliver(ctx, a))
		require.Equal(t, 2, s1.count(a.ID))
	})

	t.Run("memory of partial deliveries is bounded", func(t *testing.T) {
		s1, s2 := newCounting(), newCounting()
		s2.fail.Store(true)
		m := alert.Multi(s1, s2)
		ids := make([]alert.Alert, 5000)
		for i := range ids {
			x := a
			x.URL = fmt.Sprintf("https://example.com/%d", i)
			x.ID = alert.ID(x.URL, x.OldHash, x.NewHash)
			ids[i] = x
			require.Error(t, m.Deliver(ctx, x))
		}
		s2.fail.Store(false)
		require.NoError(t, m.Deliver(ctx, ids[0]))
		require.Equal(t, 2, s1.count(ids[0].ID), "oldest entry was evicted")
		require.NoError(t, m.Deliver(ctx, ids[4999]))
		require.Equal(t, 1, s1.count(ids[4999].ID), "recent entry remembered")
	})

	t.Run("nil sink and no sinks", func(t *testing.T) {
		require.ErrorContains(t, alert.Multi(newCounting(), nil).Deliver(ctx, a), "sink 2 of 2: sink is nil")
		require.NoError(t, alert.Multi().Deliver(ctx, a))
	})

	t.Run("errors of several sinks are joined", func(t *testing.T) {
		s1, s2 := newCounting(), newCounting()
		s1.fail.Store(true)
		s2.fail.Store(true)
		err := alert.Multi(s1, s2).Deliver(ctx, a)
		require.ErrorContains(t, err, "sink 1 of 2")
		require.ErrorContains(t, err, "sink 2 of 2")
	})
}

// A process killed inside a write leaves the file with a torn last line.
// The next process's sink, on the same file opened again, starts its first
// line on a line of its own: every alert it delivers reads back, and the
// torn line stays one invalid line that readers skip.
func TestJSONLRepairsATornLastLineLeftByAnotherProcess(t *testing.T) {
	alerts := sampleAlerts()
	whole, err := json.Marshal(alerts[0])
	require.NoError(t, err)
	torn := string(whole) + "\n" + string(whole[:25]) // killed mid-line
	tests := []struct {
		name  string
		flags int
		left  string
		want  int // lines in the file afterwards
	}{
		{"write-only append", os.O_APPEND | os.O_WRONLY, torn, 4},
		{"read-write append", os.O_APPEND | os.O_RDWR, torn, 4},
		{"intact file", os.O_APPEND | os.O_WRONLY, string(whole) + "\n", 3},
		{"empty file", os.O_APPEND | os.O_WRONLY | os.O_CREATE, "", 2},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "alerts.jsonl")
			require.NoError(t, os.WriteFile(path, []byte(tc.left), 0o644))
			f, err := os.OpenFile(path, tc.flags, 0o644)
			require.NoError(t, err)
			s := alert.JSONL(f)
			require.NoError(t, s.Deliver(context.Background(), alerts[1]))
			require.NoError(t, s.Deliver(context.Background(), alerts[2]))
			require.NoError(t, f.Close())

			data, err := os.ReadFile(path)
			require.NoError(t, err)
			require.True(t, strings.HasPrefix(string(data), tc.left), "what was there is kept")
			lines := strings.Split(strings.TrimSuffix(string(data), "\n"), "\n")
			require.Len(t, lines, tc.want)
			var got []alert.Alert
			for _, l := range lines {
				var a alert.Alert
				if json.Unmarshal([]byte(l), &a) == nil {
					got = append(got, a)
				}
			}
			require.Equal(t, alerts[1:3], got[len(got)-2:], "both new alerts read back")
		})
	}
}
