package recrawl_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/recrawl/recrawl"
	"github.com/recrawl/recrawl/alert"
	"github.com/recrawl/recrawl/discover"
	"github.com/recrawl/recrawl/fetch"
	"github.com/recrawl/recrawl/internal/peakheap"
	"github.com/recrawl/recrawl/internal/testsite"
	"github.com/recrawl/recrawl/sitemap"
)

// Peak heap of a run against hostile documents, measured with
// runtime.ReadMemStats (peakheap.Measure): each stays bounded whatever the
// document's size. The figures are in RELIABILITY.md; rerun with
// go test -run 'TestPeakHeap' -v .

// A gzip bomb, as a sitemap.xml.gz (XML and plain text) and as a page sent
// with Content-Encoding: gzip, inflating to 1 GiB from about 1 MiB on the
// wire: the inflated stream is read only up to its cap, never held.
func TestPeakHeapGzipBomb(t *testing.T) {
	const mib = 1024
	tests := []struct {
		name  string
		setup func(f *fixture) discover.Source
		check func(t *testing.T, f *fixture, rep *recrawl.Report, err error, failures []error)
		limit uint64
	}{
		{"xml sitemap", func(f *fixture) discover.Source {
			return discover.Sitemap{URL: f.site.GzipBomb("/bomb.xml.gz", "application/gzip",
				`<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9"><url><loc>`+f.site.PageURL(f.site.Paths()[0])+`</loc></url>`,
				mib, `</urlset>`, false)}
		}, func(t *testing.T, f *fixture, rep *recrawl.Report, err error, _ []error) {
			var de *recrawl.DiscoveryError
			require.ErrorAs(t, err, &de)
			require.ErrorIs(t, err, sitemap.ErrMalformed, "a run of blanks is refused before it is buffered")
			require.True(t, rep.Incomplete)
			require.Equal(t, 1, rep.New, "the URL before the blanks is kept")
		}, 16 << 20},
		{"text sitemap", func(f *fixture) discover.Source {
			return discover.Sitemap{URL: f.site.GzipBomb("/bomb.txt.gz", "application/gzip", f.site.PageURL(f.site.Paths()[0])+"\n", mib, "\n", false)}
		}, func(t *testing.T, f *fixture, rep *recrawl.Report, err error, _ []error) {
			require.ErrorIs(t, err, sitemap.ErrTooLarge, "cut off at WEB_MAX_DOCUMENT_BYTES")
			require.True(t, rep.Incomplete)
			require.Equal(t, 1, rep.New)
		}, 16 << 20},
		{"page, Content-Encoding", func(f *fixture) discover.Source {
			f.site.GzipBomb(f.site.Paths()[0], "text/html; charset=utf-8", "<html><body><p>", mib, "</p></body></html>", true)
			return f.src
		}, func(t *testing.T, f *fixture, rep *recrawl.Report, err error, failures []error) {
			require.NoError(t, err)
			require.Equal(t, 1, rep.Failed[recrawl.StageFetch])
			require.Len(t, failures, 1)
			require.ErrorIs(t, failures[0], fetch.ErrTooLarge, "cut off at WEB_MAX_BYTES")
			require.Equal(t, 1, rep.New, "the other page")
		}, 48 << 20},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var failures []error
			f := newFixture(t, testsite.Options{Pages: 2}, recrawl.Config{Observer: func(ev recrawl.Event) {
				if ev.Outcome == recrawl.OutcomeFailed {
					failures = append(failures, ev.Err)
				}
			}})
			src := tc.setup(f)
			var rep *recrawl.Report
			var err error
			peak := peakheap.Measure(func() { rep, err = f.eng.Run(context.Background(), src) })
			t.Logf("gzip bomb (%s) of %d MiB inflated: peak heap %.1f MiB", tc.name, mib, float64(peak)/(1<<20))
			tc.check(t, f, rep, err, failures)
			requireRequests(t, f.site, rep, false)
			require.Less(t, peak, tc.limit)
		})
	}
}

