// Package geonode is a client of the Geonode Scraper API
// (https://scraper.geonode.io), recrawl's paid fetch back end: it extracts a
// page as Markdown (or HTML) through Geonode's browsers and proxies.
//
// A Client implements fetch.Fetcher with POST /v1/extract (sync, or async
// with polling) and fetch.BatchFetcher with POST /v1/batch, polling and
// paging through every result; MapURLs lists a site's URLs with POST
// /v1/map for sites without a usable sitemap.
//
// The origin's status comes from metadata.http_status: a 304, 404 or 410
// from the site is a fetch.Response like any other; other origin statuses
// are *fetch.StatusError. Failures of the API itself are *APIError, matched
// with errors.Is against ErrUnauthorized, ErrPaymentRequired,
// ErrInvalidRequest, ErrExtractionFailed, ErrNotFound, ErrTimeout,
// ErrConflict, ErrRateLimited and ErrServer. Errors that no later request can
// cure (a bad key, an exhausted balance) have a Fatal method returning true:
// an engine must stop its run on them instead of failing page after page,
// which it can test generically with IsFatal.
//
// 429 and 5xx answers are retried, honouring the body's retryable flag and a
// Retry-After header (seconds or an HTTP date), else after a capped
// exponential backoff with full jitter. Every wait and poll runs on the
// injected clock and ends when the context does.
//
// The API key is sent as X-Api-Key and never logged: String, GoString and
// LogValue of a Client redact it.
//
// Geonode exposes no origin ETag or Last-Modified and bills every successful
// extraction; fetch.Hybrid puts a direct conditional request in front of a
// Client so unchanged pages cost nothing.
package geonode

import (
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"os"
	"strings"
	"time"

	"github.com/recrawl/recrawl/clock"
	"github.com/recrawl/recrawl/fetch"
)

// Defaults of the options.
const (
	DefaultBaseURL         = "https://scraper.geonode.io"
	DefaultMaxAttempts     = 4
	DefaultMaxRetryAfter   = 2 * time.Minute
	DefaultBaseBackoff     = 500 * time.Millisecond
	DefaultMaxBackoff      = 30 * time.Second
	DefaultPollInterval    = 2 * time.Second
	DefaultMaxPollInterval = 30 * time.Second
	DefaultJobDeadline     = 5 * time.Minute
	DefaultBatchDeadline   = 30 * time.Minute
	DefaultRequestTimeout  = 2 * time.Minute
	// DefaultMaxResponseBytes caps one API response body (a batch page of
	// 50 items included).
	DefaultMaxResponseBytes = 64 << 20
	// MaxBatchSize is the API's limit of URLs per batch job, and the default.
	MaxBatchSize = 1000
	// MaxBatchPageSize is the API's limit of results per status page, and
	// the default.
	MaxBatchPageSize = 50
	// DefaultUserAgent is sent to the API (not to the origin).
	DefaultUserAgent = "recrawl-geonode/0.1 (+https://github.com/recrawl/recrawl)"
)

// Names of the environment variables APIKeyFromEnv reads, in order.
const (
	EnvAPIKey        = "GEONODE_API_KEY"
	EnvScraperAPIKey = "GEONODE_SCRAPER_API_KEY"
)

// ErrNoAPIKey is returned by APIKeyFromEnv when neither variable is set, and
// by New for an empty key.
var ErrNoAPIKey = errors.New("geonode: no API key: set " + EnvAPIKey + " (or " + EnvScraperAPIKey + ") to the key of your Geonode Scraper API account")

// APIKeyFromEnv returns the API key from GEONODE_API_KEY, or else from
// GEONODE_SCRAPER_API_KEY, trimmed of surrounding white space. It returns
// ErrNoAPIKey when both are empty. Libraries never read the environment
// behind the caller's back: call it explicitly and pass the key to New.
func APIKeyFromEnv() (string, error) {
	for _, name := range []string{EnvAPIKey, EnvScraperAPIKey} {
		if v := strings.TrimSpace(os.Getenv(name)); v != "" {
			return v, nil
		}
	}
	return "", ErrNoAPIKey
}

