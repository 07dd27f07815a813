package sqlite_test

import (
	"bytes"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/recrawl/recrawl/crawlstate"
	"github.com/recrawl/recrawl/crawlstate/sqlite"
	"github.com/recrawl/recrawl/crawlstate/statetest"
)

var t0 = time.Date(2025, time.March, 1, 12, 0, 0, 0, time.UTC)

func openFile(t testing.TB, path string, opts ...sqlite.Option) *sqlite.State {
	t.Helper()
	s, err := sqlite.Open(context.Background(), path, opts...)
	require.NoError(t, err)
	return s
}

func TestSQLiteConformance(t *testing.T) {
	statetest.Run(t, func(t *testing.T, opts crawlstate.Options) crawlstate.State {
		return openFile(t, filepath.Join(t.TempDir(), "state.db"), sqlite.WithOptions(opts))
	})
}

func TestSQLiteMemoryConformance(t *testing.T) {
	statetest.Run(t, func(t *testing.T, opts crawlstate.Options) crawlstate.State {
		return openFile(t, ":memory:", sqlite.WithOptions(opts))
	})
}

func TestWithKeepTombstones(t *testing.T) {
	s := openFile(t, ":memory:", sqlite.WithKeepTombstones())
	defer s.Close()
	ctx := t.Context()
	u := "https://ex.com/a"
	_, err := s.UpsertDiscovered(ctx, "docs", t0, []crawlstate.Discovered{{URL: u}})
	require.NoError(t, err)
	require.NoError(t, s.Record(ctx, "docs", []crawlstate.Result{{URL: u, At: t0, Gone: true}}))
	st, err := s.UpsertDiscovered(ctx, "docs", t0.Add(time.Hour), []crawlstate.Discovered{{URL: u}})
	require.NoError(t, err)
	require.Equal(t, crawlstate.UpsertStats{Seen: 1}, st)
	r, err := s.Get(ctx, "docs", u)
	require.NoError(t, err)
	require.True(t, r.Gone)
}

func TestReopenKeepsState(t *testing.T) {
	path := filepath.Join(t.TempDir(), "state.db")
	ctx := t.Context()
	s := openFile(t, path)
	_, err := s.UpsertDiscovered(ctx, "docs", t0, []crawlstate.Discovered{{URL: "https://ex.com/a", OriginalURL: "https://EX.com/a"}})
	require.NoError(t, err)
	require.NoError(t, s.Record(ctx, "docs", []crawlstate.Result{{
		URL: "https://ex.com/a", At: t0, Changed: true, ContentHash: "h", ETag: `"e"`,
		Interval: time.Hour, NextCheck: t0.Add(time.Hour),
	}}))
	require.NoError(t, s.Close())

	s = openFile(t, path)
	defer s.Close()
	r, err := s.Get(ctx, "docs", "https://ex.com/a")
	require.NoError(t, err)
	require.Equal(t, "https://EX.com/a", r.OriginalURL)
	require.Equal(t, "h", r.ContentHash)
	require.Equal(t, `"e"`, r.ETag)
	require.Equal(t, time.Hour, r.Interval)
	require.Equal(t, t0.Add(time.Hour), r.NextCheck, "times come back in UTC")
}

func TestOpenSQLiteRejects(t *testing.T) {
	dir := t.TempDir()
	tests := []struct {
		name string
		path string
		opts []sqlite.Option
	}{
		{"empty path", "", nil},
		{"negative busy timeout", filepath.Join(dir, "a.db"), []sqlite.Option{sqlite.WithBusyTimeout(-time.Second)}},
		{"no read connections", filepath.Join(dir, "b.db"), []sqlite.Option{sqlite.WithReadConns(0)}},
		{"missing directory", filepath.Join(dir, "no", "such", "dir", "c.db"), nil},
		{"a directory", dir, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s, err := sqlite.Open(context.Background(), tc.path, tc.opts...)
			require.Error(t, err)
			require.Nil(t, s)
		})
	}
}

func TestOpenSQLiteForeignDatabase(t *testing.T) {
	path := filepath.Join(t.TempDir(), "other.db")
	db, err := sql.Open("sqlite3", path)
	require.NoError(t, err)
	_, err = db.Exec(`CREATE TABLE invoices (id INTEGER PRIMARY KEY, total REAL); INSERT INTO invoices VALUES (1, 9.5)`)
	require.NoError(t, err)
	require.NoError(t, db.Close())

	_, err = sqlite.Open(context.Background(), path)
	require.ErrorIs(t, err, sqlite.ErrNotStateDB)

	// The foreign file is untouched.
	db, err = sql.Open("sqlite3", path)
	require.NoError(t, err)
	defer db.Close()
	var n int
	require.NoError(t, db.QueryRow(`SELECT count(*) FROM sqlite_schema`).Scan(&n))
	require.Equal(t, 1, n)

	// So is a file marked by another application.
	other := filepath.Join(t.TempDir(), "marked.db")
	db2, err := sql.Open("sqlite3", other)
	require.NoError(t, err)
	_, err = db2.Exec(`PRAGMA application_id = 42; PRAGMA user_version = 1`)
	require.NoError(t, err)
	require.NoError(t, db2.Close())
	_, err = sqlite.Open(context.Background(), other)
	require.ErrorIs(t, err, sqlite.ErrNotStateDB)
}

