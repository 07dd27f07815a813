package sim_test

import (
	"testing"

	"github.com/recrawl/recrawl/schedule"
	"github.com/recrawl/recrawl/schedule/sim"
)

// BenchmarkRun measures simulator throughput on 10k pages × 30 days of
// mix A at the baseline's budget, in simulated fetches per second.
func BenchmarkRun(b *testing.B) {
	w, err := sim.NewWorld(sim.Config{Mix: sim.MixA, Pages: 10000, Days: 30, Seed: 1})
	if err != nil {
		b.Fatal(err)
	}
	ref := sim.Run(w, sim.Halving(), 0)
	budget := schedule.Rate(ref.Fetches / 31)
	for _, m := range sim.Policies() {
		name := m().Name()
		b.Run(name, func(b *testing.B) {
			b.ReportAllocs()
			var fetches float64
			for b.Loop() {
				fetches += sim.Run(w, m(), budget).Fetches
			}
			b.ReportMetric(fetches/b.Elapsed().Seconds(), "fetches/s")
		})
	}
}

// BenchmarkNewWorld measures generating 10k pages × 180 days of mix A.
func BenchmarkNewWorld(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		if _, err := sim.NewWorld(sim.Config{Mix: sim.MixA, Pages: 10000, Days: 180, Seed: 1}); err != nil {
			b.Fatal(err)
		}
	}
}
