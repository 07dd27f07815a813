package crawlstate_test

import (
	"fmt"
	"math"
	"time"

	"github.com/recrawl/recrawl/crawlstate"
)

// A store checks a batch of results before it writes any of them.
func ExampleResult_Check() {
	r := crawlstate.Result{URL: "https://example.com/a", Events: []crawlstate.StageEvent{{Stage: ""}}}
	fmt.Println(r.Check("docs"))
	// Output: events[0] has an empty stage
}

// A store checks the arguments of Lock, Refresh, Claim and Extend, naming
// every problem at once.
func ExampleCheckLease() {
	fmt.Println(crawlstate.CheckLease("docs", "worker-1", time.Minute))
	fmt.Println(crawlstate.CheckLease("", "", 0))
	// Output:
	// <nil>
	// empty source name, empty owner; pass an identity unique to this run, ttl 0s; it must be positive
}

// A store checks the counts AddLastModTrust adds before it stores them.
func ExampleCheckTrust() {
	fmt.Println(crawlstate.CheckTrust(crawlstate.LastModCounts{MovedChanged: 3, StillSame: 40}, 100))
	fmt.Println(crawlstate.CheckTrust(crawlstate.LastModCounts{MovedSame: math.NaN()}, 100))
	// Output:
	// <nil>
	// count NaN; counts must be finite and not negative
}
