package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/recrawl/recrawl"
	"github.com/recrawl/recrawl/alert"
	"github.com/recrawl/recrawl/clock"
	"github.com/recrawl/recrawl/crawlstate"
	"github.com/recrawl/recrawl/crawlstate/sqlite"
	"github.com/recrawl/recrawl/discover"
	"github.com/recrawl/recrawl/embed"
	"github.com/recrawl/recrawl/index"
	"github.com/recrawl/recrawl/index/sqlitevec"
	"github.com/recrawl/recrawl/normalize"
)

// config is what a server is built from.
type config struct {
	DB         string         // the SQLite file: state, index and pages
	Limits     recrawl.Limits // the WEB_* caps, BlockPrivate included
	HTTPClient *http.Client   // nil: the default
	Clock      clock.Clock    // nil: the system clock
	Logger     *slog.Logger   // nil: discard
	UserAgent  string
}

// Tool limits.
const (
	defaultK = 5
	maxK     = 50
	// maxChanges is the most alerts one changes call returns per source.
	maxChanges = 100
	// maxDiffBytes bounds the diff of one change in a changes answer.
	maxDiffBytes = 16 << 10
)

// embedDims is the vector length of the hashing embedder the server
// indexes and queries with.
const embedDims = 384

// server serves a recrawl state and its index over MCP.
type server struct {
	cfg   config
	state *sqlite.State
	index *sqlitevec.Index
	pages *pages
	emb   embed.Embedder
	eng   *recrawl.Engine
	clk   clock.Clock

	mu       sync.Mutex
	progress map[string]func(recrawl.Event) // by source: the refresh running it
}

// newServer opens the file (state first, then the index and the pages)
// and builds the engine.
func newServer(ctx context.Context, cfg config) (*server, error) {
	s := &server{cfg: cfg, progress: map[string]func(recrawl.Event){}, clk: cfg.Clock}
	if s.clk == nil {
		s.clk = clock.Real()
	}
	var err error
	if s.state, err = sqlite.Open(ctx, cfg.DB); err != nil {
		return nil, fmt.Errorf("opening state %s: %w", cfg.DB, err)
	}
	if s.index, err = sqlitevec.Open(ctx, cfg.DB, sqlitevec.Options{Dimensions: embedDims, Logger: cfg.Logger}); err != nil {
		s.state.Close()
		return nil, fmt.Errorf("opening index %s: %w", cfg.DB, err)
	}
	if s.pages, err = openPages(ctx, cfg.DB); err != nil {
		s.Close()
		return nil, err
	}
	if s.emb, err = embed.NewHashing(embedDims); err != nil {
		s.Close()
		return nil, err
	}
	limits := cfg.Limits
	s.eng, err = recrawl.New(recrawl.Config{
		State: s.state, Embedder: s.emb, Index: s.index, Limits: &limits,
		HTTPClient: cfg.HTTPClient, Clock: cfg.Clock, Logger: cfg.Logger, UserAgent: cfg.UserAgent,
		// Alerts are kept in the state's outbox, where changes reads them;
		// the server has no one to push them to.
		Alerts:    alert.Func(func(context.Context, alert.Alert) error { return nil }),
		OnContent: s.pages.onContent,
		Observer:  s.observe,
	})
	if err != nil {
		s.Close()
		return nil, err
	}
	return s, nil
}

// Close releases the file.
func (s *server) Close() error {
	var errs []error
	if s.eng != nil {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		errs = append(errs, s.eng.Shutdown(ctx))
		cancel()
	}
	if s.pages != nil {
		errs = append(errs, s.pages.Close())
	}
	if s.index != nil {
		errs = append(errs, s.index.Close())
	}
	errs = append(errs, s.state.Close())
	return errors.Join(errs...)
}

// observe routes the engine's events to the refresh running their source.
func (s *server) observe(ev recrawl.Event) {
	s.mu.Lock()
	f := s.progress[ev.Source]
	s.mu.Unlock()
	if f != nil {
		f(ev)
	}
}

