package fetch

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"mime"
	"net/http"
	"net/url"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/recrawl/recrawl/clock"
)

// ErrHybridConfig is returned by Hybrid.Fetch when Direct or Remote is nil.
var ErrHybridConfig = errors.New("fetch: Hybrid needs both a Direct and a Remote fetcher")

// Hybrid puts a free direct request to the origin in front of a paid remote
// back end (such as the Geonode Scraper API, which exposes no origin
// validators and bills every extraction), so that unchanged pages cost
// nothing.
//
// For each request Hybrid first asks the origin through Direct, with the
// row's validators (a conditional GET), or without any when the row has
// none (which learns the validators):
//   - 304, 404 and 410 are final: returned as they are, Remote is not
//     called and Billed is 0;
//   - a 2xx means the page changed (or was never seen): its body is
//     fetched through Remote, and the returned Response carries Remote's
//     body, status and Billed but the origin's ETag and Last-Modified from
//     the direct answer, so the caller stores validators that the next
//     conditional request can use. The direct body is not returned: a page's
//     content must come from one source, or the content hash would flip
//     between two renderings of the same page and report false changes (set
//     DirectBody to choose the free direct body instead).
//   - a block (a *StatusError with 403, 429 or 5xx, or a 2xx that is a bot
//     challenge such as Cloudflare's "Just a moment..." page, see
//     IsChallenge) sends the request to Remote, validators included, and
//     marks the host blocked: its later requests go straight to Remote,
//     for BlockTTL or, when it is zero, for the Hybrid's life.
//
// Any other Direct error (a transport error, a robots.txt refusal such as
// Polite's *DeniedError, a body over the size cap) is returned as it is: Remote is not a way around the
// site's rules. Errors of Remote are returned as they are (a fatal one, such
// as Geonode's payment-required error, must reach the engine).
//
// Response.Attempts counts the direct and remote requests together.
// A Hybrid is safe for concurrent use; it must not be copied after first
// use, and its fields must not change after it.
type Hybrid struct {
	// Direct asks the origin itself; the engine passes a polite fetcher
	// (robots.txt, pacing) here. Required.
	Direct Fetcher
	// Remote is the paid back end. Required.
	Remote Fetcher
	// DirectBody returns a usable direct 2xx answer as it is, so Remote
	// is called only for blocked hosts. Content then comes from Direct for
	// open sites and from Remote for blocked ones.
	DirectBody bool
	// BlockTTL is how long a host that blocked a direct request stays on
	// Remote; 0 means for the Hybrid's life.
	BlockTTL time.Duration
	// Challenge reports whether a direct 2xx answer is a bot challenge
	// rather than the page (default IsChallenge).
	Challenge func(*Response) bool
	// Clock times BlockTTL (default: the system clock).
	Clock clock.Clock
	// Logger receives block decisions at info level (default: discard).
	Logger *slog.Logger

	mu      sync.Mutex
	blocked map[string]time.Time // host → when it blocked
}

// Fetch implements Fetcher.
func (h *Hybrid) Fetch(ctx context.Context, req Request) (*Response, error) {
	if h.Direct == nil || h.Remote == nil {
		return nil, ErrHybridConfig
	}
	host := hostKey(req.URL)
	if host != "" && h.isBlocked(host) {
		return h.Remote.Fetch(ctx, req)
	}
	d, err := h.Direct.Fetch(ctx, req)
	if err != nil {
		var se *StatusError
		if ctx.Err() == nil && errors.As(err, &se) && blockStatus(se.Status) {
			h.block(ctx, host, req.URL, "HTTP "+http.StatusText(se.Status))
			return h.viaRemote(ctx, req, se.Attempts)
		}
		return nil, err
	}
	if d.NotModified() || d.Gone() {
		return d, nil
	}
	if h.challenge(d) {
		h.block(ctx, host, req.URL, "bot challenge")
		return h.viaRemote(ctx, req, d.Attempts)
	}
	if h.DirectBody {
		return d, nil
	}
	// The origin reports a change, or offers no validators: the content
	// comes from Remote. The row's validators are not forwarded: the
	// direct answer just showed they no longer match.
	r, err := h.Remote.Fetch(ctx, Request{URL: req.URL})
	if err != nil {
		return nil, err
	}
	out := *r
	if out.Status >= 200 && out.Status < 300 {
		out.ETag, out.LastModified = d.ETag, d.LastModified
		if out.Header == nil {
			out.Header = d.Header
		}
	}
	out.Attempts = max(d.Attempts, 1) + max(r.Attempts, 1)
	return &out, nil
}

