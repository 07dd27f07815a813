// Command simulate compares revisit policies on a simulated site and
// prints a table: freshness, age, detection latency, fetches and deletions
// for Halving (the seeds' baseline, unconstrained), Nutch, Uniform and
// Optimal with estimated and with true change rates, all at Halving's
// fetch budget. Everything runs on a virtual clock; no network is used.
//
//	go run ./examples/simulate -mix A -seeds 10
package main

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/recrawl/recrawl/schedule/sim"
)

func main() {
	if err := run(os.Args[1:], os.Stdout); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return
		}
		fmt.Fprintln(os.Stderr, "simulate:", err)
		os.Exit(2)
	}
}

func run(args []string, out io.Writer) error {
	fs := flag.NewFlagSet("simulate", flag.ContinueOnError)
	mixName := fs.String("mix", "A", "page mix: A, B, C or L (A's pages behind honest, generated and no sitemap lastmods)")
	seeds := fs.Int("seeds", 10, "number of worlds to average over")
	seed := fs.Uint64("seed", 1, "first seed")
	pages := fs.Int("pages", 10000, "pages at the start")
	days := fs.Int("days", 180, "measured days")
	warmup := fs.Int("warmup", 0, "days simulated before measurement starts")
	cadence := fs.Duration("cadence", time.Hour, "time between crawler runs")
	classes := fs.Bool("classes", false, "also print the per-class breakdown")
	sitemaps := fs.Bool("sitemaps", false, "also print the breakdown by sitemap source (mix L)")
	asJSON := fs.Bool("json", false, "print one JSON object per line and policy instead of the table")
	only := fs.String("policies", "", "comma-separated policies to run (default all): "+strings.Join(sim.PolicyKeys(), ", ")+"; halving always runs first")
	grid := fs.Bool("grid", false, "run the default (capped at Halving's fetches, and uncapped) against Halving on mixes A and B at every cadence of the README table (1h, 6h, 24h, 168h); one JSON line each")
	table := fs.String("table", "", "print the README's scheduler table (Markdown) from a file of -grid lines, and run nothing")
	releases := fs.Bool("releases", false, "run Halving, the previous default, the default and the release oracle on mix R (or -mix R-honest, R-generated) at every cadence of the README table; one JSON line each")
	releaseTable := fs.String("release-table", "", "print the README's release table (Markdown) from a file of -releases lines, and run nothing")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *table != "" {
		return writeTable(out, *table)
	}
	if *releaseTable != "" {
		return writeReleaseTable(out, *releaseTable)
	}
	if *releases {
		name := *mixName
		if strings.EqualFold(name, "A") {
			name = "R"
		}
		mix, err := sim.MixByName(name)
		if err != nil || mix.Releases == nil {
			return fmt.Errorf("-releases needs a mix with releases (R, R-honest, R-generated), not %q", *mixName)
		}
		for _, c := range gridCadences {
			cfg := sim.Config{Mix: mix, Pages: *pages, Days: *days, Warmup: *warmup, Seed: *seed, Cadence: c}
			res, err := sim.Compare(cfg, *seeds, []sim.Maker{sim.Halving, sim.DefaultPrevious, sim.Default, sim.ReleaseOracle})
			if err != nil {
				return err
			}
			if err := writeJSON(out, cfg, *seeds, res); err != nil {
				return err
			}
		}
		return nil
	}
	if *grid {
		for _, m := range []string{"A", "B"} {
			for _, c := range gridCadences {
				mix, _ := sim.MixByName(m)
				cfg := sim.Config{Mix: mix, Pages: *pages, Days: *days, Warmup: *warmup, Seed: *seed, Cadence: c}
				res, err := sim.Compare(cfg, *seeds, []sim.Maker{sim.Halving, sim.Default, sim.DefaultUncapped})
				if err != nil {
					return err
				}
				if err := writeJSON(out, cfg, *seeds, res); err != nil {
					return err
				}
			}
		}
		return nil
	}
	mix, err := sim.MixByName(*mixName)
	if err != nil {
		return err
	}
	makers := sim.Policies()
	if *only != "" {
		makers = []sim.Maker{sim.Halving}
		for _, k := range strings.Split(*only, ",") {
			k = strings.TrimSpace(k)
			if k == "halving" {
				continue
			}
			m, err := sim.PolicyByKey(k)
			if err != nil {
				return err
			}
			makers = append(makers, m)
		}
	}
	cfg := sim.Config{Mix: mix, Pages: *pages, Days: *days, Warmup: *warmup, Seed: *seed, Cadence: *cadence}
	start := time.Now()
	results, err := sim.Compare(cfg, *seeds, makers)
	if err != nil {
		return err
	}
	if *asJSON {
		return writeJSON(out, cfg, *seeds, results)
	}
	if mix.Name == "C" && *only == "" {
		// What the fingerprint prevents: the baseline comparing raw bytes.
		raw := cfg
		raw.RawHash = true
		r, err := sim.Compare(raw, *seeds, []sim.Maker{sim.Halving})
		if err != nil {
			return err
		}
		r[0].Policy = "Halving, raw bytes"
		results = append(results, r[0])
	}
	fmt.Fprintf(out, "mix %s, %d pages, %d days measured after %d days of warm-up, run every %v, seeds %d..%d (mean of %d)\n\n",
		mix.Name, *pages, *days, *warmup, *cadence, *seed, *seed+uint64(*seeds)-1, *seeds)
	if err := sim.WriteTable(out, results); err != nil {
		return err
	}
	if *classes {
		fmt.Fprintln(out)
		if err := sim.WriteClasses(out, results); err != nil {
			return err
		}
	}
	if *sitemaps {
		fmt.Fprintln(out)
		if err := sim.WriteSitemaps(out, results); err != nil {
			return err
		}
	}
	fmt.Fprintf(out, "\n(%.1fs)\n", time.Since(start).Seconds())
	return nil
}

