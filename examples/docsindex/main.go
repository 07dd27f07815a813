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
// Limits come from the WEB_* environment variables (see .env.example). On a
// terminal a progress line is drawn on stderr; -json prints the run's
// Report as one JSON object on stdout instead of the summary.
//
// Each file holds exactly the Markdown the engine fingerprinted: the page
// body the engine read is captured under its transport, turned into
// Markdown the way its extract stage does, and written only when that
// Markdown reproduces the content hash the engine committed. The output
// directory's manifest (.docsindex.json) records the hash of every file;
// after the run, pages whose file is missing or older than the state (a
// new -out directory, an interrupted earlier run) are fetched once more and
// written under the same check.
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
	"github.com/recrawl/recrawl/crawlstate"
	"github.com/recrawl/recrawl/discover"
	"github.com/recrawl/recrawl/fetch"
	"github.com/recrawl/recrawl/fingerprint"
	"github.com/recrawl/recrawl/internal/testsite"
	"github.com/recrawl/recrawl/normalize"
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
	json, demo, verbose    bool
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
	fs.BoolVar(&o.json, "json", false, "print the run's report as one JSON object on stdout")
	fs.BoolVar(&o.demo, "demo", false, "serve a fake documentation site on loopback and use its sitemap as the entry (offline)")
	fs.StringVar(&o.demoAddr, "demo-addr", "127.0.0.1:8931", "listen `address` of the -demo site (a fixed port keeps its URLs across runs)")
	fs.BoolVar(&o.verbose, "v", false, "log the engine's diagnostics on stderr")
	fs.Usage = func() {
		fmt.Fprintln(fs.Output(), "usage: docsindex (-entry URL | -demo) -db FILE -out DIR [-format sitemap|llms.txt|page] [-json]")
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
	}
	f, err := discover.ParseFormat(o.format)
	if err != nil {
		return o, "", &usageError{"-format: " + err.Error()}
	}
	return o, f, nil
}

// run indexes the site once; see the package comment.
func run(ctx context.Context, e env) (err error) {
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

	entry := discover.Entry{URL: o.entry, Format: format}
	var norm normalize.Policy // the engine's Config.Normalize (zero: the default policy)
	var fp fingerprint.Set    // the engine's Config.Fingerprint (zero: fingerprint.Default)
	out, err := openDocs(o.out, entry.Name(), fp)
	if err != nil {
		return err
	}
	defer func() {
		if serr := out.save(); serr != nil && err == nil {
			err = fmt.Errorf("saving the manifest: %w", serr)
		}
	}()
	state, err := crawlstate.OpenSQLite(o.db)
	if err != nil {
		return fmt.Errorf("opening state %s: %w", o.db, err)
	}
	defer state.Close()

	base := e.client
	if base == nil {
		base = &http.Client{}
	}
	rec := newRecorder(base.Transport, norm)
	client := *base
	client.Transport = rec

	ix := &indexer{state: state, source: entry.Name(), rec: rec, docs: out, maxBytes: limits.MaxBytes, stderr: e.stderr, jobs: make(chan job, 64)}
	if e.terminal && !quiet {
		ix.progress = newProgress(e.stderr, clk)
	}
	logger := slog.New(slog.DiscardHandler)
	if o.verbose {
		logger = slog.New(slog.NewTextHandler(e.stderr, &slog.HandlerOptions{Level: slog.LevelDebug}))
	}
	eng, err := recrawl.New(recrawl.Config{
		State: state, Limits: &limits, UserAgent: userAgent, HTTPClient: &client,
		Normalize: norm, Fingerprint: fp, Clock: clk, Logger: logger, Observer: ix.observe,
	})
	if err != nil {
		return err
	}

	writer := make(chan struct{})
	go func() {
		defer close(writer)
		for j := range ix.jobs {
			ix.handle(ctx, j)
		}
	}()
	rep, runErr := eng.Run(ctx, entry)
	close(ix.jobs)
	<-writer
	rec.stop()
	if ix.progress != nil {
		ix.progress.finish()
	}

	var de *recrawl.DiscoveryError
	var repaired, unrepaired int
	if rep != nil && ctx.Err() == nil && (runErr == nil || errors.As(runErr, &de)) {
		f := &fetch.HTTP{Client: eng.Client(), UserAgent: userAgent, Timeout: limits.RequestTimeout, MaxBytes: limits.MaxBytes, Clock: clk, Logger: logger}
		repaired, unrepaired, err = ix.reconcile(ctx, f, limits.MaxPages)
		if err != nil {
			return err
		}
	}

	if rep != nil {
		if o.json {
			enc := json.NewEncoder(e.stdout)
			if err := enc.Encode(rep); err != nil {
				return err
			}
		} else {
			written, removed, total := out.counts()
			summary(e.stdout, o.entry, o.out, rep, written, removed, total, repaired, unrepaired)
		}
	}
	var fe *discover.FormatError
	if errors.As(runErr, &fe) {
		return fmt.Errorf("%w (on the command line: -format sitemap, llms.txt or page)", runErr)
	}
	if runErr != nil {
		return runErr
	}
	if n := len(ix.failures); n > 0 {
		return fmt.Errorf("%d files could not be written; first: %w", n, ix.failures[0])
	}
	return nil
}

