package schedule

import (
	"math"
	"runtime"
	"sync"
	"sync/atomic"
	"time"
)

// Rate returns the fetch rate, in fetches per day, of the Halving policy h
// for a page whose content changes at rate lambda when the crawler runs
// every cadence, age after the page's first fetch. A page due between two
// runs waits for the next one, so at a coarse cadence the elapsed time
// between two fetches is the interval rounded up to a whole number of runs
// (at least one); the chance of a change, and so the next interval,
// depends on that elapsed time. cadence <= 0 means a page is fetched
// exactly when due.
//
// The interval is a Markov chain on a log grid between Min and Max,
// started at Start: Rate is the reciprocal of the expected elapsed time of
// the fetch under way at age (for a young page, whose interval has not
// settled yet), and of its mean under the stationary distribution once
// the chain has settled or age is negative. The chains are solved once per
// policy and cadence and cached; rates are interpolated in log λ. It is
// safe for concurrent use.
func (h Halving) Rate(lambda Rate, cadence time.Duration, age time.Duration) Rate {
	t := baselineTable(h, cadence)
	i, f := t.cell(lambda)
	return Rate(t.rateAt(i, f, age))
}

// Fetches returns how many fetches the Halving policy h is expected to
// make of a page of change rate lambda, when the crawler runs every
// cadence, while the page's age (the time since its first fetch, which is
// not counted) runs from from to to. At a cadence of a day or more the
// chain of Rate is followed run by run: the expected fetches at each run,
// interpolated between runs. At a finer cadence a young page is fetched
// when its expected age reaches each fetch of the chain (the first
// fetches are bursts: a page discovered with others falls due with them).
// A settled page is fetched at the stationary rate. It is safe for
// concurrent use.
func (h Halving) Fetches(lambda Rate, cadence time.Duration, from, to time.Duration) float64 {
	if to <= from {
		return 0
	}
	t := baselineTable(h, cadence)
	i, f := t.cell(lambda)
	return t.fetchesAt(i, f, days(max(from, 0)), days(to))
}

// cell returns the λ grid cell of lambda and the position in it.
func (t *blTable) cell(lambda Rate) (int, float64) {
	x := (math.Log(float64(DefaultLimits.Clamp(lambda))) - blLo) / blStep
	switch {
	case !(x > 0):
		return 0, 0
	case x >= float64(len(t.stationary)-1):
		return len(t.stationary) - 1, 0
	}
	i := int(x)
	return i, x - float64(i)
}

// rateAt is the rate at cell (i, f) and age, interpolated between the
// grid points.
func (t *blTable) rateAt(i int, f float64, age time.Duration) float64 {
	a := t.rate(i, age)
	if f == 0 {
		return a
	}
	return a + f*(t.rate(i+1, age)-a)
}

// fetchesAt is fetches at cell (i, f), interpolated.
func (t *blTable) fetchesAt(i int, f float64, from, to float64) float64 {
	a := t.fetches(i, from, to)
	if f == 0 {
		return a
	}
	return a + f*(t.fetches(i+1, from, to)-a)
}

// fetches counts the chain's fetches at grid point i with expected age in
// (from, to], in days (from >= 0), and the stationary rate over the part
// of the window after the table ends.
func (t *blTable) fetches(i int, from, to float64) float64 {
	if t.runs != nil {
		return t.runFetches(i, to) - t.runFetches(i, from)
	}
	cum := &t.cum[i]
	end := cum[blSteps-1] + t.mean[i][blSteps-1]
	var n float64
	if from < end {
		n = float64(upTo(cum, to) - upTo(cum, from))
	}
	if end > from && end <= to {
		n++
	}
	if to > end {
		n += t.stationary[i] * (to - max(from, end))
	}
	return n
}

// BaselineFetches returns how many fetches the Halving policy h would make
// of pages between two runs at prev and now (prev zero: one cadence, else
// one day, before now), when the crawler runs every cadence: the sum of
// h.Fetches over the pages' Observed change rates (ChangeRate when unset)
// while their age runs over the window (Age at LastFetched plus the time
// since; a negative Age is a settled page, counted at the stationary
// rate). A page never fetched counts nothing (its first fetch is not
// counted); a page with a Fixed rate counts at that rate.
func BaselineFetches(h Halving, pages []PlanInput, cadence time.Duration, prev, now time.Time) float64 {
	total, _ := baselineSpend(h, pages, cadence, prev, now, false)
	return total
}

