package recrawl_test

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/recrawl/recrawl"
	"github.com/recrawl/recrawl/crawlstate"
	"github.com/recrawl/recrawl/fetch"
	"github.com/recrawl/recrawl/fetch/geonode"
	"github.com/recrawl/recrawl/internal/fakegeonode"
	"github.com/recrawl/recrawl/internal/testsite"
	"github.com/recrawl/recrawl/schedule"
)

type geonodeFixture struct {
	*fixture
	api    *fakegeonode.Server
	client *geonode.Client
}

func newGeonode(t *testing.T, opts testsite.Options, mod func(*recrawl.Config)) *geonodeFixture {
	t.Helper()
	f := newFixture(t, opts, recrawl.Config{})
	api := fakegeonode.New(fakegeonode.Options{Clock: f.clk, ItemsPerPoll: 25, Origins: []string{f.site.URL()}})
	t.Cleanup(api.Close)
	client, err := geonode.New(api.APIKey(), geonode.WithBaseURL(api.URL()), geonode.WithClock(f.clk))
	require.NoError(t, err)
	cfg := recrawl.Config{State: f.state, Clock: f.clk, Fetcher: client, Limits: limits(func(*recrawl.Limits) {}),
		Scheduler: schedule.DefaultHalving} // the baseline's exact intervals, as newFixture
	if mod != nil {
		mod(&cfg)
	}
	f.eng = mustEngine(t, cfg)
	f.remote = true
	return &geonodeFixture{fixture: f, api: api, client: client}
}

type batchBody struct {
	URLs    []string          `json:"urls"`
	Headers map[string]string `json:"headers"`
}

type extractBody struct {
	URL     string            `json:"url"`
	Headers map[string]string `json:"headers"`
}

func TestBatchRoutingKeepsValidatorRowsOnTheSinglePath(t *testing.T) {
	g := newGeonode(t, testsite.Options{Pages: 120}, nil)
	rep := g.run()
	require.Equal(t, 120, rep.New)
	require.Equal(t, 120, rep.Billed)
	require.Positive(t, g.api.Count(http.MethodPost, "/v1/batch"), "120 plain rows go as batch jobs")
	require.Zero(t, g.api.Count(http.MethodPost, "/v1/extract"))

	// Give 40 rows the origin's validators, as a direct answer would have.
	withValidators := map[string]bool{}
	ctx := context.Background()
	for _, path := range g.site.Paths()[:40] {
		pg, _ := g.site.Page(path)
		u := g.site.PageURL(path)
		withValidators[u] = true
		require.NoError(t, g.state.Record(ctx, g.src.Name(), []crawlstate.Result{{
			URL: u, At: g.clk.Now(), NotModified: true, ETag: etagOf(t, g.site, path), LastModified: pg.Modified.Format(http.TimeFormat),
			Interval: time.Hour, NextCheck: g.clk.Now(),
		}}))
	}
	g.api.ResetLog()
	g.clk.Advance(25 * time.Hour)
	rep = g.run()
	require.Equal(t, 120, rep.Due)
	require.Equal(t, 40, rep.NotModified, "validator rows went through single extraction and got 304")
	require.Equal(t, 80, rep.Unchanged-rep.NotModified)
	for _, req := range g.api.Requests() {
		switch {
		case req.Method == http.MethodPost && req.Path == "/v1/batch":
			var b batchBody
			require.NoError(t, json.Unmarshal(req.Body, &b))
			require.Empty(t, b.Headers, "a batch carries no per-URL conditional headers")
			for _, u := range b.URLs {
				require.False(t, withValidators[u], "%s has validators but went through batch", u)
			}
		case req.Method == http.MethodPost && req.Path == "/v1/extract":
			var b extractBody
			require.NoError(t, json.Unmarshal(req.Body, &b))
			require.True(t, withValidators[b.URL], b.URL)
			require.NotEmpty(t, b.Headers["If-None-Match"])
		}
	}
	require.Equal(t, 40, g.api.Count(http.MethodPost, "/v1/extract"))
}

func etagOf(t *testing.T, s *testsite.Site, path string) string {
	t.Helper()
	resp, err := s.Client().Get(s.PageURL(path))
	require.NoError(t, err)
	resp.Body.Close()
	return resp.Header.Get("ETag")
}

