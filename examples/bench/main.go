// Command bench measures recrawl against the crawlers a team would write
// instead, side by side in one process, on one loopback documentation site
// (internal/testsite with DocsChrome: 20–60 KB pages, ETags on most pages,
// Last-Modified on all, a sitemap with lastmod), at the same concurrency:
//
//	go run ./examples/bench -pages 10000
//
// Scenarios, in the order they run each round:
//
//	net/http         bare GET of every page, body read and dropped
//	net/http-304     bare conditional GET of every page with the validators
//	                 the net/http row got (all 304s): the floor of a
//	                 revalidation, for the all-due row
//	colly            colly/v2 visiting every page, reading its body
//	colly+md         colly/v2 plus html-to-markdown v2 on every whole body
//	cold             recrawl's first run over an empty state
//	nothing-due      recrawl again at once: no row is due
//	all-due          every row due (a year later), nothing changed: 304s
//	all-due-edits    every row due after 2% edits and 1% volatile-only edits
//	lastmod          after the same amount of edits, rows not due by their
//	                 interval: only the rows whose sitemap lastmod moved
//	                 (TrustHint: every moved row fetched at once)
//	pipeline-cold    first run with the pipeline (hashing embedder, memory
//	                 index)
//	pipeline-sqlitevec  the same with index/sqlitevec in the state's SQLite
//	                 file (needs -tags sqlite_fts5; left out without), then
//	                 -queries hybrid and vector queries over what it indexed
//
// With -workers 1,2,4 it measures instead how a run scales with the
// engines that share a source's State (-state postgres, the default, or
// memory): for each count, a fresh site and State, the engines run the
// source together cold and then with every page due; pages per second and
// the ratio against one worker (see workers.go):
//
//	go run ./examples/bench -workers 1,2,4 -state postgres -pages 5000
//
// Each round starts a fresh site and fresh states. The table shows the
// median of the rounds: requests and body bytes the site served, wall time,
// process CPU time (the site's serving is included in every row: the
// net/http row shows that floor), pages per second, the peak live heap
// (as marked by the GCs during the scenario) above the live heap at its
// start, and wall time against colly and colly+md.
// -json prints the same as JSON, with every round; -profile DIR writes CPU
// and heap profiles (pprof) of the recrawl scenarios of the first round.
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"runtime"
	"runtime/metrics"
	"runtime/pprof"
	"runtime/trace"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"text/tabwriter"
	"time"

	htmltomarkdown "github.com/JohannesKaufmann/html-to-markdown/v2"
	"github.com/gocolly/colly/v2"

	"github.com/recrawl/recrawl"
	"github.com/recrawl/recrawl/clock"
	"github.com/recrawl/recrawl/crawlstate"
	"github.com/recrawl/recrawl/crawlstate/sqlite"
	"github.com/recrawl/recrawl/discover"
	"github.com/recrawl/recrawl/embed"
	"github.com/recrawl/recrawl/index"
	"github.com/recrawl/recrawl/index/sqlitevec"
	"github.com/recrawl/recrawl/internal/cputime"
	"github.com/recrawl/recrawl/internal/testsite"
)

func main() {
	var o options
	flag.IntVar(&o.Pages, "pages", 10000, "pages on the site")
	flag.IntVar(&o.Rounds, "rounds", 3, "rounds; the table shows medians")
	flag.IntVar(&o.Concurrency, "concurrency", 8, "parallel requests, the same for every crawler")
	flag.IntVar(&o.Words, "words", 2000, "median words of article text per page")
	flag.BoolVar(&o.JSON, "json", false, "print JSON instead of the table")
	flag.StringVar(&o.Profile, "profile", "", "directory for pprof CPU and heap profiles and execution traces of the recrawl scenarios (first round)")
	flag.StringVar(&o.Only, "only", "", "comma-separated scenarios to run (default all)")
	flag.IntVar(&o.Queries, "queries", 300, "pipeline-sqlitevec: timed queries of each kind")
	var wo workersOptions
	flag.StringVar(&wo.Workers, "workers", "", "measure engines sharing a source instead: comma-separated worker counts, e.g. 1,2,4")
	flag.StringVar(&wo.State, "state", "postgres", "-workers: the shared State, postgres or memory")
	flag.StringVar(&wo.DSN, "dsn", "", "-workers -state postgres: the database (default $RECRAWL_TEST_POSTGRES_DSN)")
	flag.DurationVar(&wo.Latency, "latency", 5*time.Millisecond, "-workers: how long the site takes to answer each request")
	flag.Parse()
	var res tabler
	var err error
	if wo.Workers != "" {
		res, err = runWorkers(context.Background(), o, wo)
	} else {
		res, err = run(context.Background(), o)
	}
	if err == nil {
		if o.JSON {
			enc := json.NewEncoder(os.Stdout)
			enc.SetIndent("", "  ")
			err = enc.Encode(res)
		} else {
			err = res.table(os.Stdout)
		}
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
		os.Exit(1)
	}
}

