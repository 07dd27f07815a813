package schedule

import "time"

// Day is the unit of every Rate: a Rate of 1 means once per Day.
const Day = 24 * time.Hour

// Defaults of the estimators and of the Nutch, Uniform and Optimal
// policies, in one place. A zero field of a policy or of Limits takes the
// matching value here. (The baseline's values live in DefaultHalving.)
const (
	// DefaultMinInterval is the shortest revisit interval the Optimal and
	// Uniform policies return: one hour, the baseline's floor.
	DefaultMinInterval = time.Hour
	// DefaultMaxInterval is the longest revisit interval of the Optimal
	// policy: the floor visit rate of pages whose optimal rate is zero, so
	// that deletions and shifts in change rate are still noticed.
	DefaultMaxInterval = 30 * Day
	// DefaultUniformInterval is the Uniform policy's interval when neither
	// an interval nor a budget is given.
	DefaultUniformInterval = 7 * Day

	// DefaultWindow is how many recent checks Page.Recent keeps: long
	// enough for a usable estimate, short enough to follow a page whose
	// rate shifts.
	DefaultWindow = 32
	// DefaultExploreChecks is how many checks a page needs before Optimal
	// may leave it at the floor as changing faster than the budget can
	// follow; until then such a page is on the exploration schedule.
	DefaultExploreChecks = 4
	// DefaultPriorInterval is the length of the smoothing pseudo-intervals
	// when a page has no checks yet, so a new page's prior rate is ln 2 per
	// DefaultPriorInterval: about 0.69 changes a day, close to the
	// baseline's one-day start.
	DefaultPriorInterval = 24 * time.Hour
	// DefaultPriorWeight is the weight Estimate gives each of the two
	// smoothing pseudo-checks of EstimateIrregular (which gives them 1): a
	// prior that keeps the estimate finite without pulling a page that
	// has not changed in many checks up to about one change per observed
	// time. The simulator chose it (go run ./examples/simulate -grid): 1
	// made the default spend its budget on static pages, 0.1 on noise.
	DefaultPriorWeight = 0.3
	// ExploreFactor is λ·I on the exploration schedule: the interval at
	// which one check carries the most Fisher information about log λ
	// (the maximum of x²e⁻ˣ/(1−e⁻ˣ) is at x ≈ 1.594).
	ExploreFactor = 1.594
	// DefaultLastModifiedChecks is how many consecutive checks with a
	// consistent Last-Modified a page needs before Estimate uses the
	// Last-Modified estimator instead of the interval-only one.
	DefaultLastModifiedChecks = 4
	// DefaultClockSkew is how far a Last-Modified may lie after the fetch
	// time and still be believed (it is then taken as the fetch time).
	DefaultClockSkew = time.Minute

	// DefaultMinRate and DefaultMaxRate bound every estimate: about once in
	// ten years and once a minute.
	DefaultMinRate Rate = 1.0 / 3650
	DefaultMaxRate Rate = 24 * 60

	// DefaultWeight is the importance of a page whose Weight is unset.
	DefaultWeight = 1.0
	// DefaultMultiplier is the Optimal policy's Lagrange multiplier μ before
	// any Plan: one more fetch per day must raise a weight-1 page's expected
	// freshness by at least 0.1 to be worth it.
	DefaultMultiplier = 0.1

	// Nutch's AdaptiveFetchSchedule defaults (nutch-default.xml).
	NutchStart         = 30 * Day    // db.fetch.interval.default
	NutchMinInterval   = time.Minute // db.fetch.schedule.adaptive.min_interval
	NutchMaxInterval   = 365 * Day   // db.fetch.schedule.adaptive.max_interval
	NutchIncRate       = 0.4         // db.fetch.schedule.adaptive.inc_rate
	NutchDecRate       = 0.2         // db.fetch.schedule.adaptive.dec_rate
	NutchSyncDeltaRate = 0.3         // db.fetch.schedule.adaptive.sync_delta_rate
	maxDuration        = time.Duration(1<<63 - 1)
)

// DefaultLimits bounds the estimators: DefaultMinRate to DefaultMaxRate.
var DefaultLimits = Limits{Min: DefaultMinRate, Max: DefaultMaxRate}