// baselineSpend is BaselineFetches and, when withRate is set,
// BaselineRate of the same pages at now, in one pass (one table lookup a
// page for both).
func baselineSpend(h Halving, pages []PlanInput, cadence time.Duration, prev, now time.Time, withRate bool) (fetches float64, rate Rate) {
	if len(pages) == 0 {
		return 0, 0 // a first run: no table to solve
	}
	t := baselineTable(h, cadence)
	window := now.Sub(prev)
	if prev.IsZero() || window <= 0 {
		window = cadence
		if window <= 0 {
			window = Day
		}
	}
	var total, perDay float64
	for _, p := range pages {
		if f, ok := fixedRate(p); ok {
			total += f * days(window)
			perDay += f
			continue
		}
		lam := p.Observed
		if !(lam > 0) {
			lam = p.ChangeRate
		}
		if p.LastFetched.IsZero() {
			if withRate {
				i, f := t.cell(lam)
				perDay += t.rateAt(i, f, p.Age)
			}
			continue
		}
		i, f := t.cell(lam)
		if p.Age < 0 {
			r := t.rateAt(i, f, -1)
			total += r * days(window)
			perDay += r
			continue
		}
		since := max(now.Sub(p.LastFetched), 0)
		to := p.Age + since
		total += t.fetchesAt(i, f, days(max(to-window, 0)), days(to))
		if withRate {
			age := p.Age
			if now.After(p.LastFetched) {
				age += now.Sub(p.LastFetched)
			}
			perDay += t.rateAt(i, f, age)
		}
	}
	return total, Rate(perDay)
}

// BaselineRate returns what the Halving policy h would spend on pages at
// now, in fetches per day, when the crawler runs every cadence: the sum of
// h.Rate over the pages' Observed change rates (ChangeRate when unset) at
// their age at now (Age plus the time since LastFetched; a negative Age is
// a settled page). A page with a Fixed rate counts at that rate.
func BaselineRate(h Halving, pages []PlanInput, cadence time.Duration, now time.Time) Rate {
	if len(pages) == 0 {
		return 0
	}
	t := baselineTable(h, cadence)
	var total float64
	for _, p := range pages {
		if f, ok := fixedRate(p); ok {
			total += f
			continue
		}
		lam := p.Observed
		if !(lam > 0) {
			lam = p.ChangeRate
		}
		age := p.Age
		if age >= 0 && !p.LastFetched.IsZero() && now.After(p.LastFetched) {
			age += now.Sub(p.LastFetched)
		}
		i, f := t.cell(lam)
		total += t.rateAt(i, f, age)
	}
	return Rate(total)
}

// The λ grid of the baseline tables: ln λ from ln DefaultMinRate to
// ln DefaultMaxRate in steps of blStep.
var (
	blLo   = math.Log(float64(DefaultMinRate))
	blHi   = math.Log(float64(DefaultMaxRate))
	blStep = 0.125
)

type blKey struct {
	h       Halving
	cadence time.Duration
}

var (
	blMu    sync.Mutex
	blCache = map[blKey]*blTable{}
)

// blSteps is how many fetches of a young page the tables follow before
// the stationary rate takes over.
const blSteps = 64

// blTable holds, on the λ grid, the stationary rate and for the first
// blSteps fetches the expected elapsed time of each (days) and the
// expected age at its start (days).
type blTable struct {
	stationary []float64
	mean, cum  [][blSteps]float64
	// At a cadence of at least runTableCadence, runs[i][k] is the
	// expected number of fetches at ages in (0, k·runDays] (one entry per
	// run, for runHorizon), from the chain's distribution run by run:
	// the expected ages of mean and cum miss the fetches that chance
	// moves across a run (up to a sixth of a slow page's at a weekly
	// cadence).
	runs    [][]float64
	runDays float64
}

// runTableCadence is the shortest cadence whose tables follow the chain
// run by run (runs); a finer one has too many runs to follow, and the
// expected ages of a young page's fetches come within a few per cent
// there.
const runTableCadence = 24 * time.Hour

// runHorizon is the age, in days, to which runs follows the chain; the
// stationary rate takes over after it.
const runHorizon = 400.0

// runFetches is runs[i] at age a (days), interpolated between runs, and
// the stationary rate after the horizon.
func (t *blTable) runFetches(i int, a float64) float64 {
	r := t.runs[i]
	x := a / t.runDays
	last := len(r) - 1
	if x >= float64(last) {
		return r[last] + t.stationary[i]*(a-float64(last)*t.runDays)
	}
	if !(x > 0) {
		return 0
	}
	k := int(x)
	return r[k] + (x-float64(k))*(r[k+1]-r[k])
}

