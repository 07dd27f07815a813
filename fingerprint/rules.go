package fingerprint

import (
	"regexp"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Default is the rule list that fits most sites (see the package
// documentation for what each rule strips and keeps). Its capacity equals
// its length, so append(Default, r) copies instead of writing into it; use
// Default.With to extend it.
var Default = defaultRules()

// RelatedTitles are the section headings the "related-sections" rule of
// Default removes, in lower case. Changing the slice does not change
// Default; build another rule with Section instead.
var RelatedTitles = []string{
	"related posts", "related articles", "related stories", "related content", "related reading",
	"you may also like", "you might also like", "recommended for you", "read next",
}

// The patterns below spell case-insensitivity out with ci and ASCII
// classes instead of (?i): Go's (?i) folds through Unicode tables on every
// rune, which makes long lines several times slower to scan.

// sp is horizontal white space inside a line: tab and Unicode category Zs.
// Default's patterns never cross a line end, so they can run line by line.
const sp = `[\t \x{a0}\x{1680}\x{2000}-\x{200a}\x{202f}\x{205f}\x{3000}]`

// notSp is a character that is neither sp nor a line end.
const notSp = `[^\t\n \x{a0}\x{1680}\x{2000}-\x{200a}\x{202f}\x{205f}\x{3000}]`

// ci returns a group of alternatives matching each word with its ASCII
// letters in any case; other characters match literally.
func ci(words ...string) string {
	var b strings.Builder
	b.WriteString("(?:")
	for i, w := range words {
		if i > 0 {
			b.WriteByte('|')
		}
		for _, r := range w {
			switch {
			case 'a' <= r && r <= 'z':
				b.WriteString("[" + string(r) + string(r-'a'+'A') + "]")
			case r == ' ':
				b.WriteString(" ")
			default:
				b.WriteString(regexp.QuoteMeta(string(r)))
			}
		}
	}
	b.WriteString(")")
	return b.String()
}

// ampm is an optional AM/PM marker; zone an optional time zone (upper case
// abbreviation or numeric offset).
const (
	ampm = `(?:` + sp + `?[aApP]\.?[mM]\b\.?|\b)`
	zone = `(?:` + sp + `?(?:UTC|GMT|Z|[A-Z]{1,3}T|[+-](?:[01]\d|2[0-3]):?[0-5]\d)\b)?`
)

// clock is a time of day: hh:mm with optional seconds, fraction, AM/PM and
// zone.
const clock = `\b(?:[01]?\d|2[0-3]):[0-5]\d(?::[0-5]\d(?:[.,]\d+)?)?` + ampm + zone

// tokenKeys are the keys whose values the "tokens" rule removes ('-' and
// '_' between words are optional, see tokenKey).
var tokenKeys = []string{
	"csrf", "csrf-token", "xsrf", "xsrf-token", "csrfmiddlewaretoken", "authenticity-token",
	"request-verification-token", "nonce", "session-id", "session-token", "session-key", "sess-id",
	"phpsessid", "jsessionid", "aspsessionid", "sid", "access-token", "auth-token", "token",
}

// tokenKey turns a tokenKeys entry into a pattern: letters in any case, and
// each '-' into an optional '-' or '_'.
func tokenKey(k string) string {
	parts := strings.Split(k, "-")
	for i, p := range parts {
		parts[i] = ci(p)
	}
	return strings.Join(parts, `[-_]?`)
}

func defaultRules() Rules {
	keys := make([]string, len(tokenKeys))
	for i, k := range tokenKeys {
		keys[i] = tokenKey(k)
	}
	rs := Rules{
		Section("related-sections", RelatedTitles...),
		fastRegexp("tokens",
			`(\b_?(?:`+strings.Join(keys, "|")+`)["']?`+sp+`*[:=]`+sp+`*)`+
				`(?:"[^"\n]*"|'[^'\n]*'|`+
				`(?:[a-zA-Z0-9._~+/%-]*\d[a-zA-Z0-9._~+/%-]*|[a-zA-Z0-9._~+/%-]{16,})=*)`,
			"${1}", withKey("csrf", "xsrf", "token", "nonce", "sess", "sid")),
		fastRegexp("iso-timestamps",
			`\b\d{4}-(?:0[1-9]|1[0-2])-(?:0[1-9]|[12]\d|3[01])[Tt ](?:[01]\d|2[0-3]):[0-5]\d`+
				`(?::(?:[0-5]\d|60)(?:[.,]\d+)?)?(?:`+sp+`?(?:Z|UTC|GMT)\b|[+-](?:[01]\d|2[0-3])(?::?[0-5]\d)?\b)?`,
			"", withClock),
		fastRegexp("clock-after-cue",
			`(\b`+ci("generated", "last updated", "last-updated", "updated", "last modified", "last-modified", "modified",
				"rendered", "built", "fetched", "retrieved", "refreshed", "cached", "as of",
				"current time", "server time", "local time", "time now")+
				`\b(?:`+sp+`*`+notSp+`+){0,5}?`+sp+`*)`+clock,
			"${1}", withClockAnd("generated", "updated", "modified", "rendered", "built", "fetched",
				"retrieved", "refreshed", "cached", "as of", "time")),
		fastRegexp("clock-with-seconds",
			`\b(?:[01]\d|2[0-3]):[0-5]\d:[0-5]\d(?:[.,]\d+)?`+ampm+zone,
			"", withClock),
		fastRegexp("relative-times",
			`\b(?:\d+|`+ci("an", "a", "one", "a few")+`)`+sp+`+`+
				ci("seconds", "second", "secs", "sec", "minutes", "minute", "mins", "min", "hours", "hour", "hrs", "hr", "days", "day")+
				sp+`+`+ci("ago")+`\b`,
			"", withAgo),
		{Name: "whitespace-runs", Func: collapseSpace},
	}
	return rs[:len(rs):len(rs)]
}

// Section returns a rule that removes every Markdown section whose ATX
// heading text is one of titles (compared case-insensitively, ignoring
// emphasis, link brackets and a trailing colon), from its heading up to the
// next heading of the same or a higher level, or to the end of the text.
// Lines inside fenced code blocks are never taken for headings.
func Section(name string, titles ...string) Rule {
	set := make(map[string]bool, len(titles))
	for _, t := range titles {
		set[headingKey(t)] = true
	}
	return Rule{Name: name, Func: func(text string) string { return removeSections(text, set) }}
}

// removeSections drops the sections whose heading key is in set. It returns
// text itself when nothing is removed.
func removeSections(text string, set map[string]bool) string {
	var (
		b        strings.Builder
		copied   int  // text[:copied] has been handled
		skipping int  // level of the section being removed; 0 when none
		fence    byte // '`' or '~' inside a fenced code block
		fenceLen int
		start    = -1 // start of the section being removed
	)
	for pos := 0; pos < len(text); {
		end := strings.IndexByte(text[pos:], '\n')
		next := len(text)
		if end >= 0 {
			next = pos + end + 1
		}
		line := text[pos:next]
		if c, n, ok := fenceLine(line); ok {
			switch {
			case fence == 0:
				fence, fenceLen = c, n
			case c == fence && n >= fenceLen && isClosingFence(line):
				fence = 0
			}
		} else if fence == 0 {
			if level, title, ok := atxHeading(line); ok {
				if skipping > 0 && level <= skipping {
					b.WriteString(text[copied:start])
					copied, skipping = pos, 0
				}
				if skipping == 0 && set[headingKey(title)] {
					skipping, start = level, pos
				}
			}
		}
		pos = next
	}
	if skipping > 0 {
		b.WriteString(text[copied:start])
		copied = len(text)
	}
	if copied == 0 {
		return text
	}
	b.WriteString(text[copied:])
	return b.String()
}

// atxHeading parses an ATX heading line: up to three spaces, one to six '#',
// then a space, a tab or the end of the line.
func atxHeading(line string) (level int, title string, ok bool) {
	line = strings.TrimRight(line, "\r\n")
	i := 0
	for i < len(line) && i < 3 && line[i] == ' ' {
		i++
	}
	j := i
	for j < len(line) && line[j] == '#' {
		j++
	}
	level = j - i
	if level < 1 || level > 6 || j < len(line) && line[j] != ' ' && line[j] != '\t' {
		return 0, "", false
	}
	title = strings.TrimSpace(line[j:])
	// An optional closing sequence of '#' preceded by a space.
	if k := strings.TrimRight(title, "#"); k != title && (k == "" || strings.HasSuffix(k, " ") || strings.HasSuffix(k, "\t")) {
		title = strings.TrimSpace(k)
	}
	return level, title, true
}

// headingKey reduces a heading to the form titles are compared in: lower
// case, without emphasis and link markup, single spaces, no trailing colon.
func headingKey(s string) string {
	if i := strings.Index(s, "]("); i >= 0 {
		s = s[:i]
	}
	s = strings.Map(func(r rune) rune {
		switch r {
		case '*', '_', '`', '[', ']':
			return -1
		}
		return unicode.ToLower(r)
	}, s)
	s = strings.Join(strings.Fields(s), " ")
	return strings.TrimRight(s, ":：.… ")
}

// fenceLine reports whether line opens or closes a fenced code block, with
// the fence character and length.
func fenceLine(line string) (c byte, n int, ok bool) {
	i := 0
	for i < len(line) && i < 3 && line[i] == ' ' {
		i++
	}
	if i >= len(line) || line[i] != '`' && line[i] != '~' {
		return 0, 0, false
	}
	c = line[i]
	for n = 0; i+n < len(line) && line[i+n] == c; n++ {
	}
	if n < 3 || c == '`' && strings.IndexByte(line[i+n:], '`') >= 0 {
		return 0, 0, false
	}
	return c, n, true
}

// isClosingFence reports whether a fence line carries nothing after the
// fence characters.
func isClosingFence(line string) bool {
	return strings.TrimSpace(strings.Trim(strings.TrimSpace(line), "`~")) == ""
}

// collapseSpace replaces each run of horizontal white space (anything
// unicode.IsSpace except '\n') with one ASCII space. Other bytes, invalid
// UTF-8 included, are copied as they are. It returns text itself when there
// is nothing to change.
func collapseSpace(text string) string {
	var b strings.Builder
	copied := 0 // text[:copied] is in b (or needs no change when b is empty)
	for i := 0; i < len(text); {
		c := text[i]
		// Fast path: printable ASCII, and a single space before it.
		if c > ' ' && c < utf8.RuneSelf {
			i++
			continue
		}
		if c == ' ' && i+1 < len(text) && text[i+1] > ' ' && text[i+1] < utf8.RuneSelf {
			i += 2
			continue
		}
		size := 1
		space := false
		switch {
		case c < utf8.RuneSelf:
			space = c == ' ' || c == '\t' || c == '\v' || c == '\f' || c == '\r'
		default:
			var r rune
			r, size = utf8.DecodeRuneInString(text[i:])
			space = unicode.IsSpace(r)
		}
		if !space {
			i += size
			continue
		}
		// A run starts at i; find its end.
		j := i + size
		for j < len(text) {
			if c := text[j]; c < utf8.RuneSelf {
				if c != ' ' && c != '\t' && c != '\v' && c != '\f' && c != '\r' {
					break
				}
				j++
				continue
			}
			r, n := utf8.DecodeRuneInString(text[j:])
			if !unicode.IsSpace(r) {
				break
			}
			j += n
		}
		if j-i == 1 && c == ' ' {
			i = j // a single ASCII space is already normal
			continue
		}
		if b.Len() == 0 && copied == 0 {
			b.Grow(len(text))
		}
		b.WriteString(text[copied:i])
		b.WriteByte(' ')
		copied, i = j, j
	}
	if copied == 0 {
		return text
	}
	b.WriteString(text[copied:])
	return b.String()
}
