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
	"github.com/recrawl/recrawl/crawlstate/sqlite"
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
		args:   append(args, "-db", h.db, "-out", h.out, "-allow-private"),
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

// requireCommitted checks the directory against the state: every page with
// content has one file, holding Markdown whose fingerprint (with the
// engine's default rules) is the content hash the engine committed, and
// there is no other file.
func (h *harness) requireCommitted(source string) {
	h.t.Helper()
	st, err := sqlite.Open(context.Background(), h.db)
	require.NoError(h.t, err)
	defer st.Close()
	rows, err := st.Due(context.Background(), source, everything, crawlstate.Key{}, 1000)
	require.NoError(h.t, err)
	var want []string
	for _, r := range rows {
		if r.ContentHash == "" || r.Gone {
			continue
		}
		rel := ""
		for _, t := range markdownTypes {
			if p := docPath(r.URL, t); fileExists(filepath.Join(h.out, filepath.FromSlash(p))) {
				rel = p
			}
		}
		require.NotEmpty(h.t, rel, "no file for %s", r.URL)
		want = append(want, rel)
		b, err := os.ReadFile(filepath.Join(h.out, filepath.FromSlash(rel)))
		require.NoError(h.t, err)
		require.Equal(h.t, r.ContentHash, fingerprint.Set{}.For(r.URL).Of(string(b)), "file of %s is not the committed version", r.URL)
	}
	sort.Strings(want)
	require.Equal(h.t, want, h.files())
}

func fileExists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}

// row returns the state's row of page path.
func (h *harness) row(source, pagePath string) crawlstate.Row {
	h.t.Helper()
	st, err := sqlite.Open(context.Background(), h.db)
	require.NoError(h.t, err)
	defer st.Close()
	r, err := st.Get(context.Background(), source, h.site.PageURL(pagePath))
	require.NoError(h.t, err)
	return r
}

// age sets every file's modification time to old, so a rewrite shows.
func (h *harness) age(old time.Time) {
	for _, f := range h.files() {
		require.NoError(h.t, os.Chtimes(filepath.Join(h.out, filepath.FromSlash(f)), old, old))
	}
}

func (h *harness) modTime(pagePath string) time.Time {
	st, err := os.Stat(h.path(pagePath))
	require.NoError(h.t, err)
	return st.ModTime()
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
	h.age(old)
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
		require.True(t, h.modTime(p).Equal(old), "%s was rewritten although it did not change", p)
		require.Equal(t, before[p], h.read(p))
	}
	require.False(t, h.modTime("/docs/page-0002").Equal(old))
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
			h.requireCommitted(entry)
			require.Contains(t, h.read("/docs/page-0006"), "This is page 6, revision 1.")
		})
	}
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

// A write that fails fails the page at the "content" stage before the
// commit: the row keeps its old hash and is due again after the first
// failure backoff (1 h), when the next run writes the file.
func TestFailedWriteStaysDue(t *testing.T) {
	h := newHarness(t, testsite.Options{Pages: 4})
	sitemap := h.site.SitemapURL()
	_, _, err := h.run("-entry", sitemap)
	require.NoError(t, err)
	committed := h.row(sitemap, "/docs/page-0002").ContentHash

	// A non-empty directory where page 2's file must go: the rename fails.
	require.NoError(t, os.Remove(h.path("/docs/page-0002")))
	require.NoError(t, os.MkdirAll(filepath.Join(h.path("/docs/page-0002"), "in-the-way"), 0o755))
	h.site.Edit("/docs/page-0002")
	h.clk.Advance(48 * time.Hour)
	stdout, _, err := h.run("-entry", sitemap, "-json")
	require.ErrorContains(t, err, "the files of 1 pages could not be written or removed; those pages are retried")
	require.ErrorContains(t, err, "first: "+h.site.PageURL("/docs/page-0002")+": writing ")
	var rep recrawl.Report
	require.NoError(t, json.Unmarshal([]byte(stdout), &rep))
	require.Equal(t, 1, rep.Failed[recrawl.StageContent])
	require.Equal(t, 0, rep.Changed)
	require.Equal(t, 3, rep.Unchanged)
	row := h.row(sitemap, "/docs/page-0002")
	require.Equal(t, committed, row.ContentHash, "the state keeps the version whose file exists")
	require.Equal(t, recrawl.StageContent, row.LastStage)
	require.True(t, row.NextCheck.After(h.clk.Now()), "the failure is backed off")
	require.False(t, row.NextCheck.After(h.clk.Now().Add(time.Hour)), "the first backoff is 1 h")

	require.NoError(t, os.RemoveAll(h.path("/docs/page-0002")))
	h.clk.Advance(time.Hour)
	stdout, _, err = h.run("-entry", sitemap)
	require.NoError(t, err)
	// The default scheduler holds the other pages back (their budget is
	// spent); the failed page is owed its retry and comes first.
	require.Contains(t, stdout, "fetched 1 (0 not modified)")
	require.Contains(t, stdout, "new 0, changed 1, unchanged 0, gone 0, failed 0")
	require.Contains(t, stdout, "files: 1 written, 0 removed; 4 in the directory")
	require.Contains(t, h.read("/docs/page-0002"), "This is page 2, revision 2.")
	h.requireCommitted(sitemap)
}

