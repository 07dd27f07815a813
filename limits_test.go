package recrawl_test

import (
	"bufio"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/recrawl/recrawl"
)

func lookup(env map[string]string) func(string) (string, bool) {
	return func(k string) (string, bool) { v, ok := env[k]; return v, ok }
}

func TestLimitsFromLookup(t *testing.T) {
	def := recrawl.DefaultLimits()
	tests := []struct {
		name    string
		env     map[string]string
		want    func(l *recrawl.Limits)
		wantErr []string
	}{
		{"unset keeps defaults", nil, func(*recrawl.Limits) {}, nil},
		{"empty keeps defaults", map[string]string{"WEB_MAX_PAGES": " "}, func(*recrawl.Limits) {}, nil},
		{"every variable", map[string]string{
			"WEB_MAX_PAGES": "10", "WEB_MAX_DEPTH": "2", "WEB_REQUEST_DELAY_MS": "100",
			"WEB_REQUEST_TIMEOUT_MS": "5000", "WEB_MAX_BYTES": "1024", "WEB_RESPECT_ROBOTS": "0",
			"WEB_HOST_CONCURRENCY": "8", "WEB_MAX_DOCUMENT_BYTES": "2048", "WEB_MAX_SITEMAP_CHILDREN": "7",
			"WEB_MAX_SITEMAPS": "70", "WEB_BLOCK_PRIVATE": "1",
		}, func(l *recrawl.Limits) {
			*l = recrawl.Limits{MaxPages: 10, MaxDepth: 2, RequestDelay: 100 * time.Millisecond,
				RequestTimeout: 5 * time.Second, MaxBytes: 1024, RespectRobots: false, HostConcurrency: 8,
				MaxDocumentBytes: 2048, MaxSitemapChildren: 7, MaxSitemaps: 70, BlockPrivate: true}
		}, nil},
		{"zero sitemap caps mean none", map[string]string{"WEB_MAX_SITEMAP_CHILDREN": "0", "WEB_MAX_SITEMAPS": "0"},
			func(l *recrawl.Limits) { l.MaxSitemapChildren, l.MaxSitemaps = 0, 0 }, nil},
		{"zero document bytes", map[string]string{"WEB_MAX_DOCUMENT_BYTES": "0"}, nil, []string{"WEB_MAX_DOCUMENT_BYTES: must be positive"}},
		{"zero caps mean none, zero delay means none", map[string]string{"WEB_MAX_PAGES": "0", "WEB_MAX_DEPTH": "0", "WEB_REQUEST_DELAY_MS": "0"},
			func(l *recrawl.Limits) { l.MaxPages, l.MaxDepth, l.RequestDelay = 0, 0, 0 }, nil},
		{"robots spelled true", map[string]string{"WEB_RESPECT_ROBOTS": "true"}, func(*recrawl.Limits) {}, nil},
		{"malformed", map[string]string{"WEB_MAX_PAGES": "ten"}, nil, []string{`WEB_MAX_PAGES="ten": not a whole number`}},
		{"negative", map[string]string{"WEB_REQUEST_DELAY_MS": "-5"}, nil, []string{`WEB_REQUEST_DELAY_MS="-5": must not be negative`}},
		{"zero timeout", map[string]string{"WEB_REQUEST_TIMEOUT_MS": "0"}, nil, []string{"WEB_REQUEST_TIMEOUT_MS: must be positive"}},
		{"zero bytes", map[string]string{"WEB_MAX_BYTES": "0"}, nil, []string{"WEB_MAX_BYTES: must be positive"}},
		{"negative concurrency", map[string]string{"WEB_HOST_CONCURRENCY": "-1"}, nil, []string{`WEB_HOST_CONCURRENCY="-1": must not be negative`}},
		{"bad switch", map[string]string{"WEB_RESPECT_ROBOTS": "maybe"}, nil, []string{`WEB_RESPECT_ROBOTS="maybe": must be 1 or 0`}},
		{"bad guard switch", map[string]string{"WEB_BLOCK_PRIVATE": "sometimes"}, nil, []string{`WEB_BLOCK_PRIVATE="sometimes": must be 1 or 0`}},
		{"every error at once", map[string]string{"WEB_MAX_DEPTH": "x", "WEB_MAX_BYTES": "-1"}, nil,
			[]string{"WEB_MAX_DEPTH", "WEB_MAX_BYTES"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := recrawl.LimitsFromLookup(lookup(tc.env))
			if tc.wantErr != nil {
				require.Error(t, err)
				for _, w := range tc.wantErr {
					require.Contains(t, err.Error(), w)
				}
				require.Equal(t, def, got, "a failed read returns the defaults")
				return
			}
			require.NoError(t, err)
			want := def
			tc.want(&want)
			require.Equal(t, want, got)
		})
	}
}

// .env.example documents exactly the defaults.
func TestEnvExampleMatchesDefaults(t *testing.T) {
	f, err := os.Open(".env.example")
	require.NoError(t, err)
	defer f.Close()
	env := map[string]string{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		k, v, ok := strings.Cut(line, "=")
		require.True(t, ok, line)
		env[k] = v
	}
	require.Len(t, env, 11, "the five caps, the robots switch, the host concurrency, the document size cap, the two sitemap caps and the private-address guard")
	got, err := recrawl.LimitsFromLookup(lookup(env))
	require.NoError(t, err)
	require.Equal(t, recrawl.DefaultLimits(), got)
}

func TestLimitsFromEnv(t *testing.T) {
	t.Setenv("WEB_MAX_PAGES", "42")
	l, err := recrawl.LimitsFromEnv()
	require.NoError(t, err)
	require.Equal(t, 42, l.MaxPages)
}
