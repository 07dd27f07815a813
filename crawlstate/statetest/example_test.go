package statetest_test

import (
	"context"
	"crypto/rand"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/recrawl/recrawl/crawlstate"
	"github.com/recrawl/recrawl/crawlstate/postgres"
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

// A store that workers can share (a crawlstate.Sharer, as crawlstate/postgres
// is) runs RunSharer beside Run, with the same kind of Opener: a fresh,
// empty State for every subtest, here in a schema of its own.
func ExampleRunSharer() {
	testSharerConformance := func(t *testing.T) {
		dsn := os.Getenv("RECRAWL_TEST_POSTGRES_DSN")
		if dsn == "" {
			t.Skip("no PostgreSQL server to test against")
		}
		statetest.RunSharer(t, func(t *testing.T, opts crawlstate.Options) crawlstate.State {
			schema := "statetest_" + strings.ToLower(rand.Text()) // drop it in t.Cleanup
			s, err := postgres.Open(context.Background(), dsn, postgres.WithOptions(opts), postgres.WithSchema(schema))
			if err != nil {
				t.Fatal(err)
			}
			return s
		})
	}
	_ = testSharerConformance // in a _test.go file: func TestSharerConformance(t *testing.T) { ... }
}
