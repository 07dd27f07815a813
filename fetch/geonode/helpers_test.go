package geonode_test

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/recrawl/recrawl/clock"
	"github.com/recrawl/recrawl/fetch"
	"github.com/recrawl/recrawl/fetch/geonode"
	"github.com/recrawl/recrawl/internal/fakegeonode"
	"github.com/recrawl/recrawl/internal/testsite"
)

var start = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

// env is a test site, the fake API in front of it, and an auto-advancing
// clock that records every wait.
type env struct {
	site *testsite.Site
	api  *fakegeonode.Server
	clk  *clock.Fake
}

func newEnv(t testing.TB, pages int, fo fakegeonode.Options) *env {
	t.Helper()
	site := testsite.New(testsite.Options{Pages: pages})
	t.Cleanup(site.Close)
	api := fakegeonode.New(fo)
	t.Cleanup(api.Close)
	return &env{site: site, api: api, clk: clock.NewAutoFake(start)}
}

// client returns a client of the fake with quick, deterministic polling.
func (e *env) client(t testing.TB, opts ...geonode.Option) *geonode.Client {
	t.Helper()
	base := []geonode.Option{
		geonode.WithBaseURL(e.api.URL()),
		geonode.WithClock(e.clk),
		geonode.WithPolling(time.Second, 8*time.Second),
	}
	c, err := geonode.New(e.api.APIKey(), append(base, opts...)...)
	require.NoError(t, err)
	return c
}

func (e *env) waited() time.Duration { return e.clk.Now().Sub(start) }

// url returns the URL of the site's i-th page (1-based).
func (e *env) url(i int) string { return e.site.PageURL(e.site.Paths()[i-1]) }

// outcome is one yield of FetchBatch.
type outcome struct {
	resp *fetch.Response
	err  error
	n    int // how many times the index was yielded
}

// collect runs FetchBatch and gathers its yields by index.
func collect(t testing.TB, ctx context.Context, c *geonode.Client, reqs []fetch.Request) (map[int]*outcome, error) {
	t.Helper()
	got := map[int]*outcome{}
	var mu sync.Mutex
	concurrent := 0
	err := c.FetchBatch(ctx, reqs, func(i int, resp *fetch.Response, err error) {
		mu.Lock()
		concurrent++
		require.Equal(t, 1, concurrent, "yield called concurrently")
		mu.Unlock()
		require.True(t, i >= 0 && i < len(reqs), "index %d out of range", i)
		o := got[i]
		if o == nil {
			o = &outcome{}
			got[i] = o
		}
		o.resp, o.err = resp, err
		o.n++
		mu.Lock()
		concurrent--
		mu.Unlock()
	})
	for i, o := range got {
		require.Equal(t, 1, o.n, "index %d yielded %d times", i, o.n)
	}
	return got, err
}

// bodies returns the JSON bodies the fake logged for method and path prefix.
func bodies(t testing.TB, api *fakegeonode.Server, method, prefix string) []map[string]any {
	t.Helper()
	var out []map[string]any
	for _, r := range api.Requests() {
		if r.Method == method && strings.HasPrefix(r.Path, prefix) {
			var m map[string]any
			require.NoError(t, json.Unmarshal(r.Body, &m), "body %s", r.Body)
			out = append(out, m)
		}
	}
	return out
}

// logBuffer is a concurrency-safe sink for a JSON slog handler.
type logBuffer struct {
	mu sync.Mutex
	b  strings.Builder
}

func (l *logBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *logBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

func debugLogger(w *logBuffer) *slog.Logger {
	return slog.New(slog.NewJSONHandler(w, &slog.HandlerOptions{Level: slog.LevelDebug}))
}

// newRawServer answers every request with status and body, as JSON.
func newRawServer(t testing.TB, status int, body string) string {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		io.WriteString(w, body)
	}))
	t.Cleanup(srv.Close)
	return srv.URL
}

// newScriptedServer answers the first POST with 202 and script[0], and
// every GET with the next entry of script (repeating the last).
func newScriptedServer(t testing.TB, script []string) string {
	t.Helper()
	var mu sync.Mutex
	gets := 0
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		mu.Lock()
		defer mu.Unlock()
		switch r.Method {
		case http.MethodPost:
			w.WriteHeader(http.StatusAccepted)
			io.WriteString(w, script[0])
		case http.MethodGet:
			gets++
			w.WriteHeader(http.StatusOK)
			io.WriteString(w, script[min(gets, len(script)-1)])
		default:
			w.WriteHeader(http.StatusAccepted)
			io.WriteString(w, `{"status":"cancelled"}`)
		}
	}))
	t.Cleanup(srv.Close)
	return srv.URL
}
