package geonode_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/recrawl/recrawl/fetch"
	"github.com/recrawl/recrawl/fetch/geonode"
	"github.com/recrawl/recrawl/internal/fakegeonode"
	"github.com/recrawl/recrawl/internal/testsite"
)

func TestFetchSync(t *testing.T) {
	e := newEnv(t, 6, fakegeonode.Options{})
	ctx := context.Background()
	c := e.client(t)

	// Learn the origin's validators the way the engine would, directly.
	direct, err := (&fetch.HTTP{}).Fetch(ctx, fetch.Request{URL: e.url(1)})
	require.NoError(t, err)
	require.NotEmpty(t, direct.ETag)
	require.NotEmpty(t, direct.LastModified)

	e.site.Delete(e.site.Paths()[3], http.StatusNotFound)
	e.site.Delete(e.site.Paths()[4], http.StatusGone)

	tests := []struct {
		name     string
		req      fetch.Request
		status   int
		contains string
	}{
		{"fresh", fetch.Request{URL: e.url(1)}, 200, "This is page 1, revision 1."},
		{"etag matches", fetch.Request{URL: e.url(1), ETag: direct.ETag}, 304, ""},
		{"last-modified matches", fetch.Request{URL: e.url(1), LastModified: direct.LastModified}, 304, ""},
		{"both match", fetch.Request{URL: e.url(1), ETag: direct.ETag, LastModified: direct.LastModified}, 304, ""},
		{"stale etag", fetch.Request{URL: e.url(1), ETag: `"stale"`}, 200, "This is page 1"},
		{"404", fetch.Request{URL: e.url(4)}, 404, ""},
		{"410", fetch.Request{URL: e.url(5)}, 410, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			e.site.ResetLog()
			resp, err := c.Fetch(ctx, tc.req)
			require.NoError(t, err)
			require.Equal(t, tc.status, resp.Status)
			require.Equal(t, tc.req.URL, resp.URL)
			require.Equal(t, tc.req.URL, resp.FinalURL)
			require.Equal(t, 1, resp.Attempts)
			require.Equal(t, 1, resp.Billed, "the fake bills every extraction that reached the origin")
			switch {
			case tc.status == 200:
				require.Equal(t, geonode.ContentTypeMarkdown, resp.ContentType)
				require.Contains(t, string(resp.Body), tc.contains)
				require.NotContains(t, string(resp.Body), "<p>", "the body is Markdown, not HTML")
				require.Empty(t, resp.ETag, "Geonode exposes no validators")
			case tc.status == 304:
				require.True(t, resp.NotModified())
				require.Empty(t, resp.Body)
				require.Equal(t, tc.req.ETag, resp.ETag, "a 304 confirms the request's validators")
				require.Equal(t, tc.req.LastModified, resp.LastModified)
			default:
				require.True(t, resp.Gone())
				require.Empty(t, resp.Body)
			}
			// The validators reached the origin through the headers object.
			origin := e.site.PageRequests()
			require.Len(t, origin, 1)
			require.Equal(t, tc.req.ETag, origin[0].IfNoneMatch)
			require.Equal(t, tc.req.LastModified, origin[0].IfModifiedSince)
		})
	}

	sent := bodies(t, e.api, "POST", "/v1/extract")
	require.Len(t, sent, len(tests))
	require.Equal(t, map[string]any{"If-None-Match": direct.ETag, "If-Modified-Since": direct.LastModified}, sent[3]["headers"])
	require.Nil(t, sent[0]["headers"], "no headers object without validators")
	require.Equal(t, []any{"markdown"}, sent[0]["formats"])
	require.Equal(t, "sync", sent[0]["processing_mode"])
	require.Equal(t, false, sent[0]["render_js"])
	require.Equal(t, len(tests), e.api.Billed())
}

func TestFetchOriginErrorsAreStatusErrors(t *testing.T) {
	e := newEnv(t, 3, fakegeonode.Options{})
	c := e.client(t)
	ctx := context.Background()
	for _, status := range []int{403, 429, 500, 503} {
		t.Run(fmt.Sprint(status), func(t *testing.T) {
			e.site.Fail(e.site.Paths()[0], status, 1, "")
			_, err := c.Fetch(ctx, fetch.Request{URL: e.url(1)})
			var se *fetch.StatusError
			require.ErrorAs(t, err, &se)
			require.Equal(t, status, se.Status)
			require.Equal(t, e.url(1), se.URL)
			require.Equal(t, 1, se.Attempts, "origin statuses are Geonode's answer, not retried by the client")
			var ae *geonode.APIError
			require.False(t, errors.As(err, &ae), "an origin status is not an API error")
		})
	}
}

