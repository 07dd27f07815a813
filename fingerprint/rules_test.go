package fingerprint_test

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/recrawl/recrawl/fingerprint"
)

// only returns the Default rule of that name, alone.
func only(t *testing.T, name string) fingerprint.Rules {
	t.Helper()
	for _, r := range fingerprint.Default {
		if r.Name == name {
			return fingerprint.Rules{r}
		}
	}
	t.Fatalf("Default has no rule %q", name)
	return nil
}

type stripCase struct {
	in   string
	want string // Strip output of the rule alone
}

func runRule(t *testing.T, name string, cases []stripCase) {
	t.Helper()
	rs := only(t, name)
	for _, tc := range cases {
		require.Equal(t, tc.want, rs.Strip(tc.in), "rule %s on %q", name, tc.in)
	}
}

func TestRuleISOTimestamps(t *testing.T) {
	runRule(t, "iso-timestamps", []stripCase{
		// Stripped.
		{"at 2026-05-01T10:00:00Z.", "at ."},
		{"at 2026-05-01 10:00 today", "at  today"},
		{"2026-05-01T10:00:00.123456+02:00 end", "end"},
		{"2026-05-01T10:00:00,5-0530 end", "end"},
		{"2026-05-01t23:59:60 UTC end", "end"},
		{"(2026-12-31T00:00)", "()"},
		{"stamp=2026-05-01T10:00:00+0200;", "stamp=;"},
		// Kept: dates alone, impossible dates and times, other numbers.
		{"released on 2026-05-01 to all users", "released on 2026-05-01 to all users"},
		{"released in 2024", "released in 2024"},
		{"version 1.2.3", "version 1.2.3"},
		{"2026-13-01T10:00 and 2026-05-01T24:00", "2026-13-01T10:00 and 2026-05-01T24:00"},
		{"call 2026-05-0110:00", "call 2026-05-0110:00"},
		{"ISBN 978-3-16-148410-0", "ISBN 978-3-16-148410-0"},
	})
}

func TestRuleClockAfterCue(t *testing.T) {
	runRule(t, "clock-after-cue", []stripCase{
		// Stripped: a time of day after a render-time cue.
		{"Generated at 14:02:11", "Generated at"},
		{"Last updated 09:15", "Last updated"},
		{"Updated: 9:15 AM by the bot", "Updated:  by the bot"},
		{"This story was updated at 5:45 p.m. ET to include", "This story was updated at  to include"},
		{"Rates as of 14:02 UTC.", "Rates as of ."},
		{"Server time: 23:59:59.250", "Server time:"},
		{"Page rendered 12:00pm", "Page rendered"},
		{"Last modified: May 1, 2026 at 07:30", "Last modified: May 1, 2026 at"},
		{"LAST-UPDATED 10:00 +02:00", "LAST-UPDATED"},
		// Kept: no cue, a cue too far away, or not a time.
		{"He scored at 7:14 and at 19:56", "He scored at 7:14 and at 19:56"},
		{"Doors open 7:30 PM", "Doors open 7:30 PM"},
		{"John 3:16 and a 16:9 screen", "John 3:16 and a 16:9 screen"},
		{"Updated the whole section on interval tuning; the train leaves 10:30", "Updated the whole section on interval tuning; the train leaves 10:30"},
		{"Updated 25:61", "Updated 25:61"},
		{"Updated 25:30 and 114:30", "Updated 25:30 and 114:30"},
		{"Generated\n14:02", "Generated\n14:02"},
		{"outdated 10:30 timetable", "outdated 10:30 timetable"},
	})
}

func TestRuleClockWithSeconds(t *testing.T) {
	runRule(t, "clock-with-seconds", []stripCase{
		// Stripped: two-digit-hour clocks with seconds, anywhere.
		{"footer 14:02:11", "footer"},
		{"[09:15:44.512 PM CEST] ready", "[] ready"},
		{"Tue, 28 Apr 2026 08:00:00 GMT", "Tue, 28 Apr 2026"},
		{"00:00:00+0000 boot", "boot"},
		// Kept: one-digit hours (durations), no seconds, out of range.
		{"track length 1:02:33", "track length 1:02:33"},
		{"kickoff 4:25, half time 12:45", "kickoff 4:25, half time 12:45"},
		{"24:00:00 and 12:60:00", "24:00:00 and 12:60:00"},
		{"IPv6 fe80::1:2:3", "IPv6 fe80::1:2:3"},
	})
}

