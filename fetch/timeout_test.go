package fetch_test

import (
	"context"
	"io"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/recrawl/recrawl/clock"
	"github.com/recrawl/recrawl/fetch"
	"github.com/recrawl/recrawl/internal/testsite"
)

func TestTimeoutBoundsTheBodyRead(t *testing.T) {
	tests := []struct {
		name   string
		client func(s *testsite.Site) *http.Client
	}{
		{"plain client", func(s *testsite.Site) *http.Client { return s.Client() }},
		{"polite client", func(s *testsite.Site) *http.Client {
			return &http.Client{Transport: &fetch.Polite{Base: s.Client().Transport, Clock: clock.NewAutoFake(time.Now())}}
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := newSite(t, testsite.Options{Pages: 1})
			path := s.Paths()[0]
			s.Trickle(path, time.Second)
			h := &fetch.HTTP{Client: tc.client(s), Timeout: 200 * time.Millisecond, MaxAttempts: 1}
			began := time.Now()
			_, err := h.Fetch(context.Background(), fetch.Request{URL: s.PageURL(path)})
			require.Less(t, time.Since(began), 5*time.Second)
			require.ErrorIs(t, err, fetch.ErrTimeout)
			require.ErrorIs(t, err, context.DeadlineExceeded)
			var te *fetch.TimeoutError
			require.ErrorAs(t, err, &te)
			require.Equal(t, 200*time.Millisecond, te.After)
			require.Contains(t, err.Error(), "request timeout of 200ms")
		})
	}
}

func TestPoliteTimeoutStartsWithTheSlot(t *testing.T) {
	s := newSite(t, testsite.Options{Pages: 2})
	clk := clock.NewFake(time.Now())
	p := &fetch.Polite{Base: s.Client().Transport, Clock: clk, Delay: time.Hour, Timeout: 300 * time.Millisecond, IgnoreRobots: true}
	c := &http.Client{Transport: p}
	resp, err := c.Get(s.PageURL(s.Paths()[0]))
	require.NoError(t, err)
	resp.Body.Close()
	// The second request waits an hour of the clock for its slot, and
	// 500 ms of real time, more than its timeout.
	go func() {
		require.NoError(t, clk.BlockUntil(context.Background(), 1))
		time.Sleep(500 * time.Millisecond)
		clk.Advance(time.Hour)
	}()
	resp, err = c.Get(s.PageURL(s.Paths()[1]))
	require.NoError(t, err, "the wait for the slot does not count")
	_, err = io.ReadAll(resp.Body)
	require.NoError(t, err)
	resp.Body.Close()

	// Once sent, the request itself is bounded.
	s.Trickle(s.Paths()[0], time.Second)
	c = &http.Client{Transport: &fetch.Polite{Base: s.Client().Transport, Clock: clk, Timeout: 300 * time.Millisecond, IgnoreRobots: true}}
	resp, err = c.Get(s.PageURL(s.Paths()[0]))
	if err == nil {
		_, err = io.ReadAll(resp.Body)
		resp.Body.Close()
	}
	require.ErrorIs(t, err, fetch.ErrTimeout)
}
