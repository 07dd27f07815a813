package sqlite_test

import (
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/recrawl/recrawl/crawlstate"
	"github.com/recrawl/recrawl/crawlstate/internal/benchdata"
	"github.com/recrawl/recrawl/crawlstate/sqlite"
	"github.com/recrawl/recrawl/internal/cputime"
)

// cpuMeter reports the process CPU time per op (see cputime.Process) for the
// timed part of a benchmark.
type cpuMeter struct {
	b       *testing.B
	start   time.Duration
	total   time.Duration
	running bool
}

func meterCPU(b *testing.B) *cpuMeter {
	return &cpuMeter{b: b, start: cputime.Process(), running: true}
}

func (m *cpuMeter) stop() {
	m.b.StopTimer()
	m.total += cputime.Process() - m.start
	m.running = false
}

func (m *cpuMeter) resume() {
	m.start = cputime.Process()
	m.running = true
	m.b.StartTimer()
}

func (m *cpuMeter) report() {
	if m.running {
		m.total += cputime.Process() - m.start
		m.running = false
	}
	if m.total > 0 {
		m.b.ReportMetric(float64(m.total.Nanoseconds())/float64(m.b.N), "cpu-ns/op")
	}
}

// BenchmarkUpsertDiscovered measures one discovery run: every op is one
// UpsertDiscovered call of the whole batch (one transaction).
//
//	new-*       all URLs are new (first run; a fresh database per op)
//	grow-*      all URLs are new to a source that already has 100k rows
//	            (a site that grew tenfold; a fresh database per op)
//	reupsert-*  the same URLs again, nothing moved (the steady state)
//	bump10-*    the same URLs with 10% of the lastmods moved
func BenchmarkUpsertDiscovered(b *testing.B) {
	for _, n := range []int{100_000, 1_000_000} {
		b.Run(fmt.Sprintf("new-%dk", n/1000), func(b *testing.B) {
			ds := benchdata.URLs(n, t0)
			b.ReportAllocs()
			cpu := meterCPU(b)
			for i := 0; b.Loop(); i++ {
				cpu.stop()
				s := openFile(b, filepath.Join(b.TempDir(), fmt.Sprintf("state-%d.db", i)))
				cpu.resume()
				st, err := s.UpsertDiscovered(b.Context(), "docs", t0, ds)
				cpu.stop()
				require.NoError(b, err)
				require.Equal(b, n, st.New)
				require.NoError(b, s.Close())
				cpu.resume()
			}
			cpu.report()
			b.ReportMetric(float64(n)*float64(b.N)/b.Elapsed().Seconds(), "urls/s")
		})
	}
	for _, n := range []int{100_000, 1_000_000} {
		b.Run(fmt.Sprintf("grow-%dk", n/1000), func(b *testing.B) {
			before := benchdata.URLs(100_000, t0)
			ds := benchdata.URLs(n, t0)
			for i := range ds {
				// Between the rows already stored, in key order.
				ds[i].URL += "/more"
				ds[i].OriginalURL += "more"
			}
			b.ReportAllocs()
			cpu := meterCPU(b)
			for i := 0; b.Loop(); i++ {
				cpu.stop()
				s := openFile(b, filepath.Join(b.TempDir(), fmt.Sprintf("state-%d.db", i)))
				_, err := s.UpsertDiscovered(b.Context(), "docs", t0, before)
				require.NoError(b, err)
				cpu.resume()
				st, err := s.UpsertDiscovered(b.Context(), "docs", t0.Add(time.Hour), ds)
				cpu.stop()
				require.NoError(b, err)
				require.Equal(b, n, st.New)
				require.NoError(b, s.Close())
				cpu.resume()
			}
			cpu.report()
			b.ReportMetric(float64(n)*float64(b.N)/b.Elapsed().Seconds(), "urls/s")
		})
	}
	for _, n := range []int{100_000} {
		for _, bump := range []bool{false, true} {
			name := fmt.Sprintf("reupsert-%dk", n/1000)
			if bump {
				name = fmt.Sprintf("bump10-%dk", n/1000)
			}
			b.Run(name, func(b *testing.B) {
				s := openFile(b, filepath.Join(b.TempDir(), "state.db"))
				defer s.Close()
				ds := benchdata.URLs(n, t0)
				_, err := s.UpsertDiscovered(b.Context(), "docs", t0, ds)
				require.NoError(b, err)
				b.ReportAllocs()
				cpu := meterCPU(b)
				for i := 0; b.Loop(); i++ {
					if bump {
						cpu.stop()
						for j := i % 10; j < n; j += 10 {
							ds[j].LastMod = ds[j].LastMod.Add(time.Hour)
						}
						cpu.resume()
					}
					st, err := s.UpsertDiscovered(b.Context(), "docs", t0.Add(time.Duration(i+1)*time.Hour), ds)
					require.NoError(b, err)
					require.Equal(b, n, st.Seen)
					if bump {
						require.Equal(b, n/10, st.Bumped)
					}
				}
				cpu.report()
				b.ReportMetric(float64(n)*float64(b.N)/b.Elapsed().Seconds(), "urls/s")
			})
		}
	}
}

