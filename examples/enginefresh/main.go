// Command enginefresh measures schedulers through the real Engine, not the
// simulator: a loopback site (internal/testsite) crawled on a fake clock
// at a fixed cadence for a warm-up and then a measured period, once with
// the engine's default scheduler and once with schedule.DefaultHalving.
// With -mix A (the default) its pages change as Poisson processes of the
// simulator's mix A (40% of them with a Last-Modified, no sitemap
// lastmod). With -mix R, R-honest or R-generated they are the simulator's
// world of that mix (sim.MixR: sections of the site, by URL path, that
// release in bursts rewriting 10–60% of their pages at once, and pages
// that also change alone), behind a sitemap with no lastmod, honest
// lastmods, or the generation time on every URL. It prints, per policy,
// the time-averaged freshness of the stored copies over the measured
// period (a page is fresh from a fetch until its next change), the page
// requests the site answered then and, for mix R, the release staleness:
// the page-hours pages stayed stale after a release changed them.
//
//	go run ./examples/enginefresh -pages 1000 -warmup 60 -days 60 -cadence 24h
//	go run ./examples/enginefresh -mix R -pages 1000 -warmup 60 -days 60 -cadence 6h
//
// Everything runs on loopback and a virtual clock; a run of 1,000 pages over
// 120 days takes a few minutes of CPU.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/recrawl/recrawl"
	"github.com/recrawl/recrawl/clock"
	"github.com/recrawl/recrawl/crawlstate/sqlite"
	"github.com/recrawl/recrawl/discover"
	"github.com/recrawl/recrawl/internal/testsite"
	"github.com/recrawl/recrawl/schedule"
	"github.com/recrawl/recrawl/schedule/sim"
)

func main() {
	if err := run(os.Args[1:], os.Stdout); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return
		}
		fmt.Fprintln(os.Stderr, "enginefresh:", err)
		os.Exit(2)
	}
}

// Result is one policy's measurement.
type Result struct {
	Policy    string  `json:"policy"`
	Mix       string  `json:"mix,omitempty"` // "" for mix A
	Cadence   string  `json:"cadence"`
	Pages     int     `json:"pages"`
	Seed      uint64  `json:"seed"`
	Freshness float64 `json:"freshness"`
	Fetches   int     `json:"fetches"`
	VsHalving float64 `json:"vs_halving"`
	FetchRate float64 `json:"fetches_vs_halving"`
	// ReleaseStale is the page-hours pages stayed stale after a release
	// changed them (mix R), and ReleaseVsHalving its share of Halving's.
	ReleaseStale     float64 `json:"release_stale_h,omitempty"`
	ReleaseVsHalving float64 `json:"release_vs_halving,omitempty"`
}

func run(args []string, out io.Writer) error {
	fs := flag.NewFlagSet("enginefresh", flag.ContinueOnError)
	pages := fs.Int("pages", 1000, "pages on the site")
	warmup := fs.Int("warmup", 60, "days crawled before measurement starts")
	days := fs.Int("days", 60, "measured days")
	cadence := fs.Duration("cadence", 24*time.Hour, "time between runs")
	seed := fs.Uint64("seed", 1, "seed of the change times")
	table := fs.String("table", "", "print the Markdown table of a file of -json lines of release mixes (halving and default per mix and cadence), and run nothing")
	mixName := fs.String("mix", "A", "A (Poisson pages, no sitemap lastmod), or R, R-honest, R-generated (sections releasing in bursts, behind no lastmod, honest lastmods, generated lastmods)")
	asJSON := fs.Bool("json", false, "one JSON object per line and policy")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *table != "" {
		return writeTable(out, *table)
	}
	if *pages < 1 || *warmup < 0 || *days < 1 || *cadence < time.Minute {
		return errors.New("need -pages >= 1, -warmup >= 0, -days >= 1 and -cadence >= 1m")
	}
	dir, err := os.MkdirTemp("", "enginefresh")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	w := world{pages: *pages, warmup: time.Duration(*warmup) * schedule.Day, days: time.Duration(*days) * schedule.Day, cadence: *cadence, seed: *seed}
	if m := strings.ToUpper(*mixName); m != "A" {
		mix, err := sim.MixByName(*mixName)
		if err != nil || mix.Releases == nil {
			return fmt.Errorf("-mix %s: use A, R, R-honest or R-generated", *mixName)
		}
		w.mix = &mix
	}
	base, err := w.measure(filepath.Join(dir, "halving.db"), schedule.DefaultHalving)
	if err != nil {
		return err
	}
	def, err := w.measure(filepath.Join(dir, "default.db"), nil)
	if err != nil {
		return err
	}
	base.Policy, def.Policy = "halving", "default"
	for _, r := range []*Result{&base, &def} {
		r.Cadence, r.Pages, r.Seed = cadence.String(), *pages, *seed
		if w.mix != nil {
			r.Mix = w.mix.Name
			if base.ReleaseStale > 0 {
				r.ReleaseVsHalving = r.ReleaseStale / base.ReleaseStale
			}
		}
		if base.Freshness > 0 {
			r.VsHalving = r.Freshness/base.Freshness - 1
		}
		if base.Fetches > 0 {
			r.FetchRate = float64(r.Fetches) / float64(base.Fetches)
		}
		if *asJSON {
			if err := json.NewEncoder(out).Encode(r); err != nil {
				return err
			}
			continue
		}
		fmt.Fprintf(out, "%-8s runs every %v, %d pages: freshness %.4f (%+.1f%%), %d fetches (%.3f× Halving's)",
			r.Policy, *cadence, *pages, r.Freshness, 100*r.VsHalving, r.Fetches, r.FetchRate)
		if w.mix != nil {
			fmt.Fprintf(out, ", release staleness %.0f page-hours (%.2f× Halving's)", r.ReleaseStale, r.ReleaseVsHalving)
		}
		fmt.Fprintln(out)
	}
	return nil
}

