package backend

import (
	"math"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/recrawl/recrawl/crawlstate"
)

func TestChecker(t *testing.T) {
	const c = Checker("crawlstate/test")
	t0 := time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC)
	tests := []struct {
		name string
		err  error
		want string // "" for no error
	}{
		{"upsert", c.Upsert("docs", []crawlstate.Discovered{{URL: "a"}}), ""},
		{"upsert without source", c.Upsert("", nil), "crawlstate/test: upsert discovered: empty source name"},
		{"upsert without URL", c.Upsert("docs", []crawlstate.Discovered{{URL: "a"}, {}}), "crawlstate/test: upsert discovered: urls[1] has an empty URL; pass normalized URLs"},
		{"limit", c.Limit("due", 1<<30), ""},
		{"limit 0", c.Limit("due", 0), "crawlstate/test: due: limit 0; pass a page size of at least 1"},
		{"threshold", c.Threshold(1), ""},
		{"threshold 0", c.Threshold(0), "crawlstate/test: mark missing: threshold 0; it must be at least 1"},
		{"min failures", c.MinFailures(1), ""},
		{"min failures 0", c.MinFailures(0), "crawlstate/test: dead letters: minFailures 0; pass at least 1"},
		{"results", c.Results("docs", []crawlstate.Result{{URL: "a"}}), ""},
		{"bad result", c.Results("docs", []crawlstate.Result{{URL: "a"}, {URL: "b", Events: []crawlstate.StageEvent{{}}}}),
			`crawlstate/test: record: results[1] "b": events[0] has an empty stage`},
		{"lease", c.Lease("claim", "docs", "w", time.Minute), ""},
		{"bad lease", c.Lease("claim", "docs", "", time.Minute), "crawlstate/test: claim: empty owner"},
		{"owner", c.Owner("release", "docs", "w"), ""},
		{"no owner", c.Owner("release", "docs", ""), `crawlstate/test: release: empty source ("docs") or owner ("")`},
		{"run", c.Run("offer", "docs", t0), ""},
		{"no run source", c.Run("offer", "", t0), "crawlstate/test: offer: empty source name"},
		{"zero run", c.Run("record run", "docs", time.Time{}), `crawlstate/test: record run: zero run start for source "docs"`},
		{"source", c.Source("lastmod trust", "docs"), ""},
		{"no source", c.Source("lastmod trust", ""), "crawlstate/test: lastmod trust: empty source name"},
		{"trust", c.Trust("docs", crawlstate.LastModCounts{MovedChanged: 1}, 10), ""},
		{"bad trust", c.Trust("docs", crawlstate.LastModCounts{StillSame: math.Inf(1)}, 10), `crawlstate/test: add lastmod trust: source "docs": count +Inf`},
		{"trust without source", c.Trust("", crawlstate.LastModCounts{}, 10), "crawlstate/test: add lastmod trust: empty source name"},
		{"events", c.Events("docs", []crawlstate.StageEvent{{URL: "a", Stage: "fetch"}}), ""},
		{"events without source", c.Events("", nil), "crawlstate/test: log events: empty source name"},
		{"event without stage", c.Events("docs", []crawlstate.StageEvent{{URL: "a"}}), `crawlstate/test: log events: events[0] has an empty URL ("a") or stage ("")`},
		{"vectors", c.Vectors("put vectors", "m", map[string][]float32{"h": {1}}), ""},
		{"vectors without model", c.Vectors("vectors", "", nil), "crawlstate/test: vectors: empty model name"},
		{"vector without hash", c.Vectors("put vectors", "m", map[string][]float32{"": {1}}), `crawlstate/test: put vectors: model "m": an empty text hash`},
		{"empty vector", c.Vectors("put vectors", "m", map[string][]float32{"h": {}}), `crawlstate/test: put vectors: model "m": text hash h has an empty vector`},
		{"document", c.Document("docs", crawlstate.Document{URL: "s"}), ""},
		{"document without URL", c.Document("docs", crawlstate.Document{}), `crawlstate/test: put document: empty source ("docs") or document URL ("")`},
		{"via", c.Via("s"), ""},
		{"no via", c.Via(""), "crawlstate/test: touch listed: empty document URL"},
		{"delivered", c.Delivered("x", t0), ""},
		{"delivered at zero", c.Delivered("x", time.Time{}), `crawlstate/test: mark delivered: alert "x": zero delivery time`},
		{"alert lease", c.AlertLease("x", "w", time.Minute), ""},
		{"alert lease without ID", c.AlertLease("", "w", time.Minute), "crawlstate/test: claim alert: empty alert ID"},
		{"alert lease without owner", c.AlertLease("x", "", time.Minute), `crawlstate/test: claim alert: alert "x": empty owner`},
		{"alert lease without ttl", c.AlertLease("x", "w", 0), `crawlstate/test: claim alert: alert "x": ttl 0s; it must be positive`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if tc.want == "" {
				require.NoError(t, tc.err)
				return
			}
			require.ErrorContains(t, tc.err, tc.want)
		})
	}
}

func TestCheckerNotFound(t *testing.T) {
	const c = Checker("crawlstate/test")
	err := c.NoSuchURL("record", "docs", "https://ex.com/a")
	require.ErrorIs(t, err, crawlstate.ErrNotFound)
	require.ErrorContains(t, err, `crawlstate/test: record: "https://ex.com/a": no such URL in source "docs"`)
	err = c.NoSuchAlert("mark delivered", "x")
	require.ErrorIs(t, err, crawlstate.ErrNotFound)
	require.ErrorContains(t, err, `crawlstate/test: mark delivered: "x": no such alert`)
}

func TestLastError(t *testing.T) {
	require.Equal(t, "fetch: timeout", LastError(crawlstate.Failure{Stage: "fetch", Err: "timeout"}))
	require.Equal(t, "timeout", LastError(crawlstate.Failure{Err: "timeout"}))
}

func TestPrealloc(t *testing.T) {
	for _, tc := range []struct{ limit, want int }{{-1, 0}, {0, 0}, {1, 1}, {500, 500}, {MaxPrealloc, MaxPrealloc}, {1 << 30, MaxPrealloc}} {
		require.Equal(t, tc.want, Prealloc(tc.limit), "limit %d", tc.limit)
	}
}

func TestCheckerClaim(t *testing.T) {
	const c = Checker("crawlstate/test")
	require.NoError(t, c.Claim("docs", "w", time.Minute, 1))
	require.ErrorContains(t, c.Claim("docs", "w", 0, 1), "crawlstate/test: claim: ttl 0s; it must be positive")
	require.ErrorContains(t, c.Claim("docs", "w", time.Minute, 0), "crawlstate/test: claim: limit 0; pass a page size of at least 1")
}
