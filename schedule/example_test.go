package schedule_test

import (
	"fmt"

	"github.com/recrawl/recrawl/schedule"
)

// The baseline policy halves the interval on a change and stretches it by
// half otherwise.
func ExampleHalving() {
	var s schedule.Scheduler = schedule.DefaultHalving
	iv := s.Next(schedule.Page{}, schedule.Observation{First: true})
	fmt.Println("after first fetch:", iv)
	iv = s.Next(schedule.Page{Interval: iv}, schedule.Observation{Changed: true})
	fmt.Println("after a change:   ", iv)
	iv = s.Next(schedule.Page{Interval: iv}, schedule.Observation{})
	fmt.Println("after no change:  ", iv)
	// Output:
	// after first fetch: 24h0m0s
	// after a change:    12h0m0s
	// after no change:   18h0m0s
}