type world struct {
	pages                 int
	warmup, days, cadence time.Duration
	seed                  uint64
	mix                   *sim.Mix // a mix with releases; nil: mix A's Poisson pages
}

// truth is the site's pages as they really are: each page's path ("" for
// the generated flat paths of mix A), change times (offsets from the
// start), which of them were releases, whether it sends Last-Modified and
// what its sitemap lists.
type truth struct {
	paths   []string
	changes [][]time.Duration
	release [][]bool
	lm      []bool
	sitemap []string
}

// truths draws the site: mix A's Poisson pages, or the simulator's world
// of the release mix (no births or deaths).
func (w world) truths() (truth, error) {
	if w.mix == nil {
		changes, lm := w.changes()
		return truth{changes: changes, lm: lm, release: make([][]bool, len(changes)), sitemap: make([]string, len(changes))}, nil
	}
	sw, err := sim.NewWorld(sim.Config{Mix: *w.mix, Pages: w.pages, Days: int(w.days / schedule.Day), Warmup: int(w.warmup / schedule.Day), Seed: w.seed, Cadence: w.cadence, Turnover: -1})
	if err != nil {
		return truth{}, err
	}
	var t truth
	for i := range sw.Pages() {
		p := sw.Truth(i)
		t.paths = append(t.paths, p.Path+".html")
		t.changes = append(t.changes, p.Changes)
		t.release = append(t.release, p.Release)
		t.lm = append(t.lm, p.LastModified)
		t.sitemap = append(t.sitemap, p.Sitemap)
	}
	return t, nil
}

// changes draws every page's change times (offsets from the start) from
// mix A's rates, and which pages send a Last-Modified.
func (w world) changes() ([][]time.Duration, []bool) {
	rng := rand.New(rand.NewPCG(w.seed, 0xf7e5))
	end := w.warmup + w.days
	out := make([][]time.Duration, w.pages)
	lm := make([]bool, w.pages)
	for i := range out {
		u := rng.Float64()
		rate := sim.MixA.Classes[len(sim.MixA.Classes)-1].Rate
		for _, c := range sim.MixA.Classes {
			if u < c.Share {
				rate = c.Rate
				break
			}
			u -= c.Share
		}
		lm[i] = rng.Float64() < sim.MixA.ReliableLastModified
		for at := exp(rng, rate); at <= end; at += exp(rng, rate) {
			out[i] = append(out[i], at)
		}
	}
	return out, lm
}

func exp(rng *rand.Rand, rate schedule.Rate) time.Duration {
	return max(time.Duration(rng.ExpFloat64()/float64(rate)*float64(schedule.Day)), time.Second)
}

type event struct {
	at   time.Duration
	page int
}