func TestFetchFormatsAndOptions(t *testing.T) {
	e := newEnv(t, 2, fakegeonode.Options{})
	ctx := context.Background()

	c := e.client(t, geonode.WithFormats(geonode.HTML), geonode.WithRenderJS(true),
		geonode.WithProxy(geonode.Proxy{Country: "DE", Type: "datacenter"}),
		geonode.WithWaitConfig(geonode.WaitConfig{WaitUntil: "load", WaitFor: "#main", WaitTimeout: 1500 * time.Millisecond}),
		geonode.WithHeaders(map[string]string{"Accept-Language": "de-DE"}))
	resp, err := c.Fetch(ctx, fetch.Request{URL: e.url(2), ETag: `"x"`})
	require.NoError(t, err)
	require.Equal(t, geonode.ContentTypeHTML, resp.ContentType)
	require.Contains(t, string(resp.Body), "<h1>Page 2</h1>")

	sent := bodies(t, e.api, "POST", "/v1/extract")
	require.Len(t, sent, 1)
	b := sent[0]
	require.Equal(t, []any{"html"}, b["formats"])
	require.Equal(t, true, b["render_js"])
	require.Equal(t, map[string]any{"country": "DE", "type": "datacenter"}, b["proxy"])
	require.Equal(t, map[string]any{"wait_until": "load", "wait_for": "#main", "wait_timeout": float64(1500)}, b["wait_config"])
	require.Equal(t, map[string]any{"Accept-Language": "de-DE", "If-None-Match": `"x"`}, b["headers"])

	// Both formats: the body is the Markdown.
	c = e.client(t, geonode.WithFormats(geonode.Markdown, geonode.HTML))
	resp, err = c.Fetch(ctx, fetch.Request{URL: e.url(1)})
	require.NoError(t, err)
	require.Equal(t, geonode.ContentTypeMarkdown, resp.ContentType)
	require.Contains(t, string(resp.Body), "## Example")
}

func TestFetchTooLarge(t *testing.T) {
	e := newEnv(t, 1, fakegeonode.Options{})
	c := e.client(t, geonode.WithMaxBytes(100))
	_, err := c.Fetch(context.Background(), fetch.Request{URL: e.url(1)})
	require.ErrorIs(t, err, fetch.ErrTooLarge)
}

func TestFetchInvalidURLSendsNothing(t *testing.T) {
	e := newEnv(t, 1, fakegeonode.Options{})
	c := e.client(t)
	for _, u := range []string{"", "/relative", "ftp://example.com/x", "http://", "http://exa mple.com/"} {
		_, err := c.Fetch(context.Background(), fetch.Request{URL: u})
		require.ErrorIs(t, err, geonode.ErrInvalidURL, "url %q", u)
	}
	require.Empty(t, e.api.Requests())
}

func TestFetchAsync(t *testing.T) {
	e := newEnv(t, 2, fakegeonode.Options{AsyncPolls: 2})
	c := e.client(t, geonode.WithAsync(true))
	resp, err := c.Fetch(context.Background(), fetch.Request{URL: e.url(1), ETag: `"old"`})
	require.NoError(t, err)
	require.Equal(t, 200, resp.Status)
	require.Contains(t, string(resp.Body), "This is page 1")
	require.Equal(t, 1, resp.Billed)
	require.Equal(t, 1, resp.Attempts, "polls are not attempts")

	require.Equal(t, "async", bodies(t, e.api, "POST", "/v1/extract")[0]["processing_mode"])
	polls := e.api.Count("GET", "/v1/extract/")
	require.Equal(t, 3, polls, "two 'processing' answers, then completed")
	// Waits double from the first interval: 1s + 2s + 4s.
	require.Equal(t, 7*time.Second, e.waited())
	// The validators reached the origin.
	require.Equal(t, `"old"`, e.site.PageRequests()[0].IfNoneMatch)
}

