package statetest_test

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/recrawl/recrawl/crawlstate"
	"github.com/recrawl/recrawl/crawlstate/sqlite"
	"github.com/recrawl/recrawl/crawlstate/statetest"
)

// An implementation's test file runs the suite with an Opener that makes
// a fresh, empty State with the requested policies for every subtest.
func ExampleRun() {
	testConformance := func(t *testing.T) {
		statetest.Run(t, func(t *testing.T, opts crawlstate.Options) crawlstate.State {
			s, err := sqlite.Open(context.Background(), filepath.Join(t.TempDir(), "state.db"), sqlite.WithOptions(opts))
			if err != nil {
				t.Fatal(err)
			}
			return s
		})
	}
	_ = testConformance // in a _test.go file: func TestConformance(t *testing.T) { ... }
}
