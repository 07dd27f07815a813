package embed_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/recrawl/recrawl/clock"
	"github.com/recrawl/recrawl/embed"
)

const testKey = "sk-test-0123456789abcdef"

// fakeAPI is an OpenAI-compatible embeddings server on loopback. Its vectors
// come from a Hashing embedder, so a test can tell which text a vector
// belongs to. respond may replace the answer for a given request number.
type fakeAPI struct {
	t    *testing.T
	dims int
	srv  *httptest.Server

	mu       sync.Mutex
	requests []apiRequest
	respond  func(n int, req apiRequest, w http.ResponseWriter) bool // true: handled
}

type apiRequest struct {
	Path   string
	Auth   string
	Model  string   `json:"model"`
	Input  []string `json:"input"`
	Dims   *int     `json:"dimensions"`
	Header http.Header
}

func newFakeAPI(t *testing.T, dims int) *fakeAPI {
	f := &fakeAPI{t: t, dims: dims}
	f.srv = httptest.NewServer(http.HandlerFunc(f.serve))
	t.Cleanup(f.srv.Close)
	return f
}

func (f *fakeAPI) serve(w http.ResponseWriter, r *http.Request) {
	var req apiRequest
	body, _ := io.ReadAll(r.Body)
	if err := json.Unmarshal(body, &req); err != nil {
		http.Error(w, "bad json", http.StatusBadRequest)
		return
	}
	req.Path, req.Auth, req.Header = r.URL.Path, r.Header.Get("Authorization"), r.Header.Clone()
	f.mu.Lock()
	n := len(f.requests)
	f.requests = append(f.requests, req)
	respond := f.respond
	f.mu.Unlock()
	if r.Method != http.MethodPost || r.URL.Path != "/v1/embeddings" {
		http.Error(w, "wrong route "+r.Method+" "+r.URL.Path, http.StatusNotFound)
		return
	}
	if respond != nil && respond(n, req, w) {
		return
	}
	writeEmbeddings(w, f.vectors(req.Input), false)
}

func (f *fakeAPI) vectors(texts []string) [][]float32 {
	h, err := embed.NewHashing(f.dims)
	require.NoError(f.t, err)
	vs, err := h.Embed(context.Background(), texts)
	require.NoError(f.t, err)
	return vs
}

func (f *fakeAPI) sent() []apiRequest {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]apiRequest(nil), f.requests...)
}

type datum struct {
	Object    string    `json:"object"`
	Index     int       `json:"index"`
	Embedding []float32 `json:"embedding"`
}

func writeEmbeddings(w http.ResponseWriter, vs [][]float32, reverse bool) {
	data := make([]datum, len(vs))
	for i, v := range vs {
		data[i] = datum{Object: "embedding", Index: i, Embedding: v}
	}
	if reverse {
		for i, j := 0, len(data)-1; i < j; i, j = i+1, j-1 {
			data[i], data[j] = data[j], data[i]
		}
	}
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(map[string]any{"object": "list", "data": data, "model": "fake"})
}

func writeError(w http.ResponseWriter, status int, header map[string]string, body string) {
	for k, v := range header {
		w.Header().Set(k, v)
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = io.WriteString(w, body)
}

func newClient(t *testing.T, f *fakeAPI, mod func(*embed.OpenAIConfig)) *embed.OpenAI {
	cfg := embed.OpenAIConfig{
		BaseURL:    f.srv.URL + "/v1",
		Model:      "test-embedding",
		APIKey:     testKey,
		Dimensions: f.dims,
		Clock:      clock.NewAutoFake(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)),
	}
	if mod != nil {
		mod(&cfg)
	}
	c, err := embed.NewOpenAI(cfg)
	require.NoError(t, err)
	return c
}

func batchSizes(reqs []apiRequest) []int {
	out := make([]int, len(reqs))
	for i, r := range reqs {
		out[i] = len(r.Input)
	}
	return out
}

