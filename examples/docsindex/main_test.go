package main

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/recrawl/recrawl"
	"github.com/recrawl/recrawl/clock"
	"github.com/recrawl/recrawl/crawlstate"
	"github.com/recrawl/recrawl/discover"
	"github.com/recrawl/recrawl/extract"
	"github.com/recrawl/recrawl/fingerprint"
	"github.com/recrawl/recrawl/internal/testsite"
)

// harness runs docsindex against one fake site with a fake clock, so
// pacing costs no real time and the schedule can be moved by days.
type harness struct {
	t        *testing.T
	site     *testsite.Site
	clk      *clock.Fake
	db, out  string
	terminal bool
	lookup   map[string]string
}

func newHarness(t *testing.T, opts testsite.Options) *harness {
	clk := clock.NewAutoFake(time.Date(2026, 3, 2, 9, 0, 0, 0, time.UTC))
	opts.Clock = clk
	site := testsite.New(opts)
	t.Cleanup(site.Close)
	dir := t.TempDir()
	return &harness{t: t, site: site, clk: clk, db: filepath.Join(dir, "state.sqlite"), out: filepath.Join(dir, "docs"), lookup: map[string]string{}}
}

// run runs docsindex with args (plus -db and -out) and returns stdout and
// stderr.
func (h *harness) run(args ...string) (string, string, error) {
	var stdout, stderr bytes.Buffer
	err := run(context.Background(), env{
		args:   append(args, "-db", h.db, "-out", h.out),
		stdout: &stdout, stderr: &stderr,
		lookup:   func(k string) (string, bool) { v, ok := h.lookup[k]; return v, ok },
		terminal: h.terminal,
		clock:    h.clk,
	})
	return stdout.String(), stderr.String(), err
}

// files lists the Markdown files under the output directory, relative and
// slash-separated.
func (h *harness) files() []string {
	var out []string
	err := filepath.WalkDir(h.out, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() || d.Name() == manifestName {
			return err
		}
		rel, _ := filepath.Rel(h.out, p)
		out = append(out, filepath.ToSlash(rel))
		return nil
	})
	require.NoError(h.t, err)
	sort.Strings(out)
	return out
}

func (h *harness) path(pagePath string) string {
	return filepath.Join(h.out, filepath.FromSlash(extract.DocPath(h.site.PageURL(pagePath), "text/html")))
}

func (h *harness) read(pagePath string) string {
	b, err := os.ReadFile(h.path(pagePath))
	require.NoError(h.t, err)
	return string(b)
}

// requireCommitted checks every file against the state: each holds Markdown
// whose fingerprint is the content hash the engine committed for its page,
// and every page with content has its file.
func (h *harness) requireCommitted(source string) {
	st, err := crawlstate.OpenSQLite(h.db)
	require.NoError(h.t, err)
	defer st.Close()
	rows, err := st.Due(context.Background(), source, everything, crawlstate.Key{}, 1000)
	require.NoError(h.t, err)
	withContent := 0
	for _, r := range rows {
		if r.ContentHash == "" {
			continue
		}
		withContent++
		b, err := os.ReadFile(filepath.Join(h.out, filepath.FromSlash(extract.DocPath(r.URL, "text/html"))))
		require.NoError(h.t, err, r.URL)
		require.Equal(h.t, r.ContentHash, fingerprint.Of(string(b)), "file of %s is not the committed version", r.URL)
	}
	require.Len(h.t, h.files(), withContent)
}

