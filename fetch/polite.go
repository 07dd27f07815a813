package fetch

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/recrawl/recrawl/clock"
	"github.com/recrawl/recrawl/robots"
)

// Defaults of Polite's zero fields.
const (
	DefaultRobotsTTL   = 24 * time.Hour
	DefaultPerHost     = 1
	maxRobotsRedirects = 5
)

// ErrRobotsUnavailable is matched by errors.Is for a *RobotsError.
var ErrRobotsUnavailable = errors.New("robots.txt unavailable")

// RobotsError means a host's robots.txt could not be read: a 5xx (or 429)
// answer, a timeout or a connection error. Its rules are unknown, so
// nothing on the host may be crawled (RFC 9309 2.3.1.4); the engine fails
// the source's run.
type RobotsError struct {
	URL    string // the robots.txt URL
	Status int    // the HTTP status, 0 for transport errors
	Err    error  // the transport error, if any
}

// Error describes the failure.
func (e *RobotsError) Error() string {
	if e.Status != 0 {
		return fmt.Sprintf("robots.txt %s answered HTTP %d: its rules cannot be read, so the host is not crawled (set WEB_RESPECT_ROBOTS=0 only for a site you own)", e.URL, e.Status)
	}
	return fmt.Sprintf("robots.txt %s unreachable: %v: its rules cannot be read, so the host is not crawled", e.URL, e.Err)
}

// Unwrap returns the transport error.
func (e *RobotsError) Unwrap() error { return e.Err }

// Is makes errors.Is(err, ErrRobotsUnavailable) true.
func (e *RobotsError) Is(target error) bool { return target == ErrRobotsUnavailable }

// ErrDenied is matched by errors.Is for a *DeniedError.
var ErrDenied = errors.New("denied by robots.txt")

// DeniedError is a request robots.txt does not allow. It was not sent.
type DeniedError struct{ URL string }

// Error describes the failure.
func (e *DeniedError) Error() string { return "robots.txt disallows " + e.URL }

// Is makes errors.Is(err, ErrDenied) true.
func (e *DeniedError) Is(target error) bool { return target == ErrDenied }

// Polite is an http.RoundTripper that makes a client polite to the hosts
// it talks to: it obeys robots.txt (RFC 9309), spaces requests to one host
// by at least Delay (raised, never lowered, by the host's Crawl-delay), and
// bounds concurrent requests per host. Requests to other hosts proceed
// independently. Safe for concurrent use; set its fields before first use.
//
// robots.txt is fetched once per host and kept for RobotsTTL. A 2xx answer
// is parsed; a 4xx (404 included) means no restrictions; a 5xx, a 429, a
// timeout or a connection error is a *RobotsError for every request to the
// host until a later attempt succeeds. Redirects of robots.txt are
// followed up to five hops. /robots.txt itself is always allowed.
type Polite struct {
	// Base sends the requests (default http.DefaultTransport).
	Base http.RoundTripper
	// UserAgent is matched against robots.txt groups by its product token
	// and set on requests that carry none.
	UserAgent string
	// IgnoreRobots switches robots.txt off entirely (WEB_RESPECT_ROBOTS=0).
	IgnoreRobots bool
	// Delay is the minimum time between the starts of two requests to one
	// host (WEB_REQUEST_DELAY_MS).
	Delay time.Duration
	// PerHost bounds concurrent requests to one host (default 1).
	PerHost int
	// RobotsTTL is how long a host's robots.txt is kept (default 24h).
	RobotsTTL time.Duration
	// Timeout bounds each request Polite sends, from the moment the request
	// gets its host's pacing slot until its body is closed (headers and
	// body read included; the wait for the slot is not). 0 means no bound
	// of Polite's own. A request sent by an HTTP fetcher is bounded by the
	// fetcher's Timeout instead. Timeouts are measured in real time, not on
	// Clock: they bound network I/O, which a fake clock does not move. A
	// request that runs out of time fails with a *TimeoutError.
	Timeout time.Duration
	// RobotsTimeout bounds each robots.txt request the same way (default
	// DefaultTimeout).
	RobotsTimeout time.Duration
	// MaxCrawlDelay caps a Crawl-delay (default robots.DefaultMaxCrawlDelay).
	MaxCrawlDelay time.Duration
	// Clock times pacing waits and the robots TTL.
	Clock clock.Clock
	// Logger receives robots decisions at debug level.
	Logger *slog.Logger
	// Admit, when set, is called for every request robots.txt allows (not
	// for robots.txt itself), before it waits for its slot. An error
	// refuses the request unsent; the engine uses it for the page cap.
	Admit func(*http.Request) error
	// Unsent, when set, is called for a request Admit let through that
	// never reached a server: its connection could not be opened (a dial
	// a Guard refused with a *PrivateAddressError, or any other dial
	// error). err is the RoundTrip's error. The engine gives the request
	// back to the page budget and does not count it in Report.Requests.
	Unsent func(req *http.Request, err error)

	mu    sync.Mutex
	hosts map[politeHost]*hostState
}