func TestRuleTokens(t *testing.T) {
	runRule(t, "tokens", []stripCase{
		// Stripped: the value, the key stays.
		{"[Log out](/logout?csrf_token=abc123)", "[Log out](/logout?csrf_token=)"},
		{`nonce="r4nd0m/value+=="`, "nonce="},
		{"nonce: 'single quoted'", "nonce:"},
		{"sessionid: 5b3c1f0a9e", "sessionid:"},
		{"session_id=AbCdEfGhIjKlMnOpQr", "session_id="},
		{`"authenticity_token": "Zm9vYmFy"`, `"authenticity_token":`},
		{"authenticityToken=x9", "authenticityToken="},
		{"X-CSRF-Token: 77aa01ce42", "X-CSRF-Token:"},
		{"/cart;jsessionid=1A2B3C4D5E?x=1", "/cart;jsessionid=?x=1"},
		{"PHPSESSID=el4ukv0kqbvoirg7nkp4dncpk3", "PHPSESSID="},
		{"_token=f00ba4 and csrfmiddlewaretoken=q1w2e3r4", "_token= and csrfmiddlewaretoken="},
		{"?access_token=eyJhbGciOiJIUzI1NiJ9.e30.x&y=1", "?access_token=&y=1"},
		{"sid=abcdefghijklmnopqrstuv", "sid="},
		// Kept: prose, short or word-like values, other keys.
		{"A nonce is a number used once.", "A nonce is a number used once."},
		{"nonce: a number used once", "nonce: a number used once"},
		{"session_id: string, required", "session_id: string, required"},
		{"Session: 3 of 5", "Session: 3 of 5"},
		{"tokens: 128", "tokens: 128"},
		{"considered=abc123", "considered=abc123"},
		{"insider=1234567", "insider=1234567"},
	})
}

func TestRuleRelatedSections(t *testing.T) {
	runRule(t, "related-sections", []stripCase{
		// Removed up to the next heading of the same or higher level.
		{"# Post\ntext\n## Related posts\n* a\n* b\n## Comments\nnone", "# Post\ntext\n## Comments\nnone"},
		{"# Post\n### Related Articles:\n* a\n#### Sub\n* b\n### Next\nkeep", "# Post\n### Next\nkeep"},
		{"## Related posts\n* a\n# Top\nkeep", "# Top\nkeep"},
		{"text\n## **You May Also Like** ##\n* a\n* b", "text"},
		{"text\n## [Related posts](/related)\n* a\n## End", "text\n## End"},
		{"a\n## Related posts\n* x\n## Related articles\n* y\n## End\nz", "a\n## End\nz"},
		{"a\n   ## read next\n* x", "a"},
		// A fenced "# comment" is not a heading, inside or outside the section.
		{"## Related posts\n* a\n```sh\n# Comments\nls\n```\n* b\n## Keep\nc", "## Keep\nc"},
		{"```sh\n# Related posts\necho hi\n```\n## Keep", "```sh\n# Related posts\necho hi\n```\n## Keep"},
		// Kept: other titles, prose mentions, non-headings.
		{"## See also\n* a", "## See also\n* a"},
		{"## Related topics\n* a", "## Related topics\n* a"},
		{"Related posts\n* a", "Related posts\n* a"},
		{"**Related posts**\n* a", "**Related posts**\n* a"},
		{"#Related posts\n* a", "#Related posts\n* a"},
		{"## Related posts about crawling\n* a", "## Related posts about crawling\n* a"},
		{"####### Related posts\n* a", "####### Related posts\n* a"},
	})
}

func TestRuleRelativeTimes(t *testing.T) {
	runRule(t, "relative-times", []stripCase{
		{"posted 3 hours ago", "posted"},
		{"an hour ago, a few minutes ago, 1 day ago", ", ,"},
		{"12 secs ago|2 hrs ago", "|"},
		{"30 years of history", "30 years of history"},
		{"18 years ago, a week ago, 2 months ago", "18 years ago, a week ago, 2 months ago"},
		{"ago 3 days", "ago 3 days"},
		{"3 hoursago", "3 hoursago"},
	})
}

func TestRuleWhitespaceRuns(t *testing.T) {
	runRule(t, "whitespace-runs", []stripCase{
		{"a  b\t\tc", "a b c"},
		{"a\u00a0\u00a0b\u2003c", "a b c"},
		{"a \u00a0b", "a b"},
		{"  lead and trail  ", "lead and trail"},
		{"keep\nlines\n\n\nbut drop blanks", "keep\nlines\nbut drop blanks"},
		{"bad \xff\xfe  bytes", "bad \xff\xfe bytes"},
	})
}

func TestDefaultRuleOrder(t *testing.T) {
	require.Equal(t, []string{
		"related-sections", "tokens", "iso-timestamps", "clock-after-cue",
		"clock-with-seconds", "relative-times", "whitespace-runs",
	}, fingerprint.Default.Names())
}

func TestLineEnds(t *testing.T) {
	lf := "# T\n\n  a  b  \n\n## Related posts\n* x\n## Next\nc\n"
	crlf := strings.ReplaceAll(lf, "\n", "\r\n")
	cr := strings.ReplaceAll(lf, "\n", "\r")
	require.Equal(t, "# T\na b\n## Next\nc", fingerprint.Default.Strip(lf))
	require.Equal(t, fingerprint.Default.Strip(lf), fingerprint.Default.Strip(crlf))
	require.Equal(t, fingerprint.Default.Strip(lf), fingerprint.Default.Strip(cr))
}