// line is one policy's result as a JSON line.
type line struct {
	Policy    string  `json:"policy"`
	Name      string  `json:"name"`
	Mix       string  `json:"mix"`
	Cadence   string  `json:"cadence"`
	Pages     int     `json:"pages"`
	Days      int     `json:"days"`
	Warmup    int     `json:"warmup"`
	Seeds     int     `json:"seeds"`
	Seed      uint64  `json:"seed"`
	Freshness float64 `json:"freshness"`
	VsHalving float64 `json:"vs_halving"`
	Fetches   float64 `json:"fetches"`
	FetchRate float64 `json:"fetches_vs_halving"`
	MeanAgeH  float64 `json:"mean_age_h"`
	Budget    float64 `json:"budget_per_day"`
	// ReleaseStaleH is the release staleness (mix R): page-hours stale
	// after release events.
	ReleaseStaleH float64 `json:"release_stale_h,omitempty"`
}

func writeJSON(out io.Writer, cfg sim.Config, seeds int, results []sim.Result) error {
	enc := json.NewEncoder(out)
	ref := results[0]
	for _, r := range results {
		l := line{
			Policy: sim.Key(r.Policy), Name: r.Policy, Mix: cfg.Mix.Name, Cadence: cfg.Cadence.String(),
			Pages: cfg.Pages, Days: cfg.Days, Warmup: cfg.Warmup, Seeds: seeds, Seed: cfg.Seed,
			Freshness: r.Freshness, Fetches: r.Fetches, MeanAgeH: r.MeanAge.Hours(), Budget: float64(r.Budget),
			ReleaseStaleH: r.ReleaseStale,
		}
		if ref.Freshness > 0 {
			l.VsHalving = r.Freshness/ref.Freshness - 1
		}
		if ref.Fetches > 0 {
			l.FetchRate = r.Fetches / ref.Fetches
		}
		if err := enc.Encode(l); err != nil {
			return err
		}
	}
	return nil
}

// gridCadences are the cadences of the README's scheduler table.
var gridCadences = []time.Duration{time.Hour, 6 * time.Hour, 24 * time.Hour, 7 * 24 * time.Hour}

