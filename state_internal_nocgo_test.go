//go:build !cgo

package recrawl

import (
	"testing"

	"github.com/recrawl/recrawl/crawlstate"
	"github.com/recrawl/recrawl/crawlstate/memory"
)

// openPlanState returns a new, empty memory store standing for the state
// file at path (without cgo crawlstate/sqlite cannot open one), with
// crawlstate.Sharer hidden so the engine runs a source alone, as on
// SQLite. The caller closes it.
func openPlanState(tb testing.TB, path string) planStore {
	tb.Helper()
	return struct{ planStore }{memory.New(crawlstate.Options{})}
}