func TestOpenAIEmbed(t *testing.T) {
	texts := []string{"alpha text", "beta text", "gamma", "delta delta", "epsilon"}
	tests := []struct {
		name      string
		texts     []string
		cfg       func(*embed.OpenAIConfig)
		respond   func(n int, req apiRequest, w http.ResponseWriter, f *fakeAPI) bool
		wantSizes []int            // batch sizes sent
		wantErr   func(error) bool // nil: success expected
		check     func(t *testing.T, reqs []apiRequest)
	}{
		{
			name:      "one batch",
			texts:     texts,
			wantSizes: []int{5},
			check: func(t *testing.T, reqs []apiRequest) {
				require.Equal(t, "Bearer "+testKey, reqs[0].Auth)
				require.Equal(t, "test-embedding", reqs[0].Model)
				require.Nil(t, reqs[0].Dims, "dimensions sent without SendDimensions")
				require.Equal(t, "application/json", reqs[0].Header.Get("Content-Type"))
			},
		},
		{
			name:      "dimensions parameter",
			texts:     texts[:1],
			cfg:       func(c *embed.OpenAIConfig) { c.SendDimensions = true },
			wantSizes: []int{1},
			check: func(t *testing.T, reqs []apiRequest) {
				require.NotNil(t, reqs[0].Dims)
				require.Equal(t, 16, *reqs[0].Dims)
			},
		},
		{
			name:      "no key, no Authorization header",
			texts:     texts[:1],
			cfg:       func(c *embed.OpenAIConfig) { c.APIKey = "" },
			wantSizes: []int{1},
			check:     func(t *testing.T, reqs []apiRequest) { require.Empty(t, reqs[0].Auth) },
		},
		{
			name:      "batches by count",
			texts:     texts,
			cfg:       func(c *embed.OpenAIConfig) { c.MaxBatchInputs = 2 },
			wantSizes: []int{2, 2, 1},
		},
		{
			name:      "batches by size; an oversized text goes alone",
			texts:     []string{"aaaa", "bbbb", "cccc", strings.Repeat("x", 30), "d"},
			cfg:       func(c *embed.OpenAIConfig) { c.MaxBatchBytes = 10 },
			wantSizes: []int{2, 1, 1, 1},
		},
		{
			name:  "out-of-order index",
			texts: texts,
			respond: func(_ int, req apiRequest, w http.ResponseWriter, f *fakeAPI) bool {
				writeEmbeddings(w, f.vectors(req.Input), true)
				return true
			},
			wantSizes: []int{5},
		},
		{
			name:  "short response is an error",
			texts: texts,
			respond: func(_ int, req apiRequest, w http.ResponseWriter, f *fakeAPI) bool {
				writeEmbeddings(w, f.vectors(req.Input)[:4], false)
				return true
			},
			wantSizes: []int{5},
			wantErr: func(err error) bool {
				var ce *embed.CountError
				return errors.As(err, &ce) && ce.Want == 5 && ce.Got == 4
			},
		},
		{
			name:  "dimension mismatch",
			texts: texts,
			cfg:   func(c *embed.OpenAIConfig) { c.MaxBatchInputs = 2 },
			respond: func(n int, req apiRequest, w http.ResponseWriter, f *fakeAPI) bool {
				if n != 1 {
					return false
				}
				vs := f.vectors(req.Input)
				vs[1] = vs[1][:8]
				writeEmbeddings(w, vs, false)
				return true
			},
			wantSizes: []int{2, 2},
			wantErr: func(err error) bool {
				var de *embed.DimensionError
				return errors.As(err, &de) && de.Index == 3 && de.Want == 16 && de.Got == 8
			},
		},
		{
			name:  "repeated index",
			texts: texts[:2],
			respond: func(_ int, req apiRequest, w http.ResponseWriter, f *fakeAPI) bool {
				vs := f.vectors(req.Input)
				_, _ = fmt.Fprintf(w, `{"data":[{"index":1,"embedding":%s},{"index":1,"embedding":%s}]}`, js(vs[0]), js(vs[1]))
				return true
			},
			wantSizes: []int{2},
			wantErr:   isResponseError,
		},
		{
			name:  "index out of range",
			texts: texts[:2],
			respond: func(_ int, req apiRequest, w http.ResponseWriter, f *fakeAPI) bool {
				vs := f.vectors(req.Input)
				_, _ = fmt.Fprintf(w, `{"data":[{"index":0,"embedding":%s},{"index":2,"embedding":%s}]}`, js(vs[0]), js(vs[1]))
				return true
			},
			wantSizes: []int{2},
			wantErr:   isResponseError,
		},
		{
			name:  "body that is not JSON",
			texts: texts[:1],
			respond: func(_ int, _ apiRequest, w http.ResponseWriter, _ *fakeAPI) bool {
				_, _ = io.WriteString(w, "<html>gateway</html>")
				return true
			},
			wantSizes: []int{1},
			wantErr:   isResponseError,
		},
		{
			name:  "base64 embeddings are rejected",
			texts: texts[:1],
			respond: func(_ int, _ apiRequest, w http.ResponseWriter, _ *fakeAPI) bool {
				_, _ = io.WriteString(w, `{"data":[{"index":0,"embedding":"AAAA"}]}`)
				return true
			},
			wantSizes: []int{1},
			wantErr:   isResponseError,
		},
		{
			name:      "body over the size limit",
			texts:     texts,
			cfg:       func(c *embed.OpenAIConfig) { c.MaxResponseBytes = 100 },
			wantSizes: []int{5},
			wantErr:   isResponseError,
		},
		{
			name:  "401 is not retried",
			texts: texts,
			respond: func(_ int, _ apiRequest, w http.ResponseWriter, _ *fakeAPI) bool {
				writeError(w, 401, nil, `{"error":{"message":"Incorrect API key provided.","type":"invalid_request_error","param":null,"code":"invalid_api_key"}}`)
				return true
			},
			wantSizes: []int{5},
			wantErr: func(err error) bool {
				var ae *embed.APIError
				return errors.As(err, &ae) && *ae == embed.APIError{Status: 401, Type: "invalid_request_error", Code: "invalid_api_key", Message: "Incorrect API key provided."}
			},
		},
		{
			name:  "400 with a plain error string",
			texts: texts[:1],
			respond: func(_ int, _ apiRequest, w http.ResponseWriter, _ *fakeAPI) bool {
				writeError(w, 400, nil, `{"error":"input must not be empty"}`)
				return true
			},
			wantSizes: []int{1},
			wantErr: func(err error) bool {
				var ae *embed.APIError
				return errors.As(err, &ae) && ae.Status == 400 && ae.Message == "input must not be empty" && !ae.Temporary()
			},
		},
		{
			name:  "404 with a text body",
			texts: texts[:1],
			respond: func(_ int, _ apiRequest, w http.ResponseWriter, _ *fakeAPI) bool {
				http.Error(w, "no such model", http.StatusNotFound)
				return true
			},
			wantSizes: []int{1},
			wantErr: func(err error) bool {
				var ae *embed.APIError
				return errors.As(err, &ae) && ae.Status == 404 && ae.Message == "no such model"
			},
		},
		{
			name:      "empty input sends nothing",
			texts:     []string{},
			wantSizes: []int{},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f := newFakeAPI(t, 16)
			if tc.respond != nil {
				f.respond = func(n int, req apiRequest, w http.ResponseWriter) bool { return tc.respond(n, req, w, f) }
			}
			c := newClient(t, f, tc.cfg)
			vs, err := c.Embed(context.Background(), tc.texts)
			reqs := f.sent()
			require.Equal(t, tc.wantSizes, batchSizes(reqs))
			if tc.wantErr != nil {
				require.Error(t, err)
				require.True(t, tc.wantErr(err), "unexpected error: %v", err)
				require.Nil(t, vs)
				require.NotContains(t, err.Error(), testKey)
				return
			}
			require.NoError(t, err)
			require.Equal(t, f.vectors(tc.texts), vs)
			for _, r := range reqs {
				require.Equal(t, "/v1/embeddings", r.Path)
			}
			if tc.check != nil {
				tc.check(t, reqs)
			}
		})
	}
}