func TestOpenSQLiteNewerSchema(t *testing.T) {
	path := filepath.Join(t.TempDir(), "state.db")
	require.NoError(t, openFile(t, path).Close())
	db, err := sql.Open("sqlite3", path)
	require.NoError(t, err)
	_, err = db.Exec(`PRAGMA user_version = 99`)
	require.NoError(t, err)
	require.NoError(t, db.Close())

	_, err = sqlite.Open(context.Background(), path)
	var sv *sqlite.SchemaVersionError
	require.ErrorAs(t, err, &sv)
	require.Equal(t, 99, sv.Version)
	require.Equal(t, 9, sv.Supported, "the schema versions this build knows")
	require.Equal(t, path, sv.Path)
	require.Contains(t, err.Error(), "newer recrawl")
}

func TestOpenSQLiteOddFileName(t *testing.T) {
	path := filepath.Join(t.TempDir(), "state ?x=1#frag %41.db")
	s := openFile(t, path)
	_, err := s.UpsertDiscovered(t.Context(), "docs", t0, []crawlstate.Discovered{{URL: "https://ex.com/"}})
	require.NoError(t, err)
	require.NoError(t, s.Close())
	_, err = os.Stat(path)
	require.NoError(t, err, "the database is the file named, not a URI reading of it")
}

// Two handles on one file are two processes as far as SQLite knows: the
// run lock must still admit exactly one.
func TestLockAcrossHandles(t *testing.T) {
	path := filepath.Join(t.TempDir(), "state.db")
	const n = 6
	handles := make([]*sqlite.State, n)
	for i := range handles {
		handles[i] = openFile(t, path)
		defer handles[i].Close()
	}
	for round := range 5 {
		now := t0.Add(time.Duration(round) * time.Hour) // every earlier lock has expired
		var wg sync.WaitGroup
		errs := make([]error, n)
		start := make(chan struct{})
		for i, h := range handles {
			wg.Go(func() {
				<-start
				errs[i] = h.Lock(context.Background(), "docs", fmt.Sprintf("round%d-owner%d", round, i), now, time.Minute)
			})
		}
		close(start)
		wg.Wait()
		wins := 0
		for _, err := range errs {
			if err == nil {
				wins++
				continue
			}
			require.ErrorIs(t, err, crawlstate.ErrRunInProgress)
			require.NotErrorIs(t, err, crawlstate.ErrLockLost)
		}
		require.Equal(t, 1, wins, "round %d", round)
	}
}

func TestLockErrorNamesHolder(t *testing.T) {
	s := openFile(t, ":memory:")
	defer s.Close()
	ctx := t.Context()
	require.NoError(t, s.Lock(ctx, "docs", "worker-7/run-42", t0, 5*time.Minute))
	err := s.Lock(ctx, "docs", "worker-8/run-1", t0.Add(time.Minute), 5*time.Minute)
	require.ErrorIs(t, err, crawlstate.ErrRunInProgress)
	require.Contains(t, err.Error(), "worker-7/run-42")
	require.Contains(t, err.Error(), t0.Add(5*time.Minute).Format(time.RFC3339Nano))
}

