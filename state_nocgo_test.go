//go:build !cgo

package recrawl_test

import (
	"sync"
	"testing"

	"github.com/recrawl/recrawl/crawlstate"
	"github.com/recrawl/recrawl/crawlstate/memory"
)

// Without cgo crawlstate/sqlite cannot open a file, so openState returns a
// fresh memory store for path. Nothing persists: a test that opens a path
// a second time (to see what a restart finds) needs SQLite and belongs in
// a file built only with cgo, so a second open of a path fails the test.
var (
	openedMu sync.Mutex
	opened   = map[string]bool{}
)

// unshared is a memory store with crawlstate.Sharer hidden: the engine
// runs a source on it alone, under the run lock, as on SQLite.
type unshared struct{ testStore }

// openState returns a new, empty memory store standing for the state file
// at path. The caller closes it.
func openState(tb testing.TB, path string) testStore {
	tb.Helper()
	openedMu.Lock()
	again := opened[path]
	opened[path] = true
	openedMu.Unlock()
	if again {
		tb.Fatalf("openState(%q) again: without cgo the state is a memory store, which does not persist; a test that reopens a state needs SQLite (a //go:build cgo file)", path)
	}
	return unshared{memory.New(crawlstate.Options{})}
}
