package fetch

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/recrawl/recrawl/clock"
	"github.com/recrawl/recrawl/internal/retry"
	"github.com/recrawl/recrawl/normalize"
)

// Defaults of HTTP's zero fields.
const (
	DefaultTimeout       = 30 * time.Second
	DefaultMaxBytes      = 10 << 20
	DefaultMaxAttempts   = 3
	DefaultMaxRedirects  = 10
	DefaultMaxRetryAfter = 2 * time.Minute
	DefaultBaseBackoff   = 500 * time.Millisecond
	DefaultMaxBackoff    = 30 * time.Second
	DefaultUserAgent     = "recrawl/0.1 (+https://github.com/recrawl/recrawl)"
)

// ErrCapReached is returned (wrapped) for a request that was not sent
// because the run's request cap was reached. It is never retried.
var ErrCapReached = errors.New("request cap reached")

// ErrTooManyRedirects is returned (wrapped) when a page redirects more than
// MaxRedirects times.
var ErrTooManyRedirects = errors.New("too many redirects")

// ErrOffHostRedirect is matched by errors.Is for an *OffHostRedirectError.
var ErrOffHostRedirect = errors.New("redirect to another host")

// OffHostRedirectError is a redirect that would leave the site of the URL
// first requested (its host, or its www/apex twin: normalize.SameSite).
// It was not followed, so nothing of the other host is stored under URL.
type OffHostRedirectError struct {
	URL      string // the URL first requested
	Location string // where the redirect led
}

// Error describes the failure.
func (e *OffHostRedirectError) Error() string {
	return fmt.Sprintf("fetch %s: redirects to %s, another host: not followed", e.URL, e.Location)
}

// Is makes errors.Is(err, ErrOffHostRedirect) true.
func (e *OffHostRedirectError) Is(target error) bool { return target == ErrOffHostRedirect }

// StayOnSite returns an http.Client CheckRedirect policy that refuses a
// redirect leaving the site of the first request (normalize.SameSite: the
// host or its www/apex twin, http or https) with an *OffHostRedirectError,
// and leaves the other redirects to next (nil: net/http's default, at most
// 10).
func StayOnSite(next func(req *http.Request, via []*http.Request) error) func(req *http.Request, via []*http.Request) error {
	return func(req *http.Request, via []*http.Request) error {
		if len(via) > 0 && !normalize.SameSite(via[0].URL.String(), req.URL.String()) {
			return &OffHostRedirectError{URL: via[0].URL.String(), Location: req.URL.String()}
		}
		if next != nil {
			return next(req, via)
		}
		if len(via) >= 10 {
			return fmt.Errorf("%w: stopped after 10", ErrTooManyRedirects)
		}
		return nil
	}
}

// HTTP fetches pages with net/http. The zero value is ready to use; fields
// left zero take the Default* values. An HTTP must not be modified after
// its first use.
//
// It sends If-None-Match and If-Modified-Since from the request's
// validators, follows at most MaxRedirects redirects, and only on the
// requested URL's site unless AllowOffHostRedirects (an
// *OffHostRedirectError otherwise), bounds every attempt by
// Timeout, reads at most MaxBytes of body, and retries 429, 5xx and
// transport errors up to MaxAttempts: a Retry-After header (seconds or an
// HTTP date) is honoured up to MaxRetryAfter, otherwise it waits a capped
// exponential backoff with full jitter. Other 4xx are never retried. Every
// wait uses Clock and ends early when the context is done.
type HTTP struct {
	// Client sends the requests (default: a client on http.DefaultTransport).
	// Its CheckRedirect is replaced by the MaxRedirects policy.
	Client *http.Client
	// UserAgent is sent with every request.
	UserAgent string
	// Timeout bounds one attempt, body included; past it the attempt fails
	// with a *TimeoutError. A shorter bound in the context
	// (WithRequestTimeout) wins. When Client's transport is a *Polite, the bound
	// starts once Polite gives the request its pacing slot (each redirect
	// hop gets its own), so waiting for the slot does not count; otherwise
	// it starts when the attempt does.
	Timeout time.Duration
	// MaxBytes caps the body; a larger body is a *TooLargeError.
	MaxBytes int64
	// MaxAttempts bounds the attempts of one Fetch (1 means no retry).
	MaxAttempts int
	// MaxRedirects bounds the redirects followed by one attempt.
	MaxRedirects int
	// AllowOffHostRedirects follows redirects to other hosts too. By
	// default a redirect must stay on the requested URL's site (StayOnSite).
	AllowOffHostRedirects bool
	// MaxRetryAfter caps the wait a Retry-After header can ask for.
	MaxRetryAfter time.Duration
	// BaseBackoff and MaxBackoff shape the backoff without Retry-After:
	// attempt n waits a random duration in [0, min(MaxBackoff, BaseBackoff·2ⁿ)].
	BaseBackoff time.Duration
	MaxBackoff  time.Duration
	// Accept, when set, is asked about the Content-Type of every 2xx
	// answer before its body is read; an answer whose type it refuses is
	// returned with an empty Body, unread (the engine refuses images,
	// archives and other files that are not pages).
	Accept func(contentType string) bool
	// Clock times the waits (default: the system clock).
	Clock clock.Clock
	// Logger receives retry decisions at debug level (default: discard).
	Logger *slog.Logger

	client atomic.Pointer[policyClient] // Client with the redirect policy
}