func TestFetchAsyncFailures(t *testing.T) {
	t.Run("failed job", func(t *testing.T) {
		e := newEnv(t, 1, fakegeonode.Options{})
		e.api.FailURL(e.url(1), "BLOCKED", "target refused the connection")
		c := e.client(t, geonode.WithAsync(true))
		_, err := c.Fetch(context.Background(), fetch.Request{URL: e.url(1)})
		var ie *geonode.ItemError
		require.ErrorAs(t, err, &ie)
		require.Equal(t, "BLOCKED", ie.Code)
		require.Equal(t, "target refused the connection", ie.Message)
		require.NotEmpty(t, ie.JobID)
		require.ErrorIs(t, err, geonode.ErrExtractionFailed)
		require.Zero(t, e.api.Billed())
	})
	t.Run("stuck job", func(t *testing.T) {
		e := newEnv(t, 1, fakegeonode.Options{})
		e.api.StallExtracts(true)
		c := e.client(t, geonode.WithAsync(true), geonode.WithJobDeadline(time.Minute))
		_, err := c.Fetch(context.Background(), fetch.Request{URL: e.url(1)})
		var te *geonode.ExtractTimeoutError
		require.ErrorAs(t, err, &te)
		require.ErrorIs(t, err, geonode.ErrJobTimeout)
		require.Equal(t, time.Minute, e.waited(), "it waits exactly until the deadline")
		require.Greater(t, e.api.Count("GET", "/v1/extract/"), 3)
	})
	t.Run("context cancelled while polling", func(t *testing.T) {
		e := newEnv(t, 1, fakegeonode.Options{})
		e.api.StallExtracts(true)
		c := e.client(t, geonode.WithAsync(true))
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		_, err := c.Fetch(ctx, fetch.Request{URL: e.url(1)})
		require.ErrorIs(t, err, context.Canceled)
	})
}

func TestRetryAfter(t *testing.T) {
	tests := []struct {
		name  string
		value func(now time.Time) string
		wait  time.Duration
	}{
		{"seconds", func(time.Time) string { return "2" }, 2 * time.Second},
		{"http date", func(now time.Time) string { return now.Add(5 * time.Second).UTC().Format(http.TimeFormat) }, 5 * time.Second},
		{"date in the past", func(now time.Time) string { return now.Add(-time.Hour).UTC().Format(http.TimeFormat) }, 0},
		{"capped", func(time.Time) string { return "3600" }, 10 * time.Second},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t, 1, fakegeonode.Options{})
			e.api.Fail("POST /v1/extract", http.StatusTooManyRequests, 1, tc.value(start))
			c := e.client(t, geonode.WithMaxRetryAfter(10*time.Second))
			resp, err := c.Fetch(context.Background(), fetch.Request{URL: e.url(1)})
			require.NoError(t, err)
			require.Equal(t, 200, resp.Status)
			require.Equal(t, 2, resp.Attempts)
			require.Equal(t, tc.wait, e.waited(), "the wait ran on the injected clock")
			require.Equal(t, 2, e.api.Count("POST", "/v1/extract"))
		})
	}
}

func TestRetryBackoffWithoutRetryAfter(t *testing.T) {
	e := newEnv(t, 1, fakegeonode.Options{})
	e.api.Fail("POST /v1/extract", http.StatusServiceUnavailable, 3, "")
	c := e.client(t, geonode.WithBackoff(time.Second, 3*time.Second))
	resp, err := c.Fetch(context.Background(), fetch.Request{URL: e.url(1)})
	require.NoError(t, err)
	require.Equal(t, 4, resp.Attempts)
	// Full jitter: waits of at most 2s, 3s (capped), 3s.
	require.LessOrEqual(t, e.waited(), 8*time.Second)
}

