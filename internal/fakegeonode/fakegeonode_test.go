package fakegeonode_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/recrawl/recrawl/internal/fakegeonode"
	"github.com/recrawl/recrawl/internal/testsite"
)

type fixture struct {
	site *testsite.Site
	api  *fakegeonode.Server
}

func setup(t *testing.T, pages int, o fakegeonode.Options) *fixture {
	t.Helper()
	site := testsite.New(testsite.Options{Pages: pages})
	t.Cleanup(site.Close)
	api := fakegeonode.New(o)
	t.Cleanup(api.Close)
	return &fixture{site: site, api: api}
}

// call sends a request with the right key (or key) and decodes the JSON answer.
func (f *fixture) call(t *testing.T, method, path string, body any, key ...string) (int, http.Header, map[string]any) {
	t.Helper()
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		require.NoError(t, err)
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequest(method, f.api.URL()+path, rd)
	require.NoError(t, err)
	k := f.api.APIKey()
	if len(key) > 0 {
		k = key[0]
	}
	req.Header.Set("X-Api-Key", k)
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	var out map[string]any
	require.NoError(t, json.Unmarshal(raw, &out), "body %s", raw)
	return resp.StatusCode, resp.Header, out
}

func TestAuthAndErrors(t *testing.T) {
	f := setup(t, 2, fakegeonode.Options{})
	st, _, body := f.call(t, "POST", "/v1/extract", map[string]any{"url": f.site.PageURL("/docs/page-0001")}, "wrong")
	require.Equal(t, 401, st)
	require.Equal(t, "UNAUTHORIZED", body["code"])
	require.NotEmpty(t, body["correlation_id"])

	st, _, body = f.call(t, "POST", "/v1/extract", map[string]any{"formats": []string{"markdown"}})
	require.Equal(t, 422, st)
	require.Equal(t, "missing", body["detail"].([]any)[0].(map[string]any)["type"])

	st, _, body = f.call(t, "POST", "/v1/batch", map[string]any{"urls": []string{}})
	require.Equal(t, 422, st)
	require.Equal(t, "too_short", body["detail"].([]any)[0].(map[string]any)["type"])

	st, _, _ = f.call(t, "GET", "/v1/batch/nope", nil)
	require.Equal(t, 404, st)

	f.api.Fail("POST /v1/extract", 429, 1, "7")
	st, h, body := f.call(t, "POST", "/v1/extract", map[string]any{"url": f.site.PageURL("/docs/page-0001")})
	require.Equal(t, 429, st)
	require.Equal(t, "7", h.Get("Retry-After"))
	require.Equal(t, "RATE_LIMITED", body["code"])
	require.Equal(t, true, body["retryable"])
	f.api.Fail("POST /v1/extract", 429, 1, "")
	_, h, _ = f.call(t, "POST", "/v1/extract", map[string]any{"url": f.site.PageURL("/docs/page-0001")})
	require.Empty(t, h.Get("Retry-After"), "Retry-After only when asked for")
	require.Zero(t, f.api.Billed(), "rejected requests are not billed")
}

func TestExtractReportsOriginStatusAndBills(t *testing.T) {
	f := setup(t, 2, fakegeonode.Options{})
	f.site.Delete("/docs/page-0002", 404)
	st, h, body := f.call(t, "POST", "/v1/extract", map[string]any{"url": f.site.PageURL("/docs/page-0001"), "formats": []string{"markdown"}, "unknown_field": 1})
	require.Equal(t, 200, st)
	require.Empty(t, h.Get("ETag"))
	data := body["data"].(map[string]any)
	require.Contains(t, data["markdown"], "This is page 1")
	require.Nil(t, data["html"], "unrequested formats are null")
	meta := body["metadata"].(map[string]any)
	require.Equal(t, float64(200), meta["http_status"])
	require.NotContains(t, meta, "etag")
	require.Equal(t, float64(1), body["tokens_charged"])

	st, _, body = f.call(t, "POST", "/v1/extract", map[string]any{"url": f.site.PageURL("/docs/page-0002")})
	require.Equal(t, 200, st)
	require.Equal(t, float64(404), body["metadata"].(map[string]any)["http_status"])
	require.Equal(t, 2, f.api.Billed())

	f.api.SetBalance(0)
	st, _, body = f.call(t, "POST", "/v1/extract", map[string]any{"url": f.site.PageURL("/docs/page-0001")})
	require.Equal(t, 402, st)
	require.Equal(t, "INSUFFICIENT_BALANCE", body["code"])
	require.Equal(t, 2, f.api.Billed())
}

