// Command docsmcp serves documentation sites that recrawl keeps fresh to
// an AI assistant, as an MCP server (the official Go SDK) over stdio or
// streamable HTTP. One SQLite file holds the crawl state, the index of
// the pages' chunks (index/sqlitevec: sqlite-vec and FTS5) and each
// page's Markdown.
//
//	go build -tags sqlite_fts5 -o docsmcp ./examples/docsmcp
//	./docsmcp -db docs.sqlite -source https://docs.example.com/sitemap.xml -refresh   # index a site once
//	./docsmcp -db docs.sqlite                          # serve it on stdio (what a desktop client starts)
//	./docsmcp -db docs.sqlite -http 127.0.0.1:8765     # serve it over streamable HTTP at /mcp
//	go run -tags sqlite_fts5 ./examples/docsmcp -transcript   # an offline session: the README's transcript
//
// Tools:
//
//	search_docs(query, source?, k?)  hybrid search (BM25 keywords and vectors, fused by reciprocal rank);
//	                                 each hit cites its URL, heading path, byte range and fetched_at
//	get_page(url)                    a page's stored Markdown, content hash and fetch time
//	list_sources()                   each site: entry URL, format, pages, last run, next due
//	changes(since, source?)          alerts since a time: URL, old and new hash, changed chunks, diff
//	refresh(source)                  run the engine on a site now, with MCP progress notifications
//	add_source(url, name?)           add a site by URL; its format is detected as Engine.Check does
//
// Bad input (an unknown source, a URL outside every source, a malformed
// since, a k outside 1 to 50, a private address) is a tool error that
// says what to change, and changes nothing.
//
// Limits come from the WEB_* environment variables (see .env.example).
// Connections to loopback, private, link-local and cloud-metadata
// addresses are refused (Limits.BlockPrivate), since a source URL may come
// from the assistant; -allow-private lets them through, and -demo implies
// it. The offline embedder (embed.Hashing, 384 dimensions) embeds both the
// chunks and the queries.
//
// The index needs a build with cgo and -tags sqlite_fts5; built without,
// docsmcp says so and exits.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/recrawl/recrawl"
)

const userAgent = "recrawl-docsmcp/1.0 (+https://github.com/recrawl/recrawl)"

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	err := run(ctx, env{args: os.Args[1:], stdin: os.Stdin, stdout: os.Stdout, stderr: os.Stderr, lookup: os.LookupEnv})
	var ue *usageError
	switch {
	case err == nil, errors.Is(err, flag.ErrHelp):
	case errors.As(err, &ue):
		fmt.Fprintln(os.Stderr, "docsmcp:", err)
		os.Exit(2)
	default:
		fmt.Fprintln(os.Stderr, "docsmcp:", err)
		os.Exit(1)
	}
}

// env is what run needs from the process; tests fill it in.
type env struct {
	args          []string
	stdin         io.Reader
	stdout        io.Writer
	stderr        io.Writer
	lookup        func(string) (string, bool)
	httpListening func(addr string) // called once the HTTP server listens (tests)
}

type usageError struct{ msg string }

func (e *usageError) Error() string { return e.msg }

type options struct {
	db, httpAddr        string
	sources             []string
	refresh             bool
	allowPrivate, demo  bool
	transcript, verbose bool
	demoAddr            string
}

func parseArgs(args []string, stderr io.Writer) (options, error) {
	var o options
	fs := flag.NewFlagSet("docsmcp", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.StringVar(&o.db, "db", "", "the SQLite `file` of state, index and pages (created if missing)")
	fs.StringVar(&o.httpAddr, "http", "", "serve streamable HTTP at `address`/mcp instead of stdio")
	fs.Func("source", "add a source by `URL` (a sitemap, an llms.txt file or a page) unless one of that name exists; repeatable", func(v string) error {
		o.sources = append(o.sources, v)
		return nil
	})
	fs.BoolVar(&o.refresh, "refresh", false, "refresh every source once and exit, instead of serving")
	fs.BoolVar(&o.allowPrivate, "allow-private", false, "allow loopback, private and link-local addresses (refused by default)")
	fs.BoolVar(&o.demo, "demo", false, "serve a small fake documentation site on loopback and add it as a source (offline)")
	fs.StringVar(&o.demoAddr, "demo-addr", "127.0.0.1:8932", "listen `address` of the -demo site")
	fs.BoolVar(&o.transcript, "transcript", false, "print an offline session with an MCP client (the README's transcript) and exit")
	fs.BoolVar(&o.verbose, "v", false, "log the engine's diagnostics on stderr")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return o, err
		}
		return o, &usageError{err.Error()}
	}
	switch {
	case fs.NArg() > 0:
		return o, &usageError{fmt.Sprintf("unexpected argument %q", fs.Arg(0))}
	case o.transcript:
	case o.db == "":
		return o, &usageError{"-db is required"}
	}
	return o, nil
}