func js(v []float32) string {
	b, _ := json.Marshal(v)
	return string(b)
}

func isResponseError(err error) bool {
	var re *embed.ResponseError
	return errors.As(err, &re)
}

func TestOpenAIRetry(t *testing.T) {
	start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	fail := func(status int, header map[string]string) func(int, apiRequest, http.ResponseWriter) bool {
		return func(_ int, _ apiRequest, w http.ResponseWriter) bool {
			writeError(w, status, header, `{"error":{"message":"slow down","type":"rate_limit_error"}}`)
			return true
		}
	}
	failFirst := func(k int, status int, header map[string]string) func(int, apiRequest, http.ResponseWriter) bool {
		return func(n int, req apiRequest, w http.ResponseWriter) bool {
			if n >= k {
				return false
			}
			return fail(status, header)(n, req, w)
		}
	}
	tests := []struct {
		name             string
		cfg              func(*embed.OpenAIConfig)
		respond          func(int, apiRequest, http.ResponseWriter) bool
		wantRequests     int
		minWait, maxWait time.Duration
		wantStatus       int // non-zero: the call fails with this *APIError status
	}{
		{
			name:         "429 with Retry-After seconds",
			respond:      failFirst(2, 429, map[string]string{"Retry-After": "7"}),
			wantRequests: 3, minWait: 14 * time.Second, maxWait: 14 * time.Second,
		},
		{
			name:         "503 with Retry-After as an HTTP date",
			respond:      failFirst(1, 503, map[string]string{"Retry-After": start.Add(30 * time.Second).Format(http.TimeFormat)}),
			wantRequests: 2, minWait: 30 * time.Second, maxWait: 30 * time.Second,
		},
		{
			name:         "Retry-After is capped",
			cfg:          func(c *embed.OpenAIConfig) { c.MaxRetryAfter = 10 * time.Second },
			respond:      failFirst(1, 429, map[string]string{"Retry-After": "3600"}),
			wantRequests: 2, minWait: 10 * time.Second, maxWait: 10 * time.Second,
		},
		{
			name: "backoff with jitter when Retry-After is absent",
			cfg: func(c *embed.OpenAIConfig) {
				c.Backoff, c.MaxBackoff = time.Second, 3*time.Second
			},
			respond:      failFirst(3, 500, nil),
			wantRequests: 4,
			// waits: [0.5s,1s] + [1s,2s] + [1.5s,3s] (capped at 3s)
			minWait: 3 * time.Second, maxWait: 6 * time.Second,
		},
		{
			name: "a long backoff does not overflow on late retries",
			cfg: func(c *embed.OpenAIConfig) {
				c.Backoff, c.MaxBackoff, c.MaxRetries = time.Hour, 2*time.Hour, 24
			},
			respond:      fail(500, nil),
			wantRequests: 25,
			// waits: [30m,1h], then 23 of [1h,2h] (Backoff<<22 overflows a Duration)
			minWait: 30*time.Minute + 23*time.Hour, maxWait: 47 * time.Hour,
			wantStatus: 500,
		},
		{
			name:         "retries run out",
			cfg:          func(c *embed.OpenAIConfig) { c.MaxRetries = 2 },
			respond:      fail(502, map[string]string{"Retry-After": "1"}),
			wantRequests: 3, minWait: 2 * time.Second, maxWait: 2 * time.Second,
			wantStatus: 502,
		},
		{
			name:         "retries disabled",
			cfg:          func(c *embed.OpenAIConfig) { c.MaxRetries = -1 },
			respond:      fail(429, map[string]string{"Retry-After": "1"}),
			wantRequests: 1,
			wantStatus:   429,
		},
		{
			name:         "501 is not retried",
			respond:      fail(501, nil),
			wantRequests: 1,
			wantStatus:   501,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f := newFakeAPI(t, 8)
			f.respond = tc.respond
			clk := clock.NewAutoFake(start)
			c := newClient(t, f, func(cfg *embed.OpenAIConfig) {
				cfg.Clock = clk
				if tc.cfg != nil {
					tc.cfg(cfg)
				}
			})
			vs, err := c.Embed(context.Background(), []string{"one", "two"})
			require.Len(t, f.sent(), tc.wantRequests)
			waited := clk.Now().Sub(start)
			require.GreaterOrEqual(t, waited, tc.minWait)
			require.LessOrEqual(t, waited, tc.maxWait)
			if tc.wantStatus != 0 {
				var ae *embed.APIError
				require.ErrorAs(t, err, &ae)
				require.Equal(t, tc.wantStatus, ae.Status)
				return
			}
			require.NoError(t, err)
			require.Equal(t, f.vectors([]string{"one", "two"}), vs)
		})
	}
}