// dueFixture builds a database of n rows whose NextCheck values spread
// over n seconds after t0 (row k at t0+k s), so at t0+n/2 s half are due.
// The rows are as wide as the engine makes them: validators, title,
// canonical, listing sitemap and a full window of change statistics.
func dueFixture(b *testing.B, n int) *sqlite.State {
	b.Helper()
	s := openFile(b, filepath.Join(b.TempDir(), "state.db"))
	ds := benchdata.URLs(n, t0)
	_, err := s.UpsertDiscovered(b.Context(), "docs", t0, ds)
	require.NoError(b, err)
	const batch = 20_000
	for start := 0; start < n; start += batch {
		rs := make([]crawlstate.Result, 0, batch)
		for i, d := range ds[start:min(start+batch, n)] {
			next := d.LastMod // t0 + k seconds, see benchdata.URLs
			rs = append(rs, crawlstate.Result{
				URL: d.URL, At: t0, Changed: true, Interval: 24 * time.Hour, NextCheck: next,
				ContentHash:  "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08",
				ETag:         `"5f1a2b-3c4d"`,
				LastModified: "Sat, 01 Mar 2025 10:00:00 GMT",
				Title:        "Configuring the widget pipeline | Example Docs",
				Canonical:    d.URL,
				Stats:        benchdata.Stats(start+i, t0),
			})
		}
		require.NoError(b, s.Record(b.Context(), "docs", rs))
	}
	// Another source of the same size shares the table and index.
	_, err = s.UpsertDiscovered(b.Context(), "blog", t0, ds)
	require.NoError(b, err)
	return s
}

// BenchmarkDue measures the due-queue query on a table of 1M rows per
// source (2M in all), half of them due: the first page of 500 and a page
// starting deep in the queue.
func BenchmarkDue(b *testing.B) {
	const n = 1_000_000
	s := dueFixture(b, n)
	defer s.Close()
	now := t0.Add(n / 2 * time.Second)
	for _, tc := range []struct {
		name  string
		after crawlstate.Key
	}{
		{"first-page-500", crawlstate.Key{}},
		{"deep-page-500", crawlstate.Key{NextCheck: t0.Add(450_000 * time.Second)}},
	} {
		b.Run(tc.name, func(b *testing.B) {
			b.ReportAllocs()
			cpu := meterCPU(b)
			for b.Loop() {
				rows, err := s.Due(b.Context(), "docs", now, tc.after, 500)
				require.NoError(b, err)
				require.Len(b, rows, 500)
			}
			cpu.report()
		})
	}
}