// Format is an output format of an extraction.
type Format string

// The formats the API produces.
const (
	Markdown Format = "markdown"
	HTML     Format = "html"
)

// Proxy selects Geonode's exit: Country is an ISO 3166 alpha-2 code (empty:
// automatic), Type is "residential", "datacenter" or "mix" (empty:
// residential).
type Proxy struct {
	Country string
	Type    string
}

// WaitConfig tells the browser what to wait for before extracting. Sending
// any WaitConfig switches Geonode to browser rendering. WaitUntil is
// "commit", "domcontentloaded" or "load" ("" leaves the API's default);
// WaitFor is a CSS selector; WaitTimeout bounds the wait (millisecond
// resolution).
type WaitConfig struct {
	WaitUntil   string
	WaitFor     string
	WaitTimeout time.Duration
}

// ConfigError lists every invalid option passed to New.
type ConfigError struct {
	Problems []string
}

// Error describes the failure.
func (e *ConfigError) Error() string {
	return "geonode: invalid configuration: " + strings.Join(e.Problems, "; ")
}

// secret holds the API key. It is kept behind a pointer so that printing a
// struct that contains it shows an address, never the key, and it redacts
// itself in every formatting path.
type secret struct{ v string }

const redacted = "[REDACTED]"

func (s *secret) String() string               { return redacted }
func (s *secret) GoString() string             { return redacted }
func (s *secret) LogValue() slog.Value         { return slog.StringValue(redacted) }
func (s *secret) MarshalText() ([]byte, error) { return []byte(redacted), nil }

// config is the validated configuration of a Client.
type config struct {
	key              *secret
	baseURL          string
	httpClient       *http.Client
	clock            clock.Clock
	logger           *slog.Logger
	userAgent        string
	formats          []Format
	renderJS         bool
	proxy            *Proxy
	waitConfig       *WaitConfig
	headers          map[string]string
	async            bool
	pollInterval     time.Duration
	maxPollInterval  time.Duration
	jobDeadline      time.Duration
	batchSize        int
	batchPageSize    int
	batchDeadline    time.Duration
	maxAttempts      int
	maxRetryAfter    time.Duration
	baseBackoff      time.Duration
	maxBackoff       time.Duration
	requestTimeout   time.Duration
	maxBytes         int64
	maxResponseBytes int64
	includeSubdomain bool

	problems []string
}

func (c *config) bad(format string, args ...any) {
	c.problems = append(c.problems, fmt.Sprintf(format, args...))
}

// String describes the configuration with the key redacted.
func (c config) String() string {
	return fmt.Sprintf("geonode.config{base: %s, key: %s, formats: %v, render_js: %t, async: %t}", c.baseURL, redacted, c.formats, c.renderJS, c.async)
}

// GoString is String: the key never appears.
func (c config) GoString() string { return c.String() }

// LogValue logs the configuration with the key redacted.
func (c config) LogValue() slog.Value {
	return slog.GroupValue(
		slog.String("base_url", c.baseURL),
		slog.String("api_key", redacted),
		slog.Any("formats", c.formats),
		slog.Bool("render_js", c.renderJS),
		slog.Bool("async", c.async),
	)
}

// Option configures a Client.
type Option func(*config)

// WithBaseURL sets the API's base URL (default DefaultBaseURL).
func WithBaseURL(u string) Option { return func(c *config) { c.baseURL = u } }

// WithHTTPClient sets the client that talks to the API (default: a client
// on http.DefaultTransport). Its Timeout, if any, bounds every request.
func WithHTTPClient(hc *http.Client) Option { return func(c *config) { c.httpClient = hc } }

// WithClock sets the clock of every wait, poll and deadline (default: the
// system clock).
func WithClock(clk clock.Clock) Option { return func(c *config) { c.clock = clk } }