// A robots.txt of 10 MB: only its first robots.MaxSize bytes are read, and
// the run goes on under the rules they hold.
func TestPeakHeapHugeRobots(t *testing.T) {
	f := newFixture(t, testsite.Options{Pages: 3}, recrawl.Config{})
	const lines = 10_000_000 / 20
	f.site.Generate("/robots.txt", "text/plain; charset=utf-8", "User-agent: *\nDisallow: "+f.site.Paths()[0]+"\n", lines,
		func(i int) string { return fmt.Sprintf("Disallow: /x/%08d\n", i) }, "")
	var rep *recrawl.Report
	peak := peakheap.Measure(func() { rep = f.run() })
	var sent int
	for _, r := range f.site.Requests() {
		if r.Path == "/robots.txt" {
			sent = r.Bytes
		}
	}
	t.Logf("robots.txt of %.1f MB: peak heap %.1f MiB", float64(lines*20)/1e6, float64(peak)/(1<<20))
	require.Equal(t, 2, rep.New)
	require.Equal(t, 1, rep.Skipped[recrawl.SkipRobots], "the rule at the top of the file applies")
	require.Less(t, sent, 16<<20)
	require.Less(t, peak, uint64(16<<20))
}

// A crawl whose start page holds a million links (49 MiB): the page is
// read once (WEB_MAX_BYTES raised to let it in), its links streamed from
// the extraction into the crawl's bounded queue, and the peak heap stays
// a small multiple of the body (most of it the extraction of the page,
// package extract, then the list of its links the engine keeps).
func TestPeakHeapMillionLinkPage(t *testing.T) {
	if testing.Short() || raceEnabled {
		t.Skip("crawls a 49 MiB page of a million links (run without -race by .ci/run)")
	}
	const n = 1_000_000
	f := newFixture(t, testsite.Options{Pages: 1}, recrawl.Config{
		Limits: limits(func(l *recrawl.Limits) { l.MaxBytes = 128 << 20; l.MaxPages = 3 }),
	})
	start := f.site.HugeLinks("/docs/many.html", n)
	f.src = discover.Crawl{URL: start}
	var rep *recrawl.Report
	var err error
	peak := peakheap.Measure(func() { rep, err = f.eng.Run(context.Background(), f.src) })
	var body int
	for _, r := range f.site.Requests() {
		if r.Path == "/docs/many.html" {
			body = r.Bytes
		}
	}
	t.Logf("crawl of a page of %d links (%.1f MiB): peak heap %.0f MiB, %.1f× its body", n, float64(body)/(1<<20), float64(peak)/(1<<20), float64(peak)/float64(body))
	require.NoError(t, err)
	requireRequests(t, f.site, rep, false)
	require.Equal(t, recrawl.StopMaxPages, rep.StoppedBy)
	require.Greater(t, body, 45<<20)
	require.Less(t, peak, uint64(12*body))
}

// An alerts file that a killed process left with a torn last line: the
// next engine's alert.JSONL sink, on the file opened again for appending,
// writes every alert on a line of its own, readable; the torn line stays
// one line that readers skip.
func TestAlertsAfterATornLineOfAKilledProcess(t *testing.T) {
	path := filepath.Join(t.TempDir(), "alerts.jsonl")
	require.NoError(t, os.WriteFile(path, []byte(`{"id":"0123","url":"https://x.test/a","kind":"chan`), 0o644))
	af, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0o644)
	require.NoError(t, err)
	t.Cleanup(func() { af.Close() })
	f := newFixture(t, testsite.Options{Pages: 3}, recrawl.Config{})
	f.eng = mustEngine(t, recrawl.Config{State: f.state, Clock: f.clk, HTTPClient: f.site.Client(), Limits: limits(func(*recrawl.Limits) {}),
		Alerts: alert.JSONL(af), AlertOnNew: true})
	rep := f.run()
	require.Equal(t, 3, rep.New)
	require.Equal(t, 3, rep.AlertsDelivered)
	got := readAlerts(t, path) // fails on an alert glued to the torn line
	require.Len(t, got, 3, "every alert reads back")
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	require.Equal(t, 4, strings.Count(string(data), "\n"), "the torn line, then one line per alert")
}