func TestIncrementalRuns(t *testing.T) {
	h := newHarness(t, testsite.Options{Pages: 5})
	sitemap := h.site.SitemapURL()

	stdout, stderr, err := h.run("-entry", sitemap)
	require.NoError(t, err)
	require.Empty(t, stderr, "no progress line when stdout is not a terminal")
	require.Contains(t, stdout, "new 5, changed 0, unchanged 0, gone 0")
	require.Contains(t, stdout, "files: 5 written, 0 removed; 5 in the directory")
	require.Len(t, h.files(), 5)
	h.requireCommitted(sitemap)
	require.Contains(t, h.read("/docs/page-0002"), "This is page 2, revision 1.")
	require.Contains(t, h.read("/docs/page-0002"), "func page2() int {\n\treturn 1\n}")

	// Age every file, so a rewrite shows in its modification time.
	old := time.Date(2001, 1, 1, 0, 0, 0, 0, time.UTC)
	for _, f := range h.files() {
		require.NoError(t, os.Chtimes(filepath.Join(h.out, f), old, old))
	}
	before := map[string]string{}
	for _, p := range h.site.Paths() {
		before[p] = h.read(p)
	}

	h.clk.Advance(48 * time.Hour) // every page is due again
	h.site.Edit("/docs/page-0002")
	h.site.Delete("/docs/page-0003", http.StatusNotFound)
	stdout, _, err = h.run("-entry", sitemap)
	require.NoError(t, err)
	require.Contains(t, stdout, "new 0, changed 1, unchanged 3, gone 1")
	require.Contains(t, stdout, "files: 1 written, 1 removed; 4 in the directory")

	require.Contains(t, h.read("/docs/page-0002"), "This is page 2, revision 2.")
	_, err = os.Stat(h.path("/docs/page-0003"))
	require.ErrorIs(t, err, os.ErrNotExist, "the gone page's file is removed")
	for _, p := range []string{"/docs/page-0001", "/docs/page-0004", "/docs/page-0005"} {
		st, err := os.Stat(h.path(p))
		require.NoError(t, err)
		require.True(t, st.ModTime().Equal(old), "%s was rewritten although it did not change", p)
		require.Equal(t, before[p], h.read(p))
	}
	st, err := os.Stat(h.path("/docs/page-0002"))
	require.NoError(t, err)
	require.False(t, st.ModTime().Equal(old))
	h.requireCommitted(sitemap)
}

func TestJSONReport(t *testing.T) {
	h := newHarness(t, testsite.Options{Pages: 3})
	h.terminal = true // -json keeps the terminal quiet too
	stdout, stderr, err := h.run("-entry", h.site.SitemapURL(), "-json")
	require.NoError(t, err)
	require.Empty(t, stderr)
	require.Equal(t, 1, strings.Count(stdout, "\n"), "one JSON object on one line")
	var rep recrawl.Report
	dec := json.NewDecoder(strings.NewReader(stdout))
	dec.DisallowUnknownFields()
	require.NoError(t, dec.Decode(&rep))
	require.Equal(t, h.site.SitemapURL(), rep.Source)
	require.Equal(t, 3, rep.New)
	require.Equal(t, 3, rep.Requests)
	require.Len(t, h.files(), 3)
}

func TestProgressOnTerminal(t *testing.T) {
	h := newHarness(t, testsite.Options{Pages: 4})
	h.terminal = true
	stdout, stderr, err := h.run("-entry", h.site.SitemapURL())
	require.NoError(t, err)
	require.Contains(t, stdout, "new 4")
	require.True(t, strings.HasPrefix(stderr, "\r["), "progress is redrawn with a carriage return: %q", stderr)
	require.True(t, strings.HasSuffix(stderr, "\n"), "the finished line ends with a newline")
	last := stderr[strings.LastIndex(stderr, "\r")+1:]
	require.Contains(t, last, "[4/4]")
	require.Contains(t, last, "pages/s")
	require.Contains(t, last, h.site.URL()+"/docs/page-")
}

func TestProgressLine(t *testing.T) {
	long := "https://docs.example.com/" + strings.Repeat("very-long-segment/", 10) + "end"
	for _, tc := range []struct {
		name    string
		ev      recrawl.Event
		elapsed time.Duration
		want    string
	}{
		{"start", recrawl.Event{URL: "https://a.example/x", Done: 1, Due: 20}, 0, "[ 1/20]   0.0 pages/s 0:00 https://a.example/x"},
		{"rate", recrawl.Event{URL: "https://a.example/y", Done: 30, Due: 120}, 75 * time.Second, "[ 30/120]   0.4 pages/s 1:15 https://a.example/y"},
		{"cut", recrawl.Event{URL: long, Done: 5, Due: 5}, 2 * time.Second, "[5/5]   2.5 pages/s 0:02 ..." + long[len(long)-(progressWidth-len("[5/5]   2.5 pages/s 0:02 ")-3):]},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := progressLine(tc.ev, tc.elapsed)
			require.Equal(t, tc.want, got)
			require.LessOrEqual(t, len(got), progressWidth)
		})
	}
}