// mcpServer is the MCP server with the tools.
func (s *server) mcpServer() *mcp.Server {
	m := mcp.NewServer(&mcp.Implementation{Name: "recrawl-docs", Title: "recrawl docs", Version: "1.0.0"}, &mcp.ServerOptions{
		Instructions: "Documentation sites kept fresh by recrawl. search_docs finds passages (each with its URL, heading path and byte range); get_page returns a page's Markdown; changes lists what changed since a time, with diffs; list_sources shows the sites and when they were last read; refresh re-reads a site now; add_source adds a site by URL.",
	})
	mcp.AddTool(m, &mcp.Tool{Name: "search_docs", Description: "Search the documentation: hybrid keyword (BM25) and vector search, fused. Each hit cites its page URL, heading path, byte range in the page's Markdown and when the page was fetched."}, s.searchDocs)
	mcp.AddTool(m, &mcp.Tool{Name: "get_page", Description: "The stored Markdown of one page, by URL, with its content hash and fetch time."}, s.getPage)
	mcp.AddTool(m, &mcp.Tool{Name: "list_sources", Description: "The documentation sites served: entry URL, format, pages, last run and when the next is due."}, s.listSources)
	mcp.AddTool(m, &mcp.Tool{Name: "changes", Description: "What changed since a time: one entry per new, changed or removed page, with its URL, old and new content hash, the changed chunks (heading path, byte range, old and new text) and a unified diff."}, s.changes)
	mcp.AddTool(m, &mcp.Tool{Name: "refresh", Description: "Re-read a source now: fetch what is due (conditional requests), index what changed, record alerts. Reports progress as it goes."}, s.refresh)
	mcp.AddTool(m, &mcp.Tool{Name: "add_source", Description: "Add a documentation site by URL (a sitemap, an llms.txt file or a page to crawl from; the format is detected from the document). Run refresh to index it."}, s.addSource)
	return m
}

// toolError is a bad request: the tool answers it as an error result.
func toolError(format string, args ...any) error { return fmt.Errorf(format, args...) }

// sourceByName returns the named source, or an error naming the known.
func (s *server) sourceByName(ctx context.Context, name string) (source, error) {
	all, err := s.pages.sources(ctx)
	if err != nil {
		return source{}, err
	}
	var names []string
	for _, src := range all {
		if src.Name == name {
			return src, nil
		}
		names = append(names, src.Name)
	}
	if len(names) == 0 {
		return source{}, toolError("unknown source %q: no source is configured; add one with add_source", name)
	}
	return source{}, toolError("unknown source %q; the sources are %s (list_sources describes them)", name, strings.Join(quoteAll(names), ", "))
}

func quoteAll(ss []string) []string {
	out := make([]string, len(ss))
	for i, s := range ss {
		out[i] = fmt.Sprintf("%q", s)
	}
	return out
}

// SearchInput is search_docs' input.
type SearchInput struct {
	Query  string `json:"query" jsonschema:"what to look for, in words"`
	Source string `json:"source,omitempty" jsonschema:"search only this source (a name from list_sources)"`
	K      int    `json:"k,omitempty" jsonschema:"how many hits, 1 to 50 (default 5)"`
}

// SearchHit is one passage found.
type SearchHit struct {
	Source      string  `json:"source"`
	URL         string  `json:"url"`
	Title       string  `json:"title,omitempty"`
	HeadingPath string  `json:"heading_path,omitempty"`
	Start       int     `json:"start"` // byte range [start, end) in the page's Markdown (get_page)
	End         int     `json:"end"`
	FetchedAt   string  `json:"fetched_at"`
	ContentHash string  `json:"content_hash"`
	Score       float64 `json:"score"` // reciprocal rank fusion
	Text        string  `json:"text"`
}

// SearchOutput is search_docs' answer.
type SearchOutput struct {
	Hits []SearchHit `json:"hits"`
}

func (s *server) searchDocs(ctx context.Context, _ *mcp.CallToolRequest, in SearchInput) (*mcp.CallToolResult, SearchOutput, error) {
	q := strings.TrimSpace(in.Query)
	switch {
	case q == "":
		return nil, SearchOutput{}, toolError("query is empty: say what to look for")
	case in.K < 0 || in.K > maxK:
		return nil, SearchOutput{}, toolError("k is %d; ask for 1 to %d hits", in.K, maxK)
	}
	k := in.K
	if k == 0 {
		k = defaultK
	}
	var filter index.Filter
	if in.Source != "" {
		if _, err := s.sourceByName(ctx, in.Source); err != nil {
			return nil, SearchOutput{}, err
		}
		filter = index.Filter{"source": in.Source}
	}
	vecs, err := s.emb.Embed(ctx, []string{q})
	if err != nil {
		return nil, SearchOutput{}, err
	}
	hits, err := s.index.Search(ctx, sqlitevec.SearchQuery{Text: q, Vector: vecs[0], K: k, Filter: filter})
	if err != nil {
		return nil, SearchOutput{}, err
	}
	out := SearchOutput{Hits: []SearchHit{}}
	for _, h := range hits {
		md := h.Metadata
		out.Hits = append(out.Hits, SearchHit{
			Source: md["source"], URL: md["source_url"], Title: md["title"], HeadingPath: md["heading_path"],
			Start: atoi(md["char_start"]), End: atoi(md["char_end"]), FetchedAt: md["fetched_at"], ContentHash: md["content_hash"],
			Score: round(h.Fused), Text: h.Text,
		})
	}
	return nil, out, nil
}

