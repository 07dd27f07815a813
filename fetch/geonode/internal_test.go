package geonode

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/recrawl/recrawl/fetch"
)

func TestJobPathStaysOnTheAPI(t *testing.T) {
	tests := []struct {
		base, status, want string
	}{
		{"https://scraper.geonode.io", "/v1/batch/abc", "/v1/batch/abc"},
		{"https://scraper.geonode.io", "", "/fallback"},
		{"https://scraper.geonode.io", "https://scraper.geonode.io/v1/batch/abc", "/v1/batch/abc"},
		{"https://scraper.geonode.io", "https://evil.example/v1/batch/abc", "/fallback"},
		{"https://scraper.geonode.io", "http://scraper.geonode.io/v1/batch/abc", "/fallback"},
		{"https://scraper.geonode.io", "//evil.example/v1/batch/abc", "/fallback"},
		{"https://scraper.geonode.io", "v1/batch/abc", "/fallback"},
		{"https://scraper.geonode.io", "/v1/batch/../../admin", "/fallback"},
		{"https://scraper.geonode.io", "/v1/batch/abc?page=2", "/v1/batch/abc?page=2"},
		{"https://gw.example/geonode", "/geonode/v1/batch/abc", "/v1/batch/abc"},
		{"https://gw.example/geonode", "/v1/batch/abc", "/v1/batch/abc"},
		{"https://gw.example/geonode", "https://gw.example/geonode/v1/batch/abc", "/v1/batch/abc"},
		{"https://gw.example/geonode", "https://gw.example/other/v1/batch/abc", "/fallback"},
	}
	for _, tc := range tests {
		t.Run(tc.base+" "+tc.status, func(t *testing.T) {
			c, err := New("k", WithBaseURL(tc.base))
			require.NoError(t, err)
			got := c.jobPath(tc.status, "/fallback")
			require.Equal(t, tc.want, got)
			u, err := c.endpoint(got)
			require.NoError(t, err)
			require.Equal(t, c.base.Host, u.Host)
		})
	}
}

func TestParseRetryAfter(t *testing.T) {
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	tests := []struct {
		in   string
		want time.Duration
	}{
		{"", -1}, {"  ", -1}, {"2", 2 * time.Second}, {" 120 ", 2 * time.Minute}, {"-1", -1}, {"1.5", -1},
		{"Thu, 01 Jan 2026 00:00:30 GMT", 30 * time.Second}, {"Wed, 31 Dec 2025 00:00:00 GMT", 0},
		{"99999999999999", 365 * 24 * time.Hour}, {"soon", -1},
	}
	for _, tc := range tests {
		require.Equal(t, tc.want, parseRetryAfter(tc.in, now), "%q", tc.in)
	}
}

func fuzzClient(t testing.TB) *Client {
	c, err := New("k", WithBaseURL("https://api.invalid"), WithMaxBytes(1<<20))
	require.NoError(t, err)
	return c
}

// FuzzDecodeAPIError: any error body decodes to an *APIError whose message
// can be printed; nothing panics.
func FuzzDecodeAPIError(f *testing.F) {
	for _, s := range []string{
		`{"code":"VALIDATION_ERROR","message":"Crawl depth limit exceeded","correlation_id":"5d2012da","retryable":false}`,
		`{"detail":[{"loc":["body","urls"],"msg":"Field required","type":"missing"}]}`,
		`{"detail":[{"loc":["query","page",0,{"x":1}],"msg":5,"type":null}]}`,
		`{"detail":"Not Found"}`,
		`{"error":{"code":"RATE_LIMITED","message":"slow down","retryable":"true"}}`,
		`<html>502 Bad Gateway</html>`, ``, `null`, `[]`, `{"retryable":"maybe"}`,
	} {
		f.Add(429, s)
	}
	f.Fuzz(func(t *testing.T, status int, body string) {
		e := decodeAPIError("POST /v1/extract", "https://example.com/", status, []byte(body), -1)
		if e == nil {
			t.Fatal("nil error")
		}
		_ = e.Error()
		_ = e.Fatal()
		for _, target := range []error{ErrUnauthorized, ErrPaymentRequired, ErrInvalidRequest, ErrExtractionFailed, ErrServer} {
			_ = e.Is(target)
		}
	})
}

// FuzzDecodeExtract: any extraction or job body either decodes to a
// definitive fetch outcome or to an error; nothing panics, and a Response
// always has a real status and a body within the size cap.
func FuzzDecodeExtract(f *testing.F) {
	for _, s := range []string{
		`{"data":{"markdown":"# Hi","html":null,"links":null},"metadata":{"url":"http://example.com/","http_status":200},"tokens_charged":1}`,
		`{"data":null,"metadata":{"http_status":304},"tokens_charged":1}`,
		`{"data":{"markdown":null,"html":"<p>x</p>"},"metadata":{"http_status":"404","url":"::"}}`,
		`{"job_id":"1","status":"completed","data":{"markdown":"x"},"metadata":{"http_status":200.0},"tokens_charged":1.5}`,
		`{"job_id":"1","status":"failed","error":{"code":"RATE_LIMITED","message":"m","retryable":true,"details":{}}}`,
		`{"metadata":{"http_status":1e309}}`, `{"metadata":{"http_status":-7}}`, `{"data":[],"metadata":{}}`,
	} {
		f.Add(s)
	}
	c := fuzzClient(f)
	f.Fuzz(func(t *testing.T, body string) {
		req := fetch.Request{URL: "https://example.com/", ETag: `"e"`}
		var res extractResult
		if decodeJSON([]byte(body), &res) == nil {
			check(t, c, req, res.Data, res.Metadata, res.TokensCharged)
		}
		var job extractJob
		if decodeJSON([]byte(body), &job) == nil {
			check(t, c, req, job.Data, job.Metadata, job.TokensCharged)
		}
	})
}