// measure crawls the world with s (nil: the engine's default) and returns
// freshness and fetches over the measured days.
func (w world) measure(path string, s schedule.Scheduler) (Result, error) {
	start := testsite.DefaultStart
	clk := clock.NewAutoFake(start)
	tr, err := w.truths()
	if err != nil {
		return Result{}, err
	}
	// A fixed host name: the URLs, and with them each revisit's jitter
	// (a hash of the URL), are the same on every run of the program.
	site := testsite.New(testsite.Options{Pages: w.pages, Paths: tr.paths, Clock: clk, NoLastMod: true, Host: "docs.example.test"})
	defer site.Close()
	paths := site.Paths()
	index := make(map[string]int, len(paths))
	for i, p := range paths {
		index[p] = i
	}
	changes := tr.changes
	var events []event
	for i, cs := range changes {
		site.Update(paths[i], func(p *testsite.Page) {
			p.LastMod = tr.lm[i]
			switch tr.sitemap[i] {
			case "honest":
				p.ListedLastMod = testsite.ListModified
			case "generated":
				p.ListedLastMod = testsite.ListGenerated
			default:
				p.ListedLastMod = testsite.ListNone
			}
		})
		for _, at := range cs {
			events = append(events, event{at, i})
		}
	}
	slices.SortFunc(events, func(a, b event) int { return int(a.at - b.at) })

	st, err := sqlite.Open(context.Background(), path)
	if err != nil {
		return Result{}, err
	}
	defer st.Close()
	limits := recrawl.DefaultLimits()
	limits.RequestDelay = 0
	limits.MaxPages = 0
	eng, err := recrawl.New(recrawl.Config{State: st, Clock: clk, Scheduler: s, Limits: &limits, HTTPClient: site.Client()})
	if err != nil {
		return Result{}, err
	}

	src := discover.Sitemap{URL: site.SitemapURL()}

	fetched := make([]time.Duration, w.pages) // last fetch, offset from start; -1: never
	for i := range fetched {
		fetched[i] = -1
	}
	next := make([]int, w.pages) // first change not seen by the stored copy
	var staleSum float64         // page-hours stale in the measured window
	var releaseSum float64       // of those, the stale periods a release began
	fetches := 0
	end := w.warmup + w.days
	stale := func(i int, upTo time.Duration) { // close page i's stale time up to upTo
		if fetched[i] < 0 {
			return
		}
		if next[i] < len(changes[i]) {
			since := max(changes[i][next[i]], w.warmup)
			if upTo > since {
				staleSum += (upTo - since).Hours()
				if tr.release[i] != nil && tr.release[i][next[i]] {
					releaseSum += (upTo - since).Hours()
				}
			}
		}
	}
	ev := 0
	for now := time.Duration(0); now <= end; now += w.cadence {
		for ev < len(events) && events[ev].at <= now {
			clk.Set(start.Add(events[ev].at))
			site.Edit(paths[events[ev].page])
			ev++
		}
		clk.Set(start.Add(now))
		site.ResetLog()
		if _, err := eng.Run(context.Background(), src); err != nil {
			return Result{}, fmt.Errorf("run at day %.2f: %w", now.Hours()/24, err)
		}
		for _, r := range site.PageRequests() {
			i, ok := index[r.Path]
			if !ok {
				continue
			}
			if now >= w.warmup {
				fetches++
			}
			stale(i, now)
			fetched[i] = now
			for next[i] < len(changes[i]) && changes[i][next[i]] <= now {
				next[i]++
			}
		}
	}
	for i := range fetched {
		stale(i, end)
	}
	live := float64(w.pages) * w.days.Hours()
	return Result{Freshness: 1 - staleSum/live, Fetches: fetches, ReleaseStale: releaseSum}, nil
}

// writeTable renders -json lines of the release mixes as a Markdown
// table: per mix and cadence, Halving's and the default's freshness, the
// default's gain and fetches against Halving's, and its release staleness
// as a share of Halving's.
func writeTable(out io.Writer, path string) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	type key struct{ mix, cadence string }
	var order []key
	got := map[key]map[string]Result{}
	dec := json.NewDecoder(f)
	for {
		var r Result
		if err := dec.Decode(&r); err == io.EOF {
			break
		} else if err != nil {
			return fmt.Errorf("%s: %w", path, err)
		}
		k := key{r.Mix, r.Cadence}
		if got[k] == nil {
			got[k] = map[string]Result{}
			order = append(order, k)
		}
		got[k][r.Policy] = r
	}
	if len(order) == 0 {
		return fmt.Errorf("%s: no results", path)
	}
	sitemaps := map[string]string{"R": "no lastmod", "R-honest": "honest lastmods", "R-generated": "generated lastmods"}
	fmt.Fprintln(out, "| sitemap | runs every | `Halving` fresh | default fresh | vs Halving | fetches vs Halving's | release staleness vs Halving's |")
	fmt.Fprintln(out, "|---|---|---|---|---|---|---|")
	for _, k := range order {
		h, d := got[k]["halving"], got[k]["default"]
		if h.Policy == "" || d.Policy == "" {
			return fmt.Errorf("%s: mix %s at %s lacks halving or default", path, k.mix, k.cadence)
		}
		name := sitemaps[k.mix]
		if name == "" {
			name = k.mix
		}
		c, err := time.ParseDuration(k.cadence)
		if err != nil {
			return fmt.Errorf("%s: %w", path, err)
		}
		every := c.String()
		if c%(24*time.Hour) == 0 {
			every = fmt.Sprintf("%d d", c/(24*time.Hour))
		} else if c%time.Hour == 0 {
			every = fmt.Sprintf("%d h", c/time.Hour)
		}
		fmt.Fprintf(out, "| %s | %s | %.3f | %.3f | %+.1f%% | %.3f | %.2f× |\n", name, every, h.Freshness, d.Freshness, 100*d.VsHalving, d.FetchRate, d.ReleaseVsHalving)
	}
	fmt.Fprintf(out, "\n%d pages, seed %d.\n", got[order[0]]["default"].Pages, got[order[0]]["default"].Seed)
	return nil
}