// A page that answers with a body every time (no validators) is handed
// over as unchanged: its file is rewritten only when it is missing or
// differs.
func TestUnchangedBodyRestoresFile(t *testing.T) {
	h := newHarness(t, testsite.Options{Pages: 4, NoETag: true, NoLastModified: true})
	sitemap := h.site.SitemapURL()
	_, _, err := h.run("-entry", sitemap)
	require.NoError(t, err)
	want1 := h.read("/docs/page-0001")

	old := time.Date(2001, 1, 1, 0, 0, 0, 0, time.UTC)
	h.age(old)
	require.NoError(t, os.Remove(h.path("/docs/page-0001")))
	require.NoError(t, os.WriteFile(h.path("/docs/page-0003"), []byte("edited by hand"), 0o644))
	h.clk.Advance(48 * time.Hour)
	stdout, stderr, err := h.run("-entry", sitemap)
	require.NoError(t, err)
	require.Empty(t, stderr)
	require.Contains(t, stdout, "fetched 4 (0 not modified)")
	require.Contains(t, stdout, "new 0, changed 0, unchanged 4")
	require.Contains(t, stdout, "files: 2 written, 0 removed; 4 in the directory")
	require.Equal(t, want1, h.read("/docs/page-0001"))
	require.Contains(t, h.read("/docs/page-0003"), "This is page 3, revision 1.")
	require.True(t, h.modTime("/docs/page-0002").Equal(old), "an identical file is not rewritten")
	require.True(t, h.modTime("/docs/page-0004").Equal(old))
	h.requireCommitted(sitemap)
}

// A volatile block (a timestamp, a token) does not change the fingerprint,
// so the page stays unchanged, but its file takes the Markdown of the
// latest fetch, which has the committed hash.
func TestVolatileBlock(t *testing.T) {
	h := newHarness(t, testsite.Options{Pages: 2, NoETag: true, NoLastModified: true, Volatile: true})
	sitemap := h.site.SitemapURL()
	_, _, err := h.run("-entry", sitemap)
	require.NoError(t, err)
	first := h.read("/docs/page-0001")
	require.Contains(t, first, "Rendered at ")

	h.clk.Advance(48 * time.Hour)
	stdout, _, err := h.run("-entry", sitemap)
	require.NoError(t, err)
	require.Contains(t, stdout, "new 0, changed 0, unchanged 2")
	require.Contains(t, stdout, "files: 2 written")
	require.NotEqual(t, first, h.read("/docs/page-0001"))
	h.requireCommitted(sitemap)
}

