package schedule_test

import (
	"math/rand/v2"
	"testing"
	"time"

	"github.com/recrawl/recrawl/internal/cputime"
	"github.com/recrawl/recrawl/schedule"
)

// BenchmarkOptimalPlan plans a budget over a million pages of mix A with
// continuous rates: cold (from the default multiplier) and warm (from the
// previous run's multiplier, after 1% of the estimates moved).
func BenchmarkOptimalPlan(b *testing.B) {
	const n = 1_000_000
	rng := rand.New(rand.NewPCG(1, 1))
	in := mixA(rng, n, true)
	for i := range in {
		in[i].ChangeRate *= schedule.Rate(0.5 + rng.Float64())
	}
	o := schedule.Optimal{Budget: 0.56 * n}
	b.Run("1M-cold", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			o.Plan(in)
		}
	})
	warm := o
	warm.Multiplier = o.Plan(in).Multiplier
	moved := append([]schedule.PlanInput(nil), in...)
	for i := 0; i < n; i += 100 {
		moved[i].ChangeRate *= 1.3
	}
	b.Run("1M-warm", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			warm.Plan(moved)
		}
	})
}

func window(rng *rand.Rand) []schedule.Check {
	cs := make([]schedule.Check, schedule.DefaultWindow)
	for i := range cs {
		cs[i] = schedule.Check{Elapsed: time.Duration((0.2 + rng.Float64()) * float64(schedule.Day)), Changed: rng.IntN(2) == 0}
	}
	return cs
}

// BenchmarkEstimateIrregular solves the MLE over a full window.
func BenchmarkEstimateIrregular(b *testing.B) {
	cs := window(rand.New(rand.NewPCG(2, 2)))
	b.ReportAllocs()
	for b.Loop() {
		schedule.EstimateIrregular(cs, schedule.Limits{})
	}
}

// BenchmarkAdvanceOptimal is the per-fetch cost of the Optimal policy:
// statistics, estimate and interval.
func BenchmarkAdvanceOptimal(b *testing.B) {
	p := schedule.Page{LastFetched: t0, Recent: window(rand.New(rand.NewPCG(3, 3))), Visits: 40}
	o := schedule.Optimal{Multiplier: 0.15}
	obs := schedule.Observation{At: t0.Add(20 * time.Hour), Changed: true}
	b.ReportAllocs()
	for b.Loop() {
		schedule.Advance(o, p, obs)
	}
}

// BenchmarkGain ranks a page with a cached estimate.
func BenchmarkGain(b *testing.B) {
	p := schedule.Page{LastFetched: t0, ChangeRate: 0.7}
	now := t0.Add(30 * time.Hour)
	b.ReportAllocs()
	for b.Loop() {
		schedule.Gain(p, now)
	}
}

// BenchmarkIndexPlanRun plans one run of the default policy over a million
// pages of mix A: the baseline's spend at an hourly cadence, the price and
// the run's limit. Target: 200 ms.
func BenchmarkIndexPlanRun(b *testing.B) {
	const n = 1_000_000
	rng := rand.New(rand.NewPCG(4, 4))
	in := mixA(rng, n, true)
	now := t0.Add(90 * schedule.Day)
	for i := range in {
		in[i].LastFetched = now.Add(-time.Duration(rng.Float64() * float64(10*schedule.Day)))
		in[i].Age = time.Duration(rng.Float64() * float64(80*schedule.Day))
		in[i].Observed = in[i].ChangeRate * schedule.Rate(0.5+rng.Float64())
	}
	// Hourly runs count a young page's fetches at their expected ages;
	// daily ones follow the chain run by run.
	for _, c := range []time.Duration{time.Hour, schedule.Day} {
		b.Run(c.String(), func(b *testing.B) {
			run := schedule.Run{Start: now, Previous: now.Add(-c), Cadence: c}
			schedule.Index{}.PlanRun(run, in) // the baseline tables of this cadence
			b.ReportAllocs()
			cpu := cputime.Process()
			for b.Loop() {
				schedule.Index{}.PlanRun(run, in)
			}
			// CPU per op is steadier than ns/op on a shared machine.
			b.ReportMetric(float64(cputime.Process()-cpu)/float64(time.Millisecond)/float64(b.N), "cpu-ms/op")
		})
	}
}

// BenchmarkCoChangeRank is what ranking asks of a learned co-change model
// per page: its chance alone, and its chance and discount (as the engine's
// ranking and the simulator ask), over the 400 pages of a site whose
// sections release together, a day after their last fetch.
func BenchmarkCoChangeRank(b *testing.B) {
	m := schedule.NewCoChange(nil)
	pages := coWorld(m, true, 60, 1)
	if !m.Learned() {
		b.Fatal("the model learned nothing")
	}
	urls := sortedKeys(pages)
	for _, v := range []struct {
		name     string
		discount bool
	}{{"chance", false}, {"chance+discount", true}} {
		b.Run(v.name, func(b *testing.B) {
			b.ReportAllocs()
			var sink float64
			for b.Loop() {
				for _, u := range urls {
					p := pages[u]
					now := p.LastFetched.Add(schedule.Day)
					sink += m.Chance(u, p, now)
					if v.discount {
						sink += m.Discount(u, p, now)
					}
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(urls)), "ns/page")
			_ = sink
		})
	}
}