// tabler is a benchmark's result: printed as a table, or as JSON.
type tabler interface{ table(io.Writer) error }

type options struct {
	Pages, Rounds, Concurrency, Words int
	Queries                           int
	JSON                              bool
	Profile                           string
	Only                              string
}

// The scenarios, in running order.
const (
	scBare         = "net/http"
	scBare304      = "net/http-304"
	scColly        = "colly"
	scCollyMD      = "colly+md"
	scCold         = "cold"
	scNothingDue   = "nothing-due"
	scAllDue       = "all-due"
	scAllDueEdits  = "all-due-edits"
	scLastmod      = "lastmod"
	scPipelineCold = "pipeline-cold"
	// scPipelineSQLite is pipeline-cold with index/sqlitevec in the state's
	// file, then queries over it (see sqlitevec.go).
	scPipelineSQLite = "pipeline-sqlitevec"
)

var scenarios = []string{scBare, scBare304, scColly, scCollyMD, scCold, scNothingDue, scAllDue, scAllDueEdits, scLastmod, scPipelineCold, scPipelineSQLite}

// Measure is one scenario in one round.
type Measure struct {
	Requests int     `json:"requests"`  // requests the site answered (robots.txt and sitemaps included)
	Bytes    int64   `json:"bytes"`     // body bytes the site sent
	Pages    int     `json:"pages"`     // pages the crawler handled (fetched, or answered 304)
	WallSec  float64 `json:"wall_s"`    // elapsed time
	CPUSec   float64 `json:"cpu_s"`     // process CPU time, user + system
	PeakHeap uint64  `json:"peak_heap"` // peak live heap above the heap at the start, bytes
	// PeakAlloc is the peak of the heap's objects, live or not yet swept
	// (runtime.MemStats.HeapAlloc), above the live heap at the start:
	// what the process held, garbage included.
	PeakAlloc uint64 `json:"peak_alloc"`
	Changed   int    `json:"changed"`   // recrawl: pages new or changed
	Vectors   int    `json:"vectors"`   // pipeline: vectors in the index
	VecBytes  int64  `json:"vec_bytes"` // pipeline: raw float32 bytes of those vectors
	Scheduled int    `json:"scheduled"` // recrawl: rows due at the start
	// Queries are pipeline-sqlitevec's query figures.
	Queries *Queries `json:"queries,omitempty"`
}

// Row is a scenario's medians over the rounds.
type Row struct {
	Scenario    string    `json:"scenario"`
	Median      Measure   `json:"median"`
	PagesPerSec float64   `json:"pages_per_s"`
	VsColly     float64   `json:"wall_vs_colly"`    // wall / colly's wall
	VsCollyMD   float64   `json:"wall_vs_colly_md"` // wall / colly+md's wall
	Rounds      []Measure `json:"rounds"`
}

// Result is the whole benchmark.
type Result struct {
	Pages       int     `json:"pages"`
	Rounds      int     `json:"rounds"`
	Concurrency int     `json:"concurrency"`
	GOMAXPROCS  int     `json:"gomaxprocs"`
	CPUs        int     `json:"cpus"`
	GoVersion   string  `json:"go_version"`
	MeanPageKB  float64 `json:"mean_page_kb"`
	Rows        []Row   `json:"rows"`
}

