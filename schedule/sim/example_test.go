package sim_test

import (
	"fmt"
	"io"
	"os"

	"github.com/recrawl/recrawl/schedule"
	"github.com/recrawl/recrawl/schedule/sim"
)

// Compare the baseline with Optimal at the baseline's budget.
func ExampleCompare() {
	cfg := sim.Config{Mix: sim.MixA, Pages: 500, Days: 30, Warmup: 30, Seed: 1}
	res, err := sim.Compare(cfg, 2, []sim.Maker{sim.Halving, sim.Optimal})
	if err != nil {
		fmt.Println(err)
		return
	}
	halving, optimal := res[0], res[1]
	fmt.Println(optimal.Policy, "fresher:", optimal.Freshness > halving.Freshness)
	fmt.Println("within the budget:", optimal.Fetches <= halving.Fetches)
	// Output:
	// Optimal (estimated) fresher: true
	// within the budget: true
}

// Run one policy on one world; the world is shared, so every policy sees
// the same changes, births and deaths.
func ExampleRun() {
	w, err := sim.NewWorld(sim.Config{Mix: sim.MixC, Pages: 300, Days: 20, Seed: 7})
	if err != nil {
		fmt.Println(err)
		return
	}
	r := sim.Run(w, sim.Uniform(), schedule.Rate(100))
	fmt.Println(r.Policy, "volatile alerts:", r.VolatileAlerts, "fetches within budget:", r.Fetches <= 100*21)
	// Output: Uniform volatile alerts: 0 fetches within budget: true
}

// WriteTable prints results as the example command does.
func ExampleWriteTable() {
	_ = sim.WriteTable(os.Stdout, []sim.Result{{Policy: "Halving", Freshness: 0.8}, {Policy: "Uniform", Freshness: 0.84, Budget: 50}})
	// Output:
	//  policy   fresh  vs ref  age h  p95 age h  detect h  fetches  budget/day  wasted  alerts  deleted  noticed  del. lat. h
	//   Halving  0.8000   +0.0%    0.0        0.0       0.0        0        none       0       0        0        0          0.0
	//   Uniform  0.8400   +5.0%    0.0        0.0       0.0        0          50       0       0        0        0          0.0
}

// Mixes by name, as the command's -mix flag takes them.
func ExampleMixByName() {
	m, _ := sim.MixByName("c")
	for _, c := range m.Classes {
		fmt.Printf("%-16s %4.1f%%\n", c.Name, 100*c.Share)
	}
	// Output:
	// daily            22.3%
	// 4 days           14.5%
	// 15 days          15.5%
	// 60 days          15.5%
	// yearly           29.1%
	// volatile markup   2.0%
	// hourly            1.0%
}

// The per-class breakdown shows where each policy spends its fetches.
func ExampleWriteClasses() {
	w, _ := sim.NewWorld(sim.Config{Mix: sim.MixB, Pages: 200, Days: 10, Seed: 3})
	r := sim.Run(w, sim.Halving(), 0)
	fmt.Println(len(r.Classes), "classes:", r.Classes[0].Name, "and", r.Classes[1].Name)
	_ = sim.WriteClasses(io.Discard, []sim.Result{r})
	// Output: 2 classes: static and ~30 days
}

// The five policies of the table, the reference first.
func ExamplePolicies() {
	for _, m := range sim.Policies() {
		fmt.Println(m().Name())
	}
	// Output:
	// Halving
	// Nutch
	// Uniform
	// Optimal (estimated)
	// Optimal (true rates)
	// Default
}