func atoi(s string) int {
	n, _ := strconv.Atoi(s) // the engine writes decimal offsets
	return n
}

// round keeps six decimals, so that answers are stable text.
func round(f float64) float64 { return math.Round(f*1e6) / 1e6 }

// PageInput is get_page's input.
type PageInput struct {
	URL string `json:"url" jsonschema:"the page's URL, as search_docs or changes cite it"`
}

// PageOutput is a stored page.
type PageOutput struct {
	Source      string `json:"source"`
	URL         string `json:"url"`
	Title       string `json:"title,omitempty"`
	ContentHash string `json:"content_hash"`
	FetchedAt   string `json:"fetched_at"`
	Markdown    string `json:"markdown"`
}

func (s *server) getPage(ctx context.Context, _ *mcp.CallToolRequest, in PageInput) (*mcp.CallToolResult, PageOutput, error) {
	u, err := normalize.URL(strings.TrimSpace(in.URL))
	if err != nil {
		return nil, PageOutput{}, toolError("url %q: %v", in.URL, err)
	}
	pg, ok, err := s.pages.page(ctx, u)
	if err != nil {
		return nil, PageOutput{}, err
	}
	if !ok {
		all, err := s.pages.sources(ctx)
		if err != nil {
			return nil, PageOutput{}, err
		}
		for _, src := range all {
			if normalize.SameSite(src.URL, u) {
				return nil, PageOutput{}, toolError("%s is on the site of source %q but no page of it is stored: it was not found there (yet); refresh %q to read the site again", u, src.Name, src.Name)
			}
		}
		return nil, PageOutput{}, toolError("%s is outside every source: get_page serves the pages of the sources list_sources names", u)
	}
	return nil, PageOutput{Source: pg.Source, URL: pg.URL, Title: pg.Title, ContentHash: pg.Hash, FetchedAt: pg.FetchedAt.Format(time.RFC3339), Markdown: pg.Markdown}, nil
}

// SourcesInput is list_sources' input (none).
type SourcesInput struct{}

// SourceInfo describes one source.
type SourceInfo struct {
	Name    string `json:"name"`
	URL     string `json:"url"`
	Format  string `json:"format"`
	Pages   int    `json:"pages"`  // live pages in the state
	Gone    int    `json:"gone"`   // pages that answered 404/410
	Stored  int    `json:"stored"` // pages whose Markdown get_page serves
	LastRun string `json:"last_run,omitempty"`
	NextDue string `json:"next_due,omitempty"` // when the next refresh has work ("" before the first)
}

// SourcesOutput is list_sources' answer.
type SourcesOutput struct {
	Sources []SourceInfo `json:"sources"`
}

func (s *server) listSources(ctx context.Context, _ *mcp.CallToolRequest, _ SourcesInput) (*mcp.CallToolResult, SourcesOutput, error) {
	all, err := s.pages.sources(ctx)
	if err != nil {
		return nil, SourcesOutput{}, err
	}
	out := SourcesOutput{Sources: []SourceInfo{}}
	for _, src := range all {
		info := SourceInfo{Name: src.Name, URL: src.URL, Format: string(src.Format)}
		total, gone, err := s.state.Count(ctx, src.Name)
		if err != nil {
			return nil, SourcesOutput{}, err
		}
		info.Pages, info.Gone = total-gone, gone
		if info.Stored, err = s.pages.count(ctx, src.Name); err != nil {
			return nil, SourcesOutput{}, err
		}
		runs, err := crawlstate.RunLog(s.state).Runs(ctx, src.Name, 1)
		if err != nil {
			return nil, SourcesOutput{}, err
		}
		if len(runs) > 0 {
			info.LastRun = runs[0].UTC().Format(time.RFC3339)
			next, err := s.eng.NextDue(ctx, src.entry())
			if err != nil {
				return nil, SourcesOutput{}, err
			}
			if !next.IsZero() {
				info.NextDue = next.UTC().Format(time.RFC3339)
			}
		}
		out.Sources = append(out.Sources, info)
	}
	return nil, out, nil
}

// ChangesInput is changes' input.
type ChangesInput struct {
	Since  string `json:"since" jsonschema:"an RFC 3339 time (2026-12-01T09:00:00Z) or a date (2026-12-01, from midnight UTC)"`
	Source string `json:"source,omitempty" jsonschema:"only this source (a name from list_sources)"`
}

