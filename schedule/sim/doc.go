// Package sim is a discrete-event simulator for revisit policies. It runs
// on a virtual clock, with no HTTP and no real time: a World is generated
// once from a Config (pages with Poisson content changes drawn from a Mix,
// births and deaths, Last-Modified behaviour, volatile markup), and every
// Policy is run on the same World by a crawler that wakes at a fixed
// cadence, fetches the due pages up to its budget in the policy's priority
// order, and hands each outcome to the policy.
//
// Compare runs the baseline (Halving) unconstrained, then every other
// policy at the baseline's fetch count, and averages over seeds. The
// measured figures are freshness (the time-averaged fraction of live pages
// whose stored copy is current), mean and 95th-percentile age, detection
// latency, fetches, wasted fetches, alerts, and deletions noticed with
// their latency. The command examples/simulate prints the table.
//
// A simulated fetch models the fingerprint: a page whose volatile markup
// changes on every fetch reads as unchanged unless Config.RawHash compares
// raw bytes, and a fetch of a page that died is a deletion detected.
package sim