func TestRetryPolicy(t *testing.T) {
	no, yes := false, true
	tests := []struct {
		name     string
		fault    fakegeonode.Fault
		attempts int
		is       error
	}{
		{"5xx retried until attempts run out", fakegeonode.Fault{Status: 502, Times: 10}, 3, geonode.ErrServer},
		{"429 retried", fakegeonode.Fault{Status: 429, Times: 10}, 3, geonode.ErrRateLimited},
		{"retryable false honoured on 503", fakegeonode.Fault{Status: 503, Times: 10, Retryable: &no}, 1, geonode.ErrServer},
		{"retryable true honoured on 409", fakegeonode.Fault{Status: 409, Times: 10, Retryable: &yes}, 3, geonode.ErrConflict},
		{"400 not retried", fakegeonode.Fault{Status: 400, Times: 10, Code: "VALIDATION_ERROR"}, 1, geonode.ErrInvalidRequest},
		{"plain-text 502 from a proxy", fakegeonode.Fault{Status: 502, Times: 10, Body: "<html>Bad Gateway</html>"}, 3, geonode.ErrServer},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t, 1, fakegeonode.Options{})
			e.api.Inject("POST /v1/extract", tc.fault)
			c := e.client(t, geonode.WithMaxAttempts(3))
			_, err := c.Fetch(context.Background(), fetch.Request{URL: e.url(1)})
			var ae *geonode.APIError
			require.ErrorAs(t, err, &ae)
			require.Equal(t, tc.fault.Status, ae.Status)
			require.Equal(t, tc.attempts, ae.Attempts)
			require.ErrorIs(t, err, tc.is)
			require.False(t, ae.Fatal())
			require.Equal(t, tc.attempts, e.api.Count("POST", "/v1/extract"))
		})
	}
}

func TestFatalErrors(t *testing.T) {
	t.Run("402 balance exhausted", func(t *testing.T) {
		e := newEnv(t, 2, fakegeonode.Options{})
		e.api.SetBalance(1)
		c := e.client(t)
		_, err := c.Fetch(context.Background(), fetch.Request{URL: e.url(1)})
		require.NoError(t, err)
		_, err = c.Fetch(context.Background(), fetch.Request{URL: e.url(2)})
		require.ErrorIs(t, err, geonode.ErrPaymentRequired)
		require.True(t, geonode.IsFatal(err))
		require.True(t, geonode.IsFatal(fmt.Errorf("page 2: %w", err)), "wrapped")
		var ae *geonode.APIError
		require.ErrorAs(t, err, &ae)
		require.True(t, ae.Fatal())
		require.Equal(t, "INSUFFICIENT_BALANCE", ae.Code)
		require.NotEmpty(t, ae.CorrelationID)
		require.Equal(t, 1, ae.Attempts, "402 is not retried")
		require.Contains(t, err.Error(), "top up")
		require.Equal(t, 1, e.api.Billed())
	})
	t.Run("401 bad key", func(t *testing.T) {
		e := newEnv(t, 1, fakegeonode.Options{})
		c, err := geonode.New("wrong-key", geonode.WithBaseURL(e.api.URL()), geonode.WithClock(e.clk))
		require.NoError(t, err)
		_, err = c.Fetch(context.Background(), fetch.Request{URL: e.url(1)})
		require.ErrorIs(t, err, geonode.ErrUnauthorized)
		require.True(t, geonode.IsFatal(err))
		require.Equal(t, 1, len(e.api.Requests()))
		require.False(t, e.api.Requests()[0].KeyOK)
	})
	t.Run("not fatal", func(t *testing.T) {
		require.False(t, geonode.IsFatal(nil))
		require.False(t, geonode.IsFatal(&geonode.APIError{Status: 500}))
		require.False(t, geonode.IsFatal(errors.Join(errors.New("x"), &geonode.APIError{Status: 429})))
		require.True(t, geonode.IsFatal(errors.Join(errors.New("x"), &geonode.APIError{Status: 402})))
	})
}