// ChunkChange is one chunk that an alert names.
type ChunkChange struct {
	HeadingPath string `json:"heading_path,omitempty"`
	Start       int    `json:"start"` // byte range in the new Markdown (the old one for a removed chunk)
	End         int    `json:"end"`
	OldText     string `json:"old_text,omitempty"`
	NewText     string `json:"new_text,omitempty"`
}

// PageChange is one alert: a page that appeared, changed or went.
type PageChange struct {
	Source     string        `json:"source"`
	Kind       string        `json:"kind"`
	URL        string        `json:"url"`
	Title      string        `json:"title,omitempty"`
	OldHash    string        `json:"old_hash,omitempty"`
	NewHash    string        `json:"new_hash,omitempty"`
	DetectedAt string        `json:"detected_at"`
	AlertID    string        `json:"alert_id"`
	Changed    []ChunkChange `json:"changed,omitempty"`
	Added      []ChunkChange `json:"added,omitempty"`
	Removed    []ChunkChange `json:"removed,omitempty"`
	Diff       string        `json:"diff,omitempty"`
}

// ChangesOutput is changes' answer.
type ChangesOutput struct {
	Since   string       `json:"since"`
	Changes []PageChange `json:"changes"`
	// Truncated names the sources with more changes than one answer
	// holds: ask again from the last one's detected_at.
	Truncated []string `json:"truncated,omitempty"`
}

// parseSince reads an RFC 3339 time or a date.
func parseSince(v string) (time.Time, error) {
	v = strings.TrimSpace(v)
	if t, err := time.Parse(time.RFC3339, v); err == nil {
		return t, nil
	}
	if t, err := time.Parse(time.DateOnly, v); err == nil {
		return t, nil
	}
	return time.Time{}, toolError("since %q is not a time: give an RFC 3339 time (2026-12-01T09:00:00Z) or a date (2026-12-01)", v)
}

func (s *server) changes(ctx context.Context, _ *mcp.CallToolRequest, in ChangesInput) (*mcp.CallToolResult, ChangesOutput, error) {
	since, err := parseSince(in.Since)
	if err != nil {
		return nil, ChangesOutput{}, err
	}
	srcs, err := s.pages.sources(ctx)
	if err != nil {
		return nil, ChangesOutput{}, err
	}
	if in.Source != "" {
		src, err := s.sourceByName(ctx, in.Source)
		if err != nil {
			return nil, ChangesOutput{}, err
		}
		srcs = []source{src}
	}
	out := ChangesOutput{Since: since.UTC().Format(time.RFC3339), Changes: []PageChange{}}
	for _, src := range srcs {
		cs, more, err := s.eng.Changes(ctx, src.Name, since, maxChanges)
		if err != nil {
			return nil, ChangesOutput{}, err
		}
		if more {
			out.Truncated = append(out.Truncated, src.Name)
		}
		for _, c := range cs {
			out.Changes = append(out.Changes, pageChange(src.Name, c.Alert))
		}
	}
	return nil, out, nil
}

func pageChange(src string, a recrawl.Alert) PageChange {
	pc := PageChange{Source: src, Kind: string(a.Kind), URL: a.URL, Title: a.Title, OldHash: a.OldHash, NewHash: a.NewHash,
		DetectedAt: a.DetectedAt.UTC().Format(time.RFC3339), AlertID: a.ID, Diff: a.Diff}
	if len(pc.Diff) > maxDiffBytes {
		cut := strings.LastIndexByte(pc.Diff[:maxDiffBytes], '\n') + 1
		pc.Diff = pc.Diff[:cut] + fmt.Sprintf("... (%d more bytes of diff; get_page has the new text)\n", len(a.Diff)-cut)
	}
	conv := func(cs []recrawl.ChunkChange) []ChunkChange {
		var out []ChunkChange
		for _, c := range cs {
			out = append(out, ChunkChange{HeadingPath: c.HeadingPath, Start: c.Start, End: c.End, OldText: c.OldText, NewText: c.NewText})
		}
		return out
	}
	pc.Changed, pc.Added, pc.Removed = conv(a.Changed), conv(a.Added), conv(a.Removed)
	return pc
}

// RefreshInput is refresh's input.
type RefreshInput struct {
	Source string `json:"source" jsonschema:"the source to re-read (a name from list_sources)"`
}

