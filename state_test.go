package recrawl_test

import (
	"github.com/recrawl/recrawl/crawlstate"
	"github.com/recrawl/recrawl/crawlstate/statetest"
)

// testStore is the state the root tests hand to engines: a State with
// every optional ability but crawlstate.Sharer, so a source runs alone
// under the run lock. openState opens one: SQLite with cgo, the memory
// store without (state_cgo_test.go, state_nocgo_test.go). Tests that wrap
// a state to inject faults embed it, so the wrappers work on both.
type testStore interface {
	statetest.Full
	crawlstate.PlanLister
	crawlstate.LiveLister
}
