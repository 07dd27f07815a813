package alert

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/recrawl/recrawl/clock"
	"github.com/recrawl/recrawl/internal/retry"
)

// Webhook defaults; the options override them.
const (
	DefaultWebhookAttempts      = 5
	DefaultWebhookTimeout       = 30 * time.Second
	DefaultWebhookBackoff       = time.Second
	DefaultWebhookMaxBackoff    = 30 * time.Second
	DefaultWebhookMaxRetryAfter = 2 * time.Minute
	DefaultWebhookUserAgent     = "recrawl-alert/1"
)

// Header names the webhook sends besides Content-Type and User-Agent.
const (
	// SignatureHeader carries "sha256=" and the hex HMAC-SHA256 of the
	// exact request body keyed with the shared secret.
	SignatureHeader = "X-Recrawl-Signature"
	// IdempotencyHeader carries the alert ID; it is the same on every
	// redelivery of the alert.
	IdempotencyHeader = "Idempotency-Key"
)

// maxErrorBody caps WebhookError.Body, in bytes.
const maxErrorBody = 512

// WebhookOption configures Webhook.
type WebhookOption func(*webhookConfig)

type webhookConfig struct {
	client        *http.Client
	clock         clock.Clock
	attempts      int
	timeout       time.Duration
	backoff       time.Duration
	maxBackoff    time.Duration
	maxRetryAfter time.Duration
	userAgent     string
	log           *slog.Logger
	err           error // the first invalid setting
}

func (c *webhookConfig) invalid(field, reason string) {
	if c.err == nil {
		c.err = &ConfigError{Field: field, Reason: reason}
	}
}

// WithHTTPClient sends the requests with c (its Transport, Jar and Timeout).
// Redirects are never followed, whatever c.CheckRedirect says: a redirect
// could turn the POST into a GET or carry the signature to another host.
func WithHTTPClient(c *http.Client) WebhookOption {
	return func(w *webhookConfig) {
		if c == nil {
			w.invalid("HTTPClient", "nil; pass a client or leave the option out")
			return
		}
		w.client = c
	}
}

// WithClock times the waits between attempts (and dates a Retry-After given
// as an HTTP date); the default is the system clock.
func WithClock(c clock.Clock) WebhookOption {
	return func(w *webhookConfig) { w.clock = clock.Or(c) }
}

// WithMaxAttempts bounds the requests per Deliver, the first included
// (default 5). 1 disables retries.
func WithMaxAttempts(n int) WebhookOption {
	return func(w *webhookConfig) {
		if n < 1 {
			w.invalid("MaxAttempts", fmt.Sprintf("%d; allow at least 1 attempt", n))
			return
		}
		w.attempts = n
	}
}

// WithTimeout bounds each request, from sending to the response headers
// and the read of its body (default 30 s). It is a network deadline in real
// time, independent of the clock.
func WithTimeout(d time.Duration) WebhookOption {
	return func(w *webhookConfig) {
		if d <= 0 {
			w.invalid("Timeout", fmt.Sprintf("%v; use a positive duration", d))
			return
		}
		w.timeout = d
	}
}

// WithBackoff shapes the wait before a retry when the receiver gave no
// Retry-After: initial, doubled per failed attempt, capped at max, with the
// upper half of each wait randomized (defaults 1 s and 30 s).
func WithBackoff(initial, max time.Duration) WebhookOption {
	return func(w *webhookConfig) {
		if initial <= 0 || max < initial {
			w.invalid("Backoff", fmt.Sprintf("initial %v, max %v; want 0 < initial <= max", initial, max))
			return
		}
		w.backoff, w.maxBackoff = initial, max
	}
}

// WithMaxRetryAfter caps the wait a Retry-After header may ask for (default
// 2 minutes); a longer request is shortened to d.
func WithMaxRetryAfter(d time.Duration) WebhookOption {
	return func(w *webhookConfig) {
		if d < 0 {
			w.invalid("MaxRetryAfter", fmt.Sprintf("%v; use a duration >= 0", d))
			return
		}
		w.maxRetryAfter = d
	}
}

// WithUserAgent sets the User-Agent header (default "recrawl-alert/1").
func WithUserAgent(ua string) WebhookOption {
	return func(w *webhookConfig) {
		if strings.TrimSpace(ua) == "" || strings.ContainsAny(ua, "\r\n") {
			w.invalid("UserAgent", fmt.Sprintf("%q; use a non-empty single line", ua))
			return
		}
		w.userAgent = ua
	}
}

// WithLogger receives a debug record per retry (endpoint host, alert ID,
// attempt, wait, error); the secret and the URL's path and query are never
// logged. The default discards.
func WithLogger(l *slog.Logger) WebhookOption {
	return func(w *webhookConfig) {
		if l != nil {
			w.log = l
		}
	}
}

