package schedule_test

import (
	"fmt"
	"time"

	"github.com/recrawl/recrawl/schedule"
)

// Irregular checks: three quiet days, then a change found after two more.
func ExampleEstimateIrregular() {
	checks := []schedule.Check{
		{Elapsed: 24 * time.Hour},
		{Elapsed: 48 * time.Hour},
		{Elapsed: 48 * time.Hour, Changed: true},
		{Elapsed: 12 * time.Hour},
	}
	r := schedule.EstimateIrregular(checks, schedule.Limits{})
	fmt.Printf("%.3f changes a day, about once every %v\n", float64(r), r.Interval().Round(time.Hour))
	// Output: 0.312 changes a day, about once every 77h0m0s
}

// Twenty quiet daily checks: the weaker the prior, the lower the estimate
// of a page that has not changed.
func ExampleEstimateIrregularWeighted() {
	checks := make([]schedule.Check, 20)
	for i := range checks {
		checks[i] = schedule.Check{Elapsed: 24 * time.Hour}
	}
	for _, w := range []float64{1, schedule.DefaultPriorWeight} {
		r := schedule.EstimateIrregularWeighted(checks, schedule.Limits{}, w)
		fmt.Printf("prior weight %.1f: %.4f changes a day\n", w, float64(r))
	}
	// Output:
	// prior weight 1.0: 0.0465 changes a day
	// prior weight 0.3: 0.0147 changes a day
}

// Ten daily checks, four of which found a change.
func ExampleEstimateRegular() {
	r := schedule.EstimateRegular(10, 4, 24*time.Hour, schedule.Limits{})
	fmt.Printf("%.3f changes a day\n", float64(r))
	// Output: 0.480 changes a day
}

// Ten checks with a reliable Last-Modified: four changes, and the time
// since the last modification summed over the checks is five days.
func ExampleEstimateLastModified() {
	r := schedule.EstimateLastModified(10, 4, 5*24*time.Hour, schedule.Limits{})
	fmt.Printf("%.3f changes a day\n", float64(r))
	// Output: 0.757 changes a day
}

// Observe keeps the statistics; Estimate reads them.
func ExampleObserve() {
	at := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	p := schedule.Observe(schedule.Page{}, schedule.Observation{At: at, First: true})
	for i, changed := range []bool{false, true, false, false, true} {
		at = at.Add(time.Duration(i+1) * 12 * time.Hour)
		p = schedule.Observe(p, schedule.Observation{At: at, Changed: changed})
	}
	fmt.Println("visits:", p.Visits, "changes:", p.Changes, "window:", len(p.Recent))
	fmt.Printf("estimate: %.3f a day (= Estimate: %v)\n", float64(p.ChangeRate), p.ChangeRate == schedule.Estimate(p))
	// Output:
	// visits: 6 changes: 2 window: 5
	// estimate: 0.372 a day (= Estimate: true)
}

// Freshness of a page that changes daily, checked daily or twice a day.
func ExampleFreshness() {
	fmt.Printf("daily: %.3f, twice a day: %.3f\n", schedule.Freshness(1, 1), schedule.Freshness(1, 2))
	// Output: daily: 0.632, twice a day: 0.787
}

// Plan a budget of 30 fetches a day over a small site, then schedule one
// page with the plan's multiplier.
func ExampleOptimal() {
	var pages []schedule.PlanInput
	for range 10 {
		pages = append(pages, schedule.PlanInput{ChangeRate: 1}) // daily
	}
	for range 40 {
		pages = append(pages, schedule.PlanInput{ChangeRate: 1.0 / 30}) // monthly
	}
	for range 5 {
		pages = append(pages, schedule.PlanInput{ChangeRate: 48}) // twice an hour
	}
	opt := schedule.Optimal{Budget: 30}
	plan := opt.Plan(pages)
	opt.Multiplier = plan.Multiplier
	fmt.Printf("spent %.1f fetches a day\n", float64(plan.Total))
	fmt.Println("daily page every  ", plan.Interval(0).Round(time.Minute))
	fmt.Println("monthly page every", plan.Interval(10).Round(time.Minute))
	fmt.Println("fast page every   ", plan.Interval(50).Round(time.Minute), "(the floor)")
	// Output:
	// spent 30.0 fetches a day
	// daily page every   15h1m0s
	// monthly page every 69h19m0s
	// fast page every    720h0m0s (the floor)
}