// A new -out directory for an existing -db gets no files for pages that
// answer 304: the run says how many are missing and how to rebuild.
func TestNewOutputDirectoryWarns(t *testing.T) {
	h := newHarness(t, testsite.Options{Pages: 5})
	sitemap := h.site.SitemapURL()
	_, _, err := h.run("-entry", sitemap)
	require.NoError(t, err)

	h.out = filepath.Join(t.TempDir(), "fresh")
	h.clk.Advance(48 * time.Hour)
	h.site.Edit("/docs/page-0005")
	h.site.ResetLog()
	stdout, stderr, err := h.run("-entry", sitemap)
	require.NoError(t, err, "missing files are a warning: nothing failed")
	require.Contains(t, stdout, "not modified)")
	require.Contains(t, stdout, "changed 1, unchanged 4")
	require.Contains(t, stdout, "files: 1 written, 0 removed; 1 in the directory")
	require.Equal(t, "docsindex: warning: 4 of 5 pages in the state have no file in "+h.out+
		": a page is handed over only when it is fetched with a body, not when it answers 304 Not Modified, so these stay missing until they change (delete "+h.db+" to rebuild everything)\n", stderr)
	require.Equal(t, []string{strings.TrimPrefix(h.path("/docs/page-0005"), h.out+string(filepath.Separator))}, h.files())
	require.Len(t, h.site.PageRequests(), 5, "nothing is fetched a second time")

	// Deleting the state rebuilds everything.
	require.NoError(t, os.Remove(h.db))
	stdout, stderr, err = h.run("-entry", sitemap)
	require.NoError(t, err)
	require.Empty(t, stderr)
	require.Contains(t, stdout, "new 5")
	require.Contains(t, stdout, "files: 4 written, 0 removed; 5 in the directory")
	h.requireCommitted(sitemap)
}

// A page's file is named by its content type; when that changes, the old
// file goes. A gone page's file goes with the directories it leaves empty.
func TestContentTypeAndRemoval(t *testing.T) {
	h := newHarness(t, testsite.Options{Pages: 2})
	sitemap := h.site.SitemapURL()
	url := h.site.AddRaw("/notes/changelog", "text/plain; charset=utf-8", []byte("v1: first release\n"))
	txt := filepath.Join(h.out, filepath.FromSlash(extract.DocPath(url, "text/plain")))
	md := filepath.Join(h.out, filepath.FromSlash(extract.DocPath(url, "text/markdown")))
	_, _, err := h.run("-entry", sitemap)
	require.NoError(t, err)
	b, err := os.ReadFile(txt)
	require.NoError(t, err)
	require.Equal(t, "v1: first release\n", string(b))
	h.requireCommitted(sitemap)

	h.site.Update("/notes/changelog", func(p *testsite.Page) {
		p.ContentType, p.Raw = "text/markdown", []byte("# Changelog\n\n- v2: second release\n")
		p.Version++
	})
	h.clk.Advance(48 * time.Hour)
	stdout, _, err := h.run("-entry", sitemap)
	require.NoError(t, err)
	require.Contains(t, stdout, "changed 1")
	require.NoFileExists(t, txt)
	b, err = os.ReadFile(md)
	require.NoError(t, err)
	require.Equal(t, "# Changelog\n\n- v2: second release\n", string(b))
	h.requireCommitted(sitemap)

	h.site.Delete("/notes/changelog", http.StatusGone)
	h.clk.Advance(48 * time.Hour)
	stdout, _, err = h.run("-entry", sitemap)
	require.NoError(t, err)
	require.Contains(t, stdout, "gone 1")
	require.Contains(t, stdout, "files: 0 written, 1 removed; 2 in the directory")
	require.NoDirExists(t, filepath.Dir(md), "the emptied directory is removed")
	require.DirExists(t, filepath.Dir(h.path("/docs/page-0001")))
	h.requireCommitted(sitemap)
}

func TestBadManifest(t *testing.T) {
	for _, tc := range []struct {
		name, manifest, want string
	}{
		{"not JSON", "{files:", "is not a docsindex manifest"},
		{"other version", `{"version": 7, "source": "S"}`, "has version 7, want 2"},
		{"no source", `{"version": 2}`, "names no source"},
		{"other source", `{"version": 2, "source": "T"}`, "holds the pages of T, not S: use another -out directory"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			require.NoError(t, os.WriteFile(filepath.Join(dir, manifestName), []byte(tc.manifest), 0o644))
			_, err := openDocs(dir, "S")
			require.ErrorContains(t, err, tc.want)
		})
	}
}