func summary(w io.Writer, entry, dir string, rep *recrawl.Report, written, removed, total, repaired, unrepaired int) {
	fmt.Fprintf(w, "%s -> %s\n", entry, dir)
	fmt.Fprintf(w, "discovered %d, due %d, fetched %d (%d not modified)\n", rep.Discovered, rep.Due, rep.Fetched, rep.NotModified)
	fmt.Fprintf(w, "new %d, changed %d, unchanged %d, gone %d, failed %d, skipped %d\n",
		rep.New, rep.Changed, rep.Unchanged, rep.Gone, rep.FailedTotal(), rep.SkippedTotal())
	fmt.Fprintf(w, "files: %d written, %d removed; %d in the directory\n", written, removed, total)
	if repaired+unrepaired > 0 {
		fmt.Fprintf(w, "files behind the state: %d fetched again and written, %d left for the next change\n", repaired, unrepaired)
	}
	fmt.Fprintf(w, "requests %d (a full recrawl: %d)", rep.Requests, rep.FullRecrawlRequests)
	if rep.StoppedBy != "" {
		fmt.Fprintf(w, ", stopped by %s", rep.StoppedBy)
	}
	fmt.Fprintf(w, ", %s\n", rep.FinishedAt.Sub(rep.StartedAt).Round(time.Millisecond))
}

// job is one page outcome for the writer.
type job struct {
	ev       recrawl.Event
	body     capture
	captured bool
}

// indexer turns the engine's outcome events into file writes and removals.
// The observer only takes the captured body and queues the work; one writer
// goroutine extracts, checks and writes, so the engine's workers never wait
// on the disk.
type indexer struct {
	state    crawlstate.State
	source   string
	rec      *recorder
	docs     *docs
	maxBytes int64
	stderr   io.Writer
	progress *progress
	jobs     chan job

	failures []error // files that could not be written or removed
}

// observe is the engine's Config.Observer.
func (ix *indexer) observe(ev recrawl.Event) {
	if ix.progress != nil {
		ix.progress.event(ev)
	}
	switch ev.Outcome {
	case recrawl.OutcomeNew, recrawl.OutcomeChanged:
		c, ok := ix.rec.take(ev.URL)
		ix.jobs <- job{ev: ev, body: c, captured: ok}
	case recrawl.OutcomeGone:
		ix.rec.take(ev.URL)
		ix.jobs <- job{ev: ev}
	case recrawl.OutcomeSkipped:
		if ev.Reason != recrawl.SkipDuplicate { // a duplicate's body belongs to the page's own outcome
			ix.rec.take(ev.URL)
		}
	default:
		ix.rec.take(ev.URL)
	}
}

