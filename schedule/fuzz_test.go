package schedule_test

import (
	"encoding/binary"
	"math"
	"testing"
	"time"

	"github.com/recrawl/recrawl/schedule"
)

func finite(x float64) bool { return !math.IsNaN(x) && !math.IsInf(x, 0) }

// checksFrom decodes 17-byte records: elapsed (int64), modified (int64),
// changed (low bit) and the co-change chance in hundredths (the other
// seven bits: 0 to 1.27).
func checksFrom(data []byte) []schedule.Check {
	var cs []schedule.Check
	for len(data) >= 17 {
		cs = append(cs, schedule.Check{
			Elapsed:  time.Duration(binary.LittleEndian.Uint64(data)),
			Modified: time.Duration(binary.LittleEndian.Uint64(data[8:])),
			Changed:  data[16]&1 == 1,
			CoChance: float64(data[16]>>1) / 100,
		})
		data = data[17:]
	}
	return cs
}

func record(elapsed, modified time.Duration, changed bool) []byte {
	b := binary.LittleEndian.AppendUint64(nil, uint64(elapsed))
	b = binary.LittleEndian.AppendUint64(b, uint64(modified))
	if changed {
		return append(b, 1)
	}
	return append(b, 0)
}

// FuzzEstimate feeds arbitrary checks, counts and limits to every
// estimator and to Observe: no panic, and every estimate is finite and
// within its limits.
func FuzzEstimate(f *testing.F) {
	f.Add(record(time.Hour, time.Hour, false), 10, 3, int64(schedule.Day), 0.0, 0.0)
	f.Add(append(record(schedule.Day, time.Minute, true), record(-5, 0, true)...), 0, 0, int64(0), 1e-9, 1e9)
	f.Add(record(math.MaxInt64, math.MaxInt64, true), -1, 7, int64(-1), math.NaN(), math.Inf(1))
	f.Add(append(record(1, 1, true), record(1, 1, true)...), 1<<30, 1<<30, int64(math.MaxInt64), 5.0, 1.0)
	co := record(schedule.Day, 0, true)
	co[16] |= 90 << 1 // found at a co-change chance of 0.9
	f.Add(append(co, record(3*schedule.Day, 0, false)...), 0, 0, int64(0), 0.0, 0.0)
	f.Fuzz(func(t *testing.T, data []byte, n, x int, interval int64, lo, hi float64) {
		lim := schedule.Limits{Min: schedule.Rate(lo), Max: schedule.Rate(hi)}
		check := func(name string, r schedule.Rate, lim schedule.Limits) {
			if !finite(float64(r)) || r <= 0 {
				t.Fatalf("%s: estimate %v is not a positive finite rate", name, r)
			}
			if r != lim.Clamp(r) {
				t.Fatalf("%s: estimate %v outside the limits %+v", name, r, lim)
			}
		}
		cs := checksFrom(data)
		check("irregular", schedule.EstimateIrregular(cs, lim), lim)
		check("regular", schedule.EstimateRegular(n, x, time.Duration(interval), lim), lim)
		check("last-modified", schedule.EstimateLastModified(n, x, time.Duration(interval), lim), lim)
		page := schedule.Page{Recent: cs, Visits: n, Changes: x, Elapsed: time.Duration(interval)}
		check("page", schedule.Estimate(page), schedule.DefaultLimits)
		check("observed rate", schedule.EstimateObserved(page), schedule.DefaultLimits)

		// Replay the checks as fetches.
		p := schedule.Page{}
		at := time.Unix(0, 0)
		for i, c := range cs {
			at = at.Add(c.Elapsed % (400 * schedule.Day))
			obs := schedule.Observation{At: at, First: i == 0, Changed: c.Changed, LastModified: at.Add(-c.Modified % (400 * schedule.Day))}
			for _, s := range []schedule.Scheduler{schedule.DefaultHalving, schedule.Nutch{}, schedule.Optimal{}} {
				if iv := s.Next(p, obs); iv <= 0 {
					t.Fatalf("%T returned %v", s, iv)
				}
			}
			p.CoChange = c.CoChance
			p = schedule.Observe(p, obs)
			check("observed", p.ChangeRate, schedule.DefaultLimits)
			if n := len(p.Recent); n > 0 && !(p.Recent[n-1].CoChance >= 0 && p.Recent[n-1].CoChance <= 1) {
				t.Fatalf("check kept co-change chance %v", p.Recent[n-1].CoChance)
			}
			if g := schedule.Gain(p, at.Add(c.Modified)); !finite(g) || g < 0 {
				t.Fatalf("gain %v", g)
			}
		}
	})
}