func run(ctx context.Context, e env) error {
	o, err := parseArgs(e.args, e.stderr)
	if err != nil {
		return err
	}
	if o.transcript {
		return transcript(ctx, e.stdout)
	}
	lookup := e.lookup
	if lookup == nil {
		lookup = func(string) (string, bool) { return "", false }
	}
	limits, err := recrawl.LimitsFromLookup(lookup)
	if err != nil {
		return err
	}
	limits.BlockPrivate = !o.allowPrivate && !o.demo
	logger := slog.New(slog.DiscardHandler)
	if o.verbose {
		logger = slog.New(slog.NewTextHandler(e.stderr, nil))
	}
	cfg := config{DB: o.db, Limits: limits, Logger: logger, UserAgent: userAgent}
	if o.demo {
		site, err := listenDemoSite(o.demoAddr)
		if err != nil {
			return fmt.Errorf("-demo: %w (choose a free -demo-addr)", err)
		}
		defer site.Close()
		o.sources = append(o.sources, site.SitemapURL())
		fmt.Fprintf(e.stderr, "demo site: %s\n", site.URL())
	}
	s, err := newServer(ctx, cfg)
	if err != nil {
		return err
	}
	defer s.Close()
	client, err := inProcess(ctx, s)
	if err != nil {
		return err
	}
	defer client.Close()
	for _, u := range o.sources {
		res, err := client.CallTool(ctx, &mcp.CallToolParams{Name: "add_source", Arguments: map[string]any{"url": u}})
		if err != nil {
			return err
		}
		if msg := toolText(res); res.IsError && !strings.Contains(msg, "exists already") {
			return fmt.Errorf("-source %s: %s", u, msg)
		}
	}
	if o.refresh {
		return refreshAll(ctx, s, client, e.stderr)
	}
	if o.httpAddr != "" {
		return serveHTTP(ctx, s, o.httpAddr, e)
	}
	return s.mcpServer().Run(ctx, &mcp.IOTransport{Reader: io.NopCloser(e.stdin), Writer: nopWriteCloser{e.stdout}})
}

type nopWriteCloser struct{ io.Writer }

func (nopWriteCloser) Close() error { return nil }

// inProcess connects an MCP client to the server in this process.
func inProcess(ctx context.Context, s *server) (*mcp.ClientSession, error) {
	st, ct := mcp.NewInMemoryTransports()
	if _, err := s.mcpServer().Connect(ctx, st, nil); err != nil {
		return nil, err
	}
	return mcp.NewClient(&mcp.Implementation{Name: "docsmcp", Version: "1.0.0"}, nil).Connect(ctx, ct, nil)
}

// toolText is a tool result's text.
func toolText(res *mcp.CallToolResult) string {
	var b strings.Builder
	for _, c := range res.Content {
		if t, ok := c.(*mcp.TextContent); ok {
			b.WriteString(t.Text)
		}
	}
	return b.String()
}

// refreshAll refreshes every source once, printing each result.
func refreshAll(ctx context.Context, s *server, client *mcp.ClientSession, w io.Writer) error {
	srcs, err := s.pages.sources(ctx)
	if err != nil {
		return err
	}
	var failed []string
	for _, src := range srcs {
		res, err := client.CallTool(ctx, &mcp.CallToolParams{Name: "refresh", Arguments: map[string]any{"source": src.Name}})
		if err != nil {
			return err
		}
		fmt.Fprintf(w, "%s: %s\n", src.Name, toolText(res))
		if res.IsError {
			failed = append(failed, src.Name)
		}
	}
	if len(failed) > 0 {
		return fmt.Errorf("refresh failed for %s", strings.Join(failed, ", "))
	}
	return nil
}

// serveHTTP serves streamable HTTP at addr/mcp until ctx ends.
func serveHTTP(ctx context.Context, s *server, addr string, e env) error {
	m := s.mcpServer()
	mux := http.NewServeMux()
	mux.Handle("/mcp", mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return m }, nil))
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return fmt.Errorf("-http: %w", err)
	}
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	fmt.Fprintf(e.stderr, "serving MCP at http://%s/mcp\n", ln.Addr())
	if e.httpListening != nil {
		e.httpListening(ln.Addr().String())
	}
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ln) }()
	select {
	case err := <-done:
		return err
	case <-ctx.Done():
		sctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		return srv.Shutdown(sctx)
	}
}
