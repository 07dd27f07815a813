// Command simulate compares revisit policies on a simulated site and
// prints a table: freshness, age, detection latency, fetches and deletions
// for Halving (the seeds' baseline, unconstrained), Nutch, Uniform and
// Optimal with estimated and with true change rates, all at Halving's
// fetch budget. Everything runs on a virtual clock; no network is used.
//
//	go run ./examples/simulate -mix A -seeds 10
package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
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
	if err := fs.Parse(args); err != nil {
		return err
	}
	mix, err := sim.MixByName(*mixName)
	if err != nil {
		return err
	}
	cfg := sim.Config{Mix: mix, Pages: *pages, Days: *days, Warmup: *warmup, Seed: *seed, Cadence: *cadence}
	start := time.Now()
	results, err := sim.Compare(cfg, *seeds, sim.Policies())
	if err != nil {
		return err
	}
	if mix.Name == "C" {
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