// FuzzOptimal plans arbitrary rates, weights and budgets: no panic, no NaN
// or Inf, every rate within the bounds, the budget met whenever it is
// feasible, and Next always positive.
func FuzzOptimal(f *testing.F) {
	rates := func(vals ...float64) []byte {
		var b []byte
		for _, v := range vals {
			b = binary.LittleEndian.AppendUint64(b, math.Float64bits(v))
		}
		return b
	}
	f.Add(rates(1, 1, 0.25, 2, 1.0/365, 0.5), 1.0, 0.0, int64(0), int64(0))
	f.Add(rates(0, 0, math.NaN(), -1, math.Inf(1), math.Inf(1)), 1e9, 1e-300, int64(time.Minute), int64(365*schedule.Day))
	f.Add(rates(1e300, 1e-300, 1e-300, 1e300), -5.0, math.Inf(1), int64(-1), int64(time.Hour))
	f.Add(rates(24, 1, 24, 1, 24, 1, 24, 1), 0.0, math.NaN(), int64(schedule.Day), int64(time.Hour))
	f.Fuzz(func(t *testing.T, data []byte, budget, mu float64, minIv, maxIv int64) {
		var in []schedule.PlanInput
		for len(data) >= 16 {
			in = append(in, schedule.PlanInput{
				ChangeRate: schedule.Rate(math.Float64frombits(binary.LittleEndian.Uint64(data))),
				Weight:     math.Float64frombits(binary.LittleEndian.Uint64(data[8:])),
			})
			data = data[16:]
		}
		o := schedule.Optimal{Budget: schedule.Rate(budget), Multiplier: mu, Min: time.Duration(minIv), Max: time.Duration(maxIv)}
		plan := o.Plan(in)
		if len(plan.Rates) != len(in) {
			t.Fatalf("%d rates for %d pages", len(plan.Rates), len(in))
		}
		if !finite(plan.Multiplier) || plan.Multiplier <= 0 {
			t.Fatalf("multiplier %v", plan.Multiplier)
		}
		if !finite(float64(plan.Total)) {
			t.Fatalf("total %v", plan.Total)
		}
		lo, hi := schedule.Rate(math.Inf(1)), schedule.Rate(0)
		for _, r := range plan.Rates {
			if !finite(float64(r)) || r <= 0 {
				t.Fatalf("rate %v", r)
			}
			lo, hi = min(lo, r), max(hi, r)
		}
		// the bounds as Optimal fills them in
		minD, maxD := time.Duration(minIv), time.Duration(maxIv)
		if minD <= 0 {
			minD = schedule.DefaultMinInterval
		}
		if maxD <= 0 {
			maxD = schedule.DefaultMaxInterval
		}
		maxD = max(maxD, minD)
		fmin, fmax := schedule.Every(maxD), schedule.Every(minD)
		if lo < fmin*(1-1e-12) || hi > fmax*(1+1e-12) {
			t.Fatalf("rates [%v, %v] outside [%v, %v]", lo, hi, fmin, fmax)
		}
		n := float64(len(in))
		feasible := budget > float64(fmin)*n*(1+1e-9) && budget < float64(fmax)*n*(1-1e-9)
		if feasible && math.Abs(float64(plan.Total)-budget) > 1e-6*budget {
			t.Fatalf("budget %v, total %v", budget, plan.Total)
		}
		o.Multiplier = plan.Multiplier
		for _, p := range in {
			page := schedule.Page{ChangeRate: p.ChangeRate, Weight: p.Weight, LastFetched: time.Unix(0, 0), Visits: 10}
			if iv := o.Next(page, schedule.Observation{At: time.Unix(3600, 0), Changed: true}); iv <= 0 {
				t.Fatalf("interval %v", iv)
			}
		}
	})
}