func run(ctx context.Context, o options) (*Result, error) {
	if o.Pages <= 0 || o.Rounds <= 0 || o.Concurrency <= 0 {
		return nil, fmt.Errorf("-pages, -rounds and -concurrency must be positive")
	}
	if o.Queries <= 0 {
		o.Queries = 300
	}
	only := map[string]bool{}
	for _, s := range strings.Split(o.Only, ",") {
		if s = strings.TrimSpace(s); s != "" {
			if !slices.Contains(scenarios, s) {
				return nil, fmt.Errorf("-only: unknown scenario %q (have %s)", s, strings.Join(scenarios, ", "))
			}
			if s == scPipelineSQLite && !sqlitevecAvailable() {
				return nil, fmt.Errorf("-only %s: this build has no index/sqlitevec; build with -tags sqlite_fts5", s)
			}
			only[s] = true
		}
	}
	if o.Profile != "" {
		if err := os.MkdirAll(o.Profile, 0o755); err != nil {
			return nil, err
		}
	}
	per := map[string][]Measure{}
	res := &Result{Pages: o.Pages, Rounds: o.Rounds, Concurrency: o.Concurrency,
		GOMAXPROCS: runtime.GOMAXPROCS(0), CPUs: runtime.NumCPU(), GoVersion: runtime.Version()}
	for round := range o.Rounds {
		b := &bench{o: o, round: round, only: only}
		ms, err := b.runRound(ctx)
		if err != nil {
			return nil, fmt.Errorf("round %d: %w", round+1, err)
		}
		for k, m := range ms {
			per[k] = append(per[k], m)
		}
		res.MeanPageKB = b.meanKB
	}
	for _, sc := range scenarios {
		if ms := per[sc]; len(ms) > 0 {
			res.Rows = append(res.Rows, Row{Scenario: sc, Median: median(ms), Rounds: ms})
		}
	}
	var colly, collyMD float64
	for _, r := range res.Rows {
		switch r.Scenario {
		case scColly:
			colly = r.Median.WallSec
		case scCollyMD:
			collyMD = r.Median.WallSec
		}
	}
	for i := range res.Rows {
		r := &res.Rows[i]
		if r.Median.WallSec > 0 {
			r.PagesPerSec = float64(r.Median.Pages) / r.Median.WallSec
		}
		if colly > 0 {
			r.VsColly = r.Median.WallSec / colly
		}
		if collyMD > 0 {
			r.VsCollyMD = r.Median.WallSec / collyMD
		}
	}
	return res, nil
}

// median takes the median of every field on its own.
func median(ms []Measure) Measure {
	f := func(get func(Measure) float64) float64 {
		v := make([]float64, len(ms))
		for i, m := range ms {
			v[i] = get(m)
		}
		sort.Float64s(v)
		if len(v)%2 == 1 {
			return v[len(v)/2]
		}
		return (v[len(v)/2-1] + v[len(v)/2]) / 2
	}
	return Measure{
		Requests:  int(f(func(m Measure) float64 { return float64(m.Requests) })),
		Bytes:     int64(f(func(m Measure) float64 { return float64(m.Bytes) })),
		Pages:     int(f(func(m Measure) float64 { return float64(m.Pages) })),
		WallSec:   f(func(m Measure) float64 { return m.WallSec }),
		CPUSec:    f(func(m Measure) float64 { return m.CPUSec }),
		PeakHeap:  uint64(f(func(m Measure) float64 { return float64(m.PeakHeap) })),
		Changed:   int(f(func(m Measure) float64 { return float64(m.Changed) })),
		Vectors:   int(f(func(m Measure) float64 { return float64(m.Vectors) })),
		VecBytes:  int64(f(func(m Measure) float64 { return float64(m.VecBytes) })),
		Scheduled: int(f(func(m Measure) float64 { return float64(m.Scheduled) })),
		PeakAlloc: uint64(f(func(m Measure) float64 { return float64(m.PeakAlloc) })),
		Queries:   medianQueries(ms, f),
	}
}

