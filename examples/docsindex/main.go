// Command docsindex keeps a local Markdown copy of a documentation site up
// to date. Given one entry point (a sitemap, an llms.txt file or a page to
// crawl from; the format is detected from the document unless -format
// says), it runs the recrawl engine once and writes each page's Markdown
// under the output directory at extract.DocPath(url, content type). Later
// runs fetch conditionally, rewrite only the pages that changed and remove
// the pages that are gone.
//
//	go run ./examples/docsindex -entry https://example.com/sitemap.xml -db docs.sqlite -out docs/
//	go run ./examples/docsindex -demo -db /tmp/d.db -out /tmp/docs   # offline, on a fake site
//
// -only PREFIX keeps the index to URLs whose path starts with PREFIX: a
// sitemap's or llms.txt's other entries are skipped (out_of_scope), a crawl
// follows no link outside it.
//
// Connections to loopback, private, link-local and cloud-metadata
// addresses are refused (Limits.BlockPrivate, whatever WEB_BLOCK_PRIVATE
// says), since the entry URL may come from anyone; -allow-private lets
// them through, and -demo implies it.
//
// Limits come from the WEB_* environment variables (see .env.example). On a
// terminal a progress line is drawn on stderr; -json prints the run's
// Report as one JSON object on stdout instead of the summary.
//
// Files are written by the engine's Config.OnContent hook, which hands
// over exactly the Markdown the engine fingerprinted, before the engine
// commits the page: a file is written atomically (a temporary file, then a
// rename) for a new or changed page, and for an unchanged page that
// answered with a body when its file is missing or differs; a gone page's
// file is removed. When a write fails, the hook's error fails the page, so
// the state keeps the old version and the next run hands the page over
// again: a crash or a full disk never leaves the state ahead of the files.
//
// A page that answers 304 Not Modified is not handed over, so a new -out
// directory for an existing -db gets only the pages that come with a body;
// the run then warns how many files are missing. Deleting the -db rebuilds
// everything. The directory's .docsindex.json names the site it holds, so
// another site's run cannot mix its pages in.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"os/signal"
	"strings"
	"time"

	"github.com/recrawl/recrawl"
	"github.com/recrawl/recrawl/clock"
	"github.com/recrawl/recrawl/crawlstate/sqlite"
	"github.com/recrawl/recrawl/discover"
	"github.com/recrawl/recrawl/internal/testsite"
)

// userAgent identifies docsindex to the sites it reads.
const userAgent = "recrawl-docsindex/1.0 (+https://github.com/recrawl/recrawl)"

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	err := run(ctx, env{
		args: os.Args[1:], stdout: os.Stdout, stderr: os.Stderr,
		lookup: os.LookupEnv, terminal: isTerminal(os.Stdout),
	})
	var ue *usageError
	switch {
	case err == nil:
	case errors.Is(err, flag.ErrHelp):
	case errors.As(err, &ue):
		fmt.Fprintln(os.Stderr, "docsindex:", err)
		os.Exit(2)
	default:
		fmt.Fprintln(os.Stderr, "docsindex:", err)
		os.Exit(1)
	}
}

// env is what run needs from the process; tests fill it in.
type env struct {
	args           []string
	stdout, stderr io.Writer
	lookup         func(string) (string, bool) // environment variables
	terminal       bool                        // stdout is a terminal: draw progress on stderr
	clock          clock.Clock                 // nil: the system clock
	client         *http.Client                // nil: a client on http.DefaultTransport
}

// usageError is a bad command line.
type usageError struct{ msg string }

func (e *usageError) Error() string { return e.msg }

type options struct {
	entry, db, out, format string
	only                   string
	json, demo, verbose    bool
	allowPrivate           bool
	demoAddr               string
}

func parseArgs(args []string, stderr io.Writer) (options, discover.Format, error) {
	var o options
	fs := flag.NewFlagSet("docsindex", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.StringVar(&o.entry, "entry", "", "entry `URL`: a sitemap, an llms.txt file or a page to crawl from")
	fs.StringVar(&o.db, "db", "", "SQLite state `file` (created if missing)")
	fs.StringVar(&o.out, "out", "", "output `directory` for the Markdown files")
	fs.StringVar(&o.format, "format", "", "entry format: sitemap, llms.txt or page (default: detect from the document)")
	fs.StringVar(&o.only, "only", "", "index only URLs whose path starts with `prefix` (such as /docs/guide/); a crawl follows no other link")
	fs.BoolVar(&o.json, "json", false, "print the run's report as one JSON object on stdout")
	fs.BoolVar(&o.demo, "demo", false, "serve a fake documentation site on loopback and use its sitemap as the entry (offline)")
	fs.StringVar(&o.demoAddr, "demo-addr", "127.0.0.1:8931", "listen `address` of the -demo site (a fixed port keeps its URLs across runs)")
	fs.BoolVar(&o.verbose, "v", false, "log the engine's diagnostics on stderr")
	fs.BoolVar(&o.allowPrivate, "allow-private", false, "allow loopback, private and link-local addresses (refused by default: the entry URL may come from anyone); -demo implies it")
	fs.Usage = func() {
		fmt.Fprintln(fs.Output(), "usage: docsindex (-entry URL | -demo) -db FILE -out DIR [-format sitemap|llms.txt|page] [-only PREFIX] [-json]")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return o, "", err
		}
		return o, "", &usageError{err.Error()}
	}
	switch {
	case fs.NArg() > 0:
		return o, "", &usageError{fmt.Sprintf("unexpected argument %q", fs.Arg(0))}
	case o.demo && o.entry != "":
		return o, "", &usageError{"-demo and -entry exclude each other"}
	case !o.demo && o.entry == "":
		return o, "", &usageError{"-entry is required (or -demo)"}
	case o.db == "":
		return o, "", &usageError{"-db is required"}
	case o.out == "":
		return o, "", &usageError{"-out is required"}
	case o.only != "" && !strings.HasPrefix(o.only, "/"):
		return o, "", &usageError{fmt.Sprintf("-only %q: give a URL path prefix starting with /, such as /docs/guide/", o.only)}
	}
	f, err := discover.ParseFormat(o.format)
	if err != nil {
		return o, "", &usageError{"-format: " + err.Error()}
	}
	return o, f, nil
}

