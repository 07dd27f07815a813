//go:build cgo && sqlite_fts5

package main

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/require"

	"github.com/recrawl/recrawl"
	"github.com/recrawl/recrawl/clock"
	"github.com/recrawl/recrawl/internal/testsite"
)

// fixture is a server over a fresh file, the demo site, and an MCP
// client connected to it in memory.
type fixture struct {
	db       string
	site     *testsite.Site
	clk      *clock.Fake
	srv      *server
	client   *mcp.ClientSession
	progress atomic.Int64
}

func newFixture(t *testing.T, allowPrivate bool) *fixture {
	t.Helper()
	f := &fixture{db: filepath.Join(t.TempDir(), "docs.sqlite"), clk: clock.NewAutoFake(transcriptStart)}
	f.site = newDemoSite(f.clk, "")
	t.Cleanup(f.site.Close)
	f.connect(t, allowPrivate)
	return f
}

// connect opens a server on the fixture's file and connects a client.
func (f *fixture) connect(t *testing.T, allowPrivate bool) {
	t.Helper()
	ctx := context.Background()
	limits := recrawl.DefaultLimits()
	limits.RequestDelay = 0
	limits.BlockPrivate = !allowPrivate
	srv, err := newServer(ctx, config{DB: f.db, Limits: limits, Clock: f.clk, UserAgent: userAgent})
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, srv.Close()) })
	st, ct := mcp.NewInMemoryTransports()
	_, err = srv.mcpServer().Connect(ctx, st, nil)
	require.NoError(t, err)
	client, err := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "1"}, &mcp.ClientOptions{
		ProgressNotificationHandler: func(context.Context, *mcp.ProgressNotificationClientRequest) { f.progress.Add(1) },
	}).Connect(ctx, ct, nil)
	require.NoError(t, err)
	t.Cleanup(func() { client.Close() })
	f.srv, f.client = srv, client
}

// call calls a tool and decodes its structured answer into out; it
// returns the result (IsError for a tool error).
func (f *fixture) call(t *testing.T, name string, args map[string]any, out any) *mcp.CallToolResult {
	t.Helper()
	params := &mcp.CallToolParams{Name: name, Arguments: args}
	params.SetProgressToken("p-" + name)
	res, err := f.client.CallTool(context.Background(), params)
	require.NoError(t, err)
	if out != nil && !res.IsError {
		b, err := json.Marshal(res.StructuredContent)
		require.NoError(t, err)
		require.NoError(t, json.Unmarshal(b, out))
	}
	return res
}

// must calls a tool that must succeed.
func (f *fixture) must(t *testing.T, name string, args map[string]any, out any) {
	t.Helper()
	res := f.call(t, name, args, out)
	require.False(t, res.IsError, "%s: %s", name, toolText(res))
}