func TestPaymentRequiredStopsTheRunAndLeavesRowsDue(t *testing.T) {
	g := newGeonode(t, testsite.Options{Pages: 20}, func(c *recrawl.Config) { c.Workers = 1 })
	g.api.SetBalance(5)
	rep, err := g.eng.Run(context.Background(), g.src)
	require.Error(t, err)
	require.True(t, geonode.IsFatal(err), err)
	require.ErrorIs(t, err, geonode.ErrPaymentRequired)
	require.Equal(t, recrawl.StopError, rep.StoppedBy)
	require.Equal(t, 5, rep.New)
	due := countDue(t, g.state, g.src.Name(), g.clk.Now())
	require.Equal(t, 15, due, "what was not fetched stays due")
}

func TestStuckBatchLeavesRowsDue(t *testing.T) {
	g := newGeonode(t, testsite.Options{Pages: 60}, nil)
	client, err := geonode.New(g.api.APIKey(), geonode.WithBaseURL(g.api.URL()), geonode.WithClock(g.clk), geonode.WithBatchDeadline(time.Minute))
	require.NoError(t, err)
	g.eng = mustEngine(t, recrawl.Config{State: g.state, Clock: g.clk, Fetcher: client, Limits: limits(func(*recrawl.Limits) {})})
	g.api.StallBatches(20)
	rep := g.run()
	require.Equal(t, 20, rep.New)
	require.Equal(t, 40, rep.Failed[recrawl.StageFetch])
	require.Positive(t, g.api.Count(http.MethodDelete, "/v1/batch/"), "the stuck job was cancelled")
	require.Equal(t, 40, rep.RetriesDeferred)
	due := countDue(t, g.state, g.src.Name(), g.clk.Now().Add(recrawl.FailureBackoff))
	require.Equal(t, 40, due, "the rows without a result are due again after the backoff")
}

func TestHybridBillsNothingForAnUnchangedSite(t *testing.T) {
	f := newFixture(t, testsite.Options{Pages: 30}, recrawl.Config{})
	api := fakegeonode.New(fakegeonode.Options{Clock: f.clk, Origins: []string{f.site.URL()}})
	t.Cleanup(api.Close)
	client, err := geonode.New(api.APIKey(), geonode.WithBaseURL(api.URL()), geonode.WithClock(f.clk))
	require.NoError(t, err)
	f.eng = mustEngine(t, recrawl.Config{State: f.state, Clock: f.clk, Remote: client, Limits: limits(func(*recrawl.Limits) {})})

	rep := f.run()
	require.Equal(t, 30, rep.New)
	require.Equal(t, 30, rep.Billed)
	f.clk.Advance(25 * time.Hour)
	f.site.Edit(f.site.Paths()[4])
	rep = f.run()
	require.Equal(t, 29, rep.NotModified)
	require.Equal(t, 1, rep.Changed)
	require.Equal(t, 1, rep.Billed, "only the edited page went to the paid back end")
	for _, r := range f.site.PageRequests() {
		if !strings.Contains(r.UserAgent, "recrawl") {
			continue
		}
		require.True(t, r.Conditional(), "direct requests carry the row's validators")
	}
}

// WEB_REQUEST_TIMEOUT_MS bounds every request to a Geonode back end: a
// stalled API fails each page with a *fetch.TimeoutError within the bound
// (retries included), instead of holding the run for the client's own two
// minutes per request.
func TestRequestTimeoutBoundsAStalledGeonodeAPI(t *testing.T) {
	tests := []struct {
		name, endpoint string
		pages          int
	}{
		{"single extraction", "POST /v1/extract", 3},
		{"batch poll", "GET /v1/batch/", 60},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var failures []error
			g := newGeonode(t, testsite.Options{Pages: tc.pages}, func(c *recrawl.Config) {
				c.Limits.RequestTimeout = 200 * time.Millisecond
				c.Observer = func(ev recrawl.Event) {
					if ev.Outcome == recrawl.OutcomeFailed {
						failures = append(failures, ev.Err)
					}
				}
			})
			g.api.Hang(tc.endpoint, 1<<20)
			began := time.Now()
			rep, err := g.eng.Run(context.Background(), g.src)
			require.Less(t, time.Since(began), 30*time.Second)
			require.NotNil(t, rep)
			if err == nil {
				require.Equal(t, tc.pages, rep.Failed[recrawl.StageFetch])
				require.Len(t, failures, tc.pages)
				err = failures[0]
			}
			require.ErrorIs(t, err, fetch.ErrTimeout)
			var te *fetch.TimeoutError
			require.ErrorAs(t, err, &te)
			require.Equal(t, 200*time.Millisecond, te.After)
			require.Zero(t, rep.New)
		})
	}
}