// medianQueries is the median of each query figure (nil without any).
func medianQueries(ms []Measure, f func(func(Measure) float64) float64) *Queries {
	if ms[0].Queries == nil {
		return nil
	}
	q := func(get func(*Queries) float64) float64 {
		return f(func(m Measure) float64 { return get(m.Queries) })
	}
	return &Queries{
		Queries:     ms[0].Queries.Queries,
		RecallOf:    ms[0].Queries.RecallOf,
		SearchP50MS: q(func(q *Queries) float64 { return q.SearchP50MS }),
		SearchP99MS: q(func(q *Queries) float64 { return q.SearchP99MS }),
		QueryP50MS:  q(func(q *Queries) float64 { return q.QueryP50MS }),
		QueryP99MS:  q(func(q *Queries) float64 { return q.QueryP99MS }),
		Recall10:    q(func(q *Queries) float64 { return q.Recall10 }),
		FileBytes:   int64(q(func(q *Queries) float64 { return float64(q.FileBytes) })),
	}
}

// bench is one round.
type bench struct {
	o      options
	round  int
	only   map[string]bool
	site   *testsite.Site
	urls   []string
	dir    string
	meanKB float64

	// pipeline-sqlitevec's index, open for its queries.
	vecIndex *sqlitevec.Index
	vecPath  string
	vecEmbed embed.Embedder
}

func (b *bench) want(sc string) bool {
	if len(b.only) == 0 {
		return sc != scPipelineSQLite || sqlitevecAvailable()
	}
	return b.only[sc]
}

func (b *bench) runRound(ctx context.Context) (map[string]Measure, error) {
	b.site = testsite.New(testsite.Options{Pages: b.o.Pages, Words: b.o.Words, DocsChrome: true})
	defer b.site.Close()
	paths := b.site.Paths()
	// Most pages send an ETag; one in ten only Last-Modified.
	for i, p := range paths {
		if i%10 == 9 {
			b.site.Update(p, func(pg *testsite.Page) { pg.ETag = false })
		}
	}
	for set := 1; set <= 2; set++ {
		_, touched := b.changes(set)
		for _, p := range touched {
			b.site.Update(p, func(pg *testsite.Page) { pg.Volatile = true })
		}
	}
	b.urls = b.site.PageURLs()
	dir, err := os.MkdirTemp("", "recrawl-bench-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	b.dir = dir
	out := map[string]Measure{}

	var validators map[string]http.Header
	if b.want(scBare) || b.want(scBare304) {
		if out[scBare], err = b.measure(scBare, func() (Measure, error) {
			m, v, err := b.bare(nil)
			validators = v
			return m, err
		}); err != nil {
			return nil, err
		}
		b.meanKB = float64(out[scBare].Bytes) / float64(len(b.urls)) / 1024
		if !b.want(scBare) {
			delete(out, scBare)
		}
	}
	if b.want(scBare304) {
		if out[scBare304], err = b.measure(scBare304, func() (Measure, error) {
			m, _, err := b.bare(validators)
			return m, err
		}); err != nil {
			return nil, err
		}
	}
	if b.want(scColly) {
		if out[scColly], err = b.measure(scColly, func() (Measure, error) { return b.colly(false) }); err != nil {
			return nil, err
		}
	}
	if b.want(scCollyMD) {
		if out[scCollyMD], err = b.measure(scCollyMD, func() (Measure, error) { return b.colly(true) }); err != nil {
			return nil, err
		}
	}

	incremental := []string{scCold, scNothingDue, scAllDue, scAllDueEdits, scLastmod}
	if slices.ContainsFunc(incremental, b.want) {
		if err := b.incremental(out); err != nil {
			return nil, err
		}
	}
	if b.want(scPipelineCold) {
		if out[scPipelineCold], err = b.measure(scPipelineCold, b.pipelineCold); err != nil {
			return nil, err
		}
	}
	if b.want(scPipelineSQLite) {
		m, err := b.measure(scPipelineSQLite, b.pipelineSQLite)
		if err != nil {
			return nil, err
		}
		q, err := b.queries(ctx, b.o.Queries, min(b.o.Queries, 50))
		b.vecIndex.Close()
		if err != nil {
			return nil, fmt.Errorf("%s queries: %w", scPipelineSQLite, err)
		}
		m.Queries = &q
		out[scPipelineSQLite] = m
	}
	return out, nil
}

// measure runs f after a GC and reports its requests, bytes, wall time,
// CPU time and peak heap; f fills in what only it knows.
func (b *bench) measure(name string, f func() (Measure, error)) (Measure, error) {
	b.site.ResetLog()
	runtime.GC()
	base := heapLive()
	var peak, peakAlloc atomic.Uint64
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		t := time.NewTicker(5 * time.Millisecond)
		defer t.Stop()
		for {
			if h := heapLive(); h > peak.Load() {
				peak.Store(h)
			}
			if h := heapObjects(); h > peakAlloc.Load() {
				peakAlloc.Store(h)
			}
			select {
			case <-stop:
				return
			case <-t.C:
			}
		}
	}()
	var cpuFile, traceFile *os.File
	profile := b.o.Profile != "" && b.round == 0 && name != scBare && name != scBare304 && name != scColly && name != scCollyMD
	if profile {
		var err error
		if cpuFile, err = os.Create(filepath.Join(b.o.Profile, name+".cpu.pprof")); err != nil {
			return Measure{}, err
		}
		if err := pprof.StartCPUProfile(cpuFile); err != nil {
			return Measure{}, err
		}
		if traceFile, err = os.Create(filepath.Join(b.o.Profile, name+".trace")); err != nil {
			return Measure{}, err
		}
		if err := trace.Start(traceFile); err != nil {
			return Measure{}, err
		}
	}
	cpu0 := cputime.Process()
	t0 := time.Now()
	m, err := f()
	m.WallSec = time.Since(t0).Seconds()
	m.CPUSec = (cputime.Process() - cpu0).Seconds()
	close(stop)
	wg.Wait()
	if profile {
		pprof.StopCPUProfile()
		cpuFile.Close()
		trace.Stop()
		traceFile.Close()
		hf, herr := os.Create(filepath.Join(b.o.Profile, name+".heap.pprof"))
		if herr == nil {
			herr = pprof.Lookup("allocs").WriteTo(hf, 0)
			hf.Close()
		}
		if herr != nil && err == nil {
			err = herr
		}
	}
	if err != nil {
		return m, fmt.Errorf("%s: %w", name, err)
	}
	if p := peak.Load(); p > base {
		m.PeakHeap = p - base
	}
	if p := peakAlloc.Load(); p > base {
		m.PeakAlloc = p - base
	}
	for _, r := range b.site.Requests() {
		m.Requests++
		m.Bytes += int64(r.Bytes)
	}
	return m, nil
}