var discard = slog.New(slog.DiscardHandler)

func orDefault[T int | int64 | time.Duration](v, d T) T {
	if v <= 0 {
		return d
	}
	return v
}

// Fetch implements Fetcher.
func (h *HTTP) Fetch(ctx context.Context, req Request) (*Response, error) {
	attempts := orDefault(h.MaxAttempts, DefaultMaxAttempts)
	clk := clock.Or(h.Clock)
	log := h.Logger
	if log == nil {
		log = discard
	}
	var lastErr error
	for n := 1; ; n++ {
		resp, retryAfter, err := h.attempt(ctx, req, n)
		if err == nil {
			return resp, nil
		}
		lastErr = err
		if n >= attempts || !retryable(ctx, err) {
			return nil, lastErr
		}
		wait := h.backoff(n)
		if retryAfter >= 0 {
			wait = min(retryAfter, orDefault(h.MaxRetryAfter, DefaultMaxRetryAfter))
		}
		log.DebugContext(ctx, "fetch retry", "url", req.URL, "attempt", n, "wait", wait, "err", err)
		if err := clock.Sleep(ctx, clk, wait); err != nil {
			return nil, fmt.Errorf("fetch %s: waiting to retry: %w (last error: %v)", req.URL, err, lastErr)
		}
	}
}

func (h *HTTP) backoff(n int) time.Duration {
	return retry.Backoff(n, orDefault(h.BaseBackoff, DefaultBaseBackoff), orDefault(h.MaxBackoff, DefaultMaxBackoff))
}

// retryable reports whether a later attempt may succeed: 429 and 5xx, and
// transport errors, unless the caller's context ended.
func retryable(ctx context.Context, err error) bool {
	if ctx.Err() != nil {
		return false
	}
	var se *StatusError
	if errors.As(err, &se) {
		return se.Temporary()
	}
	for _, permanent := range []error{ErrTooLarge, ErrTooManyRedirects, ErrOffHostRedirect, ErrDenied, ErrRobotsUnavailable, ErrCapReached, ErrPrivateAddress} {
		if errors.Is(err, permanent) {
			return false
		}
	}
	var bad *badRequestError
	return !errors.As(err, &bad)
}

type badRequestError struct{ err error }

func (e *badRequestError) Error() string { return e.err.Error() }
func (e *badRequestError) Unwrap() error { return e.err }

// attempt sends one request. retryAfter is -1 when the answer carried no
// usable Retry-After.
func (h *HTTP) attempt(ctx context.Context, req Request, n int) (*Response, time.Duration, error) {
	client := http.DefaultClient
	if h.Client != nil {
		client = h.Client
	}
	timeout := orDefault(h.Timeout, DefaultTimeout)
	if d, ok := RequestTimeout(ctx); ok && d < timeout {
		timeout = d
	}
	if _, ok := client.Transport.(requestTimer); ok {
		ctx = &requestCtx{Context: ctx, timeout: timeout, url: req.URL}
	} else {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeoutCause(ctx, timeout, &TimeoutError{URL: req.URL, After: timeout})
		defer cancel()
	}
	hr, err := http.NewRequestWithContext(ctx, http.MethodGet, req.URL, nil)
	if err != nil {
		return nil, -1, &badRequestError{fmt.Errorf("fetch %s: %w", req.URL, err)}
	}
	ua := h.UserAgent
	if ua == "" {
		ua = DefaultUserAgent
	}
	hr.Header.Set("User-Agent", ua)
	if req.ETag != "" {
		hr.Header.Set("If-None-Match", req.ETag)
	}
	if req.LastModified != "" {
		hr.Header.Set("If-Modified-Since", req.LastModified)
	}
	resp, err := h.redirecting(client).Do(hr)
	if err != nil {
		return nil, -1, fmt.Errorf("fetch %s: %w", req.URL, err)
	}
	defer resp.Body.Close()

	out := &Response{
		URL:          req.URL,
		FinalURL:     resp.Request.URL.String(),
		Status:       resp.StatusCode,
		ETag:         resp.Header.Get("ETag"),
		LastModified: resp.Header.Get("Last-Modified"),
		ContentType:  resp.Header.Get("Content-Type"),
		Header:       resp.Header,
		Attempts:     n,
	}
	switch {
	case resp.StatusCode == http.StatusNotModified, out.Gone():
		drain(resp.Body)
		return out, -1, nil
	case resp.StatusCode >= 200 && resp.StatusCode < 300 && h.Accept != nil && !h.Accept(out.ContentType):
		return out, -1, nil // closing the unread body releases the connection
	case resp.StatusCode >= 200 && resp.StatusCode < 300:
		limit := orDefault(h.MaxBytes, DefaultMaxBytes)
		body, err := readBody(resp.Body, resp.ContentLength, limit+1)
		if err != nil {
			return nil, -1, fmt.Errorf("fetch %s: reading body: %w", req.URL, err)
		}
		if int64(len(body)) > limit {
			// Closing without draining releases the connection.
			return nil, -1, &TooLargeError{URL: req.URL, Limit: limit}
		}
		out.Body = body
		return out, -1, nil
	default:
		drain(resp.Body)
		ra := parseRetryAfter(resp.Header.Get("Retry-After"), clock.Or(h.Clock).Now())
		se := &StatusError{URL: req.URL, Status: resp.StatusCode, Attempts: n}
		if ra >= 0 {
			se.RetryAfter = ra
		}
		return nil, ra, se
	}
}

