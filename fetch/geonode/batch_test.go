package geonode_test

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/recrawl/recrawl/fetch"
	"github.com/recrawl/recrawl/fetch/geonode"
	"github.com/recrawl/recrawl/internal/fakegeonode"
)

func pageReqs(e *env, n int) []fetch.Request {
	reqs := make([]fetch.Request, n)
	for i := range reqs {
		reqs[i] = fetch.Request{URL: e.url(i + 1)}
	}
	return reqs
}

func TestBatch120AcrossPages(t *testing.T) {
	e := newEnv(t, 120, fakegeonode.Options{ItemsPerPoll: 10})
	c := e.client(t)
	reqs := pageReqs(e, 120)
	got, err := collect(t, context.Background(), c, reqs)
	require.NoError(t, err)
	require.Len(t, got, 120, "every URL accounted for")
	for i, o := range got {
		require.NoError(t, o.err)
		require.Equal(t, 200, o.resp.Status)
		require.Equal(t, reqs[i].URL, o.resp.URL)
		require.Contains(t, string(o.resp.Body), fmt.Sprintf("This is page %d, revision 1.", i+1), "index %d got another page's body", i)
		require.Equal(t, 1, o.resp.Billed)
		require.Equal(t, geonode.ContentTypeMarkdown, o.resp.ContentType)
	}
	require.Equal(t, 120, e.api.Billed())
	require.Equal(t, 1, e.api.Count("POST", "/v1/batch"))

	// The results were read across three pages of 50.
	pages := map[string]bool{}
	for _, r := range e.api.Requests() {
		if r.Method == "GET" && strings.HasPrefix(r.Path, "/v1/batch/") {
			q, err := url.ParseQuery(r.Query)
			require.NoError(t, err)
			require.Equal(t, "50", q.Get("page_size"))
			pages[q.Get("page")] = true
		}
	}
	require.Equal(t, map[string]bool{"1": true, "2": true, "3": true}, pages)
	// Items completed over several polls (10 per poll).
	require.GreaterOrEqual(t, e.api.Count("GET", "/v1/batch/"), 12)
}

func TestBatchMixedOutcomes(t *testing.T) {
	for _, objects := range []bool{false, true} {
		t.Run(fmt.Sprintf("invalid_urls as objects=%t", objects), func(t *testing.T) {
			e := newEnv(t, 8, fakegeonode.Options{ItemsPerPoll: 3, InvalidURLObjects: objects})
			c := e.client(t)
			paths := e.site.Paths()
			e.site.Delete(paths[1], http.StatusNotFound)
			e.site.Delete(paths[2], http.StatusGone)
			e.site.Fail(paths[3], http.StatusServiceUnavailable, 1, "")
			e.api.FailURL(e.url(5), "RENDER_FAILED", "the browser crashed")
			rejected := e.site.PageURL("/rejected-by-geonode")
			e.api.RejectURL(rejected)

			reqs := append(pageReqs(e, 8),
				fetch.Request{URL: "not a url"},
				fetch.Request{URL: rejected},
				fetch.Request{URL: e.url(1)}, // a duplicate: processed separately
			)
			got, err := collect(t, context.Background(), c, reqs)
			require.NoError(t, err)
			require.Len(t, got, len(reqs))

			require.Equal(t, 200, got[0].resp.Status)
			require.True(t, got[1].resp.Gone())
			require.Equal(t, 404, got[1].resp.Status)
			require.Equal(t, 410, got[2].resp.Status)
			var se *fetch.StatusError
			require.ErrorAs(t, got[3].err, &se)
			require.Equal(t, 503, se.Status)
			var ie *geonode.ItemError
			require.ErrorAs(t, got[4].err, &ie)
			require.Equal(t, "RENDER_FAILED", ie.Code)
			require.Equal(t, "the browser crashed", ie.Message)
			require.Equal(t, e.url(5), ie.URL)
			require.ErrorIs(t, got[4].err, geonode.ErrExtractionFailed)
			for _, i := range []int{5, 6, 7} {
				require.NoError(t, got[i].err)
				require.Equal(t, 200, got[i].resp.Status)
			}
			for _, i := range []int{8, 9} {
				require.ErrorIs(t, got[i].err, geonode.ErrInvalidURL, "index %d", i)
				require.ErrorAs(t, got[i].err, &ie)
				require.Equal(t, geonode.CodeInvalidURL, ie.Code)
				require.Equal(t, reqs[i].URL, ie.URL)
			}
			require.Contains(t, string(got[10].resp.Body), "This is page 1")

			sent := bodies(t, e.api, "POST", "/v1/batch")
			require.Len(t, sent, 1)
			require.Len(t, sent[0]["urls"], 10, "the locally invalid URL is not sent")
			require.Equal(t, true, sent[0]["ignore_invalid_urls"])
		})
	}
}