// writeTable renders the README's scheduler table from -grid lines: per
// mix and cadence, Halving's and the default's freshness, the gain and the
// default's fetches against Halving's; and, when the lines have it, what
// the default spends and gains when the simulator does not cap it at
// Halving's fetches.
func writeTable(out io.Writer, path string) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	type key struct{ mix, cadence string }
	var order []key
	got := map[key]map[string]line{}
	dec := json.NewDecoder(f)
	var head line
	for {
		var l line
		if err := dec.Decode(&l); err == io.EOF {
			break
		} else if err != nil {
			return fmt.Errorf("%s: %w", path, err)
		}
		k := key{l.Mix, l.Cadence}
		if got[k] == nil {
			got[k] = map[string]line{}
			order = append(order, k)
		}
		got[k][l.Policy] = l
		head = l
	}
	if len(order) == 0 {
		return fmt.Errorf("%s: no results", path)
	}
	uncapped := true
	for _, k := range order {
		_, ok := got[k]["default-uncapped"]
		uncapped = uncapped && ok
	}
	if uncapped {
		fmt.Fprintf(out, "| mix | runs every | `Halving` fresh | default fresh | vs Halving | default's fetches vs Halving's | uncapped: vs Halving | uncapped: fetches vs Halving's |\n")
		fmt.Fprintf(out, "|---|---|---|---|---|---|---|---|\n")
	} else {
		fmt.Fprintf(out, "| mix | runs every | `Halving` fresh | default fresh | vs Halving | default's fetches vs Halving's |\n")
		fmt.Fprintf(out, "|---|---|---|---|---|---|\n")
	}
	for _, k := range order {
		h, okH := got[k]["halving"]
		d, okD := got[k]["default"]
		if !okH || !okD {
			return fmt.Errorf("%s: mix %s at %s lacks halving or default", path, k.mix, k.cadence)
		}
		c, err := time.ParseDuration(k.cadence)
		if err != nil {
			return fmt.Errorf("%s: %w", path, err)
		}
		fmt.Fprintf(out, "| %s | %s | %.3f | %.3f | %+.1f%% | %.3f |", k.mix, cadenceName(c), h.Freshness, d.Freshness, 100*d.VsHalving, d.FetchRate)
		if uncapped {
			u := got[k]["default-uncapped"]
			fmt.Fprintf(out, " %+.1f%% | %.3f |", 100*u.VsHalving, u.FetchRate)
		}
		fmt.Fprintln(out)
	}
	fmt.Fprintf(out, "\n%d pages, %d days measured after %d days of warm-up, mean of %d seeds.\n", head.Pages, head.Days, head.Warmup, head.Seeds)
	return nil
}

func cadenceName(c time.Duration) string {
	switch {
	case c%(24*time.Hour) == 0 && c >= 24*time.Hour:
		return fmt.Sprintf("%d d", c/(24*time.Hour))
	case c%time.Hour == 0:
		return fmt.Sprintf("%d h", c/time.Hour)
	}
	return c.String()
}

// writeReleaseTable renders the README's release table from -releases
// lines: per cadence, Halving's, the previous default's and the default's
// freshness, the default's gain over Halving at its fetches, and the
// release staleness of the default against the previous default's; the
// release oracle's freshness bounds what learning co-change can reach.
func writeReleaseTable(out io.Writer, path string) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	var order []string
	got := map[string]map[string]line{}
	dec := json.NewDecoder(f)
	var head line
	for {
		var l line
		if err := dec.Decode(&l); err == io.EOF {
			break
		} else if err != nil {
			return fmt.Errorf("%s: %w", path, err)
		}
		if got[l.Cadence] == nil {
			got[l.Cadence] = map[string]line{}
			order = append(order, l.Cadence)
		}
		got[l.Cadence][l.Policy] = l
		head = l
	}
	if len(order) == 0 {
		return fmt.Errorf("%s: no results", path)
	}
	fmt.Fprintf(out, "| runs every | `Halving` fresh | previous default | default | vs Halving | fetches vs Halving's | release staleness vs previous default | release oracle: vs Halving |\n")
	fmt.Fprintf(out, "|---|---|---|---|---|---|---|---|\n")
	for _, c := range order {
		h, p, d, o := got[c]["halving"], got[c]["default-previous"], got[c]["default"], got[c]["release-oracle"]
		if h.Policy == "" || p.Policy == "" || d.Policy == "" || o.Policy == "" {
			return fmt.Errorf("%s: cadence %s lacks a policy", path, c)
		}
		cd, err := time.ParseDuration(c)
		if err != nil {
			return fmt.Errorf("%s: %w", path, err)
		}
		rel := 0.0
		if p.ReleaseStaleH > 0 {
			rel = d.ReleaseStaleH / p.ReleaseStaleH
		}
		fmt.Fprintf(out, "| %s | %.3f | %.3f | %.3f | %+.1f%% | %.3f | %.2f× | %+.1f%% |\n", cadenceName(cd), h.Freshness, p.Freshness, d.Freshness, 100*d.VsHalving, d.FetchRate, rel, 100*o.VsHalving)
	}
	fmt.Fprintf(out, "\nmix %s, %d pages, %d days measured after %d days of warm-up, mean of %d seeds.\n", head.Mix, head.Pages, head.Days, head.Warmup, head.Seeds)
	return nil
}
