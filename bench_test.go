package recrawl_test

import (
	"context"
	"flag"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"runtime/pprof"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/recrawl/recrawl"
	"github.com/recrawl/recrawl/alert"
	"github.com/recrawl/recrawl/clock"
	"github.com/recrawl/recrawl/crawlstate"
	"github.com/recrawl/recrawl/discover"
	"github.com/recrawl/recrawl/embed"
	"github.com/recrawl/recrawl/index"
	"github.com/recrawl/recrawl/internal/cputime"
	"github.com/recrawl/recrawl/internal/testsite"
)

// BenchmarkPipeline runs the whole pipeline (fetch, extract, fingerprint,
// chunk, embed with the hashing embedder, index, commit, alert) over a
// 1,000-page site on loopback, from an empty state each iteration.
func BenchmarkPipeline(b *testing.B) {
	const pages = 1000
	clk := clock.NewAutoFake(start)
	site := testsite.New(testsite.Options{Pages: pages, Clock: clk, Words: 400})
	defer site.Close()
	emb, err := embed.NewHashing(384)
	if err != nil {
		b.Fatal(err)
	}
	var chunks int
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		b.StopTimer()
		st := openState(b, filepath.Join(b.TempDir(), "state.sqlite"))
		idx := index.NewMemory(384)
		l := recrawl.DefaultLimits()
		l.RequestDelay, l.MaxPages = 0, 0
		eng, err := recrawl.New(recrawl.Config{
			State: st, Clock: clk, Limits: &l, Workers: 4,
			Embedder: emb, Index: idx, Alerts: alert.Func(func(context.Context, alert.Alert) error { return nil }), AlertOnNew: true,
		})
		if err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
		rep, err := eng.Run(context.Background(), discover.Sitemap{URL: site.SitemapURL()})
		if err != nil {
			b.Fatal(err)
		}
		b.StopTimer()
		if rep.New != pages {
			b.Fatalf("new = %d", rep.New)
		}
		n, _ := idx.Count(context.Background())
		chunks += n
		st.Close()
		b.StartTimer()
	}
	secs := b.Elapsed().Seconds()
	b.ReportMetric(float64(pages*b.N)/secs, "pages/s")
	b.ReportMetric(float64(chunks)/secs, "chunks/s")
}

// notModifiedProfile names a file for a CPU profile of BenchmarkNotModified's
// timed runs alone (-cpuprofile would include the cold run that fills the
// state): go test . -run '^$' -bench NotModified -notmodified.cpuprofile f.
var notModifiedProfile = flag.String("notmodified.cpuprofile", "", "write a CPU profile of BenchmarkNotModified's 304 runs to this file")

// BenchmarkNotModified runs a whole run in which every row of a
// 2,000-page site is due and answers 304, over 8 parallel connections as
// examples/bench does: one iteration is one run. cpu-µs/304 is the
// process's CPU time (user + system) per 304, the loopback site's serving
// included; µs/304 is the wall time per 304. bare-cpu-µs/304 is the CPU of
// a bare net/http conditional GET of the same pages with the same
// validators over as many connections (client and site: the floor any
// crawler pays), measured in the same iteration outside the timer, and
// own-cpu-µs/304 the difference: recrawl's own work per 304.
func BenchmarkNotModified(b *testing.B) {
	const pages = 2000
	clk := clock.NewAutoFake(start)
	site := testsite.New(testsite.Options{Pages: pages, Clock: clk, Words: 400, DocsChrome: true})
	defer site.Close()
	st := openState(b, filepath.Join(b.TempDir(), "state.sqlite"))
	defer st.Close()
	l := recrawl.DefaultLimits()
	l.RequestDelay, l.MaxPages, l.HostConcurrency = 0, 0, 8
	eng, err := recrawl.New(recrawl.Config{State: st, Clock: clk, Limits: &l, Workers: 8})
	if err != nil {
		b.Fatal(err)
	}
	src := discover.Sitemap{URL: site.SitemapURL()}
	if rep, err := eng.Run(context.Background(), src); err != nil || rep.New != pages {
		b.Fatalf("cold run: %v, %+v", err, rep)
	}
	rows, err := st.Due(context.Background(), src.Name(), clk.Now().Add(400*24*time.Hour), crawlstate.Key{}, pages)
	if err != nil || len(rows) != pages {
		b.Fatalf("rows: %d, %v", len(rows), err)
	}
	var cpu, bare time.Duration
	if *notModifiedProfile != "" {
		pf, err := os.Create(*notModifiedProfile)
		if err != nil {
			b.Fatal(err)
		}
		defer pf.Close()
		if err := pprof.StartCPUProfile(pf); err != nil {
			b.Fatal(err)
		}
		defer pprof.StopCPUProfile()
	}
	b.ReportAllocs()
	for b.Loop() {
		b.StopTimer()
		c0 := cputime.Process()
		conditionalGETs(b, rows, 8)
		bare += cputime.Process() - c0
		clk.Advance(400 * 24 * time.Hour) // every row due
		b.StartTimer()
		c0 = cputime.Process()
		rep, err := eng.Run(context.Background(), src)
		cpu += cputime.Process() - c0
		if err != nil {
			b.Fatal(err)
		}
		if rep.NotModified != pages {
			b.Fatalf("304s = %d, want %d", rep.NotModified, pages)
		}
	}
	n := float64(pages * b.N)
	b.ReportMetric(float64(cpu.Microseconds())/n, "cpu-µs/304")
	b.ReportMetric(float64(bare.Microseconds())/n, "bare-cpu-µs/304")
	b.ReportMetric(float64((cpu-bare).Microseconds())/n, "own-cpu-µs/304")
	b.ReportMetric(float64(b.Elapsed().Microseconds())/n, "µs/304")
}

// conditionalGETs sends a bare net/http conditional GET for every row (its
// ETag and Last-Modified) over conns parallel connections and checks that
// each answers 304.
func conditionalGETs(b *testing.B, rows []crawlstate.Row, conns int) {
	b.Helper()
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.MaxIdleConnsPerHost, tr.MaxIdleConns = conns, 2*conns
	defer tr.CloseIdleConnections()
	client := &http.Client{Transport: tr, Timeout: 30 * time.Second}
	var next atomic.Int64
	var failed atomic.Value
	var wg sync.WaitGroup
	for range conns {
		wg.Go(func() {
			for i := int(next.Add(1) - 1); i < len(rows); i = int(next.Add(1) - 1) {
				req, err := http.NewRequest(http.MethodGet, rows[i].OriginalURL, nil)
				if err != nil {
					failed.Store(err.Error())
					return
				}
				if rows[i].ETag != "" {
					req.Header.Set("If-None-Match", rows[i].ETag)
				}
				if rows[i].LastModified != "" {
					req.Header.Set("If-Modified-Since", rows[i].LastModified)
				}
				resp, err := client.Do(req)
				if err != nil {
					failed.Store(err.Error())
					return
				}
				_, _ = io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				if resp.StatusCode != http.StatusNotModified {
					failed.Store(rows[i].OriginalURL + ": " + resp.Status)
					return
				}
			}
		})
	}
	wg.Wait()
	if msg, ok := failed.Load().(string); ok {
		b.Fatalf("bare conditional GET: %s", msg)
	}
}