// ConfigError reports an invalid Webhook setting. Webhook returns a Sink
// whose every Deliver fails with it.
type ConfigError struct {
	Field  string // the setting: "URL", "Secret", "MaxAttempts", ...
	Reason string // what is wrong and what to use instead
}

// Error names the setting and says what to change.
func (e *ConfigError) Error() string {
	return "alert: webhook: invalid " + e.Field + ": " + e.Reason
}

// WebhookError is a response from the receiver that is not an
// acknowledgement (not 2xx).
type WebhookError struct {
	Status int    // the HTTP status code
	Body   string // the start of the response body (at most 512 bytes, valid UTF-8)
}

// Error gives the status, whether retrying can help, and the body's start.
func (e *WebhookError) Error() string {
	msg := fmt.Sprintf("webhook answered %d %s", e.Status, http.StatusText(e.Status))
	switch {
	case e.Status >= 300 && e.Status < 400:
		msg += " (redirects are not followed; configure the final URL)"
	case !e.Temporary():
		msg += " (the receiver refused the alert; retrying will not help until it changes)"
	}
	if e.Body != "" {
		msg += ": " + e.Body
	}
	return msg
}

// Temporary reports whether the same request may succeed later: 408, 429
// and 5xx are temporary; every other status is permanent.
func (e *WebhookError) Temporary() bool {
	return e.Status == http.StatusRequestTimeout || e.Status == http.StatusTooManyRequests || e.Status >= 500
}

// Webhook returns a Sink that POSTs each alert as JSON to url, signed with
// secret.
//
// Each request carries Content-Type: application/json, the User-Agent,
// X-Recrawl-Signature: sha256=<hex HMAC-SHA256 of the exact body keyed with
// secret> (check it with VerifySignature) and Idempotency-Key: <alert ID>.
// Redeliveries of an alert send the same body, signature and key, so the
// receiver deduplicates by the key.
//
// A 2xx answer is the acknowledgement. 408, 429, 5xx and network errors are
// retried up to the attempt limit, waiting on the clock for Retry-After
// (capped) or an exponential backoff, and the wait ends early when ctx is
// done. Any other status fails at once with a *WebhookError whose Temporary
// is false; redirects are not followed. When every attempt failed, the
// error wraps the last *WebhookError or network error. An alert that fails
// Validate is refused with an error wrapping ErrInvalid; invalid settings
// make every Deliver fail with a *ConfigError.
//
// The secret never appears in errors or logs, and the URL appears only as
// scheme and host, since webhook URLs often embed tokens. The Sink is safe
// for concurrent use.
func Webhook(url, secret string, opts ...WebhookOption) Sink {
	cfg := webhookConfig{
		attempts:      DefaultWebhookAttempts,
		timeout:       DefaultWebhookTimeout,
		backoff:       DefaultWebhookBackoff,
		maxBackoff:    DefaultWebhookMaxBackoff,
		maxRetryAfter: DefaultWebhookMaxRetryAfter,
		userAgent:     DefaultWebhookUserAgent,
		clock:         clock.Real(),
		log:           slog.New(slog.DiscardHandler),
	}
	for _, o := range opts {
		if o != nil {
			o(&cfg)
		}
	}
	if err := checkWebhookURL(url); err != nil {
		cfg.err = err
	}
	if secret == "" {
		cfg.invalid("Secret", "empty; share a random secret with the receiver so it can verify the signature")
	}
	base := http.DefaultClient
	if cfg.client != nil {
		base = cfg.client
	}
	client := *base // a copy, so the caller's client keeps its redirect policy
	client.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	return &webhookSink{cfg: cfg, client: &client, url: url, secret: []byte(secret), where: redactURL(url)}
}

func checkWebhookURL(raw string) error {
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return &ConfigError{Field: "URL", Reason: fmt.Sprintf("%s is not an absolute http(s) URL like https://hooks.example.com/recrawl", redactURL(raw))}
	}
	return nil
}

// redactURL keeps scheme and host of a URL; path, query and user info may
// hold tokens.
func redactURL(raw string) string {
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" {
		return "(unparseable URL)"
	}
	s := u.Scheme + "://" + u.Host
	if u.Path != "" || u.RawQuery != "" {
		s += "/…"
	}
	return s
}

type webhookSink struct {
	cfg    webhookConfig
	client *http.Client
	url    string
	secret []byte
	where  string // the URL without path and query, for messages
}

// String describes the sink without its secret or the URL's path.
func (w *webhookSink) String() string { return "alert.Webhook(" + w.where + ")" }

// GoString describes the sink without its secret or the URL's path.
func (w *webhookSink) GoString() string { return w.String() }

// LogValue logs the sink without its secret or the URL's path.
func (w *webhookSink) LogValue() slog.Value { return slog.StringValue(w.String()) }

