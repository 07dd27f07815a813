package fingerprint_test

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/recrawl/recrawl/fingerprint"
)

func FuzzStrip(f *testing.F) {
	f.Add("# Post\nGenerated at 14:02:11 UTC\n\n## Related posts\n* a\n## Next\ncsrf_token=abc123 2026-05-01T10:00:00Z")
	f.Add("```\n# Related articles\n```\n## Related articles\n~~~\n## x\n~~~\n# y")
	f.Add("\r\n\r\t\u00a0\u2003 \xff\xfe nonce=\"\" Updated: 9:15 a.m. PST 3 hours ago")
	f.Add("###### related posts ######\n####### not a heading\n#\n##\t")
	f.Fuzz(func(t *testing.T, markdown string) {
		stripped := fingerprint.Strip(markdown)
		require.Equal(t, sha256hex(stripped), fingerprint.Of(markdown))
		require.Equal(t, stripped, fingerprint.Strip(markdown), "Strip must be deterministic")
		// The hashed text has no blank lines, no untrimmed lines and no CR.
		require.NotContains(t, stripped, "\r")
		if stripped != "" {
			for _, line := range strings.Split(stripped, "\n") {
				require.NotEmpty(t, line)
				require.Equal(t, strings.TrimSpace(line), line)
			}
		}
		// Stripping only ever removes or collapses: it never adds text.
		require.LessOrEqual(t, len(stripped), len(markdown))
	})
}

// plainDefault is Default with every pattern rule rebuilt from its exported
// fields only, so it runs on the whole text without the line filters.
func plainDefault() fingerprint.Rules {
	out := make(fingerprint.Rules, len(fingerprint.Default))
	for i, r := range fingerprint.Default {
		out[i] = fingerprint.Rule{Name: r.Name, Pattern: r.Pattern, Replace: r.Replace, Func: r.Func}
	}
	return out
}

// FuzzLineFilters checks that Default's line filters never skip a line its
// patterns would change.
func FuzzLineFilters(f *testing.F) {
	f.Add("Updated\u00a0at 9:15 pm\n\"csrf\"\t: 'x'\nsid=abcdefabcdefabcdef\n3\u2003hours\u00a0ago\n2026-05-01 10:00:00")
	f.Add("x_csrf-token = \"1\"\nPresident: 12345\nas of 10:30\nChicago 3 days ago")
	plain := plainDefault()
	f.Fuzz(func(t *testing.T, markdown string) {
		for i := range fingerprint.Default {
			fast := fingerprint.Rules{fingerprint.Default[i]}
			slow := fingerprint.Rules{plain[i]}
			require.Equal(t, slow.Strip(markdown), fast.Strip(markdown), "rule %s", plain[i].Name)
		}
	})
}