// rate is the rate at grid point i and age.
func (t *blTable) rate(i int, age time.Duration) float64 {
	if age < 0 {
		return t.stationary[i]
	}
	a := days(age)
	cum := &t.cum[i]
	if a >= cum[blSteps-1]+t.mean[i][blSteps-1] {
		return t.stationary[i]
	}
	j := upTo(cum, a) - 1 // the step under way
	return 1 / t.mean[i][max(j, 0)]
}

// upTo returns how many steps start at or before x.
func upTo(cum *[blSteps]float64, x float64) int {
	lo, hi := 0, blSteps
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		if cum[m] <= x {
			lo = m + 1
		} else {
			hi = m
		}
	}
	return lo
}

// baselineTable returns the tables of h at cadence.
func baselineTable(h Halving, cadence time.Duration) *blTable {
	h = h.withDefaults()
	if cadence < time.Minute {
		cadence = 0
	}
	k := blKey{h, cadence.Round(time.Minute)}
	cadence = k.cadence
	blMu.Lock()
	t, ok := blCache[k]
	blMu.Unlock()
	if ok {
		return t
	}
	t = newBLTable(cadence)
	n := len(t.stationary)
	// The grid points are independent: they are solved on every core
	// (each goroutine with a chain of its own), and each comes out as it
	// would one after the other.
	var (
		wg   sync.WaitGroup
		cell atomic.Int64
	)
	for range min(runtime.GOMAXPROCS(0), n) {
		wg.Go(func() {
			c := newHalvingChain(h, cadence)
			for {
				i := int(cell.Add(1) - 1)
				if i >= n {
					return
				}
				t.solve(c, i)
			}
		})
	}
	wg.Wait()
	blMu.Lock()
	if len(blCache) >= 64 { // many cadences: start again rather than grow
		clear(blCache)
	}
	blCache[k] = t
	blMu.Unlock()
	return t
}

// newBLTable returns empty tables for cadence.
func newBLTable(cadence time.Duration) *blTable {
	n := int(math.Ceil((blHi-blLo)/blStep)) + 1
	t := &blTable{stationary: make([]float64, n), mean: make([][blSteps]float64, n), cum: make([][blSteps]float64, n)}
	if cadence >= runTableCadence {
		t.runDays = days(cadence)
		t.runs = make([][]float64, n)
	}
	return t
}

// solve fills grid point i of t with chain c, the chain of t's cadence.
func (t *blTable) solve(c *halvingChain, i int) {
	lam := math.Exp(blLo + float64(i)*blStep)
	t.stationary[i] = c.rate(lam)
	c.transient(lam, &t.mean[i], &t.cum[i])
	if t.runs != nil {
		t.runs[i] = c.byRun(lam, int(math.Ceil(runHorizon/t.runDays)))
	}
}

// halvingChain is Halving's interval as a Markov chain on a grid of
// ln(interval): state i has interval exp(lo + i·step).
type halvingChain struct {
	elapsed       []float64 // days between the fetches of state i
	down, up      []int     // grid cell below the next state, on a change and on none
	downW, upW    []float64 // weight of that cell (the rest goes to the cell above)
	start         int
	pi, next      []float64
	cadenceInDays float64
}

const chainStep = 0.02

func newHalvingChain(h Halving, cadence time.Duration) *halvingChain {
	lo, hi := math.Log(float64(h.Min)), math.Log(float64(h.Max))
	// The step puts Start on the grid, so a young page's first intervals
	// are exact.
	step := chainStep
	if k := math.Round((math.Log(float64(h.Start)) - lo) / chainStep); k >= 1 {
		step = (math.Log(float64(h.Start)) - lo) / k
	}
	n := max(int(math.Ceil((hi-lo)/step-1e-9))+1, 2)
	if !(hi > lo) {
		n, step = 2, 1
	}
	hi = lo + float64(n-1)*step // the top cell holds Max
	c := &halvingChain{
		elapsed: make([]float64, n), down: make([]int, n), up: make([]int, n),
		downW: make([]float64, n), upW: make([]float64, n),
		pi: make([]float64, n), next: make([]float64, n),
	}
	c.cadenceInDays = days(cadence)
	cell := func(x float64) (int, float64) {
		x = min(max(x, lo), hi)
		f := (x - lo) / step
		i := min(int(f), n-2)
		return i, 1 - (f - float64(i))
	}
	for i := range n {
		x := lo + float64(i)*step
		iv := min(math.Exp(x), float64(h.Max))
		e := iv
		if cadence > 0 {
			runs := math.Max(1, math.Ceil(iv/float64(cadence)-1e-9))
			e = runs * float64(cadence)
		}
		c.elapsed[i] = e / float64(Day)
		c.down[i], c.downW[i] = cell(x - math.Ln2)
		c.up[i], c.upW[i] = cell(x + math.Log(h.Grow))
	}
	c.start, _ = cell(math.Log(float64(h.Start)) + step/2)
	c.start = min(c.start, n-1)
	return c
}