func TestOtherEntryFormats(t *testing.T) {
	for _, tc := range []struct {
		name  string
		entry func(*testsite.Site) string
		args  []string
	}{
		{"llms.txt detected", (*testsite.Site).LLMsURL, nil},
		{"crawl from a page", func(s *testsite.Site) string { return s.PageURL("/docs/page-0001") }, []string{"-format", "page"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t, testsite.Options{Pages: 6})
			entry := tc.entry(h.site)
			stdout, _, err := h.run(append([]string{"-entry", entry}, tc.args...)...)
			require.NoError(t, err)
			require.Contains(t, stdout, "new 6")
			require.NotContains(t, stdout, "fetched again", "every body came from the engine's own fetch")
			h.requireCommitted(entry)
			require.Contains(t, h.read("/docs/page-0006"), "This is page 6, revision 1.")
		})
	}
}

func TestRepairsFilesBehindTheState(t *testing.T) {
	// Without lastmod, an edit does not make a page due: the state keeps
	// the old version until the page's next scheduled visit.
	h := newHarness(t, testsite.Options{Pages: 4, NoLastMod: true})
	sitemap := h.site.SitemapURL()
	_, _, err := h.run("-entry", sitemap)
	require.NoError(t, err)
	require.Len(t, h.files(), 4)

	// A lost file comes back; a page that changed since the engine last
	// saw it cannot be reproduced, so its stale file is not kept.
	require.NoError(t, os.Remove(h.path("/docs/page-0001")))
	require.NoError(t, os.Remove(h.path("/docs/page-0004")))
	h.site.Edit("/docs/page-0004")
	h.site.ResetLog()
	stdout, stderr, err := h.run("-entry", sitemap)
	require.NoError(t, err)
	require.Contains(t, stdout, "due 0")
	require.Contains(t, stdout, "files behind the state: 1 fetched again and written, 1 left for the next change")
	require.Contains(t, stderr, "/docs/page-0004: no file written: the Markdown does not reproduce the engine's content hash")
	require.Contains(t, h.read("/docs/page-0001"), "This is page 1, revision 1.")
	require.Len(t, h.files(), 3)
	require.Equal(t, 2, len(h.site.PageRequests()), "one request per missing file")

	// A new output directory is filled from the state alone.
	h.out = filepath.Join(t.TempDir(), "fresh")
	stdout, _, err = h.run("-entry", sitemap)
	require.NoError(t, err)
	require.Contains(t, stdout, "3 fetched again and written, 1 left for the next change")
	require.Len(t, h.files(), 3)

	// When the engine visits page 4 again it finds the change and writes it.
	h.site.Edit("/docs/page-0004")
	h.clk.Advance(48 * time.Hour)
	stdout, _, err = h.run("-entry", sitemap)
	require.NoError(t, err)
	require.Contains(t, stdout, "changed 1")
	require.Contains(t, h.read("/docs/page-0004"), "This is page 4, revision 3.")
	h.requireCommitted(sitemap)
}

func TestBadInput(t *testing.T) {
	h := newHarness(t, testsite.Options{Pages: 2})
	htmlAtSitemap := h.site.Serve("/sitemap-landing.xml", "text/html; charset=utf-8",
		[]byte("<!doctype html><html><head><title>Docs</title></head><body><h1>Welcome</h1><p>Our docs moved.</p></body></html>"))

	t.Run("unknown -format", func(t *testing.T) {
		_, _, err := h.run("-entry", h.site.SitemapURL(), "-format", "rss")
		var ue *usageError
		require.ErrorAs(t, err, &ue)
		require.ErrorContains(t, err, `-format: discover: unknown EntryFormat "rss": use sitemap, llms.txt or page`)
		_, serr := os.Stat(h.db)
		require.ErrorIs(t, serr, os.ErrNotExist, "nothing is created for a bad command line")
	})
	t.Run("HTML served at a sitemap URL", func(t *testing.T) {
		stdout, _, err := h.run("-entry", htmlAtSitemap)
		var fe *discover.FormatError
		require.ErrorAs(t, err, &fe)
		require.Equal(t, discover.FormatSitemap, fe.Expected)
		require.ErrorContains(t, err, "the URL names a sitemap, but the document is an HTML page")
		require.ErrorContains(t, err, "-format sitemap, llms.txt or page")
		require.Contains(t, stdout, "discovered 0")
		require.Empty(t, h.files())
	})
	t.Run("bad WEB_ variable", func(t *testing.T) {
		h.lookup["WEB_MAX_DEPTH"] = "-1"
		defer delete(h.lookup, "WEB_MAX_DEPTH")
		_, _, err := h.run("-entry", h.site.SitemapURL())
		require.ErrorContains(t, err, `WEB_MAX_DEPTH="-1": must not be negative`)
	})
	for _, tc := range []struct {
		args []string
		want string
	}{
		{nil, "-entry is required (or -demo)"},
		{[]string{"-demo", "-entry", "http://x.example/"}, "-demo and -entry exclude each other"},
		{[]string{"-entry", "http://x.example/", "extra"}, `unexpected argument "extra"`},
	} {
		t.Run(tc.want, func(t *testing.T) {
			_, _, err := h.run(tc.args...)
			var ue *usageError
			require.ErrorAs(t, err, &ue)
			require.EqualError(t, err, tc.want)
		})
	}
	t.Run("output directory of another site", func(t *testing.T) {
		_, _, err := h.run("-entry", h.site.SitemapURL())
		require.NoError(t, err)
		_, _, err = h.run("-entry", h.site.LLMsURL())
		require.ErrorContains(t, err, "holds the pages of "+h.site.SitemapURL()+", not "+h.site.LLMsURL())
	})
}