func TestValidationAndExtractionErrors(t *testing.T) {
	e := newEnv(t, 1, fakegeonode.Options{})
	c := e.client(t)
	ctx := context.Background()

	e.api.Inject("POST /v1/extract", fakegeonode.Fault{Status: 422,
		Body: `{"detail":[{"type":"missing","loc":["body","url"],"msg":"Field required"},{"type":"enum","loc":["body","formats",0],"msg":"Input should be 'markdown' or 'html'"}]}`})
	_, err := c.Fetch(ctx, fetch.Request{URL: e.url(1)})
	var ae *geonode.APIError
	require.ErrorAs(t, err, &ae)
	require.ErrorIs(t, err, geonode.ErrInvalidRequest)
	require.NotErrorIs(t, err, geonode.ErrExtractionFailed)
	require.Equal(t, []geonode.ValidationDetail{
		{Loc: []string{"body", "url"}, Msg: "Field required", Type: "missing"},
		{Loc: []string{"body", "formats", "0"}, Msg: "Input should be 'markdown' or 'html'", Type: "enum"},
	}, ae.Detail)
	require.Contains(t, err.Error(), "body.url: Field required")

	e.api.FailURL(e.url(1), "EXTRACTION_FAILED", "the page could not be rendered")
	_, err = c.Fetch(ctx, fetch.Request{URL: e.url(1)})
	require.ErrorAs(t, err, &ae)
	require.Equal(t, 422, ae.Status)
	require.ErrorIs(t, err, geonode.ErrExtractionFailed)
	require.NotErrorIs(t, err, geonode.ErrInvalidRequest)
	require.Equal(t, "the page could not be rendered", ae.Message)

	e.api.FailURL(e.url(1), "", "")
	e.api.RejectURL(e.url(1))
	_, err = c.Fetch(ctx, fetch.Request{URL: e.url(1)})
	require.ErrorIs(t, err, geonode.ErrInvalidRequest)

	e.api.Inject("POST /v1/extract", fakegeonode.Fault{Status: 404, Body: `{"detail":"Not Found"}`})
	_, err = c.Fetch(ctx, fetch.Request{URL: e.url(1)})
	require.ErrorAs(t, err, &ae)
	require.Equal(t, "Not Found", ae.Message)
	require.ErrorIs(t, err, geonode.ErrNotFound)
}

func TestMalformedAnswers(t *testing.T) {
	tests := []struct{ name, body string }{
		{"not json", `<html>oops</html>`},
		{"no metadata", `{"data":{"markdown":"x"},"tokens_charged":1}`},
		{"status not a number", `{"data":{"markdown":"x"},"metadata":{"http_status":"two hundred"}}`},
		{"status out of range", `{"data":{"markdown":"x"},"metadata":{"http_status":7}}`},
		{"trailing data", `{"data":{"markdown":"x"},"metadata":{"http_status":200}} {}`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			srv := newRawServer(t, 200, tc.body)
			c, err := geonode.New("k", geonode.WithBaseURL(srv))
			require.NoError(t, err)
			_, err = c.Fetch(context.Background(), fetch.Request{URL: "https://example.com/"})
			require.ErrorIs(t, err, geonode.ErrMalformedResponse)
			var de *geonode.DecodeError
			require.ErrorAs(t, err, &de)
		})
	}
}

func TestTolerantDecoding(t *testing.T) {
	// Numbers as floats or strings, unknown fields, null formats, an
	// absolute status_url on the API's own host.
	body := `{"data":{"markdown":null,"html":"<p>hi</p>","links":null,"extra":1},
	"metadata":{"url":"https://example.com/final","http_status":200.0,"new_field":{"a":[1]}},"tokens_charged":"1"}`
	srv := newRawServer(t, 200, body)
	c, err := geonode.New("k", geonode.WithBaseURL(srv))
	require.NoError(t, err)
	resp, err := c.Fetch(context.Background(), fetch.Request{URL: "https://example.com/"})
	require.NoError(t, err)
	require.Equal(t, 200, resp.Status)
	require.Equal(t, "https://example.com/final", resp.FinalURL)
	require.Equal(t, geonode.ContentTypeHTML, resp.ContentType, "markdown was null: the html came back instead")
	require.Equal(t, "<p>hi</p>", string(resp.Body))
	require.Equal(t, 1, resp.Billed)
}

func TestContentTypeOfEmptyMarkdown(t *testing.T) {
	e := newEnv(t, 1, fakegeonode.Options{})
	e.site.Update(e.site.Paths()[0], func(p *testsite.Page) {
		p.Raw, p.ContentType = []byte(testsite.ScriptOnlyHTML), "text/html; charset=utf-8"
	})
	c := e.client(t)
	resp, err := c.Fetch(context.Background(), fetch.Request{URL: e.url(1)})
	require.NoError(t, err)
	require.Equal(t, 200, resp.Status)
	require.Equal(t, geonode.ContentTypeMarkdown, resp.ContentType)
	require.Empty(t, strings.TrimSpace(string(resp.Body)), "a script-only page has no text without rendering; the engine names it")
}
