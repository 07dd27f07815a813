package embed

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"math"
	"net/http"
	"net/url"
	"os"
	"strings"
	"time"

	"github.com/recrawl/recrawl/clock"
	"github.com/recrawl/recrawl/internal/retry"
)

// Defaults of OpenAIConfig.
const (
	DefaultBaseURL        = "https://api.openai.com/v1"
	DefaultAPIKeyEnv      = "OPENAI_API_KEY"
	DefaultMaxBatchInputs = 96
	DefaultMaxBatchBytes  = 256 << 10
	DefaultMaxRetries     = 4
	DefaultBackoff        = 500 * time.Millisecond
	DefaultMaxBackoff     = 30 * time.Second
	DefaultMaxRetryAfter  = time.Minute
)

// APIKeyFromEnv returns the API key in the environment variable name
// (DefaultAPIKeyEnv when name is empty), trimmed of spaces. It returns an
// error wrapping ErrNoAPIKey when the variable is unset or empty. The
// package never reads the environment by itself; call this explicitly.
func APIKeyFromEnv(name string) (string, error) {
	if name == "" {
		name = DefaultAPIKeyEnv
	}
	key := strings.TrimSpace(os.Getenv(name))
	if key == "" {
		return "", fmt.Errorf("%w: set %s", ErrNoAPIKey, name)
	}
	return key, nil
}

// OpenAIConfig configures an OpenAI client. Model and Dimensions are
// required; zero values of the other fields select the defaults.
type OpenAIConfig struct {
	// BaseURL is the API root including its version path, e.g.
	// "https://api.openai.com/v1" or "http://localhost:11434/v1" (Ollama).
	// Requests go to BaseURL + "/embeddings". A URL without a path gets "/v1".
	BaseURL string
	// Model is the model name sent with every request, e.g.
	// "text-embedding-3-small".
	Model string
	// APIKey is sent as "Authorization: Bearer <key>"; empty sends no
	// Authorization header (local servers). It never appears in errors,
	// logs, or the formatted config.
	APIKey string
	// Dimensions is the vector length the model returns; every vector is
	// checked against it.
	Dimensions int
	// SendDimensions adds "dimensions": Dimensions to each request, for
	// models that can shorten their vectors (OpenAI text-embedding-3-*).
	SendDimensions bool
	// MaxBatchInputs and MaxBatchBytes bound one request: at most that many
	// texts, and at most that many bytes of text in total (a single larger
	// text is sent alone). Defaults 96 and 256 KiB.
	MaxBatchInputs int
	MaxBatchBytes  int
	// MaxRetries is how often a request is repeated after a retryable
	// failure (408, 429, 5xx except 501/505, network errors). Zero means
	// DefaultMaxRetries; negative disables retries.
	MaxRetries int
	// Backoff and MaxBackoff shape the wait when the server gives no
	// Retry-After: Backoff doubled per attempt, capped at MaxBackoff, the
	// upper half of it jittered.
	Backoff    time.Duration
	MaxBackoff time.Duration
	// MaxRetryAfter caps the wait a Retry-After header may ask for.
	MaxRetryAfter time.Duration
	// MaxResponseBytes caps a response body; zero means 1 MiB plus 32 bytes
	// per expected vector element.
	MaxResponseBytes int64
	// HTTPClient sends the requests; nil means a client with a 2-minute
	// timeout.
	HTTPClient *http.Client
	// Clock times the waits between retries; nil means the system clock.
	Clock clock.Clock
	// Logger receives a debug record per retry; nil discards them.
	Logger *slog.Logger
}

// String formats the config with the API key redacted.
func (c OpenAIConfig) String() string {
	return fmt.Sprintf("embed.OpenAIConfig{BaseURL:%q Model:%q APIKey:%s Dimensions:%d}", c.BaseURL, c.Model, redact(c.APIKey), c.Dimensions)
}

// GoString formats the config with the API key redacted.
func (c OpenAIConfig) GoString() string { return c.String() }

// LogValue logs the config with the API key redacted.
func (c OpenAIConfig) LogValue() slog.Value {
	return slog.GroupValue(
		slog.String("base_url", c.BaseURL),
		slog.String("model", c.Model),
		slog.String("api_key", redact(c.APIKey)),
		slog.Int("dimensions", c.Dimensions),
	)
}

func redact(key string) string {
	if key == "" {
		return `""`
	}
	return "[redacted]"
}