var heapSample = []metrics.Sample{{Name: "/gc/heap/live:bytes"}}

// heapObjects returns the bytes of heap objects, live or not yet swept:
// runtime.MemStats.HeapAlloc, without stopping the world.
func heapObjects() uint64 {
	s := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	metrics.Read(s)
	return s[0].Value.Uint64()
}

// heapLive returns the heap marked live by the latest GC, without stopping
// the world: sampled often, its peak is the most the run kept reachable.
func heapLive() uint64 {
	s := make([]metrics.Sample, 1)
	copy(s, heapSample)
	metrics.Read(s)
	return s[0].Value.Uint64()
}

// client is the HTTP client of the baselines: one keep-alive connection per
// parallel request.
func (b *bench) transport() *http.Transport {
	t := http.DefaultTransport.(*http.Transport).Clone()
	t.MaxIdleConnsPerHost = b.o.Concurrency
	t.MaxIdleConns = b.o.Concurrency * 2
	return t
}

// bare GETs every page with net/http, reading and dropping the body. With
// validators (a page's ETag and Last-Modified, by URL) it sends them as
// If-None-Match and If-Modified-Since and requires a 304; without, it
// returns the validators of every page.
func (b *bench) bare(validators map[string]http.Header) (Measure, map[string]http.Header, error) {
	client := &http.Client{Transport: b.transport(), Timeout: 30 * time.Second}
	defer client.CloseIdleConnections()
	jobs := make(chan string)
	var wg sync.WaitGroup
	var mu sync.Mutex
	var firstErr error
	got := map[string]http.Header{}
	for range b.o.Concurrency {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for u := range jobs {
				err := b.get(client, u, validators, got, &mu)
				if err != nil {
					mu.Lock()
					firstErr = cmpOr(firstErr, err)
					mu.Unlock()
				}
			}
		}()
	}
	for _, u := range b.urls {
		jobs <- u
	}
	close(jobs)
	wg.Wait()
	if validators != nil {
		got = nil
	}
	return Measure{Pages: len(b.urls)}, got, firstErr
}

