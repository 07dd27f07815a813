// Command alerts shows recrawl's change pipeline end to end, offline: a
// small documentation site (served on loopback, answering for the host
// docs.example.test) is crawled into a SQLite state, chunked, embedded with
// the hashing embedder and indexed in memory. The site is then edited (one
// section of a page rewritten, a section added to another, a page deleted)
// and crawled again. The program prints the alerts delivered to an
// alert.Func sink (kind, URL, old → new hash, the changed chunks with their
// heading paths, the unified diff), the evidence Engine.Explain returns for
// one of them, a third run that finds nothing new, and the answer of the
// index to a question.
//
//	go run ./examples/alerts
//
// The clock is simulated and stands still during a run (pacing is off: the
// loopback site needs none), so the output is the same on every run.
package main

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/recrawl/recrawl"
	"github.com/recrawl/recrawl/alert"
	"github.com/recrawl/recrawl/clock"
	"github.com/recrawl/recrawl/crawlstate/sqlite"
	"github.com/recrawl/recrawl/discover"
	"github.com/recrawl/recrawl/embed"
	"github.com/recrawl/recrawl/index"
	"github.com/recrawl/recrawl/internal/testsite"
)

func main() {
	if err := run(context.Background(), os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "alerts:", err)
		os.Exit(1)
	}
}

// host is the name the fake site answers for, so that URLs, record IDs and
// alert IDs do not depend on the loopback port.
const host = "docs.example.test"

// question is asked of the index after the second run.
const question = "How long before a request to the bucket times out?"

// The site: four pages of a fictional tool's documentation, each with a
// few sections, so that an edit touches one chunk and leaves the others.
var pages = []struct{ path, title, html string }{
	{"/docs/install", "Installing skiff", `<p>skiff is a command-line tool that keeps a local directory in sync with an object store bucket. This page explains how to install it.</p>
<h2>Requirements</h2>
<p>skiff needs a 64-bit system: Linux with glibc 2.31 or newer, or macOS 13 or newer. It talks to the bucket over HTTPS, so outbound port 443 must be open.</p>
<h2>Linux</h2>
<p>Download the archive for your architecture from the releases page, unpack it and put the binary on your PATH:</p>
<pre><code>tar xzf skiff-linux-amd64.tar.gz
sudo install skiff /usr/local/bin/
</code></pre>
<h2>macOS</h2>
<p>Install skiff with Homebrew. The formula also installs shell completions for bash and zsh.</p>
<pre><code>brew install skiff
</code></pre>
`},
	{"/docs/configuration", "Configuration", `<p>skiff reads its settings from a configuration file and from environment variables. When both set a value, the environment variable wins.</p>
<h2>Config file</h2>
<p>The file lives at <code>~/.config/skiff/config.toml</code>. Each key sits at the top level; unknown keys are an error, so a misspelled setting is noticed at once.</p>
<h2>Environment variables</h2>
<p><code>SKIFF_BUCKET</code> names the bucket, <code>SKIFF_REGION</code> its region, and <code>SKIFF_PROFILE</code> picks a credentials profile from the shared credentials file.</p>
<h2>Timeouts</h2>
<p>Every request to the bucket times out after 30 seconds by default. Set <code>timeout</code> in the config file to change it. A sync retries a timed-out upload three times before it gives up on the file.</p>
<h2>Logging</h2>
<p>skiff logs to standard error. Pass <code>--verbose</code> to see every request, or set <code>log_format = "json"</code> for machine-readable lines.</p>
`},
	{"/docs/commands", "Command reference", `<p>Every command takes the global flags described in the configuration page.</p>
<h2>skiff sync</h2>
<p>Uploads new and changed files from the local directory and downloads files that changed in the bucket. Conflicts keep both copies, the remote one renamed with a .remote suffix.</p>
<h2>skiff status</h2>
<p>Lists what a sync would do without doing it: files to upload, to download and in conflict.</p>
<h2>skiff prune</h2>
<p>Deletes objects from the bucket whose local file was removed. It asks for confirmation unless <code>--yes</code> is given.</p>
`},
	{"/docs/faq", "FAQ", `<h2>Does skiff delete files in the bucket?</h2>
<p>Only <code>skiff prune</code> deletes objects, and it asks first. A sync never deletes anything on either side.</p>
<h2>Can two syncs run at once?</h2>
<p>No. A sync takes a lock file in the local directory; a second sync waits for it or fails after one minute.</p>
`},
}