// OpenAI embeds texts through an OpenAI-compatible POST /embeddings
// endpoint. It splits large calls into batches sent one after another,
// retries temporary failures, and checks every response: one vector per
// input, placed by the response's index field, each of Dimensions length.
// It is safe for concurrent use.
type OpenAI struct {
	cfg      OpenAIConfig
	endpoint string
	client   *http.Client
	clock    clock.Clock
	log      *slog.Logger
}

var _ Embedder = (*OpenAI)(nil)

// NewOpenAI validates cfg and returns a client. Invalid settings give a
// *ConfigError naming the field.
func NewOpenAI(cfg OpenAIConfig) (*OpenAI, error) {
	if cfg.BaseURL == "" {
		cfg.BaseURL = DefaultBaseURL
	}
	u, err := url.Parse(cfg.BaseURL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, &ConfigError{Field: "BaseURL", Reason: fmt.Sprintf("%q is not an http(s) URL like %s", cfg.BaseURL, DefaultBaseURL)}
	}
	if u.Path == "" || u.Path == "/" {
		u.Path = "/v1"
	}
	u.RawQuery, u.Fragment = "", ""
	if strings.TrimSpace(cfg.Model) == "" {
		return nil, &ConfigError{Field: "Model", Reason: "empty; name the embedding model, e.g. text-embedding-3-small"}
	}
	if cfg.Dimensions <= 0 || cfg.Dimensions > MaxDimensions {
		return nil, &ConfigError{Field: "Dimensions", Reason: fmt.Sprintf("%d; set the model's vector length (1..%d), e.g. 1536 for text-embedding-3-small", cfg.Dimensions, MaxDimensions)}
	}
	if strings.ContainsAny(cfg.APIKey, "\r\n") {
		return nil, &ConfigError{Field: "APIKey", Reason: "contains a line break; pass the key alone"}
	}
	for _, f := range []struct {
		name string
		v    int64
	}{
		{"MaxBatchInputs", int64(cfg.MaxBatchInputs)}, {"MaxBatchBytes", int64(cfg.MaxBatchBytes)},
		{"Backoff", int64(cfg.Backoff)}, {"MaxBackoff", int64(cfg.MaxBackoff)},
		{"MaxRetryAfter", int64(cfg.MaxRetryAfter)}, {"MaxResponseBytes", cfg.MaxResponseBytes},
	} {
		if f.v < 0 {
			return nil, &ConfigError{Field: f.name, Reason: "negative; use 0 for the default"}
		}
	}
	if cfg.MaxBatchInputs == 0 {
		cfg.MaxBatchInputs = DefaultMaxBatchInputs
	}
	if cfg.MaxBatchBytes == 0 {
		cfg.MaxBatchBytes = DefaultMaxBatchBytes
	}
	switch {
	case cfg.MaxRetries == 0:
		cfg.MaxRetries = DefaultMaxRetries
	case cfg.MaxRetries < 0:
		cfg.MaxRetries = 0
	}
	if cfg.Backoff == 0 {
		cfg.Backoff = DefaultBackoff
	}
	if cfg.MaxBackoff == 0 {
		cfg.MaxBackoff = DefaultMaxBackoff
	}
	if cfg.MaxRetryAfter == 0 {
		cfg.MaxRetryAfter = DefaultMaxRetryAfter
	}
	client := cfg.HTTPClient
	if client == nil {
		client = &http.Client{Timeout: 2 * time.Minute}
	}
	log := cfg.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &OpenAI{
		cfg:      cfg,
		endpoint: strings.TrimRight(u.String(), "/") + "/embeddings",
		client:   client,
		clock:    clock.Or(cfg.Clock),
		log:      log,
	}, nil
}

// String describes the client without its API key.
func (o *OpenAI) String() string {
	return fmt.Sprintf("embed.OpenAI{endpoint:%q model:%q dimensions:%d}", o.endpoint, o.cfg.Model, o.cfg.Dimensions)
}

// GoString describes the client without its API key.
func (o *OpenAI) GoString() string { return o.String() }

// Dimensions returns the configured vector length.
func (o *OpenAI) Dimensions() int { return o.cfg.Dimensions }

// Model returns the configured model name.
func (o *OpenAI) Model() string { return o.cfg.Model }

