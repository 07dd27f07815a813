package fingerprint

import (
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// lineStarts must not rescan a line for every offset in it: with a million
// offsets on one 2 MB line, a per-offset backward scan would need about
// 10^12 byte reads, far beyond the test timeout.
func TestLineStartsIsLinear(t *testing.T) {
	text := "first line\n" + strings.Repeat("1:", 1<<20) + "\nlast 1:2"
	offsets := withClock(text)
	require.Equal(t, []int{11, len(text) - len("last 1:2")}, offsets)

	var many []int
	for i := 11; i < len(text)-9; i += 2 {
		many = append(many, i)
	}
	require.Equal(t, []int{11}, lineStarts(text, many))
}

func TestLineFilters(t *testing.T) {
	text := "a csrf_token=1\nPresident: yes\n\"nonce\" : 'x'\nChicago 3 days ago\nx 3 days\u00a0ago\n9:15 updated\nupdated\n10:30"
	line := func(n int) int { // start offset of line n (0-based)
		off := 0
		for range n {
			off += strings.IndexByte(text[off:], '\n') + 1
		}
		return off
	}
	// Filters may over-select ("President" holds "sid"); the pattern decides.
	require.Equal(t, []int{line(0), line(1), line(2)}, withKey("csrf", "xsrf", "token", "nonce", "sess", "sid")(text))
	require.Equal(t, []int{line(3), line(4)}, withAgo(text))
	require.Equal(t, []int{line(5), line(7)}, withClock(text))
	require.Equal(t, []int{line(5)}, withClockAnd("updated")(text))
}

// indexFold finds what strings.Index finds in the text with its ASCII
// letters lowered, at the same offsets, non-ASCII bytes included.
func TestIndexFoldMatchesLoweredIndex(t *testing.T) {
	lower := func(s string) string {
		b := []byte(s)
		for i, c := range b {
			if 'A' <= c && c <= 'Z' {
				b[i] = c + 'a' - 'A'
			}
		}
		return string(b)
	}
	for _, c := range []struct{ text, word string }{
		{"3 days AGO", "ago"}, {"Chicago", "ago"}, {"aGo\xffago", "ago"}, {"ag", "ago"}, {"", "ago"},
		{"Last Updated 9:15", "updated"}, {"UPDATE", "updated"}, {"\u00c4GO ago", "ago"}, {"x", ""},
	} {
		for from := 0; from <= len(c.text); from++ {
			want := strings.Index(lower(c.text)[from:], c.word)
			if want >= 0 {
				want += from
			}
			require.Equal(t, want, indexFold(c.text, c.word, from), "%q in %q from %d", c.word, c.text, from)
		}
		require.Equal(t, strings.Contains(lower(c.text), c.word), containsFold(c.text, c.word))
	}
	// Random texts over the letters of the words in both cases.
	rng := rand.New(rand.NewPCG(1, 2))
	const alphabet = "aAgGoOuUpPdD x\xff"
	for range 3000 {
		b := make([]byte, rng.IntN(24))
		for i := range b {
			b[i] = alphabet[rng.IntN(len(alphabet))]
		}
		text := string(b)
		for _, word := range []string{"ago", "up", "a", "dag"} {
			for from := 0; from <= len(text); from++ {
				want := strings.Index(lower(text)[from:], word)
				if want >= 0 {
					want += from
				}
				require.Equal(t, want, indexFold(text, word, from), "%q in %q from %d", word, text, from)
			}
		}
	}
}
