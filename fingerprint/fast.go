package fingerprint

import (
	"regexp"
	"strings"
)

// lineFilter returns, in ascending order and without repeats, the start
// offsets of the lines of text that may hold a match. It lets a line-local
// pattern skip most of a page: Go's regexp engine is slow on long inputs
// without a literal prefix, and fast on short lines.
type lineFilter func(text string) []int

// fastRegexp is MustRegexp for a pattern that cannot match across a line
// end; filter picks the lines it may match.
func fastRegexp(name, expr, replace string, filter lineFilter) Rule {
	r := MustRegexp(name, expr, replace)
	r.filter, r.filterFor = filter, r.Pattern
	return r
}

// replaceLines applies re to the lines that filter selects.
func replaceLines(re *regexp.Regexp, repl, text string, filter lineFilter) string {
	starts := filter(text)
	if len(starts) == 0 {
		return text
	}
	var b strings.Builder
	copied := 0
	for _, start := range starts {
		end := strings.IndexByte(text[start:], '\n')
		if end < 0 {
			end = len(text)
		} else {
			end += start
		}
		line := text[start:end]
		if re.FindStringIndex(line) == nil {
			continue
		}
		if b.Len() == 0 {
			b.Grow(len(text))
		}
		b.WriteString(text[copied:start])
		b.WriteString(re.ReplaceAllString(line, repl))
		copied = end
	}
	if copied == 0 {
		return text
	}
	b.WriteString(text[copied:])
	return b.String()
}

// lineStarts maps match offsets (ascending) to the starts of their lines.
// It scans each line at most twice, however many offsets it holds.
func lineStarts(text string, offsets []int) []int {
	var out []int
	lineEnd := -1 // end of the line of the last offset mapped
	for _, off := range offsets {
		if off < lineEnd {
			continue
		}
		out = append(out, strings.LastIndexByte(text[:off], '\n')+1)
		if e := strings.IndexByte(text[off:], '\n'); e >= 0 {
			lineEnd = off + e
		} else {
			lineEnd = len(text)
		}
	}
	return out
}

// withKey selects the lines where a ':' or '=' follows (after optional
// quotes and white space) a word of letters, digits, '_' and '-' whose last
// 40 bytes hold one of words (lower-case ASCII), in any letter case: the
// shape of "csrf_token=" or "\"nonce\": ".
func withKey(words ...string) lineFilter {
	return func(text string) []int {
		var offsets []int
		var buf [40]byte
		// The next ':' and '=' at or after from (len(text): none), found
		// by strings.IndexByte: IndexAny tests every byte against a set.
		colon, equals := -1, -1
		for from := 0; ; {
			if colon < from && colon != len(text) {
				colon = indexByteFrom(text, ':', from)
			}
			if equals < from && equals != len(text) {
				equals = indexByteFrom(text, '=', from)
			}
			i := min(colon, equals)
			if i == len(text) {
				break
			}
			from = i + 1
			j := i
			for j > 0 && (text[j-1] == ' ' || text[j-1] == '\t' || text[j-1] == '"' || text[j-1] == '\'' || text[j-1] >= 0x80) {
				j--
			}
			n := 0
			for j > 0 && n < len(buf) && isKeyByte(text[j-1]) {
				j--
				n++
			}
			key := buf[:n]
			for k := range n {
				c := text[j+k]
				if 'A' <= c && c <= 'Z' {
					c += 'a' - 'A'
				}
				key[k] = c
			}
			for _, w := range words {
				if strings.Contains(string(key), w) {
					offsets = append(offsets, i)
					break
				}
			}
		}
		return lineStarts(text, offsets)
	}
}

func isKeyByte(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '_' || c == '-'
}

// withClockAnd selects the lines that withClock selects and that hold one
// of words (lower-case ASCII), in any letter case.
func withClockAnd(words ...string) lineFilter {
	return func(text string) []int {
		starts := withClock(text)
		out := starts[:0]
		for _, start := range starts {
			line := text[start:]
			if end := strings.IndexByte(line, '\n'); end >= 0 {
				line = line[:end]
			}
			for _, w := range words {
				if containsFold(line, w) {
					out = append(out, start)
					break
				}
			}
		}
		return out
	}
}