// The plan's multiplier is all Next needs: the interval follows from the
// page's own statistics.
func ExampleOptimal_Next() {
	opt := schedule.Optimal{Multiplier: 0.15}
	at := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	p := schedule.Advance(opt, schedule.Page{}, schedule.Observation{At: at, First: true})
	for _, changed := range []bool{true, false, true, true, false, true} {
		at = at.Add(p.Interval)
		p = schedule.Advance(opt, p, schedule.Observation{At: at, Changed: changed})
	}
	fmt.Printf("estimate %.2f a day, next check in %v\n", float64(p.ChangeRate), p.Interval.Round(time.Minute))
	// Output: estimate 1.79 a day, next check in 13h33m0s
}

// Input turns stored pages into plan inputs.
func ExampleOptimal_Input() {
	opt := schedule.Optimal{Budget: 2}
	settled := schedule.Page{ChangeRate: 0.5, Visits: 20, Recent: make([]schedule.Check, 20)}
	in := opt.Input(settled)
	fmt.Printf("rate %.2f, weight %v, observed %.5f\n", in.ChangeRate, in.Weight, in.Observed)
	// Output: rate 0.50, weight 0, observed 0.00027
}

// Nutch grows the interval by 40% when nothing changed and pulls the next
// check forward by 30% of the time since the last change.
func ExampleNutch() {
	var s schedule.Scheduler = schedule.DefaultNutch
	at := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	p := schedule.Advance(s, schedule.Page{}, schedule.Observation{At: at, First: true})
	fmt.Println("after the first fetch:", p.Interval)
	at = at.Add(p.Interval)
	p = schedule.Advance(s, p, schedule.Observation{At: at, Changed: true})
	fmt.Println("after a change:       ", p.Interval)
	at = at.Add(p.Interval)
	p = schedule.Advance(s, p, schedule.Observation{At: at})
	fmt.Println("after no change:      ", p.Interval)
	// Output:
	// after the first fetch: 720h0m0s
	// after a change:        576h0m0s
	// after no change:       633h36m0s
}

// Uniform derived from a budget: 500 fetches a day over 3500 pages.
func ExampleUniformFor() {
	u := schedule.UniformFor(500, 3500)
	fmt.Println(u.Next(schedule.Page{}, schedule.Observation{}))
	// Output: 168h0m0s
}

// A fixed interval, whatever the page did.
func ExampleUniform() {
	u := schedule.Uniform{Every: 6 * time.Hour}
	fmt.Println(u.Next(schedule.Page{}, schedule.Observation{Changed: true}))
	// Output: 6h0m0s
}

// Rank due pages by the freshness a fetch recovers.
func ExampleGain() {
	now := time.Date(2025, 1, 10, 0, 0, 0, 0, time.UTC)
	news := schedule.Page{LastFetched: now.Add(-6 * time.Hour), ChangeRate: 4}
	docs := schedule.Page{LastFetched: now.Add(-9 * 24 * time.Hour), ChangeRate: 1.0 / 60}
	fmt.Printf("news %.2f, docs %.2f, new page %.2f\n",
		schedule.Gain(news, now), schedule.Gain(docs, now), schedule.Gain(schedule.Page{}, now))
	// Output: news 0.63, docs 0.14, new page 1.00
}

// Advance is what a crawler stores after a fetch.
func ExampleAdvance() {
	at := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	p := schedule.Advance(schedule.DefaultHalving, schedule.Page{}, schedule.Observation{At: at, First: true})
	fmt.Println("due", p.LastFetched.Add(p.Interval).Format(time.DateTime), "after", p.Visits, "visit")
	// Output: due 2025-01-02 00:00:00 after 1 visit
}

// Estimate picks the estimator the statistics support.
func ExampleEstimate() {
	fmt.Printf("no history: %.2f a day (the prior)\n", float64(schedule.Estimate(schedule.Page{})))
	legacy := schedule.Page{Visits: 11, Changes: 4, Elapsed: 10 * 24 * time.Hour}
	fmt.Printf("counts only: %.2f a day\n", float64(schedule.Estimate(legacy)))
	// Output:
	// no history: 0.69 a day (the prior)
	// counts only: 0.48 a day
}

// Rates and intervals.
func ExampleEvery() {
	r := schedule.Every(6 * time.Hour)
	fmt.Println(float64(r), "a day, every", r.Interval())
	// Output: 4 a day, every 6h0m0s
}