// get is one request of bare.
func (b *bench) get(client *http.Client, u string, validators, got map[string]http.Header, mu *sync.Mutex) error {
	req, err := http.NewRequest(http.MethodGet, u, nil)
	if err != nil {
		return err
	}
	if validators != nil {
		v := validators[u]
		if et := v.Get("ETag"); et != "" {
			req.Header.Set("If-None-Match", et)
		}
		if lm := v.Get("Last-Modified"); lm != "" {
			req.Header.Set("If-Modified-Since", lm)
		}
	}
	resp, err := client.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if _, err := io.Copy(io.Discard, resp.Body); err != nil {
		return err
	}
	switch {
	case validators != nil && resp.StatusCode != http.StatusNotModified:
		return fmt.Errorf("%s: status %d, want 304", u, resp.StatusCode)
	case validators == nil:
		mu.Lock()
		got[u] = http.Header{"Etag": resp.Header.Values("ETag"), "Last-Modified": resp.Header.Values("Last-Modified")}
		mu.Unlock()
	}
	return nil
}

func cmpOr(a, b error) error {
	if a != nil {
		return a
	}
	return b
}

// colly visits every page with colly/v2, reading its body; toMarkdown also
// converts each whole body with html-to-markdown v2, as a naive Markdown
// crawler does.
func (b *bench) colly(toMarkdown bool) (Measure, error) {
	c := colly.NewCollector(colly.Async(true), colly.MaxBodySize(10<<20))
	tr := b.transport()
	defer tr.CloseIdleConnections()
	c.WithTransport(tr)
	if err := c.Limit(&colly.LimitRule{DomainGlob: "*", Parallelism: b.o.Concurrency}); err != nil {
		return Measure{}, err
	}
	var mu sync.Mutex
	var firstErr error
	var pages, mdBytes int
	c.OnResponse(func(r *colly.Response) {
		n := 0
		if toMarkdown {
			md, err := htmltomarkdown.ConvertString(string(r.Body))
			if err != nil {
				mu.Lock()
				firstErr = cmpOr(firstErr, err)
				mu.Unlock()
				return
			}
			n = len(md)
		}
		mu.Lock()
		pages++
		mdBytes += n
		mu.Unlock()
	})
	c.OnError(func(_ *colly.Response, err error) {
		mu.Lock()
		firstErr = cmpOr(firstErr, err)
		mu.Unlock()
	})
	for _, u := range b.urls {
		if err := c.Visit(u); err != nil {
			return Measure{}, err
		}
	}
	c.Wait()
	if firstErr == nil && pages != len(b.urls) {
		firstErr = fmt.Errorf("colly handled %d of %d pages", pages, len(b.urls))
	}
	if firstErr == nil && toMarkdown && mdBytes == 0 {
		firstErr = fmt.Errorf("html-to-markdown produced nothing")
	}
	return Measure{Pages: pages}, firstErr
}

// engine opens a state in the round's directory and an engine over it.
// statePath is the state file of the scenario name.
func (b *bench) statePath(name string) string { return filepath.Join(b.dir, name+".sqlite") }

func (b *bench) engine(name string, clk clock.Clock, mod func(*recrawl.Config)) (*recrawl.Engine, crawlstate.State, error) {
	st, err := sqlite.Open(context.Background(), b.statePath(name))
	if err != nil {
		return nil, nil, err
	}
	l := recrawl.DefaultLimits()
	l.RequestDelay, l.MaxPages = 0, 0
	l.HostConcurrency = b.o.Concurrency
	cfg := recrawl.Config{State: st, Clock: clk, Limits: &l, Workers: b.o.Concurrency,
		HTTPClient: &http.Client{Transport: b.transport()}}
	if mod != nil {
		mod(&cfg)
	}
	eng, err := recrawl.New(cfg)
	if err != nil {
		st.Close()
		return nil, nil, err
	}
	return eng, st, nil
}

