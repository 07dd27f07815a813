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
	mixName := fs.String("mix", "A", "page mix: A, B or C")
	seeds := fs.Int("seeds", 10, "number of worlds to average over")
	seed := fs.Uint64("seed", 1, "first seed")
	pages := fs.Int("pages", 10000, "pages at the start")
	days := fs.Int("days", 180, "measured days")
	warmup := fs.Int("warmup", 0, "days simulated before measurement starts")
	cadence := fs.Duration("cadence", time.Hour, "time between crawler runs")
	classes := fs.Bool("classes", false, "also print the per-class breakdown")
	asJSON := fs.Bool("json", false, "print one JSON object per line and policy instead of the table")
	only := fs.String("policies", "", "comma-separated policies to run (default all): "+strings.Join(sim.PolicyKeys(), ", ")+"; halving always runs first")
	if err := fs.Parse(args); err != nil {
		return err
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
}

func writeJSON(out io.Writer, cfg sim.Config, seeds int, results []sim.Result) error {
	enc := json.NewEncoder(out)
	ref := results[0]
	for _, r := range results {
		l := line{
			Policy: sim.Key(r.Policy), Name: r.Policy, Mix: cfg.Mix.Name, Cadence: cfg.Cadence.String(),
			Pages: cfg.Pages, Days: cfg.Days, Warmup: cfg.Warmup, Seeds: seeds, Seed: cfg.Seed,
			Freshness: r.Freshness, Fetches: r.Fetches, MeanAgeH: r.MeanAge.Hours(), Budget: float64(r.Budget),
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