// viaRemote fetches a blocked request through Remote, validators included
// (a remote back end that forwards them may get a 304).
func (h *Hybrid) viaRemote(ctx context.Context, req Request, directAttempts int) (*Response, error) {
	r, err := h.Remote.Fetch(ctx, req)
	if err != nil {
		return nil, err
	}
	out := *r
	out.Attempts = max(directAttempts, 1) + max(r.Attempts, 1)
	return &out, nil
}

// BlockedHosts returns the hosts currently sent straight to Remote, sorted.
func (h *Hybrid) BlockedHosts() []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	now := h.now()
	var out []string
	for host, since := range h.blocked {
		if h.BlockTTL <= 0 || now.Sub(since) < h.BlockTTL {
			out = append(out, host)
		}
	}
	sort.Strings(out)
	return out
}

func (h *Hybrid) now() time.Time { return clock.Or(h.Clock).Now() }

func (h *Hybrid) isBlocked(host string) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	since, ok := h.blocked[host]
	if !ok {
		return false
	}
	if h.BlockTTL > 0 && h.now().Sub(since) >= h.BlockTTL {
		delete(h.blocked, host)
		return false
	}
	return true
}

func (h *Hybrid) block(ctx context.Context, host, pageURL, reason string) {
	if host == "" {
		return
	}
	h.mu.Lock()
	if h.blocked == nil {
		h.blocked = map[string]time.Time{}
	}
	_, already := h.blocked[host]
	h.blocked[host] = h.now()
	h.mu.Unlock()
	if !already && h.Logger != nil {
		h.Logger.InfoContext(ctx, "host blocks direct requests; using the remote fetcher", "host", host, "url", pageURL, "reason", reason, "ttl", h.BlockTTL)
	}
}

func (h *Hybrid) challenge(r *Response) bool {
	if h.Challenge != nil {
		return h.Challenge(r)
	}
	return IsChallenge(r)
}

// blockStatus reports the direct statuses that mean "not from here": 403,
// 429 and 5xx.
func blockStatus(status int) bool {
	return status == http.StatusForbidden || status == http.StatusTooManyRequests || status >= 500
}

// hostKey is the lower-cased host[:port] of a URL, or "".
func hostKey(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return ""
	}
	return strings.ToLower(u.Host)
}

// challengeMaxBytes bounds the bodies IsChallenge inspects: challenge pages
// are small (a few kB to a few tens of kB), real pages that merely mention
// the markers are usually larger. Only the first challengeScanBytes are
// scanned: the markers sit in the head and the first scripts.
const (
	challengeMaxBytes  = 256 << 10
	challengeScanBytes = 64 << 10
)

// challengeMarkers are strings only bot-challenge interstitials contain:
// Cloudflare (managed challenge, JS challenge, "Attention Required"),
// DataDome, PerimeterX, Imperva/Incapsula, DDoS-Guard, Sucuri and AWS WAF.
var challengeMarkers = [][]byte{
	[]byte("<title>just a moment...</title>"),
	[]byte("/cdn-cgi/challenge-platform/"),
	[]byte("window._cf_chl_opt"),
	[]byte("cf-browser-verification"),
	[]byte("<title>attention required! | cloudflare</title>"),
	[]byte("captcha-delivery.com"),
	[]byte("_pxcaptcha"),
	[]byte("/_incapsula_resource"),
	[]byte("<title>ddos-guard</title>"),
	[]byte("sucuri website firewall - access denied"),
	[]byte("awswafcookiedomainlist"),
}

// IsChallenge reports whether a 2xx answer is a bot challenge instead of
// the page: a "cf-mitigated: challenge" header, or an HTML body of at most
// 256 KiB whose first 64 KiB carry a marker of a known challenge page (Cloudflare's
// "Just a moment...", its challenge-platform script, DataDome, PerimeterX,
// Imperva, DDoS-Guard, Sucuri, AWS WAF).
func IsChallenge(r *Response) bool {
	if r == nil {
		return false
	}
	if strings.EqualFold(r.Header.Get("Cf-Mitigated"), "challenge") {
		return true
	}
	mt, _, _ := mime.ParseMediaType(r.ContentType)
	if (mt != "" && mt != "text/html" && mt != "application/xhtml+xml") || len(r.Body) == 0 || len(r.Body) > challengeMaxBytes {
		return false
	}
	body := bytes.ToLower(r.Body[:min(len(r.Body), challengeScanBytes)])
	for _, m := range challengeMarkers {
		if bytes.Contains(body, m) {
			return true
		}
	}
	return false
}