// politeHost names a host's state: scheme and host, lower case.
type politeHost struct{ scheme, host string }

type hostState struct {
	robotsMu sync.Mutex // held while robots.txt loads: one fetch per host
	rules    *robots.Rules
	loadedAt time.Time
	fetches  int

	paceMu sync.Mutex
	next   time.Time // earliest start of the next request

	sem chan struct{}
}

func (p *Polite) host(u *url.URL) *hostState {
	// strings.ToLower returns a lower-case string itself: no allocation
	// per request for the usual URL.
	key := politeHost{strings.ToLower(u.Scheme), strings.ToLower(u.Host)}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.hosts == nil {
		p.hosts = map[politeHost]*hostState{}
	}
	h := p.hosts[key]
	if h == nil {
		h = &hostState{sem: make(chan struct{}, orDefault(p.PerHost, DefaultPerHost))}
		p.hosts[key] = h
	}
	return h
}

func (p *Polite) base() http.RoundTripper {
	if p.Base != nil {
		return p.Base
	}
	return http.DefaultTransport
}

func (p *Polite) logger() *slog.Logger {
	if p.Logger != nil {
		return p.Logger
	}
	return discard
}

// Rules returns the robots.txt rules of rawURL's host, fetching them if
// they are not cached. With IgnoreRobots it returns nil (allow all).
func (p *Polite) Rules(ctx context.Context, rawURL string) (*robots.Rules, error) {
	if p.IgnoreRobots {
		return nil, nil
	}
	u, err := url.Parse(rawURL)
	if err != nil || u.Host == "" {
		return nil, &badRequestError{fmt.Errorf("fetch: bad URL %q", rawURL)}
	}
	return p.rules(ctx, u, p.host(u))
}

// Allowed reports whether robots.txt allows rawURL, fetching the host's
// robots.txt if needed. The error is a *RobotsError when the rules could not
// be read.
func (p *Polite) Allowed(ctx context.Context, rawURL string) (bool, error) {
	rules, err := p.Rules(ctx, rawURL)
	if err != nil {
		return false, err
	}
	return rules.Allowed(p.UserAgent, rawURL), nil
}

// RobotsFetches returns how many times robots.txt of rawURL's host was
// requested (redirect hops not counted).
func (p *Polite) RobotsFetches(rawURL string) int {
	u, err := url.Parse(rawURL)
	if err != nil {
		return 0
	}
	h := p.host(u)
	h.robotsMu.Lock()
	defer h.robotsMu.Unlock()
	return h.fetches
}