// recrawlRun runs eng once and checks the outcome counts it must have.
func (b *bench) recrawlRun(eng *recrawl.Engine, check func(*recrawl.Report) error) (Measure, error) {
	rep, err := eng.Run(context.Background(), discover.Sitemap{URL: b.site.SitemapURL()})
	if err != nil {
		return Measure{}, err
	}
	if f := rep.FailedTotal(); f > 0 {
		return Measure{}, fmt.Errorf("%d pages failed: %v", f, rep.Failed)
	}
	if err := check(rep); err != nil {
		return Measure{}, err
	}
	return Measure{Pages: rep.Fetched, Changed: rep.New + rep.Changed, Scheduled: rep.Due}, nil
}

// incremental runs the recrawl scenarios on one state, in order: cold,
// nothing due, all due and unchanged, all due after edits, lastmod-driven
// after edits.
func (b *bench) incremental(out map[string]Measure) error {
	clk := clock.NewAutoFake(time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC))
	// TrustHint fetches every row whose lastmod moved, so the lastmod
	// scenario's work is fixed (learned trust would rank them within the
	// run's budget).
	eng, st, err := b.engine("incremental", clk, func(c *recrawl.Config) { c.SitemapTrust = recrawl.TrustHint })
	if err != nil {
		return err
	}
	defer st.Close()
	n := len(b.urls)
	expect := func(what string, got, want int) error {
		if got != want {
			return fmt.Errorf("%s: %d, want %d", what, got, want)
		}
		return nil
	}
	steps := []struct {
		name   string
		before func()
		check  func(*recrawl.Report) error
	}{
		{scCold, nil, func(r *recrawl.Report) error { return expect("new pages", r.New, n) }},
		{scNothingDue, func() { clk.Advance(time.Minute) }, func(r *recrawl.Report) error { return expect("fetched", r.Fetched, 0) }},
		{scAllDue, func() { clk.Advance(400 * 24 * time.Hour) }, func(r *recrawl.Report) error {
			return expect("unchanged", r.Unchanged, n)
		}},
		{scAllDueEdits, func() {
			b.edit(1)
			clk.Advance(400 * 24 * time.Hour)
		}, func(r *recrawl.Report) error {
			return expect("changed", r.Changed, n*2/100)
		}},
		{scLastmod, func() {
			b.edit(2)
			clk.Advance(time.Hour)
		}, func(r *recrawl.Report) error {
			return expect("fetched", r.Fetched, n*2/100+n/100)
		}},
	}
	// Each step starts from the state the ones before left: run up to the
	// last one wanted.
	last := 0
	for i, s := range steps {
		if b.want(s.name) {
			last = i
		}
	}
	for _, s := range steps[:last+1] {
		if s.before != nil {
			s.before()
		}
		m, err := b.measure(s.name, func() (Measure, error) { return b.recrawlRun(eng, s.check) })
		if err != nil {
			return err
		}
		if b.want(s.name) {
			out[s.name] = m
		}
	}
	return nil
}

// changes returns the pages edit changes for a set: 2% edited (new
// content) and 1% touched (a new revision, same content), spread over the
// site; sets 1 and 2 are disjoint.
func (b *bench) changes(set int) (edited, touched []string) {
	paths := b.site.Paths()
	n := len(paths)
	edits, touches := n*2/100, n/100
	stride := max(n/max(edits+touches, 1), 2)
	for i := set - 1; i < n && len(edited)+len(touched) < edits+touches; i += stride {
		if len(edited) < edits {
			edited = append(edited, paths[i])
		} else {
			touched = append(touched, paths[i])
		}
	}
	return edited, touched
}

// edit applies a set of changes. Touched pages carry a volatile block from
// the start (a render timestamp and a CSRF token), so what a touch moves
// is only volatile.
func (b *bench) edit(set int) {
	edited, touched := b.changes(set)
	for _, p := range edited {
		b.site.Edit(p)
	}
	for _, p := range touched {
		b.site.Touch(p)
	}
}