// The edits made between the first and the second run.
var (
	timeoutsOld = `<p>Every request to the bucket times out after 30 seconds by default. Set <code>timeout</code> in the config file to change it. A sync retries a timed-out upload three times before it gives up on the file.</p>`
	timeoutsNew = `<p>Every request to the bucket times out after 10 seconds by default. Set <code>timeout</code> in the config file to change it. A sync retries a timed-out upload five times, with exponential backoff, before it gives up on the file.</p>`
	verifying   = `<h2>Verifying the install</h2>
<p>Run <code>skiff version</code>. It prints the version and the commit it was built from; include both in bug reports.</p>
`
)

func run(ctx context.Context, out io.Writer) error {
	clk := clock.NewAutoFake(time.Date(2026, 3, 2, 9, 0, 0, 0, time.UTC))
	site := testsite.New(testsite.Options{Pages: 1, Clock: clk})
	defer site.Close()
	var sitemap strings.Builder
	sitemap.WriteString(`<?xml version="1.0" encoding="UTF-8"?>` + "\n" + `<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">` + "\n")
	for _, p := range pages {
		site.Add(p.path, p.title, p.html)
		fmt.Fprintf(&sitemap, "<url><loc>http://%s%s</loc></url>\n", host, p.path)
	}
	sitemap.WriteString("</urlset>\n")
	site.Serve("/sitemap-docs.xml", "application/xml", []byte(sitemap.String()))

	dir, err := os.MkdirTemp("", "recrawl-alerts-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	state, err := sqlite.Open(context.Background(), filepath.Join(dir, "state.sqlite"))
	if err != nil {
		return err
	}
	defer state.Close()
	emb, err := embed.NewHashing(0)
	if err != nil {
		return err
	}
	idx := index.NewMemory(emb.Dimensions())

	// Every connection goes to the fake site, whatever the host name.
	addr := strings.TrimPrefix(site.URL(), "http://")
	client := &http.Client{Transport: &http.Transport{
		DialContext: func(ctx context.Context, network, _ string) (net.Conn, error) {
			return (&net.Dialer{}).DialContext(ctx, network, addr)
		},
	}}

	var mu sync.Mutex
	var delivered []alert.Alert
	sink := alert.Func(func(_ context.Context, a alert.Alert) error {
		mu.Lock()
		defer mu.Unlock()
		delivered = append(delivered, a)
		return nil // acknowledged: never delivered again
	})

	// Pacing off: the loopback site needs none, and with a 1 s delay the
	// simulated clock would move while the pipeline stamps events, so the
	// printed times would differ from run to run.
	limits := recrawl.DefaultLimits()
	limits.RequestDelay = 0
	eng, err := recrawl.New(recrawl.Config{
		State: state, HTTPClient: client, UserAgent: "recrawl-alerts-example/1.0",
		Limits:   &limits,
		Embedder: emb, Index: idx, Alerts: sink,
		Clock:   clk,
		Workers: 1, // one page at a time: the printed times are the same on every run
	})
	if err != nil {
		return err
	}
	src := discover.Sitemap{URL: "http://" + host + "/sitemap-docs.xml"}

	fmt.Fprintf(out, "recrawl alerts example: %d pages of http://%s (served on loopback)\n", len(pages), host)
	fmt.Fprintf(out, "pipeline: chunk -> embed (%s) -> in-memory index -> alert.Func sink\n\n", emb.Model())

	runOnce := func(n int) ([]alert.Alert, error) {
		mu.Lock()
		delivered = nil
		mu.Unlock()
		rep, err := eng.Run(ctx, src)
		if err != nil {
			return nil, fmt.Errorf("run %d: %w", n, err)
		}
		records, err := idx.Count(ctx)
		if err != nil {
			return nil, err
		}
		mu.Lock()
		got := append([]alert.Alert(nil), delivered...)
		mu.Unlock()
		fmt.Fprintf(out, "run %d at %s: new %d, changed %d, unchanged %d (%d answered 304), gone %d; vectors embedded %d, reused %d; %d alerts; index holds %d records\n",
			n, rep.StartedAt.Format(time.DateTime), rep.New, rep.Changed, rep.Unchanged, rep.NotModified, rep.Gone,
			rep.VectorsEmbedded, rep.VectorsReused, len(got), records)
		sort.Slice(got, func(i, j int) bool { return got[i].URL < got[j].URL })
		return got, nil
	}

	if _, err := runOnce(1); err != nil {
		return err
	}

	// Overnight the site changes: one section rewritten, one added, one page deleted.
	clk.Advance(24 * time.Hour)
	cfg, _ := site.Page("/docs/configuration")
	site.SetContent("/docs/configuration", strings.Replace(cfg.Content, timeoutsOld, timeoutsNew, 1))
	inst, _ := site.Page("/docs/install")
	site.SetContent("/docs/install", inst.Content+verifying)
	site.Delete("/docs/faq", http.StatusNotFound)
	fmt.Fprintln(out, "site changes: configuration (Timeouts rewritten), install (a section added), faq (deleted: 404)")
	clk.Advance(24 * time.Hour) // every page is due again

	alerts, err := runOnce(2)
	if err != nil {
		return err
	}
	for i, a := range alerts {
		printAlert(out, i+1, len(alerts), a)
	}

	// The evidence behind the change of the configuration page.
	for _, a := range alerts {
		if a.Kind == alert.Changed && strings.HasSuffix(a.URL, "/docs/configuration") {
			x, err := eng.Explain(ctx, a.ID)
			if err != nil {
				return err
			}
			printExplanation(out, x)
		}
	}

	// Nothing changed since: the pages answer 304 and no alert repeats.
	clk.Advance(48 * time.Hour)
	fmt.Fprintln(out)
	if _, err := runOnce(3); err != nil {
		return err
	}

	// The index survives a restart through its snapshot file.
	snap := filepath.Join(dir, "index.snap")
	if err := idx.SaveFile(ctx, snap); err != nil {
		return err
	}
	loaded, err := index.LoadFile(ctx, snap)
	if err != nil {
		return err
	}
	return ask(ctx, out, emb, loaded, question)
}

func printAlert(out io.Writer, n, of int, a alert.Alert) {
	fmt.Fprintf(out, "\n== alert %d/%d: %s %s\n", n, of, a.Kind, a.URL)
	fmt.Fprintf(out, "   id      %s\n", a.ID)
	fmt.Fprintf(out, "   hash    %s -> %s\n", orNone(short(a.OldHash)), orNone(short(a.NewHash)))
	fmt.Fprintf(out, "   title   %s; detected %s\n", a.Title, a.DetectedAt.Format(time.RFC3339))
	chunkLines := func(label string, cs []alert.ChunkChange) {
		for _, c := range cs {
			fmt.Fprintf(out, "   %-7s chunk %d %q bytes %d-%d, record %s -> %s\n", label, c.Ordinal, c.HeadingPath, c.Start, c.End,
				orNone(short(c.OldRecordID)), orNone(short(c.NewRecordID)))
		}
	}
	chunkLines("changed", a.Changed)
	chunkLines("added", a.Added)
	chunkLines("removed", a.Removed)
	if a.Diff != "" {
		fmt.Fprintln(out, "   diff:")
		for _, l := range strings.Split(strings.TrimRight(a.Diff, "\n"), "\n") {
			fmt.Fprintf(out, "   | %s\n", l)
		}
	}
	if len(a.RecordIDs) > 0 {
		fmt.Fprintf(out, "   records written: %d\n", len(a.RecordIDs))
	}
}

func printExplanation(out io.Writer, x *recrawl.Explanation) {
	a := x.Alert
	fmt.Fprintf(out, "\n== explain %s\n", short(a.ID))
	fmt.Fprintf(out, "   page       %s (title %q)\n", x.Page.URL, x.Page.Title)
	now := "the state holds the new hash"
	if x.Page.ContentHash != a.NewHash {
		now = "the page changed again since: " + x.Page.ContentHash
	}
	fmt.Fprintf(out, "   old hash   %s\n   new hash   %s (%s)\n", a.OldHash, a.NewHash, now)
	fmt.Fprintf(out, "   delivered  %s\n", x.Delivered.Format(time.RFC3339))
	fmt.Fprintf(out, "   state      visits %d, changes %d, next check %s\n", x.Page.Visits, x.Page.Changes, x.Page.NextCheck.Format(time.RFC3339))
	fmt.Fprintln(out, "   events since the previous version:")
	for _, ev := range x.Events {
		status := "ok"
		if !ev.OK {
			status = "FAILED " + ev.Err
		}
		fmt.Fprintf(out, "     %s  %-7s #%d %s  %s\n", ev.At.Format(time.RFC3339), ev.Stage, ev.Attempt, status, shorten(ev.Detail))
	}
	fmt.Fprintf(out, "   chunks now (%d):\n", len(x.Chunks))
	for _, c := range x.Chunks {
		fmt.Fprintf(out, "     %d %-40q bytes %4d-%-4d record %s\n", c.Ordinal, c.HeadingPath, c.Start, c.End, short(c.RecordID))
	}
	fmt.Fprintf(out, "   record IDs written (%d): %s\n", len(x.RecordIDs), strings.Join(shortAll(x.RecordIDs), " "))
}

// ask embeds a question with the index's embedder and prints the three
// nearest chunks with their provenance.
func ask(ctx context.Context, out io.Writer, emb embed.Embedder, idx index.Index, q string) error {
	vecs, err := emb.Embed(ctx, []string{q})
	if err != nil {
		return err
	}
	hits, err := idx.Query(ctx, vecs[0], 3, nil)
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "\n== query %q (top %d of the index, reloaded from its snapshot)\n", q, len(hits))
	for i, h := range hits {
		fmt.Fprintf(out, "   %d. score %.3f  %s  %q\n", i+1, h.Score, h.Metadata["source_url"], h.Metadata["heading_path"])
		fmt.Fprintf(out, "      content %s, chunk %s, bytes %s-%s: %s\n", short(h.Metadata["content_hash"]), h.Metadata["chunk_ordinal"],
			h.Metadata["char_start"], h.Metadata["char_end"], excerpt(h.Text, 90))
	}
	return nil
}

func short(h string) string {
	if len(h) > 12 {
		return h[:12]
	}
	return h
}

func shortAll(ids []string) []string {
	out := make([]string, len(ids))
	for i, id := range ids {
		out[i] = short(id)
	}
	return out
}

// shorten cuts the 64-hex-digit IDs inside an event detail to 12 digits.
func shorten(detail string) string {
	f := strings.Fields(detail)
	for i, w := range f {
		if len(w) == 64 && strings.Trim(w, "0123456789abcdef") == "" {
			f[i] = short(w)
		}
	}
	return strings.Join(f, " ")
}

func orNone(s string) string {
	if s == "" {
		return "(none)"
	}
	return s
}

// excerpt is the text on one line, cut to n bytes at a word boundary.
func excerpt(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	if len(s) <= n {
		return s
	}
	cut := strings.LastIndexByte(s[:n], ' ')
	if cut <= 0 {
		cut = n
	}
	return s[:cut] + " ..."
}