// containsFold reports whether s holds word (lower-case ASCII) with its
// ASCII letters in any case, without copying s.
func containsFold(s, word string) bool {
	return indexFold(s, word, 0) >= 0
}

// indexFold is the first index at or after from where word (lower-case
// ASCII) occurs in s with its ASCII letters in any case, or -1. Other
// bytes match only themselves, so offsets are offsets in s. Candidates are
// found by strings.IndexByte on one byte of word in either case (its
// second: in "ago", "g" is rarer than "a").
func indexFold(s, word string, from int) int {
	if len(word) == 0 {
		return from
	}
	at := 0
	if len(word) > 1 {
		at = 1
	}
	lo, up := word[at], word[at]
	if 'a' <= lo && lo <= 'z' {
		up = lo - 'a' + 'A'
	}
	nextLo, nextUp := -1, -1 // next offsets of lo and up at or after the search point; -1: not searched
	for i := from + at; i+len(word)-at <= len(s); {
		if nextLo < i && nextLo != len(s) {
			nextLo = indexByteFrom(s, lo, i)
		}
		if nextUp < i && nextUp != len(s) {
			nextUp = indexByteFrom(s, up, i)
		}
		c := min(nextLo, nextUp)
		if c+len(word)-at > len(s) {
			return -1
		}
		if start := c - at; matchFold(s[start:start+len(word)], word) {
			return start
		}
		i = c + 1
	}
	return -1
}

// indexByteFrom is the index of c in s at or after i, or len(s).
func indexByteFrom(s string, c byte, i int) int {
	if j := strings.IndexByte(s[i:], c); j >= 0 {
		return i + j
	}
	return len(s)
}

// matchFold reports whether s equals word (lower-case ASCII) with its
// ASCII letters in any case.
func matchFold(s, word string) bool {
	for j := 0; j < len(word); j++ {
		if lowerASCII(s[j]) != word[j] {
			return false
		}
	}
	return true
}

func lowerASCII(c byte) byte {
	if 'A' <= c && c <= 'Z' {
		return c + 'a' - 'A'
	}
	return c
}

// agoUnits are the words the relative-times pattern accepts before "ago".
var agoUnits = map[string]bool{
	"second": true, "seconds": true, "sec": true, "secs": true, "minute": true, "minutes": true,
	"min": true, "mins": true, "hour": true, "hours": true, "hr": true, "hrs": true, "day": true, "days": true,
}

// withAgo selects the lines where "ago" (any case) follows white space and
// one of agoUnits.
func withAgo(text string) []int {
	var offsets []int
	var unit [8]byte
	for from := 0; ; {
		i := indexFold(text, "ago", from)
		if i < 0 {
			break
		}
		from = i + 3
		j := i
		for j > 0 && (text[j-1] == ' ' || text[j-1] == '\t' || text[j-1] >= 0x80) {
			j--
		}
		if j == i {
			continue // "ago" inside a word, as in "Chicago"
		}
		k := j
		for k > 0 && j-k < len(unit) && 'a' <= lowerASCII(text[k-1]) && lowerASCII(text[k-1]) <= 'z' {
			k--
		}
		u := unit[:j-k]
		for n := range u {
			u[n] = lowerASCII(text[k+n])
		}
		if agoUnits[string(u)] {
			offsets = append(offsets, i)
		}
	}
	return lineStarts(text, offsets)
}

// withClock selects the lines holding a digit, a colon and a digit: the
// core of every time of day.
func withClock(text string) []int {
	var offsets []int
	for from := 0; ; {
		i := strings.IndexByte(text[from:], ':')
		if i < 0 {
			break
		}
		i += from
		if i > 0 && i+1 < len(text) && isDigit(text[i-1]) && isDigit(text[i+1]) {
			offsets = append(offsets, i)
		}
		from = i + 1
	}
	return lineStarts(text, offsets)
}

func isDigit(c byte) bool { return '0' <= c && c <= '9' }