// BenchmarkMarkMissing measures the absence count after a discovery run
// over 100k rows: when 1% of the rows were not listed (the usual case),
// when none were (a worst case: the sitemap came back empty), and when
// every listing document answered 304 (the rows are seen through their
// documents' stamps).
func BenchmarkMarkMissing(b *testing.B) {
	const n = 100_000
	for _, tc := range []struct {
		name    string
		listed  int
		stamped bool // the listing documents answered 304 (TouchListed)
	}{{"1pct-missing", n - n/100, false}, {"all-missing", 0, false}, {"all-stamped", n, true}} {
		b.Run(tc.name, func(b *testing.B) {
			s := openFile(b, filepath.Join(b.TempDir(), "state.db"))
			defer s.Close()
			ds := benchdata.URLs(n, t0)
			_, err := s.UpsertDiscovered(b.Context(), "docs", t0, ds)
			require.NoError(b, err)
			for k := range n / benchdata.PerSitemap {
				require.NoError(b, s.PutDocument(b.Context(), "docs", crawlstate.Document{URL: benchdata.Sitemap(k), Entries: benchdata.PerSitemap, FetchedAt: t0}))
			}
			b.ReportAllocs()
			cpu := meterCPU(b)
			for i := 0; b.Loop(); i++ {
				runStart := t0.Add(time.Duration(i+1) * time.Hour)
				switch {
				case tc.stamped:
					cpu.stop()
					for k := range n / benchdata.PerSitemap {
						_, err := s.TouchListed(b.Context(), "docs", benchdata.Sitemap(k), runStart)
						require.NoError(b, err)
					}
					cpu.resume()
				case tc.listed > 0:
					cpu.stop()
					_, err := s.UpsertDiscovered(b.Context(), "docs", runStart, ds[:tc.listed])
					require.NoError(b, err)
					cpu.resume()
				}
				c, err := s.MarkMissing(b.Context(), "docs", runStart, runStart, 3)
				require.NoError(b, err)
				require.Equal(b, n-tc.listed, c)
			}
			cpu.report()
		})
	}
}

// BenchmarkRecord measures storing fetch results: one transaction per
// batch, so the per-result cost falls with the batch size.
func BenchmarkRecord(b *testing.B) {
	const n = 10_000
	s := openFile(b, filepath.Join(b.TempDir(), "state.db"))
	defer s.Close()
	ds := benchdata.URLs(n, t0)
	_, err := s.UpsertDiscovered(b.Context(), "docs", t0, ds)
	require.NoError(b, err)
	for _, size := range []int{1, 100} {
		b.Run(fmt.Sprintf("batch-%d", size), func(b *testing.B) {
			b.ReportAllocs()
			rs := make([]crawlstate.Result, size)
			cpu := meterCPU(b)
			for i := 0; b.Loop(); i++ {
				for j := range rs {
					at := t0.Add(time.Duration(i) * time.Second)
					rs[j] = crawlstate.Result{URL: ds[(i*size+j)%n].URL, At: at, NotModified: true,
						Interval: time.Hour, NextCheck: at.Add(time.Hour)}
				}
				require.NoError(b, s.Record(b.Context(), "docs", rs))
			}
			cpu.report()
			b.ReportMetric(float64(size)*float64(b.N)/b.Elapsed().Seconds(), "results/s")
		})
	}
}

// BenchmarkRecordFull measures results as the engine records a changed
// page: statistics, title, 40 links, 12 chunks of 1 KiB and an alert.
func BenchmarkRecordFull(b *testing.B) {
	const n = 10_000
	s := openFile(b, filepath.Join(b.TempDir(), "state.db"))
	defer s.Close()
	ds := benchdata.URLs(n, t0)
	_, err := s.UpsertDiscovered(b.Context(), "docs", t0, ds)
	require.NoError(b, err)
	result := func(i int) crawlstate.Result { return benchdata.Changed(ds[i%n].URL, i, t0) }
	for _, size := range []int{1, 100} {
		b.Run(fmt.Sprintf("batch-%d", size), func(b *testing.B) {
			b.ReportAllocs()
			rs := make([]crawlstate.Result, size)
			cpu := meterCPU(b)
			for i := 0; b.Loop(); i++ {
				for j := range rs {
					rs[j] = result(i*size + j)
				}
				require.NoError(b, s.Record(b.Context(), "docs", rs))
			}
			cpu.report()
			b.ReportMetric(float64(size)*float64(b.N)/b.Elapsed().Seconds(), "results/s")
		})
	}
}