// handle writes or removes one page's file.
func (ix *indexer) handle(ctx context.Context, j job) {
	url := j.ev.URL
	if j.ev.Outcome == recrawl.OutcomeGone {
		if err := ix.docs.remove(url); err != nil {
			ix.failures = append(ix.failures, fmt.Errorf("removing the file of %s: %w", url, err))
		}
		return
	}
	if !j.captured {
		return // reconcile fetches it
	}
	row, err := ix.state.Get(ctx, ix.source, url)
	if err != nil {
		ix.failures = append(ix.failures, fmt.Errorf("%s: %w", url, err))
		return
	}
	err = ix.docs.put(url, row.ContentHash, j.body.url, j.body.contentType, j.body.body, ix.maxBytes)
	switch {
	case errors.Is(err, errNotReproduced):
		// reconcile fetches it again
	case err != nil:
		ix.failures = append(ix.failures, fmt.Errorf("%s: %w", url, err))
	}
}

// everything is a due-queue horizon that holds every live row.
var everything = time.Unix(1<<40, 0)

// reconcile makes the directory agree with the state: files of pages that
// are gone or unknown are removed; pages whose file is missing or holds
// another version than the committed one are fetched again (at most
// maxPages of them, 0 meaning no cap) and written when their Markdown
// reproduces the committed hash. A page that changed again since is left
// without a file: the engine's next fetch of it finds the change and the
// observer writes it. It returns how many files it wrote and how many it
// could not.
func (ix *indexer) reconcile(ctx context.Context, f fetch.Fetcher, maxPages int) (repaired, unrepaired int, err error) {
	live := map[string]string{} // URL → committed content hash
	var stale []crawlstate.Row
	var after crawlstate.Key
	for {
		rows, err := ix.state.Due(ctx, ix.source, everything, after, 500)
		if err != nil {
			return 0, 0, fmt.Errorf("listing pages: %w", err)
		}
		for _, r := range rows {
			if r.ContentHash == "" || r.AliasOf != "" {
				continue
			}
			live[r.URL] = r.ContentHash
			if e, ok := ix.docs.entry(r.URL); !ok || e.Hash != r.ContentHash || !ix.docs.present(e) {
				stale = append(stale, r)
			}
		}
		if len(rows) < 500 {
			break
		}
		after = crawlstate.KeyOf(rows[len(rows)-1])
	}
	for _, u := range ix.docs.urls() {
		if _, ok := live[u]; !ok {
			if err := ix.docs.remove(u); err != nil {
				ix.failures = append(ix.failures, fmt.Errorf("removing the file of %s: %w", u, err))
			}
		}
	}
	for i, r := range stale {
		if maxPages > 0 && i >= maxPages {
			unrepaired += len(stale) - i
			fmt.Fprintf(ix.stderr, "docsindex: %d files behind the state left for the next run (WEB_MAX_PAGES=%d)\n", len(stale)-i, maxPages)
			break
		}
		resp, ferr := f.Fetch(ctx, fetch.Request{URL: r.OriginalURL})
		if ferr == nil && resp.Status != http.StatusOK {
			ferr = fmt.Errorf("HTTP %d", resp.Status)
		}
		if ferr == nil {
			ferr = ix.docs.put(r.URL, r.ContentHash, resp.FinalURL, resp.ContentType, resp.Body, ix.maxBytes)
		}
		if ferr != nil {
			if ctx.Err() != nil {
				return repaired, unrepaired, ctx.Err()
			}
			unrepaired++
			// An older version must not pass for the committed one.
			if e, ok := ix.docs.entry(r.URL); ok && e.Hash != r.ContentHash {
				if err := ix.docs.remove(r.URL); err != nil {
					ix.failures = append(ix.failures, err)
				}
			}
			fmt.Fprintf(ix.stderr, "docsindex: %s: no file written: %v\n", r.URL, strings.TrimPrefix(ferr.Error(), "fetch "))
			continue
		}
		repaired++
	}
	return repaired, unrepaired, nil
}