func TestBatchProgressPaginationAndCancel(t *testing.T) {
	f := setup(t, 12, fakegeonode.Options{ItemsPerPoll: 2})
	urls := f.site.PageURLs()
	urls = append(urls[:3], "ftp://nope", urls[3])
	st, _, body := f.call(t, "POST", "/v1/batch", map[string]any{"urls": urls})
	require.Equal(t, 202, st)
	require.Equal(t, float64(4), body["accepted_urls"])
	require.Equal(t, []any{"ftp://nope"}, body["invalid_urls"])
	id := body["job_id"].(string)

	_, _, s := f.call(t, "GET", "/v1/batch/"+id+"?page=1&page_size=3", nil)
	require.Equal(t, "processing", s["status"])
	require.Equal(t, float64(4), s["total_urls"])
	require.Equal(t, float64(2), s["completed_urls"])
	require.Len(t, s["results"], 3)
	// Page 2 does not advance progress; its item keeps its input index 4
	// (the invalid URL left a gap).
	_, _, s2 := f.call(t, "GET", "/v1/batch/"+id+"?page=2&page_size=3", nil)
	item := s2["results"].([]any)[0].(map[string]any)
	require.Equal(t, float64(4), item["input_index"])
	require.Equal(t, "queued", item["status"], "2 per poll: the 4th URL waits for the next poll")

	st, _, _ = f.call(t, "GET", "/v1/batch/"+id+"?page_size=51", nil)
	require.Equal(t, 422, st)

	_, _, s = f.call(t, "GET", "/v1/batch/"+id, nil)
	require.Equal(t, "completed", s["status"])
	require.Equal(t, float64(4), s["completed_urls"])
	require.Equal(t, 4, f.api.Billed())
	st, _, body = f.call(t, "DELETE", "/v1/batch/"+id, nil)
	require.Equal(t, 409, st)
	require.Equal(t, "INVALID_STATE", body["code"])

	f.api.StallBatches(0)
	_, _, body = f.call(t, "POST", "/v1/batch", map[string]any{"urls": urls[:2]})
	id = body["job_id"].(string)
	_, _, s = f.call(t, "GET", "/v1/batch/"+id, nil)
	require.Equal(t, float64(0), s["completed_urls"], "stalled")
	st, _, body = f.call(t, "DELETE", "/v1/batch/"+id, nil)
	require.Equal(t, 202, st)
	require.Equal(t, "cancelled", body["status"])
	_, _, s = f.call(t, "GET", "/v1/batch/"+id, nil)
	require.Equal(t, float64(2), s["cancelled_urls"])
}

func TestBatchRejectsTooMany(t *testing.T) {
	f := setup(t, 1, fakegeonode.Options{})
	urls := make([]string, fakegeonode.MaxBatchURLs+1)
	for i := range urls {
		urls[i] = fmt.Sprintf("https://example.com/%d", i)
	}
	st, _, body := f.call(t, "POST", "/v1/batch", map[string]any{"urls": urls})
	require.Equal(t, 422, st)
	require.Equal(t, "too_long", body["detail"].([]any)[0].(map[string]any)["type"])
	f.api.SetBalance(1)
	st, _, _ = f.call(t, "POST", "/v1/batch", map[string]any{"urls": urls[:2]})
	require.Equal(t, 402, st, "a batch needs its URL count in balance")
}

func TestMapAndLog(t *testing.T) {
	f := setup(t, 4, fakegeonode.Options{})
	st, _, body := f.call(t, "POST", "/v1/map", map[string]any{"url": f.site.PageURL("/docs/page-0001"), "search": "page-000"})
	require.Equal(t, 200, st)
	links := body["links"].([]any)
	require.Len(t, links, 4)
	require.Equal(t, "sitemap", links[0].(map[string]any)["source"])
	reqs := f.api.Requests()
	require.Len(t, reqs, 1)
	require.Equal(t, "POST", reqs[0].Method)
	require.True(t, strings.Contains(string(reqs[0].Body), "page-000"))
	require.True(t, reqs[0].KeyOK)
	require.Equal(t, 200, reqs[0].Status)
}

func TestFetchesOnlyAllowedOrigins(t *testing.T) {
	f := setup(t, 1, fakegeonode.Options{})
	st, _, body := f.call(t, "POST", "/v1/extract", map[string]any{"url": "https://example.com/"})
	require.Equal(t, 422, st)
	require.Equal(t, "EXTRACTION_FAILED", body["code"])

	other := testsite.New(testsite.Options{Pages: 1})
	t.Cleanup(other.Close)
	g := setup(t, 1, fakegeonode.Options{Origins: []string{other.URL()}})
	st, _, _ = g.call(t, "POST", "/v1/extract", map[string]any{"url": other.PageURL("/docs/page-0001")})
	require.Equal(t, 200, st)
	st, _, _ = g.call(t, "POST", "/v1/extract", map[string]any{"url": g.site.PageURL("/docs/page-0001")})
	require.Equal(t, 422, st, "a loopback site that is not a configured origin")
	require.Equal(t, 1, g.api.OriginRequests())
}