// WithLogger sets the logger for request, retry and polling diagnostics at
// debug level (default: discard). The API key is never logged.
func WithLogger(l *slog.Logger) Option { return func(c *config) { c.logger = l } }

// WithUserAgent sets the User-Agent sent to the API (not to the origin).
func WithUserAgent(ua string) Option { return func(c *config) { c.userAgent = ua } }

// WithFormats sets the requested output formats (default Markdown). With
// Markdown among them, a Response's Body is the Markdown; with HTML alone,
// it is the HTML.
func WithFormats(f ...Format) Option {
	return func(c *config) { c.formats = append([]Format(nil), f...) }
}

// WithRenderJS asks Geonode to render pages in a headless browser.
func WithRenderJS(on bool) Option { return func(c *config) { c.renderJS = on } }

// WithProxy selects the proxy country and type.
func WithProxy(p Proxy) Option { return func(c *config) { c.proxy = &p } }

// WithWaitConfig sets what the browser waits for before extracting.
func WithWaitConfig(w WaitConfig) Option { return func(c *config) { c.waitConfig = &w } }

// WithHeaders sets headers forwarded to every origin (Accept-Language,
// User-Agent, Cookie...). Conditional headers (If-None-Match,
// If-Modified-Since...) are refused: the Client sets them per request, and
// a batch must never carry them.
func WithHeaders(h map[string]string) Option {
	return func(c *config) {
		c.headers = make(map[string]string, len(h))
		for k, v := range h {
			c.headers[k] = v
		}
	}
}

// WithAsync makes Fetch submit extractions with processing_mode "async" and
// poll GET /v1/extract/{job_id} until they finish (default: sync).
func WithAsync(on bool) Option { return func(c *config) { c.async = on } }

// WithPolling sets the first wait between polls of a job and the cap the
// wait grows to while a job makes no progress (defaults 2 s and 30 s).
func WithPolling(first, maxWait time.Duration) Option {
	return func(c *config) { c.pollInterval, c.maxPollInterval = first, maxWait }
}

// WithJobDeadline bounds how long Fetch waits for an async extraction
// (default 5 minutes); past it Fetch returns an *ExtractTimeoutError.
func WithJobDeadline(d time.Duration) Option { return func(c *config) { c.jobDeadline = d } }

// WithBatchSize sets how many URLs one batch job carries, at most
// MaxBatchSize (the default); FetchBatch splits larger inputs into several
// jobs.
func WithBatchSize(n int) Option { return func(c *config) { c.batchSize = n } }

// WithBatchPageSize sets how many results one status request reads, at
// most MaxBatchPageSize (the default).
func WithBatchPageSize(n int) Option { return func(c *config) { c.batchPageSize = n } }

// WithBatchDeadline bounds how long one batch job may stay unfinished
// (default 30 minutes). Past it the job is cancelled, its unfinished URLs
// get no outcome, and FetchBatch returns a *BatchTimeoutError.
func WithBatchDeadline(d time.Duration) Option { return func(c *config) { c.batchDeadline = d } }

// WithMaxAttempts bounds the attempts of one API request (default 4; 1
// means no retry).
func WithMaxAttempts(n int) Option { return func(c *config) { c.maxAttempts = n } }

// WithMaxRetryAfter caps the wait a Retry-After header can ask for
// (default 2 minutes).
func WithMaxRetryAfter(d time.Duration) Option { return func(c *config) { c.maxRetryAfter = d } }

// WithBackoff shapes the wait before a retry without Retry-After: attempt n
// waits a random duration in [0, min(maxWait, base·2ⁿ)] (defaults 500 ms
// and 30 s).
func WithBackoff(base, maxWait time.Duration) Option {
	return func(c *config) { c.baseBackoff, c.maxBackoff = base, maxWait }
}