// RefreshOutput summarizes a run.
type RefreshOutput struct {
	Source    string `json:"source"`
	Due       int    `json:"due"`
	Requests  int    `json:"requests"`
	New       int    `json:"new"`
	Changed   int    `json:"changed"`
	Unchanged int    `json:"unchanged"`
	Gone      int    `json:"gone"`
	Failed    int    `json:"failed"`
	Skipped   int    `json:"skipped"`
	StoppedBy string `json:"stopped_by,omitempty"` // the WEB_* cap that ended the run
	NextDue   string `json:"next_due,omitempty"`
}

func (s *server) refresh(ctx context.Context, req *mcp.CallToolRequest, in RefreshInput) (*mcp.CallToolResult, RefreshOutput, error) {
	src, err := s.sourceByName(ctx, in.Source)
	if err != nil {
		return nil, RefreshOutput{}, err
	}
	if token := req.Params.GetProgressToken(); token != nil {
		s.mu.Lock()
		if s.progress[src.Name] != nil {
			s.mu.Unlock()
			return nil, RefreshOutput{}, toolError("source %q is being refreshed already", src.Name)
		}
		s.progress[src.Name] = progressNotifier(ctx, req.Session, token)
		s.mu.Unlock()
		defer func() {
			s.mu.Lock()
			delete(s.progress, src.Name)
			s.mu.Unlock()
		}()
	}
	rep, err := s.eng.Run(ctx, src.entry())
	if errors.Is(err, recrawl.ErrRunInProgress) {
		return nil, RefreshOutput{}, toolError("source %q is being refreshed already", src.Name)
	}
	if err != nil {
		return nil, RefreshOutput{}, fmt.Errorf("refresh %q: %w", src.Name, err)
	}
	out := RefreshOutput{Source: src.Name, Due: rep.Due, Requests: rep.Requests, New: rep.New, Changed: rep.Changed, Unchanged: rep.Unchanged,
		Gone: rep.Gone, Failed: rep.FailedTotal(), Skipped: rep.SkippedTotal(), StoppedBy: rep.StoppedBy}
	if next, err := s.eng.NextDue(ctx, src.entry()); err == nil && !next.IsZero() {
		out.NextDue = next.UTC().Format(time.RFC3339)
	}
	return nil, out, nil
}

// progressNotifier sends a run's events as MCP progress notifications,
// about a hundred per run (every page of a small run).
func progressNotifier(ctx context.Context, ss *mcp.ServerSession, token any) func(recrawl.Event) {
	return func(ev recrawl.Event) {
		if ev.Due == 0 || ev.Done != ev.Due && ev.Done%max(1, ev.Due/100) != 0 {
			return
		}
		msg := string(ev.Outcome) + " " + ev.URL
		_ = ss.NotifyProgress(ctx, &mcp.ProgressNotificationParams{ProgressToken: token, Progress: float64(ev.Done), Total: float64(ev.Due), Message: msg})
	}
}

// AddInput is add_source's input.
type AddInput struct {
	URL  string `json:"url" jsonschema:"the site's sitemap, llms.txt file, or a page to crawl from"`
	Name string `json:"name,omitempty" jsonschema:"the source's name (default: the URL's host and path)"`
}

// AddOutput is the source added.
type AddOutput struct {
	Name   string `json:"name"`
	URL    string `json:"url"`
	Format string `json:"format"`
	Pages  int    `json:"pages"` // what the entry lists (or links to, for a page)
}

func (s *server) addSource(ctx context.Context, _ *mcp.CallToolRequest, in AddInput) (*mcp.CallToolResult, AddOutput, error) {
	raw := strings.TrimSpace(in.URL)
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, AddOutput{}, toolError("url %q: give an http or https URL of a sitemap, an llms.txt file or a page", in.URL)
	}
	name := strings.TrimSpace(in.Name)
	if name == "" {
		name = strings.TrimSuffix(u.Host+u.Path, "/")
	}
	res, err := s.eng.Check(ctx, discover.Entry{URL: raw})
	if err != nil {
		return nil, AddOutput{}, fmt.Errorf("checking %s: %w", raw, err)
	}
	if !res.RobotsAllowed {
		return nil, AddOutput{}, toolError("robots.txt of %s does not allow %s for this crawler", u.Host, raw)
	}
	err = s.pages.addSource(ctx, source{Name: name, URL: raw, Format: res.Format, AddedAt: s.clk.Now().UTC()})
	if errors.Is(err, errExists) {
		return nil, AddOutput{}, toolError("a source named %q exists already; pass another name", name)
	}
	if err != nil {
		return nil, AddOutput{}, err
	}
	return nil, AddOutput{Name: name, URL: raw, Format: string(res.Format), Pages: res.Pages}, nil
}
