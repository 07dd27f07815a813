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
		for from := 0; ; {
			i := strings.IndexAny(text[from:], ":=")
			if i < 0 {
				break
			}
			i += from
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
			lower := asciiLower(line)
			for _, w := range words {
				if strings.Contains(lower, w) {
					out = append(out, start)
					break
				}
			}
		}
		return out
	}
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
	lower := asciiLower(text)
	for from := 0; ; {
		i := strings.Index(lower[from:], "ago")
		if i < 0 {
			break
		}
		i += from
		from = i + 3
		j := i
		for j > 0 && (lower[j-1] == ' ' || lower[j-1] == '\t' || lower[j-1] >= 0x80) {
			j--
		}
		if j == i {
			continue // "ago" inside a word, as in "Chicago"
		}
		k := j
		for k > 0 && j-k < 8 && 'a' <= lower[k-1] && lower[k-1] <= 'z' {
			k--
		}
		if agoUnits[lower[k:j]] {
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

// asciiLower lower-cases ASCII letters and keeps every other byte, so
// offsets in the result are offsets in s.
func asciiLower(s string) string {
	b := []byte(s)
	for i, c := range b {
		if 'A' <= c && c <= 'Z' {
			b[i] = c + 'a' - 'A'
		}
	}
	return string(b)
}