// Every tool, as a client calls it: a source added and refreshed, its
// pages searched and read, the site edited, refreshed again, and the
// changes listed with their evidence.
func TestTools(t *testing.T) {
	f := newFixture(t, true)
	tools, err := f.client.ListTools(context.Background(), nil)
	require.NoError(t, err)
	var names []string
	for _, tl := range tools.Tools {
		names = append(names, tl.Name)
	}
	require.ElementsMatch(t, []string{"search_docs", "get_page", "list_sources", "changes", "refresh", "add_source"}, names)

	var added AddOutput
	f.must(t, "add_source", map[string]any{"url": f.site.SitemapURL(), "name": "lantern"}, &added)
	require.Equal(t, AddOutput{Name: "lantern", URL: f.site.SitemapURL(), Format: "sitemap", Pages: len(demoPages)}, added)

	var srcs SourcesOutput
	f.must(t, "list_sources", nil, &srcs)
	require.Equal(t, []SourceInfo{{Name: "lantern", URL: f.site.SitemapURL(), Format: "sitemap"}}, srcs.Sources, "not read yet")

	var rep RefreshOutput
	f.progress.Store(0)
	f.must(t, "refresh", map[string]any{"source": "lantern"}, &rep)
	require.Equal(t, len(demoPages), rep.New)
	require.Zero(t, rep.Failed)
	require.Eventually(t, func() bool { return f.progress.Load() == int64(len(demoPages)) }, 10*time.Second, time.Millisecond, "a progress notification a page")

	f.must(t, "list_sources", nil, &srcs)
	got := srcs.Sources[0]
	require.Equal(t, len(demoPages), got.Pages)
	require.Equal(t, len(demoPages), got.Stored)
	require.Equal(t, transcriptStart.Format(time.RFC3339), got.LastRun)
	next, err := time.Parse(time.RFC3339, got.NextDue)
	require.NoError(t, err)
	require.True(t, next.After(transcriptStart), "next due after the run: %s", got.NextDue)

	var found SearchOutput
	f.must(t, "search_docs", map[string]any{"query": "upload timeout seconds", "k": 3}, &found)
	require.NotEmpty(t, found.Hits)
	top := found.Hits[0]
	require.Equal(t, f.site.PageURL("/docs/configuration"), top.URL)
	require.Equal(t, "Configuration > Upload timeout", top.HeadingPath)
	require.Equal(t, transcriptStart.Format(time.RFC3339), top.FetchedAt)
	require.Equal(t, "lantern", top.Source)
	for i := 1; i < len(found.Hits); i++ {
		require.GreaterOrEqual(t, found.Hits[i-1].Score, found.Hits[i].Score)
	}

	var pg PageOutput
	f.must(t, "get_page", map[string]any{"url": top.URL}, &pg)
	require.Equal(t, "Configuration", pg.Title)
	require.Equal(t, top.ContentHash, pg.ContentHash)
	require.Equal(t, top.Text, pg.Markdown[top.Start:top.End], "a hit's byte range cites the page's Markdown")

	var none SearchOutput
	f.must(t, "search_docs", map[string]any{"query": "upload timeout", "source": "lantern"}, &none)
	require.Len(t, none.Hits, defaultK, "k defaults to %d", defaultK)

	f.clk.Advance(72 * time.Hour)
	editDemoSite(f.site)
	f.must(t, "refresh", map[string]any{"source": "lantern"}, &rep)
	require.Equal(t, 2, rep.Changed)
	require.Equal(t, 1, rep.Gone)

	var ch ChangesOutput
	f.must(t, "changes", map[string]any{"since": transcriptStart.Add(time.Hour).Format(time.RFC3339)}, &ch)
	require.Len(t, ch.Changes, 3)
	byURL := map[string]PageChange{}
	for _, c := range ch.Changes {
		byURL[c.URL] = c
		require.Equal(t, "lantern", c.Source)
		require.NotEmpty(t, c.AlertID)
	}
	cfg := byURL[f.site.PageURL("/docs/configuration")]
	require.Equal(t, "changed", cfg.Kind)
	require.Equal(t, top.ContentHash, cfg.OldHash, "the old hash is the one the first search cited")
	require.NotEqual(t, cfg.OldHash, cfg.NewHash)
	require.Len(t, cfg.Changed, 1)
	require.Equal(t, "Configuration > Upload timeout", cfg.Changed[0].HeadingPath)
	require.Contains(t, cfg.Changed[0].OldText, "60 seconds")
	require.Contains(t, cfg.Changed[0].NewText, "120 seconds")
	require.Contains(t, cfg.Diff, "-The `deploy` command gives up on an upload after 60 seconds")
	f.must(t, "get_page", map[string]any{"url": cfg.URL}, &pg)
	require.Equal(t, cfg.NewHash, pg.ContentHash)
	require.Equal(t, cfg.Changed[0].NewText, pg.Markdown[cfg.Changed[0].Start:cfg.Changed[0].End])
	require.Equal(t, "removed", byURL[f.site.PageURL("/docs/faq")].Kind)
	require.Len(t, byURL[f.site.PageURL("/docs/deploy")].Added, 1)

	// A gone page is no longer served; what changed later is not listed
	// for an earlier since.
	res := f.call(t, "get_page", map[string]any{"url": f.site.PageURL("/docs/faq")}, nil)
	require.True(t, res.IsError)
	require.Contains(t, toolText(res), "no page of it is stored")
	f.must(t, "changes", map[string]any{"since": f.clk.Now().Add(time.Hour).Format(time.RFC3339), "source": "lantern"}, &ch)
	require.Empty(t, ch.Changes)

	// A new server on the same file serves the same.
	f.connect(t, true)
	f.must(t, "search_docs", map[string]any{"query": "rollback previous upload", "k": 1}, &found)
	require.Equal(t, f.site.PageURL("/docs/deploy"), found.Hits[0].URL)
}