func TestBatchStuckIsCancelled(t *testing.T) {
	e := newEnv(t, 40, fakegeonode.Options{ItemsPerPoll: 10})
	e.api.StallBatches(25)
	c := e.client(t, geonode.WithBatchDeadline(time.Minute))
	reqs := pageReqs(e, 40)
	got, err := collect(t, context.Background(), c, reqs)

	var te *geonode.BatchTimeoutError
	require.ErrorAs(t, err, &te)
	require.ErrorIs(t, err, geonode.ErrJobTimeout)
	require.Equal(t, 15, te.Pending)
	require.True(t, te.Cancelled)
	require.Len(t, got, 25, "only finished URLs are yielded")
	for i := range 25 {
		require.NotNil(t, got[i], "index %d", i)
		require.Equal(t, 200, got[i].resp.Status)
	}
	for i := 25; i < 40; i++ {
		require.Nil(t, got[i], "index %d got a yield: it must stay due", i)
	}
	ids := e.api.BatchIDs()
	require.Len(t, ids, 1)
	require.Equal(t, 1, e.api.Count("DELETE", "/v1/batch/"+ids[0]), "the stuck job was cancelled")
	st, err := e.api.BatchStatus(ids[0])
	require.NoError(t, err)
	require.Equal(t, "cancelled", st)
	require.GreaterOrEqual(t, e.waited(), time.Minute)
	require.Less(t, e.waited(), time.Minute+10*time.Second)
}

func TestBatchNeverCarriesConditionalHeaders(t *testing.T) {
	e := newEnv(t, 12, fakegeonode.Options{ItemsPerPoll: 5})
	c := e.client(t, geonode.WithBatchSize(5), geonode.WithHeaders(map[string]string{"Accept-Language": "en"}))
	reqs := pageReqs(e, 12)
	for i := range reqs {
		reqs[i].ETag = fmt.Sprintf(`"etag-%d"`, i)
		reqs[i].LastModified = "Thu, 01 Jan 2026 00:00:00 GMT"
	}
	got, err := collect(t, context.Background(), c, reqs)
	require.NoError(t, err)
	require.Len(t, got, 12)
	for _, o := range got {
		require.Equal(t, 200, o.resp.Status, "validators were ignored: every page came back in full")
	}
	sent := bodies(t, e.api, "POST", "/v1/batch")
	require.Len(t, sent, 3)
	for _, b := range sent {
		require.Equal(t, map[string]any{"Accept-Language": "en"}, b["headers"])
	}
	for _, r := range e.api.Requests() {
		if strings.HasPrefix(r.Path, "/v1/batch") {
			low := strings.ToLower(string(r.Body))
			require.NotContains(t, low, "if-none-match")
			require.NotContains(t, low, "if-modified-since")
		}
	}
	for _, r := range e.site.PageRequests() {
		require.False(t, r.Conditional(), "the origin saw a conditional request from a batch")
	}
}

func TestBatchSplitMapsIndexes(t *testing.T) {
	tests := []struct {
		name      string
		n, size   int
		wantJobs  []int
		perPoll   int
		pageSize  int
		withLocal bool
	}{
		{"small jobs", 23, 7, []int{7, 7, 7, 2}, 3, 4, true},
		{"over the API limit", 2001, geonode.MaxBatchSize, []int{1000, 1000, 1}, 500, 50, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if testing.Short() && tc.n > 1000 {
				t.Skip("large batch")
			}
			e := newEnv(t, 5, fakegeonode.Options{ItemsPerPoll: tc.perPoll})
			c := e.client(t, geonode.WithBatchSize(tc.size), geonode.WithBatchPageSize(tc.pageSize))
			// Distinct URLs over a few pages: the query string tells them
			// apart, and the fake reports it back in metadata.url.
			reqs := make([]fetch.Request, tc.n)
			for i := range reqs {
				reqs[i] = fetch.Request{URL: fmt.Sprintf("%s?i=%d", e.url(i%5+1), i)}
			}
			if tc.withLocal {
				reqs[3].URL = "mailto:someone@example.com" // rejected locally, shifts every later index
			}
			got, err := collect(t, context.Background(), c, reqs)
			require.NoError(t, err)
			require.Len(t, got, tc.n)
			for i, o := range got {
				if tc.withLocal && i == 3 {
					require.ErrorIs(t, o.err, geonode.ErrInvalidURL)
					continue
				}
				require.NoError(t, o.err, "index %d", i)
				require.Equal(t, reqs[i].URL, o.resp.FinalURL, "index %d mapped to another URL", i)
				require.Contains(t, string(o.resp.Body), fmt.Sprintf("This is page %d,", i%5+1))
			}
			sent := bodies(t, e.api, "POST", "/v1/batch")
			var sizes []int
			for _, b := range sent {
				sizes = append(sizes, len(b["urls"].([]any)))
			}
			want := tc.wantJobs
			if tc.withLocal {
				want = []int{7, 7, 7, 1}
			}
			require.Equal(t, want, sizes)
		})
	}
}

