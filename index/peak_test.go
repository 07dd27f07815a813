package index_test

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"runtime"
	"runtime/pprof"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/recrawl/recrawl/index"
	"github.com/recrawl/recrawl/internal/peakheap"
)

// pipelineLoad writes records into m as the engine's pipeline does for
// the bench site (examples/bench, 10,000 pages: 265,000 chunks of 384
// dimensions): a page at a time, 26 or 27 chunks of about 900 bytes of
// prose each, the pipeline's eleven metadata keys (the page's own values
// shared by its records, as the engine's are), fresh vectors from the
// embedder for every page, and the listing of the page's records after
// each upsert.
func pipelineLoad(t testing.TB, m *index.Memory, pages, perPage, dims int) int {
	rng := rand.New(rand.NewPCG(11, 7))
	vocab := make([]string, 4000)
	for i := range vocab {
		var b strings.Builder
		for range 3 + rng.IntN(8) {
			b.WriteByte(byte('a' + rng.IntN(26)))
		}
		vocab[i] = b.String()
	}
	prose := func(n int) string {
		var b strings.Builder
		for b.Len() < n {
			f := rng.Float64()
			b.WriteString(vocab[int(float64(len(vocab))*f*f*f)])
			b.WriteByte(' ')
		}
		return b.String()
	}
	n := 0
	for p := range pages {
		url := fmt.Sprintf("https://docs.example.com/docs/page-%05d", p)
		sum := sha256.Sum256([]byte(url))
		hash := hex.EncodeToString(sum[:])
		title := "Page " + strconv.Itoa(p)
		k := perPage + p%2
		recs := make([]index.Record, k)
		for c := range recs {
			v := make([]float32, dims)
			var norm float64
			for j := range v {
				v[j] = float32(rng.NormFloat64())
				norm += float64(v[j]) * float64(v[j])
			}
			for j := range v {
				v[j] /= float32(math.Sqrt(norm))
			}
			id := sha256.Sum256([]byte(url + hash + strconv.Itoa(c)))
			recs[c] = index.Record{
				ID: hex.EncodeToString(id[:]), Vector: v, Text: prose(700 + rng.IntN(400)),
				Metadata: map[string]string{
					"source": "bench", "source_url": url, "original_url": url, "fetched_at": "2026-12-01T00:00:00Z",
					"content_hash": hash, "chunk_ordinal": strconv.Itoa(c), "heading_path": title + " > Section " + strconv.Itoa(c),
					"char_start": strconv.Itoa(c * 900), "char_end": strconv.Itoa(c*900 + 899), "chunker_version": "chunk/v3", "title": title,
				},
			}
		}
		require.NoError(t, m.Upsert(ctx, recs))
		_, err := m.IDs(ctx, index.Filter{"source": "bench", "source_url": url}, k+256)
		require.NoError(t, err)
		n += k
	}
	return n
}

// TestPeakHeapMemory builds the bench site's index (265,000 records of
// 384 dimensions) as the pipeline does and measures the most heap the
// process held meanwhile (internal/peakheap: live objects and garbage not
// yet collected), against the raw float32 vectors.
func TestPeakHeapMemory(t *testing.T) {
	if testing.Short() || raceEnabled {
		t.Skip("265,000 records: not in -short or race builds")
	}
	const pages, perPage, dims = 10000, 26, 384 // 265,000 records
	for _, tc := range []struct {
		name string
		new  func(int) *index.Memory
		max  float64 // the bound, in raw vector bytes; and 100 MB
	}{
		{"int8", index.NewMemoryInt8, 1.3},
		{"float32", index.NewMemory, math.Inf(1)}, // reported: the bound is int8's (see Memory)
	} {
		t.Run(tc.name, func(t *testing.T) {
			var m *index.Memory
			var n int
			peak := peakheap.Measure(func() {
				m = tc.new(dims)
				n = pipelineLoad(t, m, pages, perPage, dims)
			})
			raw := float64(n * dims * 4)
			runtime.GC()
			var ms runtime.MemStats
			runtime.ReadMemStats(&ms)
			t.Logf("%s: %d records, raw float32 vectors %.0f MB; peak heap %.0f MB (%.2fx raw), live after %.0f MB", tc.name, n, raw/1e6, float64(peak)/1e6, float64(peak)/raw, float64(ms.HeapAlloc)/1e6)
			if p := os.Getenv("RECRAWL_INDEX_HEAPPROFILE"); p != "" {
				f, err := os.Create(p + "." + tc.name)
				require.NoError(t, err)
				require.NoError(t, pprof.WriteHeapProfile(f))
				f.Close()
			}
			require.LessOrEqual(t, float64(peak), tc.max*raw+100e6, "peak heap %.0f MB", float64(peak)/1e6)
			runtime.KeepAlive(m)
		})
	}
}