// run indexes the site once; see the package comment.
func run(ctx context.Context, e env) error {
	o, format, err := parseArgs(e.args, e.stderr)
	if err != nil {
		return err
	}
	lookup := e.lookup
	if lookup == nil {
		lookup = func(string) (string, bool) { return "", false }
	}
	limits, err := recrawl.LimitsFromLookup(lookup)
	if err != nil {
		return err // names the variable
	}
	// The entry URL may come from anyone: refuse private destinations
	// (loopback, RFC 1918, link-local, metadata...) unless told otherwise.
	// The -demo site is on loopback.
	limits.BlockPrivate = !o.allowPrivate && !o.demo
	clk := e.clock
	if clk == nil {
		clk = clock.Real()
	}
	quiet := o.json
	if o.demo {
		site, err := testsite.Listen(o.demoAddr, testsite.Options{})
		if err != nil {
			return fmt.Errorf("-demo: %w (choose a free -demo-addr)", err)
		}
		defer site.Close()
		o.entry = site.SitemapURL()
		if !quiet {
			fmt.Fprintf(e.stderr, "demo site: %s (%d pages)\n", site.URL(), len(site.Paths()))
		}
	}

	entry := discover.Entry{URL: o.entry, Format: format, Only: o.only}
	out, err := openDocs(o.out, entry.Name())
	if err != nil {
		return err
	}
	state, err := sqlite.Open(context.Background(), o.db)
	if err != nil {
		return fmt.Errorf("opening state %s: %w", o.db, err)
	}
	defer state.Close()

	var prog *progress
	var observer func(recrawl.Event)
	if e.terminal && !quiet {
		prog = newProgress(e.stderr, clk)
		observer = prog.event
	}
	logger := slog.New(slog.DiscardHandler)
	if o.verbose {
		logger = slog.New(slog.NewTextHandler(e.stderr, &slog.HandlerOptions{Level: slog.LevelDebug}))
	}
	eng, err := recrawl.New(recrawl.Config{
		State: state, Limits: &limits, UserAgent: userAgent, HTTPClient: e.client,
		Clock: clk, Logger: logger, Observer: observer, OnContent: out.onContent,
	})
	if err != nil {
		return err
	}
	rep, runErr := eng.Run(ctx, entry)
	if prog != nil {
		prog.finish()
	}

	pages, present := 0, 0
	if rep != nil && ctx.Err() == nil {
		if pages, present, err = out.coverage(ctx, state, entry.Name()); err != nil {
			return err
		}
		if missing := pages - present; missing > 0 {
			fmt.Fprintf(e.stderr, "docsindex: warning: %d of %d pages in the state have no file in %s: a page is handed over only when it is fetched with a body, not when it answers 304 Not Modified, so these stay missing until they change (delete %s to rebuild everything)\n",
				missing, pages, o.out, o.db)
		}
	}
	if rep != nil {
		if o.json {
			if err := json.NewEncoder(e.stdout).Encode(rep); err != nil {
				return err
			}
		} else {
			summary(e.stdout, o.entry, o.out, rep, int(out.written.Load()), int(out.removed.Load()), present)
		}
	}
	var fe *discover.FormatError
	if errors.As(runErr, &fe) {
		return fmt.Errorf("%w (on the command line: -format sitemap, llms.txt or page)", runErr)
	}
	if runErr != nil {
		return runErr
	}
	if n := rep.Failed[recrawl.StageContent]; n > 0 {
		return fmt.Errorf("the files of %d pages could not be written or removed; those pages are retried after a backoff (1 h, doubling) and handed over again; first: %w", n, out.failure())
	}
	return nil
}

func summary(w io.Writer, entry, dir string, rep *recrawl.Report, written, removed, present int) {
	fmt.Fprintf(w, "%s -> %s\n", entry, dir)
	fmt.Fprintf(w, "discovered %d, due %d, fetched %d (%d not modified)\n", rep.Discovered, rep.Due, rep.Fetched, rep.NotModified)
	fmt.Fprintf(w, "new %d, changed %d, unchanged %d, gone %d, failed %d, skipped %d\n",
		rep.New, rep.Changed, rep.Unchanged, rep.Gone, rep.FailedTotal(), rep.SkippedTotal())
	fmt.Fprintf(w, "files: %d written, %d removed; %d in the directory\n", written, removed, present)
	fmt.Fprintf(w, "requests %d (a full recrawl: %d)", rep.Requests, rep.FullRecrawlRequests)
	if rep.StoppedBy != "" {
		fmt.Fprintf(w, ", stopped by %s", rep.StoppedBy)
	}
	fmt.Fprintf(w, ", %s\n", rep.FinishedAt.Sub(rep.StartedAt).Round(time.Millisecond))
}
