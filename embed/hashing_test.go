package embed_test

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"math"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/recrawl/recrawl/embed"
)

var update = flag.Bool("update", false, "rewrite golden files in testdata")

func cosine(a, b []float32) float64 {
	var dot, na, nb float64
	for i := range a {
		dot += float64(a[i]) * float64(b[i])
		na += float64(a[i]) * float64(a[i])
		nb += float64(b[i]) * float64(b[i])
	}
	if na == 0 || nb == 0 {
		return 0
	}
	return dot / math.Sqrt(na*nb)
}

func norm(v []float32) float64 {
	var s float64
	for _, x := range v {
		s += float64(x) * float64(x)
	}
	return math.Sqrt(s)
}

func embedOne(t *testing.T, e embed.Embedder, text string) []float32 {
	t.Helper()
	vs, err := e.Embed(context.Background(), []string{text})
	require.NoError(t, err)
	require.Len(t, vs, 1)
	return vs[0]
}

func TestNewHashing(t *testing.T) {
	tests := []struct {
		dims      int
		wantDims  int
		wantModel string
		wantErr   bool
	}{
		{0, 384, "hashing-v1-384", false},
		{128, 128, "hashing-v1-128", false},
		{1, 1, "hashing-v1-1", false},
		{embed.MaxDimensions, embed.MaxDimensions, "hashing-v1-65536", false},
		{-1, 0, "", true},
		{embed.MaxDimensions + 1, 0, "", true},
	}
	for _, tc := range tests {
		h, err := embed.NewHashing(tc.dims)
		if tc.wantErr {
			var ce *embed.ConfigError
			require.ErrorAs(t, err, &ce)
			require.Equal(t, "dims", ce.Field)
			continue
		}
		require.NoError(t, err)
		require.Equal(t, tc.wantDims, h.Dimensions())
		require.Equal(t, tc.wantModel, h.Model())
		require.Len(t, embedOne(t, h, "some text"), tc.wantDims)
	}
	var zero embed.Hashing
	require.Equal(t, 384, zero.Dimensions())
	require.Equal(t, "hashing-v1-384", zero.Model())
}

func TestHashingProperties(t *testing.T) {
	h, err := embed.NewHashing(0)
	require.NoError(t, err)
	sim := func(a, b string) float64 { return cosine(embedOne(t, h, a), embedOne(t, h, b)) }

	tests := []struct {
		name  string
		check func(t *testing.T)
	}{
		{"unit length", func(t *testing.T) {
			for _, s := range []string{"a", "crawl the sitemap", "分块边界", "Ünïcödé wörds"} {
				require.InDelta(t, 1, norm(embedOne(t, h, s)), 1e-5, s)
			}
		}},
		{"no tokens gives the zero vector", func(t *testing.T) {
			for _, s := range []string{"", "  ", "!!! --- ???", "🙂🙂"} {
				require.Zero(t, norm(embedOne(t, h, s)), s)
			}
		}},
		{"case and punctuation do not matter", func(t *testing.T) {
			require.InDelta(t, 1, sim("Hello, World!", "hello world"), 1e-6)
			require.InDelta(t, 1, sim("HTTP/2 push", "http 2 push"), 1e-6)
		}},
		{"word order matters through bigrams", func(t *testing.T) {
			s := sim("dog bites man", "man bites dog")
			require.Less(t, s, 0.99)
			require.Greater(t, s, 0.3)
		}},
		{"shared words score higher than unrelated text", func(t *testing.T) {
			a := "the crawler fetches the sitemap and schedules changed pages"
			b := "the crawler fetches sitemap pages and schedules them"
			c := "bake the bread at two hundred degrees for forty minutes"
			require.Greater(t, sim(a, b), 0.5)
			require.Less(t, sim(a, c), 0.3)
		}},
		{"Chinese is tokenized by character", func(t *testing.T) {
			require.Greater(t, sim("网页抓取与嵌入向量", "网页抓取"), 0.4)
			require.Less(t, sim("网页抓取与嵌入向量", "今天天气很好"), 0.2)
		}},
		{"combining marks stay inside words", func(t *testing.T) {
			// "café" with a combining acute accent is one token, not "caf" + "e".
			require.Less(t, sim("cafe\u0301", "caf e"), 0.5)
		}},
		{"deterministic across calls", func(t *testing.T) {
			require.Equal(t, embedOne(t, h, "same text"), embedOne(t, h, "same text"))
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, tc.check)
	}
}

func TestHashingEmbedKeepsOrder(t *testing.T) {
	h, _ := embed.NewHashing(64)
	texts := []string{"first text", "second text", "", "fourth"}
	vs, err := h.Embed(context.Background(), texts)
	require.NoError(t, err)
	require.Len(t, vs, len(texts))
	for i, s := range texts {
		require.Equal(t, embedOne(t, h, s), vs[i])
	}
	vs, err = h.Embed(context.Background(), nil)
	require.NoError(t, err)
	require.Empty(t, vs)
}

func TestHashingCanceled(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := (&embed.Hashing{}).Embed(ctx, []string{"x"})
	require.True(t, errors.Is(err, context.Canceled))
}

func TestHashingConcurrent(t *testing.T) {
	h, _ := embed.NewHashing(0)
	want := embedOne(t, h, "concurrent use is safe")
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			vs, err := h.Embed(context.Background(), []string{"concurrent use is safe"})
			assert.NoError(t, err)
			assert.Equal(t, want, vs[0])
		})
	}
	wg.Wait()
}

// The hashing vectors are stored and compared across runs and releases, so
// their exact values are pinned: a change here must come with a new model
// version ("hashing-v2").
func TestHashingGolden(t *testing.T) {
	type entry struct {
		Text    string             `json:"text"`
		Nonzero map[string]float32 `json:"nonzero"` // coordinate -> value
	}
	texts := []string{
		"hello world",
		"Incremental crawling keeps pages fresh.",
		"网页抓取与嵌入向量",
		"Ünïcödé wörds 42",
	}
	h, _ := embed.NewHashing(64)
	var got []entry
	for _, s := range texts {
		e := entry{Text: s, Nonzero: map[string]float32{}}
		for i, x := range embedOne(t, h, s) {
			if x != 0 {
				b, _ := json.Marshal(i)
				e.Nonzero[string(b)] = x
			}
		}
		got = append(got, e)
	}
	gotJSON, err := json.MarshalIndent(got, "", "  ")
	require.NoError(t, err)
	path := filepath.Join("testdata", "hashing-v1-64.json")
	if *update {
		require.NoError(t, os.WriteFile(path, append(gotJSON, '\n'), 0o644))
	}
	want, err := os.ReadFile(path)
	require.NoError(t, err, "run go test ./embed -run TestHashingGolden -update")
	require.JSONEq(t, string(want), string(gotJSON))
}

func BenchmarkHashing(b *testing.B) {
	h, _ := embed.NewHashing(0)
	text := "Chunk boundaries should be stable under small edits. Fixed character windows are easy to implement, " +
		"but an inserted paragraph can shift every later window and manufacture a page-wide diff. "
	texts := make([]string, 0, 8)
	for range 8 {
		texts = append(texts, text+text+text+text+text)
	}
	var n int64
	for _, s := range texts {
		n += int64(len(s))
	}
	b.SetBytes(n)
	b.ReportAllocs()
	ctx := context.Background()
	for b.Loop() {
		if _, err := h.Embed(ctx, texts); err != nil {
			b.Fatal(err)
		}
	}
}