func (p *Polite) rules(ctx context.Context, u *url.URL, h *hostState) (*robots.Rules, error) {
	h.robotsMu.Lock()
	defer h.robotsMu.Unlock()
	now := clock.Or(p.Clock).Now()
	if !h.loadedAt.IsZero() && now.Sub(h.loadedAt) < orDefault(p.RobotsTTL, DefaultRobotsTTL) {
		return h.rules, nil
	}
	h.fetches++
	rules, err := p.loadRobots(ctx, u, h)
	if err != nil {
		return nil, err
	}
	if p.MaxCrawlDelay > 0 && rules != nil {
		rules.MaxCrawlDelay = p.MaxCrawlDelay
	}
	h.rules, h.loadedAt = rules, now
	return rules, nil
}

// loadRobots fetches robots.txt, following up to five redirects. Each hop
// is bounded by RobotsTimeout from the end of its pacing wait.
func (p *Polite) loadRobots(ctx context.Context, u *url.URL, h *hostState) (*robots.Rules, error) {
	target := &url.URL{Scheme: u.Scheme, Host: u.Host, Path: "/robots.txt"}
	for hop := 0; ; hop++ {
		if target.Host == u.Host {
			// The robots request is paced like any other to the host.
			if err := p.pace(ctx, h, 0); err != nil {
				return nil, &RobotsError{URL: target.String(), Err: err}
			}
		}
		rules, next, err := p.robotsHop(ctx, target, u)
		if err != nil || next == nil {
			return rules, err
		}
		if hop+1 >= maxRobotsRedirects {
			// RFC 9309 2.3.1.2: past five redirects robots.txt may be
			// assumed unavailable, which means no restrictions.
			p.logger().DebugContext(ctx, "robots.txt redirects too often; no restrictions", "url", u.Host)
			return nil, nil
		}
		target = next
	}
}

// robotsHop sends one robots.txt request. next is the redirect target to
// follow, nil when the answer settled the rules.
func (p *Polite) robotsHop(ctx context.Context, target, u *url.URL) (rules *robots.Rules, next *url.URL, err error) {
	d := orDefault(p.RobotsTimeout, DefaultTimeout)
	ctx, cancel := context.WithTimeoutCause(ctx, d, &TimeoutError{URL: target.String(), After: d})
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, target.String(), nil)
	if err != nil {
		return nil, nil, &RobotsError{URL: target.String(), Err: err}
	}
	if p.UserAgent != "" {
		req.Header.Set("User-Agent", p.UserAgent)
	}
	resp, err := p.base().RoundTrip(req)
	if err != nil {
		return nil, nil, &RobotsError{URL: target.String(), Err: err}
	}
	defer resp.Body.Close() // unread bytes past the limit are dropped
	switch {
	case resp.StatusCode >= 300 && resp.StatusCode < 400 && resp.Header.Get("Location") != "":
		loc, err := target.Parse(resp.Header.Get("Location"))
		drain(resp.Body)
		if err != nil || (loc.Scheme != "http" && loc.Scheme != "https") {
			return nil, nil, nil // an unusable redirect: robots.txt is unavailable
		}
		return nil, loc, nil
	case resp.StatusCode >= 200 && resp.StatusCode < 300:
		body, err := io.ReadAll(io.LimitReader(resp.Body, robots.MaxSize))
		if err != nil {
			return nil, nil, &RobotsError{URL: target.String(), Err: err}
		}
		return robots.Parse(body), nil, nil
	case resp.StatusCode == http.StatusTooManyRequests || resp.StatusCode >= 500:
		drain(resp.Body)
		return nil, nil, &RobotsError{URL: target.String(), Status: resp.StatusCode}
	default: // other 3xx without Location, 4xx: unavailable, no restrictions
		drain(resp.Body)
		p.logger().DebugContext(ctx, "robots.txt unavailable; no restrictions", "url", target.String(), "status", resp.StatusCode)
		return nil, nil, nil
	}
}

// pace waits for the host's next request slot: request starts to one host
// are at least max(Delay, crawlDelay) apart.
func (p *Polite) pace(ctx context.Context, h *hostState, crawlDelay time.Duration) error {
	clk := clock.Or(p.Clock)
	delay := max(p.Delay, crawlDelay)
	h.paceMu.Lock()
	now := clk.Now()
	start := now
	if h.next.After(start) {
		start = h.next
	}
	h.next = start.Add(delay)
	h.paceMu.Unlock()
	return clock.Sleep(ctx, clk, start.Sub(now))
}