// WithRequestTimeout bounds one API request, body included (default 2
// minutes: a rendered extraction can take long). A shorter bound in the
// request's context (fetch.WithRequestTimeout; the engine puts
// WEB_REQUEST_TIMEOUT_MS there) wins. The bound applies to each request,
// polls and retries included, never to the waits between them; a request
// that runs out of time fails with a *fetch.TimeoutError.
func WithRequestTimeout(d time.Duration) Option { return func(c *config) { c.requestTimeout = d } }

// WithMaxBytes caps the body of one page (default fetch.DefaultMaxBytes);
// a larger page is a *fetch.TooLargeError.
func WithMaxBytes(n int64) Option { return func(c *config) { c.maxBytes = n } }

// WithMaxResponseBytes caps one API response body (default
// DefaultMaxResponseBytes).
func WithMaxResponseBytes(n int64) Option { return func(c *config) { c.maxResponseBytes = n } }

// WithIncludeSubdomains makes MapURLs probe sibling subdomains too (default
// off; the API's own default is on).
func WithIncludeSubdomains(on bool) Option { return func(c *config) { c.includeSubdomain = on } }

var conditionalHeaders = map[string]bool{
	"if-none-match": true, "if-modified-since": true, "if-match": true,
	"if-unmodified-since": true, "if-range": true,
}

// Client is a Geonode Scraper API client. It is safe for concurrent use and
// must be created with New.
type Client struct {
	cfg  config
	base *url.URL
}

// New returns a Client for apiKey. It validates every option at once; the
// error is ErrNoAPIKey for an empty key or a *ConfigError naming each
// invalid option.
func New(apiKey string, opts ...Option) (*Client, error) {
	apiKey = strings.TrimSpace(apiKey)
	if apiKey == "" {
		return nil, ErrNoAPIKey
	}
	c := config{
		key:              &secret{apiKey},
		baseURL:          DefaultBaseURL,
		userAgent:        DefaultUserAgent,
		formats:          []Format{Markdown},
		pollInterval:     DefaultPollInterval,
		maxPollInterval:  DefaultMaxPollInterval,
		jobDeadline:      DefaultJobDeadline,
		batchSize:        MaxBatchSize,
		batchPageSize:    MaxBatchPageSize,
		batchDeadline:    DefaultBatchDeadline,
		maxAttempts:      DefaultMaxAttempts,
		maxRetryAfter:    DefaultMaxRetryAfter,
		baseBackoff:      DefaultBaseBackoff,
		maxBackoff:       DefaultMaxBackoff,
		requestTimeout:   DefaultRequestTimeout,
		maxBytes:         fetch.DefaultMaxBytes,
		maxResponseBytes: DefaultMaxResponseBytes,
	}
	if strings.ContainsAny(apiKey, "\r\n\x00") {
		c.bad("API key: contains a line break or NUL; pass the key alone")
	}
	for _, o := range opts {
		if o != nil {
			o(&c)
		}
	}
	base, err := url.Parse(c.baseURL)
	if err != nil || (base.Scheme != "http" && base.Scheme != "https") || base.Host == "" {
		c.bad("base URL: %q is not an absolute http(s) URL", c.baseURL)
	} else {
		base.Path = strings.TrimRight(base.Path, "/")
		base.RawQuery, base.Fragment = "", ""
	}
	c.check()
	if len(c.problems) > 0 {
		return nil, &ConfigError{Problems: c.problems}
	}
	if c.httpClient == nil {
		c.httpClient = &http.Client{}
	}
	c.clock = clock.Or(c.clock)
	if c.logger == nil {
		c.logger = slog.New(slog.DiscardHandler)
	}
	return &Client{cfg: c, base: base}, nil
}

