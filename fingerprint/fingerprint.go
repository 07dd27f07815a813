// Package fingerprint computes the content hash of a page: the SHA-256 of
// its Markdown after volatile blocks are stripped, so a page whose clock,
// CSRF token or "Related posts" list changes on every fetch does not count as
// changed.
//
// A Rules value is an ordered list of named strip rules. Default holds the
// rules that fit most sites; Rules.With and Set add rules for one site
// without touching Default. Rules.Strip returns exactly the text that
// Rules.Of hashes, so when a page "changes on every run" the two Strip
// outputs can be diffed to find the next rule to add.
//
// Strip works in three steps: line ends become "\n"; each rule runs, in
// order, on the whole text; then every line is trimmed and blank lines are
// dropped.
//
// What Default strips, and what it deliberately leaves:
//
//   - "related-sections": a Markdown ATX heading ("#" to "######") titled
//     "Related posts", "Related articles", "Related stories", "Related
//     content", "Related reading", "You may also like", "You might also
//     like", "Recommended for you" or "Read next" (any case, emphasis and a
//     trailing colon ignored), with everything up to the next heading of the
//     same or a higher level, or to the end. "See also" and "Related topics"
//     are kept: on documentation sites they are content. Setext headings
//     and bold-only lines are not recognised as section starts.
//   - "tokens": the value after csrf/xsrf/authenticity/request-verification
//     tokens, nonce, session ids (sessionid, session_id, session-token,
//     PHPSESSID, JSESSIONID, sid, _token, ...) written as key=value or
//     key: value, JSON-quoted keys included. Unquoted values are removed
//     only when they look machine-made (they hold a digit, or are 16+
//     characters), so "nonce: a number used once" stays. The key remains.
//   - "iso-timestamps": ISO 8601 date-times such as 2026-05-01T10:00:00Z,
//     2026-05-01 10:00 and 2026-05-01T10:00:00.123+02:00. A date alone
//     (2026-05-01) is kept: release dates and changelog entries are content.
//   - "clock-after-cue": a time of day (14:02, 9:15 AM, 5:45 p.m. ET,
//     14:02:11 UTC) on the same line as, and at most five words after, a
//     word that marks a render time: generated, (last) updated, (last)
//     modified, rendered, built, fetched, retrieved, refreshed, cached, as
//     of, current/server/local time, time now. The cue word remains. A bare
//     hh:mm elsewhere is kept: in real text it is a kickoff time, a score
//     clock or a ratio.
//   - "clock-with-seconds": a two-digit-hour hh:mm:ss time (optionally with a
//     fraction, AM/PM and zone) anywhere. Seconds-precision clocks are
//     nearly always render stamps; the cost is that durations written with
//     two-digit hours ("01:02:33") are removed too. One-digit hours
//     ("1:02:33") are kept.
//   - "relative-times": "5 minutes ago", "an hour ago", "3 days ago". Weeks,
//     months and years ago are kept: in real articles they are prose ("18
//     years ago"), and they change too slowly to matter.
//   - "whitespace-runs": runs of spaces, tabs and other Unicode horizontal
//     space become one space.
//
// The rules see fenced code blocks like any other text: a timestamp inside
// a code block is stripped too (build logs in <pre> are as volatile as
// footers), but a "# Related posts" comment line inside a fence is not a
// heading. On the 181 static article bodies of the extraction benchmark
// (testdata/articles.golden) Default strips one fragment, an editor's
// "updated at 5:45 p.m. ET".
//
// Speed: Default's patterns never cross a line end, and each comes with a
// cheap scan that picks the lines it could match (a digit-colon-digit, a
// token key before ':' or '=', "ago" after a time unit), so a typical page
// is hashed at tens of MB/s. A line packed with such candidates is scanned
// by Go's linear-time regexp engine at a few MB/s; there is no
// backtracking, so no input can make Strip hang.
package fingerprint

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"regexp"
	"strings"
	"sync"
)

// Rule is one named strip step, set up with either Pattern or Func:
// Pattern replaces every match with Replace (which may refer to submatches
// as $1 or ${name}, as in regexp.Regexp.ReplaceAllString); Func rewrites the
// whole text, for removals a regular expression cannot express. A Rule with
// neither leaves the text unchanged. Func must be deterministic and safe for
// concurrent use.
type Rule struct {
	// Name identifies the rule in Rules.Without and in diagnostics.
	Name string
	// Pattern is matched against the whole text (use (?m) for line anchors;
	// Go's regexp runs in linear time).
	Pattern *regexp.Regexp
	// Replace is the replacement template for Pattern.
	Replace string
	// Func, when set, rewrites the text instead of Pattern.
	Func func(text string) string

	// filter, when set and Pattern is still filterFor, restricts a
	// line-local Pattern to the lines that may match (Default's rules).
	filter    lineFilter
	filterFor *regexp.Regexp
}

