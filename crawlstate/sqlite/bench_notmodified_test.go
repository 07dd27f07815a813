package sqlite_test

import (
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/recrawl/recrawl/crawlstate"
	"github.com/recrawl/recrawl/crawlstate/internal/benchdata"
)

// BenchmarkRecordNotModified measures what the engine's committer writes
// for a run in which every page answers 304: one Record of 2,000 results
// (one transaction), each with its statistics and its fetch event, against
// a source of 2,000 rows whose event log grows by 2,000 events an op.
// cpu-µs/304 is the process CPU time per result.
func BenchmarkRecordNotModified(b *testing.B) {
	const n = 2000
	s := openFile(b, filepath.Join(b.TempDir(), "state.db"))
	defer s.Close()
	ds := benchdata.URLs(n, t0)
	_, err := s.UpsertDiscovered(b.Context(), "docs", t0, ds)
	require.NoError(b, err)
	stats, etags := make([]*crawlstate.Stats, n), make([]string, n)
	for k := range stats {
		stats[k], etags[k] = benchdata.Stats(k, t0), fmt.Sprintf(`"e%d"`, k)
	}
	rs := make([]crawlstate.Result, n)
	b.ReportAllocs()
	cpu := meterCPU(b)
	for i := 0; b.Loop(); i++ {
		at := t0.Add(time.Duration(i+1) * 24 * time.Hour)
		for j := range rs {
			rs[j] = crawlstate.Result{URL: ds[j].URL, At: at, NotModified: true, ETag: etags[j],
				Interval: 24 * time.Hour, NextCheck: at.Add(24*time.Hour + time.Duration(j)*time.Second), Stats: stats[j],
				Events: []crawlstate.StageEvent{{At: at, Stage: "fetch", Attempt: 1, OK: true, Detail: "HTTP 304"}}}
		}
		require.NoError(b, s.Record(b.Context(), "docs", rs))
	}
	cpu.stop()
	b.ReportMetric(float64(cpu.total.Microseconds())/float64(n*b.N), "cpu-µs/304")
}
