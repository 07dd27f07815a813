package geonode

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/recrawl/recrawl/clock"
	"github.com/recrawl/recrawl/fetch"
	"github.com/recrawl/recrawl/internal/retry"
)

// call is one API operation.
type call struct {
	method string
	path   string // absolute path on the base URL, query included if any
	query  url.Values
	body   any
	// page is the page URL the call is about, for errors.
	page string
	// retryTransport allows retrying after a transport error. It is off
	// for batch creation: a request that reached the API before the
	// connection broke may have created a job, and a second job would
	// bill every URL twice.
	retryTransport bool
}

func (k call) op() string {
	p := k.path
	if i := strings.IndexByte(p, '?'); i >= 0 {
		p = p[:i]
	}
	return k.method + " " + p
}

// answer is a 2xx API response.
type answer struct {
	status int
	body   []byte
}

// errTooLarge marks an API body over the response cap.
var errTooLarge = errors.New("API response exceeds the size limit")

// send makes one HTTP exchange. It returns the status, body and
// Retry-After of any complete answer, or a transport error.
func (c *Client) send(ctx context.Context, k call) (status int, body []byte, retryAfter time.Duration, err error) {
	u, err := c.endpoint(k.path)
	if err != nil {
		return 0, nil, -1, err
	}
	if len(k.query) > 0 {
		q := u.Query()
		for key, vs := range k.query {
			q[key] = vs
		}
		u.RawQuery = q.Encode()
	}
	var rd io.Reader
	if k.body != nil {
		b, err := json.Marshal(k.body)
		if err != nil {
			return 0, nil, -1, fmt.Errorf("geonode: %s: encoding the request: %w", k.op(), err)
		}
		rd = bytes.NewReader(b)
	}
	timeout := c.cfg.requestTimeout
	if d, ok := fetch.RequestTimeout(ctx); ok && d < timeout {
		timeout = d
	}
	bound := k.page
	if bound == "" {
		bound = k.op()
	}
	ctx, cancel := context.WithTimeoutCause(ctx, timeout, &fetch.TimeoutError{URL: bound, After: timeout})
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, k.method, u.String(), rd)
	if err != nil {
		return 0, nil, -1, fmt.Errorf("geonode: %s: %w", k.op(), err)
	}
	req.Header.Set("X-Api-Key", c.cfg.key.v)
	req.Header.Set("Accept", "application/json")
	req.Header.Set("User-Agent", c.cfg.userAgent)
	if rd != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := c.cfg.httpClient.Do(req)
	if err != nil {
		return 0, nil, -1, fmt.Errorf("geonode: %s: %w", k.op(), err)
	}
	defer resp.Body.Close()
	body, err = io.ReadAll(io.LimitReader(resp.Body, c.cfg.maxResponseBytes+1))
	if err != nil {
		return 0, nil, -1, fmt.Errorf("geonode: %s: reading the answer: %w", k.op(), err)
	}
	if int64(len(body)) > c.cfg.maxResponseBytes {
		return resp.StatusCode, nil, -1, fmt.Errorf("geonode: %s: %w (%d bytes; raise WithMaxResponseBytes)", k.op(), errTooLarge, c.cfg.maxResponseBytes)
	}
	return resp.StatusCode, body, parseRetryAfter(resp.Header.Get("Retry-After"), c.cfg.clock.Now()), nil
}

// do runs a call with retries: 429 and 5xx (unless the body says
// retryable: false), any status whose body says retryable: true, and
// transport errors when the call allows it. It returns the 2xx answer and
// the number of requests sent.
func (c *Client) do(ctx context.Context, k call) (*answer, int, error) {
	log := c.cfg.logger
	for n := 1; ; n++ {
		status, body, retryAfter, err := c.send(ctx, k)
		if err == nil && status >= 200 && status < 300 {
			log.DebugContext(ctx, "geonode request", "op", k.op(), "status", status, "attempt", n)
			return &answer{status: status, body: body}, n, nil
		}
		retry := false
		switch {
		case err != nil:
			if ctx.Err() != nil {
				return nil, n, err
			}
			retry = k.retryTransport && !errors.Is(err, errTooLarge)
		default:
			ae := decodeAPIError(k.op(), k.page, status, body, retryAfter)
			ae.Attempts = n
			err = ae
			retry = ae.Retryable
		}
		log.DebugContext(ctx, "geonode request failed", "op", k.op(), "status", status, "attempt", n, "retry", retry && n < c.cfg.maxAttempts, "err", err)
		if !retry || n >= c.cfg.maxAttempts {
			return nil, n, err
		}
		wait := c.backoff(n)
		if retryAfter >= 0 {
			wait = min(retryAfter, c.cfg.maxRetryAfter)
		}
		log.DebugContext(ctx, "geonode retry", "op", k.op(), "attempt", n, "wait", wait)
		if serr := clock.Sleep(ctx, c.cfg.clock, wait); serr != nil {
			return nil, n, fmt.Errorf("geonode: %s: waiting to retry: %w (last error: %v)", k.op(), serr, err)
		}
	}
}

// backoff is the wait before attempt n+1 without Retry-After: a random
// duration in [0, min(maxBackoff, baseBackoff·2ⁿ)] (full jitter).
func (c *Client) backoff(n int) time.Duration {
	return retry.Backoff(n, c.cfg.baseBackoff, c.cfg.maxBackoff)
}

// parseRetryAfter reads a Retry-After value (see retry.After); -1 when it
// is absent or unusable.
func parseRetryAfter(v string, now time.Time) time.Duration {
	if d, ok := retry.After(v, now, 0); ok {
		return d
	}
	return -1
}

// endpoint resolves an API path against the base URL.
func (c *Client) endpoint(path string) (*url.URL, error) {
	ref, err := url.Parse(path)
	if err != nil {
		return nil, fmt.Errorf("geonode: bad API path %q: %w", path, err)
	}
	u := *c.base
	u.Path = c.base.Path + ref.Path
	u.RawPath = ""
	if ref.RawPath != "" {
		u.RawPath = c.base.EscapedPath() + ref.RawPath
	}
	u.RawQuery = ref.RawQuery
	return &u, nil
}

// jobPath returns the path to poll a job: the answer's status_url when it
// points at the API itself, else fallback. A status_url on another host is
// ignored, so the API key is never sent anywhere but the configured base.
func (c *Client) jobPath(statusURL, fallback string) string {
	if statusURL == "" {
		return fallback
	}
	u, err := url.Parse(statusURL)
	if err != nil || u.Path == "" || !strings.HasPrefix(u.Path, "/") && !u.IsAbs() {
		return fallback
	}
	if u.IsAbs() || u.Host != "" {
		if !strings.EqualFold(u.Host, c.base.Host) || u.Scheme != c.base.Scheme {
			return fallback
		}
		if c.base.Path != "" && !strings.HasPrefix(u.Path, c.base.Path+"/") {
			return fallback
		}
		u.Path = strings.TrimPrefix(u.Path, c.base.Path)
	} else if c.base.Path != "" && strings.HasPrefix(u.Path, c.base.Path+"/") {
		// A status_url that already includes the base URL's path prefix.
		u.Path = strings.TrimPrefix(u.Path, c.base.Path)
	}
	out := u.EscapedPath()
	if strings.Contains(out, "..") {
		return fallback
	}
	if u.RawQuery != "" {
		out += "?" + u.RawQuery
	}
	return out
}
