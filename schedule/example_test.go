package schedule_test

import (
	"fmt"
	"time"

	"github.com/recrawl/recrawl/schedule"
)

// The baseline policy halves the interval on a change and stretches it by
// half otherwise.
func ExampleHalving() {
	var s schedule.Scheduler = schedule.DefaultHalving
	iv := s.Next(schedule.Page{}, schedule.Observation{First: true})
	fmt.Println("after first fetch:", iv)
	iv = s.Next(schedule.Page{Interval: iv}, schedule.Observation{Changed: true})
	fmt.Println("after a change:   ", iv)
	iv = s.Next(schedule.Page{Interval: iv}, schedule.Observation{})
	fmt.Println("after no change:  ", iv)
	// Output:
	// after first fetch: 24h0m0s
	// after a change:    12h0m0s
	// after no change:   18h0m0s
}

// What the baseline spends on a page that changes daily, by how often the
// crawler runs: a daily crawler cannot halve below a day.
func ExampleHalving_Rate() {
	for _, c := range []time.Duration{time.Hour, 24 * time.Hour} {
		r := schedule.DefaultHalving.Rate(1, c, -1)
		fmt.Printf("runs every %v: %.2f fetches a day\n", c, float64(r))
	}
	// Output:
	// runs every 1h0m0s: 1.93 fetches a day
	// runs every 24h0m0s: 1.00 fetches a day
}

// A source's cadence is the median gap between its run starts.
func ExampleCadence() {
	at := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	starts := []time.Time{at, at.Add(6 * time.Hour), at.Add(12 * time.Hour), at.Add(19 * time.Hour)}
	fmt.Println(schedule.Cadence(starts))
	// Output: 6h0m0s
}

// Plan one run of the default policy: the run may fetch what its budget
// buys, pages never fetched first, then by index.
func ExampleIndex_PlanRun() {
	now := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	pages := []schedule.Page{
		{LastFetched: now.Add(-48 * time.Hour), ChangeRate: 0.05}, // changes every 20 days
		{LastFetched: now.Add(-2 * time.Hour), ChangeRate: 0.5},   // every 2 days, just fetched
		{}, // never fetched
	}
	var in []schedule.PlanInput
	for _, p := range pages {
		in = append(in, schedule.Optimal{}.Input(p))
	}
	plan := schedule.Index{Budget: 24}.PlanRun(schedule.Run{Start: now, Previous: now.Add(-time.Hour)}, in)
	fmt.Println("limit:", plan.Limit())
	for i, p := range pages {
		fmt.Printf("page %d: priority %.4g\n", i, plan.Priority(p))
	}
	// Output:
	// limit: 1
	// page 0: priority 0.09358
	// page 1: priority 0.001689
	// page 2: priority +Inf
}