func check(t *testing.T, c *Client, req fetch.Request, d *contentJSON, m *metadataJSON, tokens flexInt) {
	resp, err := c.toResponse("op", req, d, m, tokens, 1)
	if err != nil {
		if resp != nil {
			t.Fatal("both a response and an error")
		}
		_ = err.Error()
		return
	}
	if resp.Status < 100 || resp.Status > 599 || resp.Billed < 0 || int64(len(resp.Body)) > c.cfg.maxBytes {
		t.Fatalf("bad response %+v", resp)
	}
	if !(resp.Status < 300 || resp.NotModified() || resp.Gone()) {
		t.Fatalf("status %d returned as a Response", resp.Status)
	}
}

// FuzzDecodeBatch: any batch creation and status bodies are handled
// without panics, each index is yielded at most once, and indexes stay in
// range.
func FuzzDecodeBatch(f *testing.F) {
	f.Add(`{"job_id":"j","status":"queued","accepted_urls":3,"invalid_urls":["https://e.com/x",{"url":"https://e.com/c","reason":"r"},{"input_index":1},5,null]}`,
		`{"job_id":"j","status":"processing","total_urls":3,"completed_urls":1,"results":[{"input_index":0,"url":"https://e.com/a","status":"completed","data":{"markdown":"m"},"metadata":{"http_status":200,"tokens_charged":1}},{"input_index":99,"status":"failed"},{"url":"https://e.com/b","status":"failed","error_code":7}]}`)
	f.Add(`{}`, `{"results":[{"input_index":-1,"status":"completed"},{"input_index":"2","status":"cancelled"}]}`)
	f.Add(`{"invalid_urls":{}}`, `{"total_urls":1e9,"results":null}`)
	c := fuzzClient(f)
	f.Fuzz(func(t *testing.T, created, status string) {
		urls := []string{"https://e.com/a", "https://e.com/b", "https://e.com/c", "https://e.com/a"}
		seen := map[int]int{}
		b := &batchRun{c: c, id: "j", urls: urls, reqIdx: []int{10, 11, 12, 13}, done: make([]bool, len(urls)), left: len(urls),
			byURL: map[string][]int{}, yield: func(i int, resp *fetch.Response, err error) {
				if i < 10 || i > 13 {
					t.Fatalf("index %d out of range", i)
				}
				if (resp == nil) == (err == nil) {
					t.Fatalf("yield needs exactly one of response and error")
				}
				seen[i]++
			}}
		for k, u := range urls {
			b.byURL[u] = append(b.byURL[u], k)
		}
		var acc batchAccepted
		if decodeJSON([]byte(created), &acc) == nil {
			for _, raw := range acc.InvalidURLs {
				b.invalid(t.Context(), raw)
			}
		}
		var st batchStatus
		for range 2 { // the same page twice: nothing is yielded again
			if decodeJSON([]byte(status), &st) == nil {
				for _, it := range st.Results {
					b.handle(t.Context(), it)
				}
			}
		}
		for i, n := range seen {
			if n != 1 {
				t.Fatalf("index %d yielded %d times", i, n)
			}
		}
		if b.left < 0 || b.left+b.dropped+len(seen) != len(urls) {
			t.Fatalf("accounting: left %d dropped %d yielded %d", b.left, b.dropped, len(seen))
		}
		var m mapResponse
		_ = decodeJSON([]byte(status), &m)
	})
}

func TestFlexDecoding(t *testing.T) {
	var v struct {
		A flexInt    `json:"a"`
		B flexInt    `json:"b"`
		C flexString `json:"c"`
		D flexBool   `json:"d"`
		E flexInt    `json:"e"`
	}
	require.NoError(t, json.Unmarshal([]byte(`{"a":3.0,"b":" 7 ","c":42,"d":"true","e":1e12}`), &v))
	require.Equal(t, 3, v.A.v)
	require.Equal(t, 7, v.B.v)
	require.Equal(t, flexString("42"), v.C)
	require.True(t, v.D.v && v.D.set)
	require.Equal(t, 2147483647, v.E.v)
	for _, bad := range []string{`{"a":1.5}`, `{"a":"x"}`, `{"a":[1]}`, `{"c":{}}`, `{"d":2}`} {
		require.Error(t, json.Unmarshal([]byte(bad), &v), bad)
	}
}

func BenchmarkDecodeBatchPage(b *testing.B) {
	var sb strings.Builder
	sb.WriteString(`{"job_id":"j","status":"processing","total_urls":1000,"completed_urls":50,"failed_urls":0,"cancelled_urls":0,"results":[`)
	md := strings.Repeat("Some paragraph text of a documentation page. ", 100)
	for i := range 50 {
		if i > 0 {
			sb.WriteByte(',')
		}
		fmt.Fprintf(&sb, `{"input_index":%d,"url":"https://example.com/docs/page-%d","status":"completed","error_code":null,"error_message":null,"data":{"markdown":%q,"html":null,"links":null},"metadata":{"http_status":200,"duration_ms":842,"retry_count":0,"tokens_charged":1}}`, i, i, md)
	}
	sb.WriteString(`]}`)
	body := []byte(sb.String())
	b.SetBytes(int64(len(body)))
	b.ReportAllocs()
	for b.Loop() {
		var st batchStatus
		if err := decodeJSON(body, &st); err != nil || len(st.Results) != 50 {
			b.Fatal(err)
		}
	}
}