func TestDemo(t *testing.T) {
	dir := t.TempDir()
	var stdout, stderr bytes.Buffer
	args := []string{"-demo", "-demo-addr", "127.0.0.1:0", "-db", filepath.Join(dir, "d.db"), "-out", filepath.Join(dir, "docs")}
	err := run(context.Background(), env{args: args, stdout: &stdout, stderr: &stderr, clock: clock.NewAutoFake(testsite.DefaultStart)})
	require.NoError(t, err)
	require.Contains(t, stderr.String(), "demo site: http://127.0.0.1:")
	require.Contains(t, stdout.String(), "new 20, changed 0")
	require.Contains(t, stdout.String(), "files: 20 written, 0 removed; 20 in the directory")
}

// The error of a failed write names the page; the run reports it.
func TestUnwritableOutput(t *testing.T) {
	h := newHarness(t, testsite.Options{Pages: 2})
	require.NoError(t, os.MkdirAll(h.out, 0o755))
	// A file where the host directory must go.
	host := strings.SplitN(extract.DocPath(h.site.PageURL("/docs/page-0001"), "text/html"), "/", 2)[0]
	require.NoError(t, os.WriteFile(filepath.Join(h.out, host), []byte("in the way"), 0o644))
	_, _, err := h.run("-entry", h.site.SitemapURL())
	require.ErrorContains(t, err, "2 files could not be written; first: http://")
	require.ErrorContains(t, err, "not a directory")
}

func TestBadManifest(t *testing.T) {
	for _, tc := range []struct {
		name, manifest, want string
	}{
		{"not JSON", "{files:", "is not a docsindex manifest"},
		{"other version", `{"version": 7, "source": "S", "files": {}}`, "has version 7, want 1"},
		{"path outside", `{"version": 1, "source": "S", "files": {"http://a.example/x": {"path": "../../victim.md", "hash": "h"}}}`, `"../../victim.md", is not inside the directory`},
		{"absolute path", `{"version": 1, "source": "S", "files": {"http://a.example/x": {"path": "/etc/victim.md", "hash": "h"}}}`, "is not inside the directory"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			require.NoError(t, os.WriteFile(filepath.Join(dir, manifestName), []byte(tc.manifest), 0o644))
			_, err := openDocs(dir, "S", fingerprint.Set{})
			require.ErrorContains(t, err, tc.want)
		})
	}
}

// FuzzManifest: any manifest file is read without a panic, and one that is
// accepted never names a file outside the output directory.
func FuzzManifest(f *testing.F) {
	f.Add([]byte(`{"version": 1, "source": "S", "files": {"http://a.example/x": {"path": "a.example/x.md", "hash": "h"}}}`))
	f.Add([]byte(`{"version": 1, "source": "S", "files": {"u": {"path": "..\\..\\x"}}}`))
	f.Add([]byte(`{"version": 1, "source": "S"}`))
	f.Add([]byte(`null`))
	f.Fuzz(func(t *testing.T, raw []byte) {
		dir := t.TempDir()
		require.NoError(t, os.WriteFile(filepath.Join(dir, manifestName), raw, 0o644))
		d, err := openDocs(dir, "S", fingerprint.Set{})
		if err != nil {
			return
		}
		for _, u := range d.urls() {
			e, _ := d.entry(u)
			full, err := filepath.Abs(filepath.Join(dir, filepath.FromSlash(e.Path)))
			require.NoError(t, err)
			require.True(t, strings.HasPrefix(full, dir+string(filepath.Separator)), "%q escapes %s", e.Path, dir)
		}
	})
}