// Regexp returns a rule that replaces every match of expr with replace. It
// reports an error naming the rule when expr does not compile.
func Regexp(name, expr, replace string) (Rule, error) {
	re, err := regexp.Compile(expr)
	if err != nil {
		return Rule{}, fmt.Errorf("fingerprint: rule %q: invalid pattern: %w", name, err)
	}
	return Rule{Name: name, Pattern: re, Replace: replace}, nil
}

// MustRegexp is Regexp for patterns fixed in code; it panics when expr does
// not compile.
func MustRegexp(name, expr, replace string) Rule {
	r, err := Regexp(name, expr, replace)
	if err != nil {
		panic(err)
	}
	return r
}

func (r Rule) apply(text string) string {
	switch {
	case r.Func != nil:
		return r.Func(text)
	case r.Pattern != nil && r.filter != nil && r.Pattern == r.filterFor:
		return replaceLines(r.Pattern, r.Replace, text, r.filter)
	case r.Pattern != nil:
		return r.Pattern.ReplaceAllString(text, r.Replace)
	}
	return text
}

// Rules is an ordered list of strip rules. A Rules value is never changed
// by the methods below; they return copies.
type Rules []Rule

// Strip returns the text that Of hashes: markdown with "\n" line ends, every
// rule applied in order, each line trimmed and blank lines dropped.
func (rs Rules) Strip(markdown string) string {
	return trimLines(rs.applied(markdown))
}

// applied is the text with "\n" line ends after every rule of rs, before
// the lines are trimmed.
func (rs Rules) applied(markdown string) string {
	text := markdown
	if strings.IndexByte(text, '\r') >= 0 {
		text = strings.ReplaceAll(text, "\r\n", "\n")
		text = strings.ReplaceAll(text, "\r", "\n")
	}
	for _, r := range rs {
		text = r.apply(text)
	}
	return text
}

// Of returns the hex SHA-256 of Strip(markdown). The trimmed lines are
// hashed from a pooled buffer, not built into a string first.
func (rs Rules) Of(markdown string) string {
	bp := lineBuffers.Get().(*[]byte)
	buf := appendTrimmedLines((*bp)[:0], rs.applied(markdown))
	sum := sha256.Sum256(buf)
	if cap(buf) <= maxPooledLines {
		*bp = buf
		lineBuffers.Put(bp)
	}
	return hex.EncodeToString(sum[:])
}

// lineBuffers hold the trimmed lines Of hashes; one grown past
// maxPooledLines is dropped rather than kept.
var lineBuffers = sync.Pool{New: func() any { b := make([]byte, 0, 64<<10); return &b }}

const maxPooledLines = 1 << 20

// With returns a copy of rs with extra appended; extra rules run after the
// rules of rs. rs itself is not modified.
func (rs Rules) With(extra ...Rule) Rules {
	out := make(Rules, 0, len(rs)+len(extra))
	out = append(out, rs...)
	return append(out, extra...)
}

// Without returns a copy of rs without the rules of the given names, for a
// site where a default rule removes real content.
func (rs Rules) Without(names ...string) Rules {
	out := make(Rules, 0, len(rs))
	for _, r := range rs {
		drop := false
		for _, n := range names {
			drop = drop || r.Name == n
		}
		if !drop {
			out = append(out, r)
		}
	}
	return out
}

// Names returns the rule names in order.
func (rs Rules) Names() []string {
	out := make([]string, len(rs))
	for i, r := range rs {
		out[i] = r.Name
	}
	return out
}

// Of returns Default.Of(markdown).
func Of(markdown string) string { return Default.Of(markdown) }

// Strip returns Default.Strip(markdown).
func Strip(markdown string) string { return Default.Strip(markdown) }

// trimLines trims every line and drops blank ones.
func trimLines(text string) string {
	return string(appendTrimmedLines(make([]byte, 0, len(text)), text))
}

// appendTrimmedLines appends text's lines to dst, each trimmed, blank ones
// dropped, joined by "\n".
func appendTrimmedLines(dst []byte, text string) []byte {
	start := len(dst)
	for len(text) > 0 {
		line := text
		if i := strings.IndexByte(text, '\n'); i >= 0 {
			line, text = text[:i], text[i+1:]
		} else {
			text = ""
		}
		line = strings.TrimSpace(line)
		if line == "" {
			continue
		}
		if len(dst) > start {
			dst = append(dst, '\n')
		}
		dst = append(dst, line...)
	}
	return dst
}
