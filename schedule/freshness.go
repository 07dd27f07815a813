package schedule

import (
	"math"
	"sync"
)

// Freshness is the expected time-averaged freshness of a page that changes
// as a Poisson process with rate lambda and is revisited at regular
// intervals at rate f: the probability that the stored copy is current at
// a random moment,
//
//	F(λ, f) = (1 − e^(−λ/f)) · f/λ.
//
// It is 1 for a page that never changes and 0 for a page never revisited.
func Freshness(lambda, f Rate) float64 {
	if !(f > 0) {
		return 0
	}
	if !(lambda > 0) || math.IsInf(float64(f), 1) {
		return 1
	}
	r := float64(lambda) / float64(f)
	if r < 1e-8 {
		return 1 - r/2
	}
	return -math.Expm1(-r) / r
}

// MarginalFreshness is ∂F/∂f, the freshness one more revisit per day buys
// a page with change rate lambda revisited at rate f:
//
//	∂F/∂f = (1 − (1 + r)e^(−r)) / λ,  r = λ/f.
//
// It falls from 1/λ at f → 0 to 0 as f → ∞ (F is concave in f). For
// lambda <= 0 it is 0.
func MarginalFreshness(lambda, f Rate) float64 {
	if !(lambda > 0) {
		return 0
	}
	if !(f > 0) {
		return 1 / float64(lambda)
	}
	return g(float64(lambda)/float64(f)) / float64(lambda)
}

// g(r) = 1 − (1+r)e^(−r), increasing from 0 to 1; series for small r to
// avoid cancellation.
func g(r float64) float64 {
	if r < 0.01 {
		// Σ_{k≥2} (−1)^k (k−1) r^k / k!
		return r * r * (0.5 - r*(1.0/3-r*(1.0/8-r*(1.0/30-r/144))))
	}
	if r > 745 {
		return 1
	}
	return -math.Expm1(-r) - r*math.Exp(-r)
}

// gInv solves g(r) = z for r by Newton's method; 0 for z <= 0, +Inf for
// z >= 1. It is the exact reference for the table used by Optimal.
func gInv(z float64) float64 {
	switch {
	case !(z > 0):
		return 0
	case z >= 1:
		return math.Inf(1)
	}
	var r float64
	if z < 0.5 {
		s := math.Sqrt(2 * z)
		r = s + s*s/3
	} else {
		y := -math.Log1p(-z) // (1+r)e^(−r) = 1−z  ⇒  r = y + ln(1+r)
		r = y
		for range 3 {
			r = y + math.Log1p(r)
		}
	}
	for range 60 {
		e := math.Exp(-r)
		d := (g(r) - z) / (r * e)
		nr := r - d
		if nr <= 0 {
			nr = r / 2
		}
		if math.Abs(nr-r) <= 1e-15*r {
			return nr
		}
		r = nr
	}
	return r
}

// The revisit rate at the optimum needs r = g⁻¹(z) for every page in every
// iteration of the multiplier search, so r is tabulated: against ln z for
// z < 1/2 (where r ≈ √(2z)) and against v = −ln(1 − z) for z ≥ 1/2 (where
// r ≈ v + ln(1 + r)). Linear interpolation on these grids is accurate to
// about one part in 10⁵, and the revisit rate λ/r then costs a division.
const (
	tabLo   = -80.0     // ln z below which r = √(2z) is used
	tabMid  = -math.Ln2 // ln z at which the grids switch: z = 1/2
	tabVLo  = math.Ln2  // v = −ln(1 − z) at the switch
	tabVHi  = 40.0      // v above which r = v + ln(1+r) is iterated
	tabStep = 1.0 / 128 // grid spacing in both tables
)

var (
	tabNLow  = int(math.Ceil((tabMid-tabLo)/tabStep)) + 1  // covers [tabLo, tabMid]
	tabNHigh = int(math.Ceil((tabVHi-tabVLo)/tabStep)) + 1 // covers [tabVLo, tabVHi]
)

// invTable holds g⁻¹ on both grids; built on first use.
type invTable struct{ low, high []float64 }

var tables = sync.OnceValue(func() *invTable {
	t := &invTable{low: make([]float64, tabNLow), high: make([]float64, tabNHigh)}
	for i := range t.low {
		t.low[i] = gInv(math.Exp(tabLo + float64(i)*tabStep))
	}
	for i := range t.high {
		v := tabVLo + float64(i)*tabStep
		t.high[i] = gInv(-math.Expm1(-v))
	}
	return t
})

// inv returns r = g⁻¹(z) given lz = ln z < 0, and the elasticity
// d ln r / d ln z, from the tables.
func (t *invTable) inv(lz float64) (r, elasticity float64) {
	if lz < tabLo {
		return math.Exp(0.5 * (math.Ln2 + lz)), 0.5
	}
	if lz < tabMid {
		x := (lz - tabLo) / tabStep
		i := int(x)
		if i >= tabNLow-1 {
			i = tabNLow - 2
		}
		a, b := t.low[i], t.low[i+1]
		r = a + (x-float64(i))*(b-a)
		return r, (b - a) / tabStep / r
	}
	z := math.Exp(lz)
	v := -math.Log1p(-z)
	if math.IsInf(v, 1) || math.IsNaN(v) {
		return math.Inf(1), 0
	}
	dvdlz := z / (1 - z) // dv/d ln z
	if v >= tabVHi {
		r = v
		for range 4 {
			r = v + math.Log1p(r)
		}
		// dr/dv = (1+r)/r for r = v + ln(1+r)
		return r, dvdlz * (1 + r) / (r * r)
	}
	x := (v - tabVLo) / tabStep
	i := int(x)
	if i >= tabNHigh-1 {
		i = tabNHigh - 2
	}
	a, b := t.high[i], t.high[i+1]
	r = a + (x-float64(i))*(b-a)
	return r, dvdlz * (b - a) / tabStep / r
}