// A dropped connection is retried like a 5xx.
func TestOpenAIRetriesNetworkErrors(t *testing.T) {
	f := newFakeAPI(t, 8)
	f.respond = func(n int, _ apiRequest, w http.ResponseWriter) bool {
		if n > 0 {
			return false
		}
		conn, _, err := w.(http.Hijacker).Hijack()
		require.NoError(t, err)
		conn.Close()
		return true
	}
	c := newClient(t, f, nil)
	vs, err := c.Embed(context.Background(), []string{"x"})
	require.NoError(t, err)
	require.Len(t, vs, 1)
	require.Len(t, f.sent(), 2)
}

// Cancelling the context ends a Retry-After wait at once.
func TestOpenAICancelDuringWait(t *testing.T) {
	f := newFakeAPI(t, 8)
	f.respond = func(_ int, _ apiRequest, w http.ResponseWriter) bool {
		writeError(w, 429, map[string]string{"Retry-After": "60"}, `{}`)
		return true
	}
	clk := clock.NewFake(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	c := newClient(t, f, func(cfg *embed.OpenAIConfig) { cfg.Clock = clk })
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		_, err := c.Embed(ctx, []string{"x"})
		done <- err
	}()
	require.NoError(t, clk.BlockUntil(context.Background(), 1))
	cancel()
	select {
	case err := <-done:
		require.ErrorIs(t, err, context.Canceled)
	case <-time.After(10 * time.Second):
		t.Fatal("Embed did not return after cancel")
	}
	require.Len(t, f.sent(), 1)
}

