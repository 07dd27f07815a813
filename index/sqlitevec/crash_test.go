//go:build cgo && sqlite_fts5

package sqlitevec_test

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/recrawl/recrawl"
	"github.com/recrawl/recrawl/clock"
	"github.com/recrawl/recrawl/crawlstate"
	"github.com/recrawl/recrawl/crawlstate/sqlite"
	"github.com/recrawl/recrawl/discover"
	"github.com/recrawl/recrawl/embed"
	"github.com/recrawl/recrawl/index"
	"github.com/recrawl/recrawl/index/sqlitevec"
	"github.com/recrawl/recrawl/internal/testsite"
)

// crashEnv carries a child's spec: TestCrashKeepsIndexAndState re-executes
// its own test binary with it set, and TestCrashChild runs the engine once,
// with the state and the index in one file, killing itself with SIGKILL at
// the chosen point.
const crashEnv = "RECRAWL_SQLITEVEC_CRASH_CHILD"

type crashSpec struct {
	DB, Sitemap string
	Now         time.Time
	Kind        string // "upsert", "commit", "timer" or "" (a clean run)
	N           int64  // the N-th upsert or commit; the timer's delay in ms
	After       bool   // kill after the call's effect instead of before
}

const crashDims = 64

// crashEngine is the engine of a child (and of the oracle's fresh crawl).
func crashEngine(t testing.TB, st crawlstate.State, idx index.Writer, now time.Time) *recrawl.Engine {
	emb, err := embed.NewHashing(crashDims)
	require.NoError(t, err)
	l := recrawl.DefaultLimits()
	l.RequestDelay, l.MaxPages = 0, 0
	eng, err := recrawl.New(recrawl.Config{State: st, Embedder: emb, Index: idx, Limits: &l, Workers: 4,
		Clock: clock.NewAutoFake(now), LockTTL: 24 * 365 * time.Hour})
	require.NoError(t, err)
	return eng
}

func die() {
	_ = syscall.Kill(os.Getpid(), syscall.SIGKILL)
	select {}
}

// killAt runs fn as call n of a counter, dying before or after it when n
// is the spec's point.
func killAt(spec crashSpec, kind string, calls *atomic.Int64, fn func() error) error {
	hit := spec.Kind == kind && calls.Add(1) == spec.N
	if hit && !spec.After {
		die()
	}
	err := fn()
	if hit {
		die()
	}
	return err
}

type killIndex struct {
	*sqlitevec.Index
	spec  crashSpec
	calls *atomic.Int64
}

func (x killIndex) Upsert(ctx context.Context, recs []index.Record) error {
	return killAt(x.spec, "upsert", x.calls, func() error { return x.Index.Upsert(ctx, recs) })
}

type killState struct {
	*sqlite.State
	spec  crashSpec
	calls *atomic.Int64
}

func (s killState) Record(ctx context.Context, source string, results []crawlstate.Result) error {
	return killAt(s.spec, "commit", s.calls, func() error { return s.State.Record(ctx, source, results) })
}

// TestCrashChild is the child side of TestCrashKeepsIndexAndState.
func TestCrashChild(t *testing.T) {
	raw := os.Getenv(crashEnv)
	if raw == "" {
		t.Skip("the child process of TestCrashKeepsIndexAndState")
	}
	var spec crashSpec
	require.NoError(t, json.Unmarshal([]byte(raw), &spec))
	ctx := context.Background()
	st, err := sqlite.Open(ctx, spec.DB)
	require.NoError(t, err)
	x, err := sqlitevec.Open(ctx, spec.DB, sqlitevec.Options{Dimensions: crashDims})
	require.NoError(t, err)
	if spec.Kind == "timer" {
		time.AfterFunc(time.Duration(spec.N)*time.Millisecond, die)
	}
	eng := crashEngine(t, killState{st, spec, &atomic.Int64{}}, killIndex{x, spec, &atomic.Int64{}}, spec.Now)
	_, err = eng.Run(ctx, discover.Sitemap{URL: spec.Sitemap})
	require.NoError(t, err)
	require.NoError(t, x.Close())
	require.NoError(t, st.Close())
}

