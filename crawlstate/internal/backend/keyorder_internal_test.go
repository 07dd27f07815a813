package backend

import (
	"cmp"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/recrawl/recrawl/crawlstate"
	"github.com/stretchr/testify/require"
)

// referenceKeyOrder is KeyOrder by a stable comparison sort.
func referenceKeyOrder(urls []crawlstate.Discovered) []int32 {
	idx := make([]int32, len(urls))
	for i := range idx {
		idx[i] = int32(i)
	}
	slices.SortStableFunc(idx, func(a, b int32) int { return strings.Compare(urls[a].URL, urls[b].URL) })
	var order []int32
	for j, i := range idx {
		if j == 0 || urls[i].URL != urls[idx[j-1]].URL {
			order = append(order, i)
		}
	}
	return order
}

func TestKeyOrder(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	// randomURLs draws n URLs of a shared prefix and up to maxTail bytes
	// of alphabet: short alphabets make prefixes, duplicates and ties
	// across 8-byte digits common.
	randomURLs := func(n int, prefix, alphabet string, maxTail int) []string {
		us := make([]string, n)
		for i := range us {
			b := []byte(prefix)
			for range rng.IntN(maxTail + 1) {
				b = append(b, alphabet[rng.IntN(len(alphabet))])
			}
			us[i] = string(b)
		}
		return us
	}
	tests := []struct {
		name string
		urls []string
	}{
		{"one", []string{"https://a.example/"}},
		{"sorted", []string{"a", "b", "c"}},
		{"reversed", []string{"c", "b", "a"}},
		{"duplicates keep the first", []string{"b", "a", "b", "a", "a"}},
		{"all equal", []string{"x/y/z", "x/y/z", "x/y/z"}},
		{"prefixes", []string{"abcdefghij", "abcdefgh", "abcdefghi", "abcdefg", "abcdefghijklmnopq", "abcdefghijklmnop"}},
		{"zero bytes are not padding", []string{"a\x00", "a", "a\x00\x00", "a\x00b", "a\x00\x00\x00\x00\x00\x00\x00\x00x", "a\x00\x00\x00\x00\x00\x00\x00"}},
		{"high bytes", []string{"a\xff", "a\x80", "a\x7f", "\xff", "\xfe\xff"}},
		{"the shared prefix is a whole URL", []string{"https://d.example/docs/x", "https://d.example/docs/", "https://d.example/docs/a"}},
		{"docs site", func() []string {
			us := make([]string, 5000)
			for i := range us {
				k := (i * 7919) % len(us)
				us[i] = fmt.Sprintf("https://docs.example.com/section-%03d/page-%07d", k%50, k/3)
			}
			return us
		}()},
		{"random binary tails", randomURLs(3000, "https://h/", "\x00\x01ab", 24)},
		{"random short", randomURLs(3000, "", "ab", 6)},
		{"random long shared", randomURLs(2000, strings.Repeat("p", 37), "xyz/", 40)},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ds := make([]crawlstate.Discovered, len(tc.urls))
			for i, u := range tc.urls {
				ds[i] = crawlstate.Discovered{URL: u}
			}
			require.Equal(t, referenceKeyOrder(ds), KeyOrder(ds))
		})
	}
}

func TestDigitAt(t *testing.T) {
	tests := []struct {
		s    string
		off  int
		want uint64
	}{
		{"abcdefgh", 0, 0x6162636465666768},
		{"xabcdefghy", 1, 0x6162636465666768},
		{"ab", 0, 0x6162000000000000},
		{"ab", 1, 0x6200000000000000},
		{"ab", 2, 0},
		{"\xff\xff\xff\xff\xff\xff\xff\xff\xff", 1, 0xffffffffffffffff},
	}
	for _, tc := range tests {
		t.Run(fmt.Sprintf("%q@%d", tc.s, tc.off), func(t *testing.T) {
			require.Equal(t, tc.want, digitAt(tc.s, tc.off))
		})
	}
}

// BenchmarkKeyOrder sorts a batch of a million documentation URLs as
// UpsertDiscovered does, against the comparison sort it replaced.
func BenchmarkKeyOrder(b *testing.B) {
	const n = 1_000_000
	ds := make([]crawlstate.Discovered, n)
	for i := range ds {
		k := (i * 7919) % n
		ds[i] = crawlstate.Discovered{URL: fmt.Sprintf("https://docs.example.com/section-%03d/page-%07d", k%500, k)}
	}
	b.Run("radix", func(b *testing.B) {
		for b.Loop() {
			KeyOrder(ds)
		}
	})
	b.Run("comparison", func(b *testing.B) {
		type sortKey struct {
			url string
			i   int32
		}
		for b.Loop() {
			keys := make([]sortKey, len(ds))
			for i := range keys {
				keys[i] = sortKey{ds[i].URL, int32(i)}
			}
			slices.SortFunc(keys, func(a, b sortKey) int {
				return cmp.Or(strings.Compare(a.url, b.url), cmp.Compare(a.i, b.i))
			})
		}
	})
}