// BenchmarkTouchListed measures marking seen the URLs of a sitemap file
// that answered 304, in a source of 100k rows listed by 50 files of 2,000
// URLs (another source of the same size shares the table): with the
// files stored as documents, as the engine stores them (the document is
// stamped, its rows counted), and without (every row is written).
// no-match touches a file that lists nothing: the cost of finding the
// rows.
func BenchmarkTouchListed(b *testing.B) {
	const n = 100_000
	s := openFile(b, filepath.Join(b.TempDir(), "state.db"))
	defer s.Close()
	ds := benchdata.URLs(n, t0)
	for _, src := range []string{"docs", "blog"} {
		_, err := s.UpsertDiscovered(b.Context(), src, t0, ds)
		require.NoError(b, err)
	}
	for _, tc := range []struct {
		name string
		via  func(i int) string
		want int
		docs bool // the documents are stored, as the engine stores them
	}{
		// Without stored documents first: the last case stores them.
		{"sitemap-2000-no-document", func(i int) string { return benchdata.Sitemap(i % (n / benchdata.PerSitemap)) }, benchdata.PerSitemap, false},
		{"no-match", func(int) string { return benchdata.Sitemap(n) }, 0, false},
		{"sitemap-2000", func(i int) string { return benchdata.Sitemap(i % (n / benchdata.PerSitemap)) }, benchdata.PerSitemap, true},
	} {
		b.Run(tc.name, func(b *testing.B) {
			for i := range n / benchdata.PerSitemap {
				if tc.docs {
					require.NoError(b, s.PutDocument(b.Context(), "docs", crawlstate.Document{URL: benchdata.Sitemap(i), Entries: benchdata.PerSitemap, FetchedAt: t0}))
				}
			}
			b.ReportAllocs()
			cpu := meterCPU(b)
			for i := 0; b.Loop(); i++ {
				c, err := s.TouchListed(b.Context(), "docs", tc.via(i), t0.Add(time.Duration(i+1)*time.Minute))
				require.NoError(b, err)
				require.Equal(b, tc.want, c)
			}
			cpu.report()
		})
	}
}

// BenchmarkVectors measures the vector cache with 768-dimension vectors:
// looking up the 2,000 chunk hashes of a large batch of pages (half of
// them cached, in a cache of 100k vectors) and storing 100 new ones.
func BenchmarkVectors(b *testing.B) {
	const (
		dims   = 768
		cached = 100_000
		lookup = 2_000
	)
	s := openFile(b, filepath.Join(b.TempDir(), "state.db"))
	defer s.Close()
	vec := make([]float32, dims)
	for i := range vec {
		vec[i] = float32(i) / dims
	}
	hash := func(i int) string { return fmt.Sprintf("%064x", uint64(i)*0x9e3779b97f4a7c15) }
	for start := 0; start < cached; start += 10_000 {
		m := make(map[string][]float32, 10_000)
		for i := start; i < start+10_000; i++ {
			m[hash(i)] = vec
		}
		require.NoError(b, s.PutVectors(b.Context(), "m", m))
	}
	b.Run(fmt.Sprintf("lookup-%d-half-cached", lookup), func(b *testing.B) {
		hashes := make([]string, lookup)
		for i := range hashes {
			if i%2 == 0 {
				hashes[i] = hash(i * (cached / lookup)) // spread over the cache
			} else {
				hashes[i] = hash(cached + i) // not cached
			}
		}
		b.ReportAllocs()
		b.SetBytes(int64(lookup / 2 * dims * 4))
		cpu := meterCPU(b)
		for b.Loop() {
			got, err := s.Vectors(b.Context(), "m", hashes)
			require.NoError(b, err)
			require.Len(b, got, lookup/2)
		}
		cpu.report()
	})
	b.Run("put-100", func(b *testing.B) {
		b.ReportAllocs()
		b.SetBytes(100 * dims * 4)
		cpu := meterCPU(b)
		for i := 0; b.Loop(); i++ {
			m := make(map[string][]float32, 100)
			for j := range 100 {
				m[hash(cached+1_000_000+i*100+j)] = vec
			}
			require.NoError(b, s.PutVectors(b.Context(), "m", m))
		}
		cpu.report()
	})
}