// Writers on separate handles wait for each other (busy timeout and
// BEGIN IMMEDIATE) instead of failing with "database is locked".
func TestConcurrentHandlesWrite(t *testing.T) {
	path := filepath.Join(t.TempDir(), "state.db")
	a, b := openFile(t, path), openFile(t, path)
	defer a.Close()
	defer b.Close()
	batch := func(prefix string) []crawlstate.Discovered {
		ds := make([]crawlstate.Discovered, 2000)
		for i := range ds {
			ds[i] = crawlstate.Discovered{URL: fmt.Sprintf("https://ex.com/%s/%d", prefix, i)}
		}
		return ds
	}
	var wg sync.WaitGroup
	errs := make(chan error, 20)
	for i, h := range []*sqlite.State{a, b, a, b} {
		wg.Go(func() {
			for r := range 5 {
				_, err := h.UpsertDiscovered(context.Background(), "docs", t0.Add(time.Duration(r)*time.Second), batch(fmt.Sprint(i)))
				errs <- err
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		require.NoError(t, err)
	}
	total, _, err := a.Count(t.Context(), "docs")
	require.NoError(t, err)
	require.Equal(t, 8000, total)
}

func TestLoggerReportsMigrationAndTakeover(t *testing.T) {
	var buf bytes.Buffer
	var mu sync.Mutex
	log := slog.New(slog.NewTextHandler(&lockedWriter{w: &buf, mu: &mu}, nil))
	s := openFile(t, filepath.Join(t.TempDir(), "state.db"), sqlite.WithLogger(log))
	defer s.Close()
	ctx := t.Context()
	require.NoError(t, s.Lock(ctx, "docs", "crashed", t0, time.Minute))
	require.NoError(t, s.Lock(ctx, "docs", "next", t0.Add(time.Hour), time.Minute))
	mu.Lock()
	out := buf.String()
	mu.Unlock()
	require.Contains(t, out, "schema migrated")
	require.Contains(t, out, "version=1")
	require.Contains(t, out, "previous_owner=crashed")
}

type lockedWriter struct {
	w  *bytes.Buffer
	mu *sync.Mutex
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

// A large discovery batch canceled while it loads stores nothing.
func TestUpsertDiscoveredCanceledMidway(t *testing.T) {
	s := openFile(t, filepath.Join(t.TempDir(), "state.db"))
	defer s.Close()
	ds := make([]crawlstate.Discovered, 50_000)
	for i := range ds {
		ds[i] = crawlstate.Discovered{URL: fmt.Sprintf("https://ex.com/p/%d", i)}
	}
	ctx := &cancelAfter{n: 3}
	ctx.Context, ctx.cancel = context.WithCancel(t.Context())
	_, err := s.UpsertDiscovered(ctx, "docs", t0, ds)
	require.Error(t, err)
	require.True(t, errors.Is(err, context.Canceled) || errors.Is(err, sql.ErrTxDone), "got %v", err)
	require.GreaterOrEqual(t, ctx.calls(), 3, "the cancellation came from inside the call")
	total, _, err := s.Count(t.Context(), "docs")
	require.NoError(t, err)
	require.Zero(t, total)
}

// cancelAfter is a context that cancels itself on the n-th call of Err,
// to cancel an operation at a point inside it without timing.
type cancelAfter struct {
	context.Context
	cancel context.CancelFunc
	mu     sync.Mutex
	n, got int
}

func (c *cancelAfter) Err() error {
	c.mu.Lock()
	c.got++
	if c.got >= c.n {
		c.cancel()
	}
	c.mu.Unlock()
	return c.Context.Err()
}

func (c *cancelAfter) calls() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.got
}

// Batches are loaded in statements of a few hundred URLs; sizes around
// those boundaries and duplicates far apart must still count exactly.
func TestUpsertDiscoveredBatchSizes(t *testing.T) {
	for _, n := range []int{1, 255, 256, 257, 600, 1000} {
		t.Run(fmt.Sprint(n), func(t *testing.T) {
			s := openFile(t, ":memory:")
			defer s.Close()
			ctx := t.Context()
			ds := make([]crawlstate.Discovered, n)
			for i := range ds {
				ds[i] = crawlstate.Discovered{URL: fmt.Sprintf("https://ex.com/%04d", n-i), OriginalURL: "first"}
			}
			// The first URL again at the end, with another original form.
			ds = append(ds, crawlstate.Discovered{URL: ds[0].URL, OriginalURL: "second", LastMod: t0})
			st, err := s.UpsertDiscovered(ctx, "docs", t0, ds)
			require.NoError(t, err)
			require.Equal(t, crawlstate.UpsertStats{New: n}, st)
			total, _, err := s.Count(ctx, "docs")
			require.NoError(t, err)
			require.Equal(t, n, total)
			r, err := s.Get(ctx, "docs", ds[0].URL)
			require.NoError(t, err)
			require.Equal(t, "first", r.OriginalURL, "the first entry of a duplicate wins")
			require.True(t, r.SitemapLastMod.IsZero())

			st, err = s.UpsertDiscovered(ctx, "docs", t0.Add(time.Hour), ds)
			require.NoError(t, err)
			require.Equal(t, crawlstate.UpsertStats{Seen: n}, st)

			// A new URL listed twice among stored ones: stored once, from
			// its first entry.
			more := append(ds[:len(ds):len(ds)],
				crawlstate.Discovered{URL: "https://ex.com/new", OriginalURL: "first"},
				crawlstate.Discovered{URL: "https://ex.com/new", OriginalURL: "second", LastMod: t0})
			st, err = s.UpsertDiscovered(ctx, "docs", t0.Add(2*time.Hour), more)
			require.NoError(t, err)
			require.Equal(t, crawlstate.UpsertStats{New: 1, Seen: n}, st)
			r, err = s.Get(ctx, "docs", "https://ex.com/new")
			require.NoError(t, err)
			require.Equal(t, "first", r.OriginalURL, "the first entry of a duplicate wins")
			require.True(t, r.SitemapLastMod.IsZero())
		})
	}
}