// RoundTrip implements http.RoundTripper.
func (p *Polite) RoundTrip(req *http.Request) (*http.Response, error) {
	ctx := req.Context()
	h := p.host(req.URL)
	var rules *robots.Rules
	if !p.IgnoreRobots && req.URL.Path != "/robots.txt" {
		var err error
		if rules, err = p.rules(ctx, req.URL, h); err != nil {
			return nil, err
		}
		if !rules.Allowed(p.UserAgent, req.URL.String()) {
			return nil, &DeniedError{URL: req.URL.String()}
		}
	}
	admitted := false
	if p.Admit != nil && req.URL.Path != "/robots.txt" {
		if err := p.Admit(req); err != nil {
			return nil, err
		}
		admitted = true
	}
	unsent := func(err error) {
		if admitted && p.Unsent != nil {
			p.Unsent(req, err)
		}
	}
	select {
	case h.sem <- struct{}{}:
	case <-ctx.Done():
		unsent(ctx.Err())
		return nil, ctx.Err()
	}
	if err := p.pace(ctx, h, rules.CrawlDelay(p.UserAgent)); err != nil {
		<-h.sem
		unsent(err)
		return nil, err
	}
	// The request's own time starts now that it has its slot.
	cancel := context.CancelFunc(noop)
	if d := p.timeoutOf(ctx); d > 0 {
		var tctx context.Context
		tctx, cancel = context.WithTimeoutCause(ctx, d, &TimeoutError{URL: requestURL(ctx, req), After: d})
		req = req.WithContext(tctx)
	}
	if p.UserAgent != "" && req.Header.Get("User-Agent") == "" {
		req = req.Clone(req.Context())
		req.Header.Set("User-Agent", p.UserAgent)
	}
	resp, err := p.base().RoundTrip(req)
	if err != nil {
		cancel()
		<-h.sem
		if notSent(err) {
			unsent(err)
		}
		return nil, err
	}
	resp.Body = &releaseBody{ReadCloser: resp.Body, cancel: cancel, sem: h.sem}
	return resp, nil
}

func noop() {}

// requestURL is req's URL as the caller wrote it: the one an HTTP fetcher
// put in the context for its first hop (no String of the parsed URL per
// request), else req.URL.String().
func requestURL(ctx context.Context, req *http.Request) string {
	if u, ok := ctx.Value(urlKey{}).(string); ok && req.Response == nil {
		return u
	}
	return req.URL.String()
}

// notSent reports whether a request's error shows it never reached a
// server: its connection was refused at dial time, by a Guard (a
// *PrivateAddressError) or by the network (a *net.OpError of a dial).
func notSent(err error) bool {
	if errors.Is(err, ErrPrivateAddress) {
		return true
	}
	var oe *net.OpError
	return errors.As(err, &oe) && oe.Op == "dial"
}

// timeoutOf is the bound of a request: the one an HTTP fetcher put in its
// context, else Timeout.
func (p *Polite) timeoutOf(ctx context.Context) time.Duration {
	if d, ok := ctx.Value(timeoutKey{}).(time.Duration); ok {
		return d
	}
	return p.Timeout
}

// timesRequests marks Polite as a transport that starts a request's
// timeout once the request has its slot (see requestTimer).
func (p *Polite) timesRequests() {}

// releaseBody frees the host's concurrency slot, and stops the request's
// timer, when the body is closed.
type releaseBody struct {
	io.ReadCloser
	once   sync.Once
	cancel context.CancelFunc
	sem    chan struct{}
}

func (b *releaseBody) Close() error {
	err := b.ReadCloser.Close()
	b.once.Do(b.release)
	return err
}

func (b *releaseBody) release() { b.cancel(); <-b.sem }