func (c *config) check() {
	if len(c.formats) == 0 {
		c.bad("formats: at least one of markdown, html is required")
	}
	seen := map[Format]bool{}
	for _, f := range c.formats {
		if f != Markdown && f != HTML {
			c.bad("formats: %q is not %q or %q", f, Markdown, HTML)
		}
		if seen[f] {
			c.bad("formats: %q given twice", f)
		}
		seen[f] = true
	}
	if p := c.proxy; p != nil {
		switch p.Type {
		case "", "residential", "datacenter", "mix":
		default:
			c.bad("proxy type: %q is not residential, datacenter or mix", p.Type)
		}
		if p.Country != "" && (len(p.Country) != 2 || strings.ToUpper(p.Country) != p.Country || strings.ContainsFunc(p.Country, func(r rune) bool { return r < 'A' || r > 'Z' })) {
			c.bad("proxy country: %q is not an upper-case ISO 3166 alpha-2 code such as US", p.Country)
		}
	}
	if w := c.waitConfig; w != nil {
		switch w.WaitUntil {
		case "", "commit", "domcontentloaded", "load":
		default:
			c.bad("wait_until: %q is not commit, domcontentloaded or load", w.WaitUntil)
		}
		if w.WaitTimeout < 0 {
			c.bad("wait timeout: must be >= 0, got %s", w.WaitTimeout)
		}
	}
	for k, v := range c.headers {
		if conditionalHeaders[strings.ToLower(k)] {
			c.bad("headers: %s is set per request from the stored validators; remove it", k)
		}
		if strings.EqualFold(k, "X-Api-Key") {
			c.bad("headers: never forward the API key to the origin")
		}
		if k == "" || strings.ContainsAny(k+v, "\r\n") {
			c.bad("headers: %q is not a valid header", k)
		}
	}
	if c.userAgent == "" || strings.ContainsAny(c.userAgent, "\r\n") {
		c.bad("user agent: must be one non-empty line")
	}
	positive := []struct {
		name string
		d    time.Duration
	}{
		{"poll interval", c.pollInterval}, {"max poll interval", c.maxPollInterval},
		{"job deadline", c.jobDeadline}, {"batch deadline", c.batchDeadline},
		{"max retry-after", c.maxRetryAfter}, {"base backoff", c.baseBackoff},
		{"max backoff", c.maxBackoff}, {"request timeout", c.requestTimeout},
	}
	for _, p := range positive {
		if p.d <= 0 {
			c.bad("%s: must be > 0, got %s", p.name, p.d)
		}
	}
	if c.maxPollInterval < c.pollInterval {
		c.bad("max poll interval: %s is below the first interval %s", c.maxPollInterval, c.pollInterval)
	}
	if c.maxBackoff < c.baseBackoff {
		c.bad("max backoff: %s is below the base backoff %s", c.maxBackoff, c.baseBackoff)
	}
	if c.batchSize < 1 || c.batchSize > MaxBatchSize {
		c.bad("batch size: must be in 1..%d, got %d", MaxBatchSize, c.batchSize)
	}
	if c.batchPageSize < 1 || c.batchPageSize > MaxBatchPageSize {
		c.bad("batch page size: must be in 1..%d, got %d", MaxBatchPageSize, c.batchPageSize)
	}
	if c.maxAttempts < 1 {
		c.bad("max attempts: must be >= 1, got %d", c.maxAttempts)
	}
	if c.maxBytes < 1 {
		c.bad("max bytes: must be >= 1, got %d", c.maxBytes)
	}
	if c.maxResponseBytes < 1024 {
		c.bad("max response bytes: must be >= 1024, got %d", c.maxResponseBytes)
	}
}

// String describes the client with its API key redacted.
func (c *Client) String() string {
	if c == nil {
		return "geonode.Client(nil)"
	}
	return fmt.Sprintf("geonode.Client{base: %s, key: %s}", c.cfg.baseURL, redacted)
}

// GoString is String: the key never appears, not even with %#v.
func (c *Client) GoString() string { return c.String() }

// LogValue logs the client's configuration with its API key redacted.
func (c *Client) LogValue() slog.Value {
	if c == nil {
		return slog.StringValue("geonode.Client(nil)")
	}
	return c.cfg.LogValue()
}

// Compile-time checks of the interfaces Client implements.
var (
	_ fetch.Fetcher      = (*Client)(nil)
	_ fetch.BatchFetcher = (*Client)(nil)
)