// A process killed anywhere in a pipeline run, with the state and the
// index in one SQLite file, loses no chunk and leaves none orphaned: after
// the kills and one clean run, the file passes SQLite's and FTS5's
// integrity checks, the index holds exactly the records of the chunks the
// state committed (each with its page's committed hash), and those are
// the records a fresh crawl of the site writes.
func TestCrashKeepsIndexAndState(t *testing.T) {
	if os.Getenv(crashEnv) != "" {
		t.Skip("in the child")
	}
	pages, kills := 300, 16
	if testing.Short() || raceEnabled {
		pages, kills = 80, 6
	}
	clk := clock.NewFake(time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC))
	site := testsite.New(testsite.Options{Pages: pages, Clock: clk, Words: 200})
	t.Cleanup(site.Close)
	dir := t.TempDir()
	spec := crashSpec{DB: filepath.Join(dir, "crawl.sqlite"), Sitemap: site.SitemapURL()}
	rng := rand.New(rand.NewPCG(31, 2026))
	child := func(kind string, n int64, after bool) bool {
		t.Helper()
		spec.Now, spec.Kind, spec.N, spec.After = clk.Now(), kind, n, after
		b, err := json.Marshal(spec)
		require.NoError(t, err)
		cmd := exec.Command(os.Args[0], "-test.run=^TestCrashChild$", "-test.count=1")
		cmd.Env = append(os.Environ(), crashEnv+"="+string(b))
		out, err := cmd.CombinedOutput()
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() && ws.Signal() == syscall.SIGKILL {
				integrity(t, spec.DB)
				return true
			}
		}
		require.NoError(t, err, "child (%s %d after=%v):\n%s", kind, n, after, out)
		return false
	}
	edit := func() {
		paths := site.Paths()
		for range pages / 10 {
			if p := paths[rng.IntN(len(paths))]; func() bool { pg, _ := site.Page(p); return pg.Status == http.StatusOK }() {
				site.Edit(p)
			}
		}
		site.Delete(paths[rng.IntN(len(paths))], http.StatusNotFound)
	}
	require.False(t, child("", 0, false))
	killed := map[string]int{}
	for attempt := 0; len(killed) < 3 || sum(killed) < kills; attempt++ {
		require.Less(t, attempt, 4*kills, "kills that hit their point: %v", killed)
		clk.Advance(7 * 24 * time.Hour)
		edit()
		kind := []string{"upsert", "commit", "timer"}[attempt%3]
		n := 1 + rng.Int64N(int64(pages)/10)
		if kind == "commit" {
			n = 1 + rng.Int64N(3)
		}
		if kind == "timer" {
			n = 20 + rng.Int64N(400)
		}
		if child(kind, n, rng.IntN(2) == 1) {
			killed[kind]++
		}
	}
	clk.Advance(60 * 24 * time.Hour) // every page due
	require.False(t, child("", 0, false))

	got := indexOf(t, spec.DB)
	fresh := filepath.Join(dir, "fresh.sqlite")
	func() {
		ctx := context.Background()
		st, err := sqlite.Open(ctx, fresh)
		require.NoError(t, err)
		defer st.Close()
		x, err := sqlitevec.Open(ctx, fresh, sqlitevec.Options{Dimensions: crashDims})
		require.NoError(t, err)
		defer x.Close()
		_, err = crashEngine(t, st, x, clk.Now()).Run(ctx, discover.Sitemap{URL: site.SitemapURL()})
		require.NoError(t, err)
	}()
	want := indexOf(t, fresh)
	require.Equal(t, want, got, "the records of the killed file are a fresh crawl's")
	t.Logf("%d pages, %d SIGKILLs %v, integrity ok after each; %d records, as a fresh crawl's", pages, sum(killed), killed, len(got))
}

func sum(m map[string]int) int {
	n := 0
	for _, v := range m {
		n += v
	}
	return n
}

// indexOf checks that the index of the file holds exactly the records of
// the chunks its state committed, and returns them: record ID → the
// page's URL and hash.
func indexOf(t *testing.T, path string) map[string]string {
	t.Helper()
	ctx := context.Background()
	st, err := sqlite.Open(ctx, path)
	require.NoError(t, err)
	defer st.Close()
	x, err := sqlitevec.Open(ctx, path, sqlitevec.Options{Dimensions: crashDims})
	require.NoError(t, err)
	defer x.Close()
	var src string
	db, err := sql.Open("sqlite3", "file:"+path+"?mode=ro")
	require.NoError(t, err)
	require.NoError(t, db.QueryRow(`SELECT DISTINCT source FROM pages`).Scan(&src))
	require.NoError(t, db.Close())
	committed := map[string]string{}
	rows, err := st.LiveRows(ctx, src, "", 1<<20)
	require.NoError(t, err)
	for _, r := range rows {
		chunks, err := st.Chunks(ctx, src, r.URL)
		require.NoError(t, err)
		for _, c := range chunks {
			committed[c.RecordID] = r.URL + " " + r.ContentHash
		}
	}
	ids, err := x.IDs(ctx, nil, 1<<20)
	require.NoError(t, err)
	stored := map[string]string{}
	for _, id := range ids {
		rec, ok, err := x.Get(ctx, id)
		require.NoError(t, err)
		require.True(t, ok)
		stored[id] = rec.Metadata["source_url"] + " " + rec.Metadata["content_hash"]
	}
	var orphans, lost []string
	for id := range stored {
		if _, ok := committed[id]; !ok {
			orphans = append(orphans, id)
		}
	}
	for id := range committed {
		if _, ok := stored[id]; !ok {
			lost = append(lost, id)
		}
	}
	slices.Sort(orphans)
	slices.Sort(lost)
	require.Empty(t, orphans, "records of no committed chunk")
	require.Empty(t, lost, "committed chunks without their record")
	require.Equal(t, committed, stored, "each record carries its page's committed hash")
	return stored
}

// integrity runs SQLite's integrity check and FTS5's on the file.
func integrity(t *testing.T, path string) {
	t.Helper()
	db, err := sql.Open("sqlite3", "file:"+path)
	require.NoError(t, err)
	defer db.Close()
	var res string
	require.NoError(t, db.QueryRow(`PRAGMA integrity_check`).Scan(&res))
	require.Equal(t, "ok", res, fmt.Sprintf("PRAGMA integrity_check of %s", path))
	_, err = db.Exec(`INSERT INTO index_text (index_text, rank) VALUES ('integrity-check', 1)`)
	require.NoError(t, err, "FTS5 integrity-check")
}
