// Package fetch gets one page: conditional requests, redirects, retries with
// Retry-After, size caps and typed errors.
//
// Fetcher is the interface the engine drives; HTTP is its default
// implementation on net/http. BatchFetcher is an optional ability (detected
// by type assertion, as database/sql does with optional driver interfaces)
// for back ends that fetch many URLs in one job.
package fetch

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"time"
)

// Request is one page to fetch, with the validators stored from the last
// successful fetch.
type Request struct {
	// URL is the address to request.
	URL string
	// ETag, when set, is sent as If-None-Match.
	ETag string
	// LastModified, when set, is sent as If-Modified-Since.
	LastModified string
}

// Conditional reports whether the request carries a validator.
func (r Request) Conditional() bool { return r.ETag != "" || r.LastModified != "" }

// Response is the outcome of a fetch that reached the origin and got a
// definitive answer: a 2xx, a 304 Not Modified, or a 404/410.
type Response struct {
	// URL is the requested URL.
	URL string
	// FinalURL is the URL after redirects (equal to URL when none).
	FinalURL string
	// Status is the origin's HTTP status code.
	Status int
	// ETag and LastModified are the validators the origin sent, if any.
	ETag         string
	LastModified string
	// ContentType is the media type of Body, as declared by the origin or
	// the back end (for example "text/html; charset=utf-8", or
	// "text/markdown" for back ends that return Markdown).
	ContentType string
	// Header holds the origin's response header when the back end exposes it.
	Header http.Header
	// Body is the response body, at most the fetcher's size limit.
	Body []byte
	// Attempts is how many requests this fetch took (1 without retries).
	Attempts int
	// Billed counts requests charged by a paid back end (0 for plain HTTP).
	Billed int
}

// NotModified reports a 304 answer.
func (r *Response) NotModified() bool { return r.Status == http.StatusNotModified }

// Gone reports a 404 or 410 answer: the page no longer exists.
func (r *Response) Gone() bool {
	return r.Status == http.StatusNotFound || r.Status == http.StatusGone
}

// Fetcher fetches one page. Implementations are safe for concurrent use.
//
// Fetch returns a Response for every definitive answer (2xx, 304, 404,
// 410). Anything else is an error: a *StatusError for other statuses (after
// any retries), a *TooLargeError for a body over the size limit, or the
// wrapped transport or context error. An error means nothing is known about
// the page; the caller leaves its state as it was.
type Fetcher interface {
	Fetch(ctx context.Context, req Request) (*Response, error)
}

// BatchFetcher is an optional ability of a Fetcher: fetching many pages as
// one job. Batch jobs cannot carry per-URL validators, so callers send only
// requests without them; implementations ignore ETag and LastModified.
type BatchFetcher interface {
	Fetcher
	// FetchBatch fetches reqs and calls yield once per request that got an
	// outcome, with the request's index in reqs, as results arrive. yield is
	// never called concurrently. A request that gets no yield (the job was
	// cancelled, or ended early) has no outcome and stays due. The error
	// reports a failure of the job as a whole.
	FetchBatch(ctx context.Context, reqs []Request, yield func(i int, resp *Response, err error)) error
}

// StatusError is an HTTP status the fetcher does not treat as an answer
// about the page: 429, 5xx, or a 4xx other than 404 and 410.
type StatusError struct {
	URL        string
	Status     int
	Attempts   int
	RetryAfter time.Duration // the last Retry-After the origin sent, if any
	Billed     int           // requests a paid back end charged for the failed page
}

// Error describes the failure.
func (e *StatusError) Error() string {
	return fmt.Sprintf("fetch %s: HTTP %d %s after %d attempt(s)", e.URL, e.Status, http.StatusText(e.Status), e.Attempts)
}

// Temporary reports whether a later attempt may succeed (429 and 5xx).
func (e *StatusError) Temporary() bool {
	return e.Status == http.StatusTooManyRequests || e.Status >= 500
}

// ErrTooLarge is matched by errors.Is for a *TooLargeError.
var ErrTooLarge = errors.New("response too large")

// TooLargeError is a body that exceeded the fetcher's size limit. The body
// was cut off at Limit bytes and the connection released.
type TooLargeError struct {
	URL   string
	Limit int64
}

// Error describes the failure.
func (e *TooLargeError) Error() string {
	return fmt.Sprintf("fetch %s: too large: body exceeds %d bytes", e.URL, e.Limit)
}

// Is makes errors.Is(err, ErrTooLarge) true.
func (e *TooLargeError) Is(target error) bool { return target == ErrTooLarge }

// ErrTimeout is matched by errors.Is for a *TimeoutError.
var ErrTimeout = errors.New("request timed out")

// TimeoutError is a request that got no complete answer, body included,
// within its bound (HTTP.Timeout, Polite.Timeout or Polite.RobotsTimeout;
// the engine sets them from WEB_REQUEST_TIMEOUT_MS). A later attempt may
// succeed. It matches ErrTimeout and context.DeadlineExceeded.
type TimeoutError struct {
	URL   string
	After time.Duration // the bound that ran out
}

// Error describes the failure.
func (e *TimeoutError) Error() string {
	return fmt.Sprintf("fetch %s: no complete answer within the request timeout of %s", e.URL, e.After)
}

// Is makes errors.Is(err, ErrTimeout) and errors.Is(err,
// context.DeadlineExceeded) true.
func (e *TimeoutError) Is(target error) bool {
	return target == ErrTimeout || target == context.DeadlineExceeded
}

// Timeout reports true, as net.Error does for timeouts.
func (e *TimeoutError) Timeout() bool { return true }

// Temporary reports true: a later attempt may succeed.
func (e *TimeoutError) Temporary() bool { return true }

// requestTimeoutKey holds the bound WithRequestTimeout puts in a context.
type requestTimeoutKey struct{}

// WithRequestTimeout returns a context that asks every request made on it
// to be bounded by d, body included: a Fetcher (or any client) that sends
// requests of its own reads the bound with RequestTimeout and applies it to
// each request it sends, never to its waits between requests (pacing,
// backoff, polling). The engine puts Limits.RequestTimeout
// (WEB_REQUEST_TIMEOUT_MS) in the context of every run, so a back end such
// as a Geonode client is bounded like the engine's own requests. d <= 0
// leaves ctx as it is.
func WithRequestTimeout(ctx context.Context, d time.Duration) context.Context {
	if d <= 0 {
		return ctx
	}
	return context.WithValue(ctx, requestTimeoutKey{}, d)
}

// RequestTimeout returns the bound WithRequestTimeout put in ctx, and
// whether there is one.
func RequestTimeout(ctx context.Context) (time.Duration, bool) {
	d, ok := ctx.Value(requestTimeoutKey{}).(time.Duration)
	return d, ok
}