// Embed returns one vector per text, in order. Texts are sent in batches
// bounded by MaxBatchInputs and MaxBatchBytes. An error names the failing
// batch and wraps *APIError, *CountError, *DimensionError, *ResponseError,
// a network error, or ctx.Err(); no vectors are returned with it.
func (o *OpenAI) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	out := make([][]float32, 0, len(texts))
	batches := o.batches(texts)
	for bi, b := range batches {
		vecs, err := o.embedBatch(ctx, texts[b[0]:b[1]], b[0])
		if err != nil {
			return nil, fmt.Errorf("embed: batch %d of %d (inputs %d..%d): %w", bi+1, len(batches), b[0], b[1]-1, err)
		}
		out = append(out, vecs...)
	}
	return out, nil
}

// batches returns [start, end) ranges of texts, each within the count and
// byte limits (a text over the byte limit alone).
func (o *OpenAI) batches(texts []string) [][2]int {
	var out [][2]int
	start, size := 0, 0
	for i, t := range texts {
		if i > start && (i-start >= o.cfg.MaxBatchInputs || size+len(t) > o.cfg.MaxBatchBytes) {
			out = append(out, [2]int{start, i})
			start, size = i, 0
		}
		size += len(t)
	}
	if start < len(texts) {
		out = append(out, [2]int{start, len(texts)})
	}
	return out
}

type embeddingsRequest struct {
	Model      string   `json:"model"`
	Input      []string `json:"input"`
	Dimensions int      `json:"dimensions,omitempty"`
}

type embeddingsResponse struct {
	Data []struct {
		Index     *int      `json:"index"`
		Embedding []float32 `json:"embedding"`
	} `json:"data"`
}

// embedBatch sends one batch, retrying temporary failures. offset is the
// position of the batch's first text in the Embed call, for error messages.
func (o *OpenAI) embedBatch(ctx context.Context, texts []string, offset int) ([][]float32, error) {
	req := embeddingsRequest{Model: o.cfg.Model, Input: texts}
	if o.cfg.SendDimensions {
		req.Dimensions = o.cfg.Dimensions
	}
	body, err := json.Marshal(req)
	if err != nil {
		return nil, fmt.Errorf("encode request: %w", err)
	}
	for attempt := 0; ; attempt++ {
		vecs, wait, err := o.attempt(ctx, body, len(texts), offset)
		if err == nil {
			return vecs, nil
		}
		if wait < 0 || attempt >= o.cfg.MaxRetries {
			if attempt > 0 {
				return nil, fmt.Errorf("after %d attempts: %w", attempt+1, err)
			}
			return nil, err
		}
		if wait == 0 {
			wait = o.backoff(attempt)
		}
		o.log.DebugContext(ctx, "embed: retrying request", "endpoint", o.endpoint, "attempt", attempt+1, "wait", wait, "error", err)
		if err := clock.Sleep(ctx, o.clock, wait); err != nil {
			return nil, err
		}
	}
}

// attempt sends one request. On failure it returns the wait before a retry:
// negative for a permanent failure, zero for "use the backoff", positive as
// asked by Retry-After (capped).
func (o *OpenAI) attempt(ctx context.Context, body []byte, n, offset int) ([][]float32, time.Duration, error) {
	hreq, err := http.NewRequestWithContext(ctx, http.MethodPost, o.endpoint, bytes.NewReader(body))
	if err != nil {
		return nil, -1, fmt.Errorf("build request: %w", err)
	}
	hreq.Header.Set("Content-Type", "application/json")
	hreq.Header.Set("Accept", "application/json")
	hreq.Header.Set("User-Agent", "recrawl-embed")
	if o.cfg.APIKey != "" {
		hreq.Header.Set("Authorization", "Bearer "+o.cfg.APIKey)
	}
	resp, err := o.client.Do(hreq)
	if err != nil {
		if ctx.Err() != nil {
			return nil, -1, ctx.Err()
		}
		return nil, 0, fmt.Errorf("POST %s: %w", o.endpoint, err)
	}
	defer func() {
		_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
		resp.Body.Close()
	}()

	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		apiErr := decodeAPIError(resp)
		if !retryableStatus(resp.StatusCode) {
			return nil, -1, apiErr
		}
		return nil, o.retryAfter(resp.Header.Get("Retry-After")), apiErr
	}

	limit := o.cfg.MaxResponseBytes
	if limit == 0 {
		limit = 1<<20 + int64(n)*int64(o.cfg.Dimensions)*32
	}
	raw, err := io.ReadAll(io.LimitReader(resp.Body, limit+1))
	if err != nil {
		if ctx.Err() != nil {
			return nil, -1, ctx.Err()
		}
		return nil, 0, fmt.Errorf("read response: %w", err)
	}
	if int64(len(raw)) > limit {
		return nil, -1, &ResponseError{Reason: fmt.Sprintf("body exceeds %d bytes (raise MaxResponseBytes if this is expected)", limit)}
	}
	vecs, err := o.decode(raw, n, offset)
	if err != nil {
		return nil, -1, err
	}
	return vecs, 0, nil
}

