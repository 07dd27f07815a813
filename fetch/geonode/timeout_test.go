package geonode_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/recrawl/recrawl/clock"
	"github.com/recrawl/recrawl/fetch"
	"github.com/recrawl/recrawl/fetch/geonode"
	"github.com/recrawl/recrawl/internal/fakegeonode"
)

// Every API request is bounded by the request timeout of its context
// (fetch.WithRequestTimeout, WEB_REQUEST_TIMEOUT_MS in the engine), well
// below the client's own default of two minutes: a stalled API gives a
// *fetch.TimeoutError, not a stall. Retries of a timed-out request are
// bounded the same way, each on its own.
func TestAStalledAPIRequestTimesOut(t *testing.T) {
	const bound = 200 * time.Millisecond
	tests := []struct {
		name     string
		endpoint string
		async    bool
		call     func(ctx context.Context, e *env, c *geonode.Client) error
	}{
		{"sync extraction", "POST /v1/extract", false, fetchOne},
		{"async submission", "POST /v1/extract", true, fetchOne},
		{"async poll", "GET /v1/extract/", true, fetchOne},
		{"batch creation", "POST /v1/batch", false, fetchBatch},
		{"batch poll", "GET /v1/batch/", false, fetchBatch},
		{"map", "POST /v1/map", false, func(ctx context.Context, e *env, c *geonode.Client) error {
			_, err := c.MapURLs(ctx, e.site.URL())
			return err
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t, 3, fakegeonode.Options{})
			e.api.Hang(tc.endpoint, 100)
			c := e.client(t, geonode.WithAsync(tc.async), geonode.WithMaxAttempts(2))
			ctx := fetch.WithRequestTimeout(context.Background(), bound)
			began := time.Now()
			err := tc.call(ctx, e, c)
			require.Less(t, time.Since(began), 10*time.Second, "bounded by the request timeout, not the client's two minutes")
			require.ErrorIs(t, err, fetch.ErrTimeout)
			require.ErrorIs(t, err, context.DeadlineExceeded)
			var te *fetch.TimeoutError
			require.ErrorAs(t, err, &te)
			require.Equal(t, bound, te.After)
			require.Contains(t, err.Error(), "request timeout of 200ms")
		})
	}
}

func fetchOne(ctx context.Context, e *env, c *geonode.Client) error {
	_, err := c.Fetch(ctx, fetch.Request{URL: e.url(1)})
	return err
}

func fetchBatch(ctx context.Context, e *env, c *geonode.Client) error {
	return c.FetchBatch(ctx, []fetch.Request{{URL: e.url(1)}, {URL: e.url(2)}}, func(int, *fetch.Response, error) {})
}

// The client's own WithRequestTimeout bounds requests the same way when the
// context carries no bound, and the shorter of the two wins.
func TestClientRequestTimeoutWithoutAContextBound(t *testing.T) {
	e := newEnv(t, 1, fakegeonode.Options{})
	e.api.Hang("POST /v1/extract", 100)
	c := e.client(t, geonode.WithRequestTimeout(150*time.Millisecond), geonode.WithMaxAttempts(1))
	for _, ctx := range []context.Context{context.Background(), fetch.WithRequestTimeout(context.Background(), time.Hour)} {
		_, err := c.Fetch(ctx, fetch.Request{URL: e.url(1)})
		var te *fetch.TimeoutError
		require.ErrorAs(t, err, &te)
		require.Equal(t, 150*time.Millisecond, te.After)
		require.Equal(t, e.url(1), te.URL)
	}
}

// The bound is per request: the waits between polls, in real time here,
// add up to more than it and the extraction still succeeds.
func TestRequestTimeoutExcludesPollWaits(t *testing.T) {
	e := newEnv(t, 1, fakegeonode.Options{AsyncPolls: 2})
	c := e.client(t, geonode.WithAsync(true), geonode.WithClock(clock.Real()), geonode.WithPolling(150*time.Millisecond, 150*time.Millisecond))
	ctx := fetch.WithRequestTimeout(context.Background(), 200*time.Millisecond)
	began := time.Now()
	resp, err := c.Fetch(ctx, fetch.Request{URL: e.url(1)})
	require.NoError(t, err)
	require.Equal(t, 200, resp.Status)
	require.Greater(t, time.Since(began), 300*time.Millisecond, "three polls waited 150 ms each")
}