// snapshot digests every row of every ordinary table of the file: state,
// index and the server's tables.
func snapshot(t *testing.T, path string) map[string]string {
	t.Helper()
	db, err := sql.Open("sqlite3", "file:"+path+"?mode=ro")
	require.NoError(t, err)
	defer db.Close()
	rows, err := db.Query(`SELECT name FROM sqlite_schema WHERE type = 'table' AND sql NOT LIKE 'CREATE VIRTUAL%' ORDER BY name`)
	require.NoError(t, err)
	var tables []string
	for rows.Next() {
		var n string
		require.NoError(t, rows.Scan(&n))
		tables = append(tables, n)
	}
	require.NoError(t, rows.Close())
	out := map[string]string{}
	for _, tbl := range tables {
		r, err := db.Query(`SELECT * FROM "` + tbl + `"`)
		require.NoError(t, err)
		cols, err := r.Columns()
		require.NoError(t, err)
		var lines []string
		for r.Next() {
			vals := make([]any, len(cols))
			ptrs := make([]any, len(cols))
			for i := range vals {
				ptrs[i] = &vals[i]
			}
			require.NoError(t, r.Scan(ptrs...))
			lines = append(lines, fmt.Sprintf("%q", vals))
		}
		require.NoError(t, r.Close())
		slices.Sort(lines)
		sum := sha256.Sum256([]byte(strings.Join(lines, "\n")))
		out[tbl] = fmt.Sprintf("%d rows %s", len(lines), hex.EncodeToString(sum[:8]))
	}
	return out
}

// Bad input to every tool is a tool error that says what to change, and
// leaves every table of the file as it was.
func TestBadInputChangesNothing(t *testing.T) {
	f := newFixture(t, true)
	f.must(t, "add_source", map[string]any{"url": f.site.SitemapURL(), "name": "lantern"}, nil)
	f.must(t, "refresh", map[string]any{"source": "lantern"}, nil)
	// A second server on the same file that refuses private addresses.
	private := &fixture{db: f.db, clk: f.clk, site: f.site}
	private.connect(t, false)

	for _, tc := range []struct {
		name string
		fx   *fixture
		tool string
		args map[string]any
		want string
	}{
		{"search: unknown source", f, "search_docs", map[string]any{"query": "upload", "source": "nope"}, `unknown source "nope"; the sources are "lantern"`},
		{"search: huge k", f, "search_docs", map[string]any{"query": "upload", "k": 1000000}, "k is 1000000; ask for 1 to 50 hits"},
		{"search: negative k", f, "search_docs", map[string]any{"query": "upload", "k": -1}, "ask for 1 to 50 hits"},
		{"search: empty query", f, "search_docs", map[string]any{"query": "   "}, "query is empty"},
		{"search: no query", f, "search_docs", map[string]any{}, "query"},
		{"page: outside every source", f, "get_page", map[string]any{"url": "https://elsewhere.example.org/docs/install"}, "outside every source"},
		{"page: not a URL", f, "get_page", map[string]any{"url": "::not a url"}, "url"},
		{"changes: malformed since", f, "changes", map[string]any{"since": "last tuesday"}, `since "last tuesday" is not a time`},
		{"changes: unknown source", f, "changes", map[string]any{"since": "2026-12-01", "source": "nope"}, `unknown source "nope"`},
		{"refresh: unknown source", f, "refresh", map[string]any{"source": "nope"}, `unknown source "nope"`},
		{"refresh: a private address", private, "refresh", map[string]any{"source": "lantern"}, "private"},
		{"add: a private address", private, "add_source", map[string]any{"url": f.site.SitemapURL(), "name": "again"}, "private"},
		{"add: not http", f, "add_source", map[string]any{"url": "ftp://docs.example.org/"}, "give an http or https URL"},
		{"add: a name taken", f, "add_source", map[string]any{"url": f.site.SitemapURL(), "name": "lantern"}, `a source named "lantern" exists already`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			before := snapshot(t, f.db)
			res := tc.fx.call(t, tc.tool, tc.args, nil)
			require.True(t, res.IsError, "%s", toolText(res))
			require.Contains(t, toolText(res), tc.want)
			require.Equal(t, before, snapshot(t, f.db), "the file is as it was")
		})
	}
}