func (b *bench) pipelineCold() (Measure, error) {
	return b.pipeline("pipeline", func() (pipelineIndex, error) { return index.NewMemory(pipelineDims), nil })
}

// pipelineDims is the vector length of the pipeline scenarios' embedder.
const pipelineDims = 384

// pipelineIndex is what a pipeline scenario needs of its index.
type pipelineIndex interface {
	index.Writer
	Count(context.Context) (int, error)
}

// pipeline runs a first run with the pipeline into the index open
// returns, on the state of scenario name.
func (b *bench) pipeline(name string, open func() (pipelineIndex, error)) (Measure, error) {
	emb, err := embed.NewHashing(pipelineDims)
	if err != nil {
		return Measure{}, err
	}
	idx, err := open()
	if err != nil {
		return Measure{}, err
	}
	clk := clock.NewAutoFake(time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC))
	eng, st, err := b.engine(name, clk, func(c *recrawl.Config) { c.Embedder, c.Index = emb, idx })
	if err != nil {
		return Measure{}, err
	}
	defer st.Close()
	m, err := b.recrawlRun(eng, func(r *recrawl.Report) error {
		if r.New != len(b.urls) {
			return fmt.Errorf("new pages: %d, want %d", r.New, len(b.urls))
		}
		return nil
	})
	if err != nil {
		return m, err
	}
	m.Vectors, err = idx.Count(context.Background())
	m.VecBytes = int64(m.Vectors) * pipelineDims * 4
	return m, err
}

func (r *Result) table(w io.Writer) error {
	mean := "" // measured by the bare scenario only
	if r.MeanPageKB > 0 {
		mean = fmt.Sprintf(" (mean %.1f KB)", r.MeanPageKB)
	}
	fmt.Fprintf(w, "%d pages%s, concurrency %d, GOMAXPROCS %d, %s; medians of %d rounds\n\n",
		r.Pages, mean, r.Concurrency, r.GOMAXPROCS, r.GoVersion, r.Rounds)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "scenario\trequests\tMB\twall s\tCPU s\tCPU/page ms\tpages/s\tpeak heap MB\tvs colly\tvs colly+md\t")
	for _, row := range r.Rows {
		m := row.Median
		perPage := "–"
		if m.Pages > 0 {
			perPage = fmt.Sprintf("%.2f", m.CPUSec*1000/float64(m.Pages))
		}
		fmt.Fprintf(tw, "%s\t%d\t%.1f\t%.2f\t%.2f\t%s\t%.0f\t%.0f\t%s\t%s\t\n", row.Scenario, m.Requests, float64(m.Bytes)/1e6,
			m.WallSec, m.CPUSec, perPage, row.PagesPerSec, float64(m.PeakHeap)/(1<<20), ratio(row.VsColly), ratio(row.VsCollyMD))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	for _, row := range r.Rows {
		m := row.Median
		if (row.Scenario == scPipelineCold || row.Scenario == scPipelineSQLite) && m.Vectors > 0 {
			fmt.Fprintf(w, "\n%s: %d vectors, %.0f MB as raw float32; peak heap %.2f× that; heap objects (garbage included) peaked at %.0f MB\n",
				row.Scenario, m.Vectors, float64(m.VecBytes)/(1<<20), float64(m.PeakHeap)/float64(m.VecBytes), float64(m.PeakAlloc)/(1<<20))
		}
		if q := m.Queries; q != nil {
			fmt.Fprintf(w, "%s: %d queries over %d chunks (k 10): hybrid Search p50 %.1f ms, p99 %.1f ms; exact vector Query over %d queries p50 %.1f ms, p99 %.1f ms, recall@10 %.3f; file %.0f MB, %.0f bytes a chunk\n",
				row.Scenario, q.Queries, m.Vectors, q.SearchP50MS, q.SearchP99MS, q.RecallOf, q.QueryP50MS, q.QueryP99MS, q.Recall10,
				float64(q.FileBytes)/(1<<20), float64(q.FileBytes)/float64(m.Vectors))
		}
	}
	return nil
}

func ratio(v float64) string {
	if v == 0 {
		return "–"
	}
	return fmt.Sprintf("%.2f×", v)
}
