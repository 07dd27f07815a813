package geonode_test

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/recrawl/recrawl/fetch"
	"github.com/recrawl/recrawl/fetch/geonode"
	"github.com/recrawl/recrawl/internal/fakegeonode"
)

func TestNewValidatesEveryOption(t *testing.T) {
	_, err := geonode.New("  ")
	require.ErrorIs(t, err, geonode.ErrNoAPIKey)

	tests := []struct {
		name string
		opt  geonode.Option
		want string
	}{
		{"base url", geonode.WithBaseURL("scraper.geonode.io"), "base URL"},
		{"format", geonode.WithFormats("pdf"), "formats"},
		{"no format", geonode.WithFormats(), "formats"},
		{"twice", geonode.WithFormats(geonode.HTML, geonode.HTML), "given twice"},
		{"proxy type", geonode.WithProxy(geonode.Proxy{Type: "mobile"}), "proxy type"},
		{"proxy country", geonode.WithProxy(geonode.Proxy{Country: "usa"}), "proxy country"},
		{"wait until", geonode.WithWaitConfig(geonode.WaitConfig{WaitUntil: "networkidle0"}), "wait_until"},
		{"conditional header", geonode.WithHeaders(map[string]string{"If-None-Match": `"x"`}), "If-None-Match"},
		{"api key header", geonode.WithHeaders(map[string]string{"x-api-key": "k"}), "API key"},
		{"batch size", geonode.WithBatchSize(1001), "batch size"},
		{"page size", geonode.WithBatchPageSize(51), "page size"},
		{"page size zero", geonode.WithBatchPageSize(0), "page size"},
		{"attempts", geonode.WithMaxAttempts(0), "attempts"},
		{"polling", geonode.WithPolling(time.Minute, time.Second), "poll"},
		{"deadline", geonode.WithBatchDeadline(-time.Second), "batch deadline"},
		{"user agent", geonode.WithUserAgent("a\nb"), "user agent"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := geonode.New("key", tc.opt)
			var ce *geonode.ConfigError
			require.ErrorAs(t, err, &ce)
			require.Contains(t, err.Error(), tc.want)
		})
	}
	// All problems at once.
	_, err = geonode.New("key", geonode.WithBatchSize(0), geonode.WithBatchPageSize(0))
	var ce *geonode.ConfigError
	require.ErrorAs(t, err, &ce)
	require.Len(t, ce.Problems, 2)
}

func TestAPIKeyFromEnv(t *testing.T) {
	tests := []struct {
		name, seeds, docs, want string
		err                     error
	}{
		{"seeds' name", "k1", "", "k1", nil},
		{"docs' name", "", " k2\n", "k2", nil},
		{"both: seeds' name wins", "k1", "k2", "k1", nil},
		{"neither", "", "", "", geonode.ErrNoAPIKey},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Setenv(geonode.EnvAPIKey, tc.seeds)
			t.Setenv(geonode.EnvScraperAPIKey, tc.docs)
			got, err := geonode.APIKeyFromEnv()
			require.ErrorIs(t, err, tc.err)
			require.Equal(t, tc.want, got)
		})
	}
}

// TestAPIKeyNeverLogged drives every operation, failures included, with a
// debug logger, and prints the client every way fmt and slog can: the key
// appears nowhere.
func TestAPIKeyNeverLogged(t *testing.T) {
	const key = "sk-live-SECRET-7f3a9c"
	e := newEnv(t, 5, fakegeonode.Options{APIKey: key, ItemsPerPoll: 2})
	var logs logBuffer
	log := debugLogger(&logs)
	c := e.client(t, geonode.WithLogger(log), geonode.WithAsync(true))
	ctx := context.Background()

	_, err := c.Fetch(ctx, fetch.Request{URL: e.url(1), ETag: `"e"`})
	require.NoError(t, err)
	e.api.Fail("*", http.StatusTooManyRequests, 1, "1")
	_, err = collect(t, ctx, c, pageReqs(e, 5))
	require.NoError(t, err)
	_, err = c.MapURLs(ctx, e.url(1))
	require.NoError(t, err)
	e.api.SetBalance(0)
	_, err = c.Fetch(ctx, fetch.Request{URL: e.url(2)})
	require.ErrorIs(t, err, geonode.ErrPaymentRequired)
	log.Error("fetch failed", "err", err)

	bad, err := geonode.New("sk-wrong-SECRET-key", geonode.WithBaseURL(e.api.URL()), geonode.WithLogger(log), geonode.WithClock(e.clk))
	require.NoError(t, err)
	_, err = bad.Fetch(ctx, fetch.Request{URL: e.url(1)})
	require.ErrorIs(t, err, geonode.ErrUnauthorized)
	log.Error("fetch failed", "err", err, "client", bad)

	log.Info("client", "client", c)
	log.Info("client", slog.Any("client", c))
	printed := fmt.Sprintf("%v %+v %#v %s %v %+v %#v", c, c, c, c, *c, *c, *c)
	out := logs.String() + printed + err.Error()
	require.NotEmpty(t, logs.String())
	require.Contains(t, out, "REDACTED")
	for _, secret := range []string{key, "sk-wrong-SECRET-key", "SECRET"} {
		require.NotContains(t, out, secret)
	}
	require.True(t, strings.Contains(logs.String(), "geonode request"), "requests were logged")
}