// The built binary, started as a desktop client starts it: over stdio.
func TestStdioBinary(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary")
	}
	dir := t.TempDir()
	bin := filepath.Join(dir, "docsmcp")
	build := exec.Command("go", "build", "-tags", "sqlite_fts5", "-o", bin, ".")
	build.Env = append(os.Environ(), "CGO_ENABLED=1")
	out, err := build.CombinedOutput()
	require.NoError(t, err, "%s", out)
	cmd := exec.Command(bin, "-db", filepath.Join(dir, "docs.sqlite"), "-demo", "-demo-addr", "127.0.0.1:0")
	cmd.Env = append(os.Environ(), "WEB_REQUEST_DELAY_MS=0")
	ctx := context.Background()
	client, err := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "1"}, nil).Connect(ctx, &mcp.CommandTransport{Command: cmd}, nil)
	require.NoError(t, err)
	defer client.Close()
	call := func(name string, args map[string]any, out any) {
		t.Helper()
		res, err := client.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: args})
		require.NoError(t, err)
		require.False(t, res.IsError, "%s", toolText(res))
		b, _ := json.Marshal(res.StructuredContent)
		require.NoError(t, json.Unmarshal(b, out))
	}
	var srcs SourcesOutput
	call("list_sources", nil, &srcs)
	require.Len(t, srcs.Sources, 1, "-demo added its site")
	var rep RefreshOutput
	call("refresh", map[string]any{"source": srcs.Sources[0].Name}, &rep)
	require.Equal(t, len(demoPages), rep.New)
	var found SearchOutput
	call("search_docs", map[string]any{"query": "dry run deploy", "k": 1}, &found)
	require.Len(t, found.Hits, 1)
	require.Equal(t, "Deploying > Dry runs", found.Hits[0].HeadingPath)
	res, err := client.CallTool(ctx, &mcp.CallToolParams{Name: "changes", Arguments: map[string]any{"since": "yesterday"}})
	require.NoError(t, err)
	require.True(t, res.IsError)
}

// Streamable HTTP serves the same tools.
func TestHTTP(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	site := newDemoSite(clock.NewAutoFake(transcriptStart), "")
	defer site.Close()
	addr := make(chan string, 1)
	done := make(chan error, 1)
	go func() {
		done <- run(ctx, env{
			args:   []string{"-db", filepath.Join(t.TempDir(), "docs.sqlite"), "-http", "127.0.0.1:0", "-allow-private", "-source", site.SitemapURL()},
			stdout: &strings.Builder{}, stderr: &strings.Builder{}, lookup: func(k string) (string, bool) {
				return map[string]string{"WEB_REQUEST_DELAY_MS": "0"}[k], k == "WEB_REQUEST_DELAY_MS"
			},
			httpListening: func(a string) { addr <- a },
		})
	}()
	var a string
	select {
	case a = <-addr:
	case err := <-done:
		t.Fatal(err)
	}
	client, err := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "1"}, nil).Connect(ctx, &mcp.StreamableClientTransport{Endpoint: "http://" + a + "/mcp", HTTPClient: &http.Client{Timeout: 30 * time.Second}}, nil)
	require.NoError(t, err)
	res, err := client.CallTool(ctx, &mcp.CallToolParams{Name: "list_sources"})
	require.NoError(t, err)
	require.False(t, res.IsError, "%s", toolText(res))
	require.Contains(t, toolText(res), site.SitemapURL())
	require.NoError(t, client.Close())
	cancel()
	require.NoError(t, <-done)
}
