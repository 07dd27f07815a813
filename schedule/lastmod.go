package schedule

import "math"

// LastModTrust is what a source's sitemap lastmods have proven worth: a
// confusion table of the fetches of pages whose sitemap listed a lastmod,
// by whether that lastmod had moved since the page's previous fetch (it is
// after that fetch) and whether the fetch found a real change. Counts are
// float64 so that a crawler can decay old evidence (Decayed). The zero
// value is a source with no evidence yet, whose lastmods are mildly
// believed until fetches show how far they can be.
type LastModTrust struct {
	MovedChanged float64 `json:"moved_changed"` // moved, and the content had changed
	MovedSame    float64 `json:"moved_same"`    // moved, the content had not changed
	StillChanged float64 `json:"still_changed"` // not moved, yet the content had changed
	StillSame    float64 `json:"still_same"`    // not moved, and the content had not changed
}

// Add counts one fetch of a page whose sitemap listed a lastmod.
func (t *LastModTrust) Add(moved, changed bool) {
	switch {
	case moved && changed:
		t.MovedChanged++
	case moved:
		t.MovedSame++
	case changed:
		t.StillChanged++
	default:
		t.StillSame++
	}
}

// Plus returns the sum of two tables.
func (t LastModTrust) Plus(u LastModTrust) LastModTrust {
	return LastModTrust{
		MovedChanged: t.MovedChanged + u.MovedChanged, MovedSame: t.MovedSame + u.MovedSame,
		StillChanged: t.StillChanged + u.StillChanged, StillSame: t.StillSame + u.StillSame,
	}
}

// Total is the number of fetches counted.
func (t LastModTrust) Total() float64 {
	return t.MovedChanged + t.MovedSame + t.StillChanged + t.StillSame
}

// Decayed returns t scaled down so that it counts at most most fetches,
// so that a source whose sitemap generator changed is relearned; t itself
// when it counts fewer (or most is not positive). Negative or non-finite
// counts read as zero.
func (t LastModTrust) Decayed(most float64) LastModTrust {
	t = t.clean()
	if n := t.Total(); most > 0 && n > most {
		k := most / n
		t.MovedChanged *= k
		t.MovedSame *= k
		t.StillChanged *= k
		t.StillSame *= k
	}
	return t
}

func (t LastModTrust) clean() LastModTrust {
	c := func(v float64) float64 {
		if !(v > 0) || math.IsInf(v, 0) {
			return 0
		}
		return v
	}
	return LastModTrust{c(t.MovedChanged), c(t.MovedSame), c(t.StillChanged), c(t.StillSame)}
}

// Precision is the share of moved lastmods that meant a real change, with
// one pseudo-count each way (0.5 without evidence).
func (t LastModTrust) Precision() float64 {
	t = t.clean()
	return (t.MovedChanged + 1) / (t.MovedChanged + t.MovedSame + 2)
}

// Recall is the share of real changes that came with a moved lastmod,
// with pseudo-counts that make it 2/3 without evidence (a lastmod starts
// mildly believed).
func (t LastModTrust) Recall() float64 {
	t = t.clean()
	return (t.MovedChanged + 2) / (t.MovedChanged + t.StillChanged + 3)
}

// FalseAlarms is the share of unchanged pages whose lastmod moved anyway
// (near 1 for a sitemap that stamps its generation time on every URL),
// with pseudo-counts that make it 1/3 without evidence.
func (t LastModTrust) FalseAlarms() float64 {
	t = t.clean()
	return (t.MovedSame + 1) / (t.MovedSame + t.StillSame + 3)
}

// Posterior returns the chance that a page changed since its last fetch,
// given prior, the chance without the sitemap's word (1 − e^(−λτ)), and
// whether its lastmod moved: Bayes' rule with the measured Recall and
// FalseAlarms as the likelihoods of a move. Where moves are at least as
// frequent without a change as with one (a generation time on every URL)
// it is prior itself; where a moved lastmod has always meant a change
// and a change always came with one, it is near 1 for a moved lastmod and
// near 0 otherwise.
func (t LastModTrust) Posterior(prior float64, moved bool) float64 {
	prior = min(max(prior, 0), 1)
	r, f := t.Recall(), t.FalseAlarms()
	if r <= f {
		// Moves as frequent without a change as with one: no evidence
		// either way (nor the reverse evidence of a lastmod that moves
		// mostly when nothing changed).
		return prior
	}
	if !moved {
		r, f = 1-r, 1-f
	}
	num := r * prior
	den := num + f*(1-prior)
	if !(den > 0) {
		return prior
	}
	return num / den
}

// unmovedPrior inverts Posterior for an unmoved lastmod: the prior at
// which the posterior is q (1 when none is).
func (t LastModTrust) unmovedPrior(q float64) float64 {
	r, f := t.Recall(), t.FalseAlarms()
	if r <= f {
		return q
	}
	l := (1 - r) / (1 - f) // the likelihood ratio of an unmoved lastmod
	den := l*(1-q) + q
	if !(den > 0) {
		return 1
	}
	return min(q/den, 1)
}

// SitemapHint is what a page's sitemap says about it since its last fetch,
// and how far the source's sitemap has proven right. A crawler that learns
// lastmod trust sets it on the Page it hands to a RunPlan (Index uses it);
// the zero value says nothing.
type SitemapHint struct {
	// Listed is true when the page's sitemap lists a lastmod for it.
	Listed bool
	// Moved is true when that lastmod is after the page's last fetch.
	Moved bool
	// Trust is the source's measured trust in its lastmods.
	Trust LastModTrust
}

// posteriorChance is the chance that the page changed, given the hint,
// when its chance without the hint is prior.
func (h SitemapHint) posteriorChance(prior float64) float64 {
	if !h.Listed {
		return prior
	}
	return h.Trust.Posterior(prior, h.Moved)
}

// DefaultTrustMemory is how many fetches a source's LastModTrust counts at
// most (Decayed): older evidence fades, so a source whose sitemap starts
// or stops lying is relearned.
const DefaultTrustMemory = 2000

// Verdict is what a listing's evidence says of the rows whose lastmod
// moved: fetch them all in the next run (Force), fetch a sample first and
// decide on it (Sample), or rank them with the other due rows by the
// chance the hint gives (Rank).
type Verdict uint8

// The verdicts of LastModTrust.Verdict.
const (
	// Force: a moved lastmod has meant a change (or nothing says it
	// does not): every moved row is fetched in the next run, outside the
	// run's budget, as the seeds' baseline fetches them.
	Force Verdict = iota
	// Sample: too few moved rows were fetched to tell; fetch up to the
	// sample first, then ask again.
	Sample
	// Rank: moved lastmods have mostly not meant a change (a generator
	// that stamps its build time on every URL): moved rows are ranked
	// with the rest, by SitemapHint's chance.
	Rank
)

// DefaultLastModSample is how many moved rows a listing without enough
// evidence has fetched before its verdict: eight fetches tell a sitemap
// that stamps every URL (none changed) from an honest one (most did).
const DefaultLastModSample = 8

// Verdict is the verdict of a listing with this evidence on its moved
// rows: Sample while fewer than sample moved rows were fetched, then Rank
// when the share of them that had changed (with one pseudo-count each
// way) is below one half, else Force.
func (t LastModTrust) Verdict(sample int) Verdict {
	t = t.clean()
	n := t.MovedChanged + t.MovedSame
	if n < float64(sample) {
		return Sample
	}
	if t.Precision() < 0.5 {
		return Rank
	}
	return Force
}