func TestOpenAIBaseURLWithoutPath(t *testing.T) {
	f := newFakeAPI(t, 8)
	c := newClient(t, f, func(cfg *embed.OpenAIConfig) { cfg.BaseURL = f.srv.URL })
	_, err := c.Embed(context.Background(), []string{"x"})
	require.NoError(t, err)
	require.Equal(t, "/v1/embeddings", f.sent()[0].Path)
}

func TestOpenAIConfigErrors(t *testing.T) {
	valid := embed.OpenAIConfig{Model: "m", Dimensions: 8}
	tests := []struct {
		field string
		mod   func(*embed.OpenAIConfig)
	}{
		{"BaseURL", func(c *embed.OpenAIConfig) { c.BaseURL = "ftp://example.com" }},
		{"BaseURL", func(c *embed.OpenAIConfig) { c.BaseURL = "::not a url" }},
		{"BaseURL", func(c *embed.OpenAIConfig) { c.BaseURL = "http://" }},
		{"Model", func(c *embed.OpenAIConfig) { c.Model = " " }},
		{"Dimensions", func(c *embed.OpenAIConfig) { c.Dimensions = 0 }},
		{"Dimensions", func(c *embed.OpenAIConfig) { c.Dimensions = embed.MaxDimensions + 1 }},
		{"APIKey", func(c *embed.OpenAIConfig) { c.APIKey = "sk-abc\n" }},
		{"MaxBatchInputs", func(c *embed.OpenAIConfig) { c.MaxBatchInputs = -1 }},
		{"MaxBatchBytes", func(c *embed.OpenAIConfig) { c.MaxBatchBytes = -1 }},
		{"Backoff", func(c *embed.OpenAIConfig) { c.Backoff = -time.Second }},
		{"MaxRetryAfter", func(c *embed.OpenAIConfig) { c.MaxRetryAfter = -time.Second }},
		{"MaxResponseBytes", func(c *embed.OpenAIConfig) { c.MaxResponseBytes = -1 }},
	}
	for _, tc := range tests {
		cfg := valid
		tc.mod(&cfg)
		_, err := embed.NewOpenAI(cfg)
		var ce *embed.ConfigError
		require.ErrorAs(t, err, &ce, tc.field)
		require.Equal(t, tc.field, ce.Field)
	}
	c, err := embed.NewOpenAI(valid)
	require.NoError(t, err)
	require.Equal(t, "m", c.Model())
	require.Equal(t, 8, c.Dimensions())
}