// decode checks and orders the vectors of one response.
func (o *OpenAI) decode(raw []byte, n, offset int) ([][]float32, error) {
	var r embeddingsResponse
	if err := json.Unmarshal(raw, &r); err != nil {
		return nil, &ResponseError{Reason: "body is not an embeddings JSON object", Err: err}
	}
	if len(r.Data) != n {
		return nil, &CountError{Want: n, Got: len(r.Data)}
	}
	out := make([][]float32, n)
	for pos, d := range r.Data {
		idx := pos
		if d.Index != nil {
			idx = *d.Index
		}
		if idx < 0 || idx >= n {
			return nil, &ResponseError{Reason: fmt.Sprintf("index %d out of range 0..%d", idx, n-1)}
		}
		if out[idx] != nil {
			return nil, &ResponseError{Reason: fmt.Sprintf("index %d appears twice", idx)}
		}
		if len(d.Embedding) != o.cfg.Dimensions {
			return nil, &DimensionError{Index: offset + idx, Want: o.cfg.Dimensions, Got: len(d.Embedding)}
		}
		for _, x := range d.Embedding {
			if math.IsNaN(float64(x)) || math.IsInf(float64(x), 0) {
				return nil, &ResponseError{Reason: fmt.Sprintf("vector %d holds a non-finite value", offset+idx)}
			}
		}
		out[idx] = d.Embedding
	}
	return out, nil
}

// retryableStatus reports whether an HTTP status is worth a retry.
func retryableStatus(code int) bool {
	switch {
	case code == http.StatusRequestTimeout, code == http.StatusTooManyRequests:
		return true
	case code == http.StatusNotImplemented, code == http.StatusHTTPVersionNotSupported:
		return false
	}
	return code >= 500 && code <= 599
}

// retryAfter parses a Retry-After value (seconds or an HTTP date), capped
// at MaxRetryAfter. It returns 0 when the header is absent or invalid, so
// the caller falls back to the backoff; a date in the past waits 1 ns.
func (o *OpenAI) retryAfter(v string) time.Duration {
	d, ok := retry.After(v, o.clock.Now(), o.cfg.MaxRetryAfter)
	switch {
	case !ok:
		return 0
	case d == 0:
		return time.Nanosecond // "retry now"
	}
	return d
}

// backoff is the wait before retry attempt+1 when the server named none:
// Backoff * 2^attempt, capped at MaxBackoff, upper half randomized.
func (o *OpenAI) backoff(attempt int) time.Duration {
	return retry.HalfJitter(attempt, o.cfg.Backoff, o.cfg.MaxBackoff)
}

// decodeAPIError reads an error body in the OpenAI shape, or the shapes of
// compatible servers ({"error":"text"}, {"message":"text"}), falling back to
// the start of the body as text.
func decodeAPIError(resp *http.Response) *APIError {
	e := &APIError{Status: resp.StatusCode}
	raw, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
	var body struct {
		Error   json.RawMessage `json:"error"`
		Message string          `json:"message"`
	}
	if json.Unmarshal(raw, &body) == nil {
		var obj struct {
			Message string          `json:"message"`
			Type    string          `json:"type"`
			Code    json.RawMessage `json:"code"`
		}
		var s string
		switch {
		case json.Unmarshal(body.Error, &obj) == nil && (obj.Message != "" || obj.Type != ""):
			e.Message, e.Type = obj.Message, obj.Type
			e.Code = rawCode(obj.Code)
		case json.Unmarshal(body.Error, &s) == nil && s != "":
			e.Message = s
		case body.Message != "":
			e.Message = body.Message
		}
	}
	if e.Message == "" && e.Type == "" {
		e.Message = strings.TrimSpace(string(raw))
	}
	e.Message = truncate(e.Message, 512)
	return e
}

// rawCode renders error.code, which servers send as a string, a number or null.
func rawCode(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var n json.Number
	if json.Unmarshal(raw, &n) == nil {
		return n.String()
	}
	return ""
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !isRuneStart(s[n]) {
		n--
	}
	return s[:n] + "…"
}

func isRuneStart(b byte) bool { return b&0xC0 != 0x80 }