// redirecting returns client with the MaxRedirects policy (and
// StayOnSite unless AllowOffHostRedirects) as its CheckRedirect: a copy
// made once per client, not once per request.
func (h *HTTP) redirecting(client *http.Client) *http.Client {
	if c := h.client.Load(); c != nil && c.base == client {
		return &c.Client
	}
	c := &policyClient{base: client, Client: *client}
	maxRedirects := orDefault(h.MaxRedirects, DefaultMaxRedirects)
	c.CheckRedirect = func(r *http.Request, via []*http.Request) error {
		if len(via) > maxRedirects {
			return fmt.Errorf("%w: stopped after %d", ErrTooManyRedirects, maxRedirects)
		}
		return nil
	}
	if !h.AllowOffHostRedirects {
		c.CheckRedirect = StayOnSite(c.CheckRedirect)
	}
	h.client.Store(c)
	return &c.Client
}

// policyClient is a copy of base with HTTP's redirect policy.
type policyClient struct {
	http.Client
	base *http.Client
}

// requestCtx carries a request's bound and URL to a requestTimer: one
// allocation where two context.WithValue layers would take two.
type requestCtx struct {
	context.Context
	timeout time.Duration
	url     string
}

func (c *requestCtx) Value(key any) any {
	switch key.(type) {
	case timeoutKey:
		return c.timeout
	case urlKey:
		return c.url
	}
	return c.Context.Value(key)
}

// urlKey holds the URL string of a request (as given to Fetch), for a
// requestTimer's TimeoutError.
type urlKey struct{}

// readBody reads at most max bytes of r into a slice of exactly the
// body's size. A declared length (n, -1 when unknown) sizes it up front;
// without one the body is read into a pooled buffer and copied once, so a
// page is not copied and reallocated as io.ReadAll's buffer grows (about
// twice its size in garbage per page). A wrong declaration only costs
// growth, and what a declaration reserves before any byte arrived is
// bounded by maxDeclaredBody, so a server that declares large bodies and
// sends little cannot make the crawler hold memory it never received.
func readBody(r io.Reader, n, max int64) ([]byte, error) {
	lr := io.LimitedReader{R: r, N: max}
	if n >= 0 && n < max {
		// One byte more than declared, so a body that is not longer than
		// its declaration ends with an EOF read, not a grown buffer.
		return readInto(&lr, make([]byte, 0, min(n+1, maxDeclaredBody)))
	}
	bp := bodyBuffers.Get().(*[]byte)
	buf, err := readInto(&lr, (*bp)[:0])
	body := bytes.Clone(buf)
	if cap(buf) <= maxPooledBody {
		*bp = buf
		bodyBuffers.Put(bp)
	}
	return body, err
}

// readInto appends r's bytes to buf until EOF.
func readInto(r io.Reader, buf []byte) ([]byte, error) {
	for {
		if len(buf) == cap(buf) {
			buf = append(buf, 0)[:len(buf)] // grow
		}
		m, err := r.Read(buf[len(buf):cap(buf)])
		buf = buf[:len(buf)+m]
		if err == io.EOF {
			return buf, nil
		}
		if err != nil {
			return buf, err
		}
	}
}

// bodyBuffers are read buffers for bodies of unknown length; one that grew
// past maxPooledBody is dropped rather than kept.
var bodyBuffers = sync.Pool{New: func() any { b := make([]byte, 0, 64<<10); return &b }}

const maxPooledBody = 1 << 20

// maxDeclaredBody bounds the buffer a declared body length reserves up
// front; a longer body grows past it as it arrives.
const maxDeclaredBody = 1 << 20

// requestTimer is implemented by transports that start a request's
// timeout themselves once the request is sent (*Polite): HTTP hands its
// Timeout to them through the request's context (timeoutKey) instead of
// starting it before the transport waits for a pacing slot.
type requestTimer interface{ timesRequests() }

// timeoutKey holds the time.Duration bound of a request, for a requestTimer.
type timeoutKey struct{}

// drain reads a little of an unwanted body so the connection can be reused.
func drain(r io.Reader) { _, _ = io.Copy(io.Discard, io.LimitReader(r, 64<<10)) }

// parseRetryAfter reads a Retry-After value (see retry.After); -1 when it
// is absent or unusable.
func parseRetryAfter(v string, now time.Time) time.Duration {
	if d, ok := retry.After(v, now, 0); ok {
		return d
	}
	return -1
}