// The key must not show up when the config or the client is printed or
// logged, nor in the debug records of retries.
func TestOpenAINeverShowsTheKey(t *testing.T) {
	f := newFakeAPI(t, 8)
	f.respond = func(n int, _ apiRequest, w http.ResponseWriter) bool {
		if n > 0 {
			return false
		}
		writeError(w, 500, nil, `{"error":{"message":"boom"}}`)
		return true
	}
	var logs bytes.Buffer
	logger := slog.New(slog.NewJSONHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	cfg := embed.OpenAIConfig{BaseURL: f.srv.URL + "/v1", Model: "m", APIKey: testKey, Dimensions: 8,
		Clock: clock.NewAutoFake(time.Unix(0, 0)), Logger: logger}
	c, err := embed.NewOpenAI(cfg)
	require.NoError(t, err)
	_, err = c.Embed(context.Background(), []string{"x"})
	require.NoError(t, err)
	logger.Info("config", "cfg", cfg)
	require.Contains(t, logs.String(), "retrying")

	printed := fmt.Sprintf("%v %+v %#v %s %v %+v %#v", cfg, cfg, cfg, cfg, c, c, c) + logs.String()
	require.NotContains(t, printed, testKey)
	require.Contains(t, printed, "[redacted]")
}

func TestAPIKeyFromEnv(t *testing.T) {
	t.Setenv("OPENAI_API_KEY", " sk-from-env \n")
	t.Setenv("OTHER_KEY", "")
	key, err := embed.APIKeyFromEnv("")
	require.NoError(t, err)
	require.Equal(t, "sk-from-env", key)

	_, err = embed.APIKeyFromEnv("OTHER_KEY")
	require.ErrorIs(t, err, embed.ErrNoAPIKey)
	require.Contains(t, err.Error(), "OTHER_KEY")
}

// Concurrent calls share one client safely.
func TestOpenAIConcurrent(t *testing.T) {
	f := newFakeAPI(t, 8)
	c := newClient(t, f, func(cfg *embed.OpenAIConfig) { cfg.MaxBatchInputs = 3 })
	texts := []string{"a", "b", "c", "d", "e", "f", "g"}
	want := f.vectors(texts)
	var wg sync.WaitGroup
	errs := make(chan error, 4)
	for range 4 {
		wg.Go(func() {
			vs, err := c.Embed(context.Background(), texts)
			if err == nil && !equalVectors(want, vs) {
				err = errors.New("vectors differ")
			}
			errs <- err
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		require.NoError(t, err)
	}
}

func equalVectors(a, b [][]float32) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if len(a[i]) != len(b[i]) {
			return false
		}
		for j := range a[i] {
			if a[i][j] != b[i][j] {
				return false
			}
		}
	}
	return true
}