func (w *webhookSink) Deliver(ctx context.Context, a Alert) error {
	if w.cfg.err != nil {
		return w.cfg.err
	}
	if err := a.Validate(); err != nil {
		return err
	}
	body, err := encode(&a)
	if err != nil {
		return err
	}
	sig := sign(w.secret, body)
	for attempt := 1; ; attempt++ {
		res := w.attempt(ctx, a.ID, body, sig)
		if res.err == nil {
			return nil
		}
		if ctx.Err() != nil {
			return fmt.Errorf("alert: webhook %s: alert %s: %w", w.where, a.ID, ctx.Err())
		}
		if res.permanent {
			return fmt.Errorf("alert: webhook %s: alert %s: %w", w.where, a.ID, res.err)
		}
		if attempt >= w.cfg.attempts {
			return fmt.Errorf("alert: webhook %s: alert %s not acknowledged after %d attempts: %w", w.where, a.ID, attempt, res.err)
		}
		wait := res.retryAfter
		if wait < 0 {
			wait = w.backoff(attempt)
		}
		w.cfg.log.DebugContext(ctx, "alert: webhook retry", "endpoint", w.where, "alert_id", a.ID,
			"attempt", attempt, "wait", wait, "error", res.err.Error())
		if err := clock.Sleep(ctx, w.cfg.clock, wait); err != nil {
			return fmt.Errorf("alert: webhook %s: alert %s: waiting to retry: %w (last failure: %w)", w.where, a.ID, err, res.err)
		}
	}
}

type attemptResult struct {
	err        error
	permanent  bool
	retryAfter time.Duration // < 0: none given
}

// attempt sends one request and classifies the outcome.
func (w *webhookSink) attempt(ctx context.Context, id string, body []byte, sig string) attemptResult {
	actx, cancel := context.WithTimeout(ctx, w.cfg.timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(actx, http.MethodPost, w.url, bytes.NewReader(body))
	if err != nil {
		return attemptResult{err: fmt.Errorf("build request: %w", err), permanent: true}
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("User-Agent", w.cfg.userAgent)
	req.Header.Set(SignatureHeader, sig)
	req.Header.Set(IdempotencyHeader, id)
	resp, err := w.client.Do(req)
	if err != nil {
		var ue *url.Error
		if errors.As(err, &ue) {
			// url.Error names the full URL, which may hold a token.
			err = &url.Error{Op: ue.Op, URL: w.where, Err: ue.Err}
		}
		return attemptResult{err: err, retryAfter: -1}
	}
	defer resp.Body.Close()
	if resp.StatusCode >= 200 && resp.StatusCode < 300 {
		_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
		return attemptResult{}
	}
	head, _ := io.ReadAll(io.LimitReader(resp.Body, maxErrorBody+utf8.UTFMax))
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
	werr := &WebhookError{Status: resp.StatusCode, Body: truncateBody(head)}
	if !werr.Temporary() {
		return attemptResult{err: werr, permanent: true}
	}
	return attemptResult{err: werr, retryAfter: w.retryAfter(resp.Header.Get("Retry-After"))}
}

// retryAfter parses a Retry-After value (delay seconds or an HTTP date),
// capped at the configured maximum; -1 when absent or unparseable.
func (w *webhookSink) retryAfter(v string) time.Duration {
	if d, ok := retry.After(v, w.cfg.clock.Now(), w.cfg.maxRetryAfter); ok {
		return d
	}
	return -1
}

// backoff is the wait after the given failed attempt (1-based) without
// Retry-After: initial * 2^(attempt-1), capped, upper half randomized.
func (w *webhookSink) backoff(attempt int) time.Duration {
	return retry.HalfJitter(attempt-1, w.cfg.backoff, w.cfg.maxBackoff)
}

// truncateBody keeps at most maxErrorBody bytes of valid UTF-8.
func truncateBody(b []byte) string {
	s := strings.ToValidUTF8(string(b), "\uFFFD")
	if len(s) <= maxErrorBody {
		return strings.TrimSpace(s)
	}
	cut := maxErrorBody
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return strings.TrimSpace(s[:cut]) + "…"
}

// sign returns the signature header value for body.
func sign(secret, body []byte) string {
	m := hmac.New(sha256.New, secret)
	m.Write(body)
	return "sha256=" + hex.EncodeToString(m.Sum(nil))
}

// VerifySignature reports whether header (the X-Recrawl-Signature value)
// is the HMAC-SHA256 of body keyed with secret, in the form
// "sha256=<hex>". Pass the raw request body, before any JSON decoding. The
// comparison takes constant time; an empty secret never verifies.
func VerifySignature(secret string, body []byte, header string) bool {
	if secret == "" {
		return false
	}
	hexSig, ok := strings.CutPrefix(strings.TrimSpace(header), "sha256=")
	if !ok || len(hexSig) != 2*sha256.Size {
		return false
	}
	got, err := hex.DecodeString(hexSig)
	if err != nil {
		return false
	}
	m := hmac.New(sha256.New, []byte(secret))
	m.Write(body)
	return hmac.Equal(got, m.Sum(nil))
}