func TestBatchPaymentRequired(t *testing.T) {
	e := newEnv(t, 5, fakegeonode.Options{})
	e.api.SetBalance(3)
	c := e.client(t)
	reqs := append(pageReqs(e, 5), fetch.Request{URL: "bad"})
	got, err := collect(t, context.Background(), c, reqs)
	require.ErrorIs(t, err, geonode.ErrPaymentRequired)
	require.True(t, geonode.IsFatal(err))
	require.Empty(t, got, "nothing is yielded when the job is refused")
	require.Zero(t, e.api.Billed())
	require.Equal(t, 1, e.api.Count("POST", "/v1/batch"), "402 is not retried")
}

func TestBatchRetriesThrottledPolls(t *testing.T) {
	e := newEnv(t, 6, fakegeonode.Options{ItemsPerPoll: 2})
	e.api.Fail("GET /v1/batch/", http.StatusTooManyRequests, 2, "3")
	e.api.Fail("POST /v1/batch", http.StatusServiceUnavailable, 1, "1")
	c := e.client(t)
	got, err := collect(t, context.Background(), c, pageReqs(e, 6))
	require.NoError(t, err)
	require.Len(t, got, 6)
	require.Equal(t, 2, e.api.Count("POST", "/v1/batch"))
}

func TestBatchContextCancelCancelsJob(t *testing.T) {
	e := newEnv(t, 30, fakegeonode.Options{ItemsPerPoll: 5})
	c := e.client(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	n := 0
	err := c.FetchBatch(ctx, pageReqs(e, 30), func(int, *fetch.Response, error) {
		n++
		if n == 5 {
			cancel()
		}
	})
	require.ErrorIs(t, err, context.Canceled)
	require.Equal(t, 5, n, "nothing after the cancel")
	require.Equal(t, 1, e.api.Count("DELETE", "/v1/batch/"), "the abandoned job was cancelled")
}

func TestBatchEmptyAndAllInvalid(t *testing.T) {
	e := newEnv(t, 1, fakegeonode.Options{})
	c := e.client(t)
	got, err := collect(t, context.Background(), c, nil)
	require.NoError(t, err)
	require.Empty(t, got)
	got, err = collect(t, context.Background(), c, []fetch.Request{{URL: ""}, {URL: "x"}})
	require.NoError(t, err)
	require.Len(t, got, 2)
	require.Empty(t, e.api.Requests())
	require.Error(t, c.FetchBatch(context.Background(), nil, nil))
}

func TestBatchUnfinishedTerminalJob(t *testing.T) {
	// A job that ends "failed" with items never reported: those URLs get no
	// yield and FetchBatch says so.
	srv := newScriptedServer(t, []string{
		`{"job_id":"j1","status":"queued","status_url":"/v1/batch/j1","accepted_urls":2,"invalid_urls":[]}`,
		`{"job_id":"j1","status":"failed","total_urls":2,"completed_urls":1,"failed_urls":0,"cancelled_urls":0,
		  "results":[{"input_index":0,"url":"https://example.com/a","status":"completed","data":{"markdown":"# A"},"metadata":{"http_status":200,"tokens_charged":1}}]}`,
	})
	c, err := geonode.New("k", geonode.WithBaseURL(srv), geonode.WithPolling(time.Millisecond, time.Millisecond))
	require.NoError(t, err)
	got, err := collect(t, context.Background(), c, []fetch.Request{{URL: "https://example.com/a"}, {URL: "https://example.com/b"}})
	require.ErrorIs(t, err, geonode.ErrJobFailed)
	require.Len(t, got, 1)
	require.Equal(t, "# A", string(got[0].resp.Body))
}

func TestBatchCancelledElsewhere(t *testing.T) {
	// Someone cancelled the job (in the dashboard, say): the cancelled URL
	// gets no yield and FetchBatch reports the job's end.
	srv := newScriptedServer(t, []string{
		`{"job_id":"j3","status":"queued","accepted_urls":2,"invalid_urls":[]}`,
		`{"job_id":"j3","status":"cancelled","total_urls":2,"completed_urls":1,"failed_urls":0,"cancelled_urls":1,"results":[
		  {"input_index":0,"url":"https://example.com/a","status":"completed","data":{"markdown":"# A"},"metadata":{"http_status":200}},
		  {"input_index":1,"url":"https://example.com/b","status":"cancelled"}]}`,
	})
	c, err := geonode.New("k", geonode.WithBaseURL(srv), geonode.WithPolling(time.Millisecond, time.Millisecond))
	require.NoError(t, err)
	got, err := collect(t, context.Background(), c, []fetch.Request{{URL: "https://example.com/a"}, {URL: "https://example.com/b"}})
	require.ErrorIs(t, err, geonode.ErrJobFailed)
	require.ErrorContains(t, err, `"cancelled"`)
	require.Len(t, got, 1)
	require.Nil(t, got[1])
}

func TestBatchResultsWithoutInputIndex(t *testing.T) {
	// Results identified by URL only, in reverse order, with counters
	// absent: still mapped and yielded once.
	srv := newScriptedServer(t, []string{
		`{"job_id":"j2","status":"queued","accepted_urls":2,"invalid_urls":[{"input":"https://example.com/c","error":"bad host"}]}`,
		`{"job_id":"j2","status":"completed","results":[
		  {"url":"https://example.com/b","status":"failed","error_code":"TIMEOUT","error_message":"slow"},
		  {"url":"https://example.com/a","status":"completed","data":{"markdown":"# A"},"metadata":{"http_status":200}}]}`,
	})
	c, err := geonode.New("k", geonode.WithBaseURL(srv), geonode.WithPolling(time.Millisecond, time.Millisecond))
	require.NoError(t, err)
	got, err := collect(t, context.Background(), c, []fetch.Request{{URL: "https://example.com/a"}, {URL: "https://example.com/b"}, {URL: "https://example.com/c"}})
	require.NoError(t, err)
	require.Len(t, got, 3)
	require.Equal(t, "# A", string(got[0].resp.Body))
	require.Equal(t, 1, got[0].resp.Billed, "no tokens_charged: one billed request per extracted page")
	var ie *geonode.ItemError
	require.ErrorAs(t, got[1].err, &ie)
	require.Equal(t, "TIMEOUT", ie.Code)
	require.ErrorIs(t, got[2].err, geonode.ErrInvalidURL)
	require.Contains(t, got[2].err.Error(), "bad host")
}

func TestMapURLs(t *testing.T) {
	e := newEnv(t, 10, fakegeonode.Options{})
	c := e.client(t)
	got, err := c.MapURLs(context.Background(), e.url(1))
	require.NoError(t, err)
	want := append(e.site.PageURLs(), e.site.URL()+"/", e.site.URL()+"/docs/") // the navigation links
	require.ElementsMatch(t, want, got, "sitemap plus the seed page's links, deduplicated")

	sent := bodies(t, e.api, "POST", "/v1/map")
	require.Equal(t, map[string]any{"url": e.url(1), "include_subdomains": false, "ignore_query_parameters": true}, sent[0])

	c = e.client(t, geonode.WithIncludeSubdomains(true))
	_, err = c.MapURLs(context.Background(), e.url(1))
	require.NoError(t, err)
	require.Equal(t, true, bodies(t, e.api, "POST", "/v1/map")[1]["include_subdomains"])
	require.Zero(t, e.api.Billed())
}

func TestMapURLsTimeout(t *testing.T) {
	e := newEnv(t, 2, fakegeonode.Options{})
	e.api.Fail("POST /v1/map", http.StatusRequestTimeout, 1, "")
	c := e.client(t)
	_, err := c.MapURLs(context.Background(), e.url(1))
	require.ErrorIs(t, err, geonode.ErrTimeout)
	var ae *geonode.APIError
	require.ErrorAs(t, err, &ae)
	require.Equal(t, "TIMEOUT", ae.Code)
	require.Equal(t, 1, e.api.Count("POST", "/v1/map"), "408 is not retried")

	_, err = c.MapURLs(context.Background(), "example.com")
	require.ErrorIs(t, err, geonode.ErrInvalidURL)
}