// A version 1 manifest (which also listed the files) is accepted and
// rewritten as version 2 by the first write; its file list is not used.
func TestManifestVersion1(t *testing.T) {
	h := newHarness(t, testsite.Options{Pages: 2})
	sitemap := h.site.SitemapURL()
	require.NoError(t, os.MkdirAll(h.out, 0o755))
	v1 := `{"version": 1, "source": "` + sitemap + `", "files": {"http://a.example/x": {"path": "../../victim.md", "hash": "h"}}}`
	require.NoError(t, os.WriteFile(filepath.Join(h.out, manifestName), []byte(v1), 0o644))
	_, _, err := h.run("-entry", sitemap)
	require.NoError(t, err)
	raw, err := os.ReadFile(filepath.Join(h.out, manifestName))
	require.NoError(t, err)
	require.JSONEq(t, `{"version": 2, "source": "`+sitemap+`"}`, string(raw))
	h.requireCommitted(sitemap)
}

// FuzzManifest: any manifest file is read without a panic, and one that is
// accepted names the expected source at a known version.
func FuzzManifest(f *testing.F) {
	f.Add([]byte(`{"version": 2, "source": "S"}`))
	f.Add([]byte(`{"version": 1, "source": "S", "files": {"u": {"path": "..\\..\\x"}}}`))
	f.Add([]byte(`{"version": 2, "source": "S\u0000"}`))
	f.Add([]byte(`null`))
	f.Fuzz(func(t *testing.T, raw []byte) {
		dir := t.TempDir()
		require.NoError(t, os.WriteFile(filepath.Join(dir, manifestName), raw, 0o644))
		d, err := openDocs(dir, "S")
		if err != nil {
			return
		}
		var m manifest
		require.NoError(t, json.Unmarshal(raw, &m))
		require.Equal(t, "S", m.Source)
		require.Contains(t, []int{1, manifestVersion}, m.Version)
		require.Equal(t, m.Version == manifestVersion, d.claimed)
	})
}

// The engine reads a response without a usable Content-Type as HTML, so
// its file is Markdown (.md), not .bin.
func TestDocPath(t *testing.T) {
	for _, tc := range []struct{ contentType, want string }{
		{"text/html; charset=utf-8", "docs.example.com/guide/intro.md"},
		{"", "docs.example.com/guide/intro.md"},
		{"text/html; charset", "docs.example.com/guide/intro.md"},
		{"text/markdown", "docs.example.com/guide/intro.md"},
		{"text/plain", "docs.example.com/guide/intro.txt"},
	} {
		t.Run(tc.contentType, func(t *testing.T) {
			require.Equal(t, tc.want, docPath("https://docs.example.com/guide/intro", tc.contentType))
		})
	}
}

// -only keeps the index to a path prefix, for every entry format; a crawl
// does not even request the other pages.
func TestOnlyPathPrefix(t *testing.T) {
	for _, tc := range []struct {
		name  string
		entry func(*testsite.Site) string
	}{
		{"sitemap", (*testsite.Site).SitemapURL},
		{"llms.txt", (*testsite.Site).LLMsURL},
		{"crawl", func(s *testsite.Site) string { return s.PageURL("/docs/page-0001") }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t, testsite.Options{Pages: 4})
			h.site.Add("/docs/guide/install", "Install", "<p>How to install.</p>")
			h.site.Add("/docs/guide/configure", "Configure", "<p>How to configure.</p>")
			h.site.Update("/docs/page-0001", func(p *testsite.Page) {
				p.Links = append(p.Links, "/docs/guide/install", "/docs/guide/configure")
			})
			entry := tc.entry(h.site)
			stdout, _, err := h.run("-entry", entry, "-only", "/docs/guide/", "-json")
			require.NoError(t, err)
			var rep recrawl.Report
			require.NoError(t, json.Unmarshal([]byte(stdout), &rep))
			h.requireCommitted(entry)
			var files []string
			for _, f := range h.files() {
				if strings.Contains(f, "guide/") {
					files = append(files, f)
				}
			}
			require.Len(t, files, 2, h.files())
			for _, r := range h.site.Requests() {
				if strings.HasPrefix(r.Path, "/docs/page-") && r.Path != "/docs/page-0001" {
					t.Fatalf("%s requested outside -only", r.Path)
				}
			}
			if tc.name != "crawl" {
				require.Equal(t, 4, rep.Skipped["out_of_scope"])
				require.Len(t, h.files(), 2)
			}
		})
	}
	h := newHarness(t, testsite.Options{Pages: 1})
	_, _, err := h.run("-entry", h.site.SitemapURL(), "-only", "docs/")
	var ue *usageError
	require.ErrorAs(t, err, &ue)
}