// transient follows the chain from its start for blSteps fetches at
// change rate lam: the expected elapsed time of each and the expected age
// at which it starts.
func (c *halvingChain) transient(lam float64, mean, cum *[blSteps]float64) {
	n := len(c.pi)
	pi, next := make([]float64, n), make([]float64, n)
	pc := make([]float64, n) // the chance of a change over state i's elapsed time
	for i, e := range c.elapsed {
		pc[i] = -math.Expm1(-lam * e)
	}
	pi[c.start] = 1
	var age float64
	for j := range blSteps {
		var m float64
		for i, w := range pi {
			m += w * c.elapsed[i]
		}
		mean[j], cum[j] = m, age
		age += m
		clear(next)
		for i, w := range pi {
			if w == 0 {
				continue
			}
			a, b := w*pc[i], w*(1-pc[i])
			next[c.down[i]] += a * c.downW[i]
			next[c.down[i]+1] += a * (1 - c.downW[i])
			next[c.up[i]] += b * c.upW[i]
			next[c.up[i]+1] += b * (1 - c.upW[i])
		}
		pi, next = next, pi
	}
}

// byRun follows the chain at change rate lam run by run from its start
// (a fetch at run 0) for k runs: the expected number of fetches at runs
// 1..j, for j = 0..k. The crawler runs every cadence (cadenceInDays > 0),
// and a fetch leaves the chain in a state whose elapsed time is a whole
// number of runs.
func (c *halvingChain) byRun(lam float64, k int) []float64 {
	n := len(c.elapsed)
	steps := make([]int, n)
	pc := make([]float64, n) // the chance of a change over state i's elapsed time
	most := 1
	for i, e := range c.elapsed {
		steps[i] = max(1, int(math.Round(e/c.cadenceInDays)))
		most = max(most, steps[i])
		pc[i] = -math.Expm1(-lam * e)
	}
	// at[j%len(at)][i]: the chance that a fetch at run j leaves state i.
	at := make([][]float64, most+1)
	for j := range at {
		at[j] = make([]float64, n)
	}
	at[0][c.start] = 1
	out := make([]float64, k+1)
	var sum float64
	for j := 0; j <= k; j++ {
		cur := at[j%len(at)]
		for i, w := range cur {
			if w == 0 {
				continue
			}
			if j > 0 {
				sum += w
			}
			a, b := w*pc[i], w*(1-pc[i])
			nx := at[(j+steps[i])%len(at)]
			nx[c.down[i]] += a * c.downW[i]
			nx[c.down[i]+1] += a * (1 - c.downW[i])
			nx[c.up[i]] += b * c.upW[i]
			nx[c.up[i]+1] += b * (1 - c.upW[i])
		}
		out[j] = sum
		clear(cur)
	}
	return out
}

// rate returns 1 / the stationary mean elapsed time at change rate lam.
func (c *halvingChain) rate(lam float64) float64 {
	pi, next := c.pi, c.next
	clear(pi)
	pi[c.start] = 1
	n := len(pi)
	pc := make([]float64, n)
	for i := range n {
		pc[i] = -math.Expm1(-lam * c.elapsed[i])
	}
	for range 4000 {
		// A lazy chain (half the mass stays) has the same stationary
		// distribution and converges even where the walk is periodic.
		for i, m := range pi {
			next[i] = m / 2
		}
		for i, m := range pi {
			m /= 2
			if m == 0 {
				continue
			}
			a, b := m*pc[i], m*(1-pc[i])
			next[c.down[i]] += a * c.downW[i]
			next[c.down[i]+1] += a * (1 - c.downW[i])
			next[c.up[i]] += b * c.upW[i]
			next[c.up[i]+1] += b * (1 - c.upW[i])
		}
		var diff float64
		for i := range n {
			diff += math.Abs(next[i] - pi[i])
		}
		pi, next = next, pi
		if diff < 1e-10 {
			break
		}
	}
	var mean float64
	for i, m := range pi {
		mean += m * c.elapsed[i]
	}
	c.pi, c.next = pi, next
	return 1 / mean
}
