package recrawl

import (
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/recrawl/recrawl/discover"
)

// Limits are the instance-wide caps of every run, read from the WEB_*
// environment variables by LimitsFromEnv (see .env.example). Hitting
// MaxPages or MaxDepth ends a run where it is, successfully, and
// Report.StoppedBy names the cap.
type Limits struct {
	// MaxPages caps the requests a run sends to the site's pages (404s,
	// failures and script-only rejects included; robots-denied and
	// off-host URLs, never requested, and requests whose connection was
	// refused at dial time, which never reached the site, are not
	// counted), and the nested
	// documents discovery reads. 0 means no cap. WEB_MAX_PAGES, default 1000.
	MaxPages int
	// MaxDepth caps how deep discovery follows nested sitemaps and crawl
	// links. 0 means no cap. WEB_MAX_DEPTH, default 5.
	MaxDepth int
	// RequestDelay is the minimum time between two requests to the same
	// host; a robots.txt Crawl-delay can raise it, never lower it.
	// WEB_REQUEST_DELAY_MS, default 250 ms.
	RequestDelay time.Duration
	// RequestTimeout bounds one request, body included.
	// WEB_REQUEST_TIMEOUT_MS, default 30 s.
	RequestTimeout time.Duration
	// MaxBytes caps one page's response body (pages of the due queue and
	// crawled pages alike); a larger page is cut off and fails at the fetch
	// stage as too large. WEB_MAX_BYTES, default 10 MiB.
	MaxBytes int64
	// MaxDocumentBytes caps one discovery document: a sitemap or sitemap
	// index (uncompressed, and each compressed layer), an llms.txt file, an
	// entry document being detected. A larger document is cut off and the
	// discovery is incomplete. WEB_MAX_DOCUMENT_BYTES, default 50 MiB (the
	// sitemaps.org limit of one sitemap).
	MaxDocumentBytes int64
	// MaxSitemapChildren caps the child sitemaps discovery follows from one
	// sitemap index; the rest are counted as skipped (SkipMaxSitemapChildren)
	// and the discovery is incomplete. 0 means no cap.
	// WEB_MAX_SITEMAP_CHILDREN, default 50000 (the sitemaps.org limit of
	// one index).
	MaxSitemapChildren int
	// MaxSitemaps caps the child sitemaps discovery queues in one run, over
	// all indexes; the rest are counted as skipped (SkipMaxSitemaps) and
	// the discovery is incomplete. With MaxSitemapChildren it bounds the
	// memory of a sitemap index tree that fans out without end. 0 means no
	// cap. WEB_MAX_SITEMAPS, default 10000.
	MaxSitemaps int
	// RespectRobots obeys robots.txt. WEB_RESPECT_ROBOTS, default 1.
	RespectRobots bool
	// HostConcurrency bounds the requests in flight to one host at a time
	// (parallel connections). RequestDelay still spaces the starts of two
	// requests to the host, and a Crawl-delay still raises it. 0 means 1.
	// WEB_HOST_CONCURRENCY, default 1.
	HostConcurrency int
	// BlockPrivate refuses connections to loopback, private (RFC 1918),
	// link-local, unique-local (fc00::/7), CGNAT (100.64.0.0/10),
	// cloud-metadata and other non-public addresses, checked at dial time
	// after DNS resolution, for every request the engine's client sends
	// (robots.txt, discovery documents, crawled pages, pages, every
	// redirect): a refused request fails with a *fetch.PrivateAddressError
	// naming the address, and nothing is sent. Set it for a service that
	// accepts entry URLs from untrusted users. It needs HTTPClient's
	// transport to be an *http.Transport (or none), whose proxy is then not
	// used. A Config.Fetcher of your own is not guarded unless it sends
	// through Engine.Client; a Config.Remote back end fetches from its own
	// servers. WEB_BLOCK_PRIVATE, default 0.
	BlockPrivate bool
}

// The environment variables LimitsFromEnv reads.
const (
	EnvMaxPages        = "WEB_MAX_PAGES"
	EnvMaxDepth        = "WEB_MAX_DEPTH"
	EnvRequestDelay    = "WEB_REQUEST_DELAY_MS"
	EnvRequestTimeout  = "WEB_REQUEST_TIMEOUT_MS"
	EnvMaxBytes        = "WEB_MAX_BYTES"
	EnvRespectRobots   = "WEB_RESPECT_ROBOTS"
	EnvHostConcurrency = "WEB_HOST_CONCURRENCY"

	EnvMaxDocumentBytes   = "WEB_MAX_DOCUMENT_BYTES"
	EnvMaxSitemapChildren = "WEB_MAX_SITEMAP_CHILDREN"
	EnvMaxSitemaps        = "WEB_MAX_SITEMAPS"
	EnvBlockPrivate       = "WEB_BLOCK_PRIVATE"
)

// Skip reasons of the sitemap caps, counted in Report.Skipped for each
// child sitemap not followed; Report.StoppedBy names the same cap.
const (
	SkipMaxSitemapChildren = discover.SkipMaxSitemapChildren // Limits.MaxSitemapChildren
	SkipMaxSitemaps        = discover.SkipMaxSitemaps        // Limits.MaxSitemaps
)

// DefaultLimits returns the defaults of every cap.
func DefaultLimits() Limits {
	return Limits{
		MaxPages:        1000,
		MaxDepth:        5,
		RequestDelay:    250 * time.Millisecond,
		RequestTimeout:  30 * time.Second,
		MaxBytes:        10 << 20,
		RespectRobots:   true,
		HostConcurrency: 1,

		MaxDocumentBytes:   50 << 20,
		MaxSitemapChildren: 50000,
		MaxSitemaps:        10000,
	}
}

// LimitsFromEnv reads the WEB_* variables from the environment; unset or
// empty variables keep their defaults. A malformed or negative value is an
// error naming the variable.
func LimitsFromEnv() (Limits, error) {
	return LimitsFromLookup(os.LookupEnv)
}

// LimitsFromLookup is LimitsFromEnv with another source of variables, such
// as a map in tests or a parsed .env file.
func LimitsFromLookup(lookup func(string) (string, bool)) (Limits, error) {
	l := DefaultLimits()
	var errs []error
	num := func(name string, set func(int64)) {
		v, ok := lookup(name)
		v = strings.TrimSpace(v)
		if !ok || v == "" {
			return
		}
		n, err := strconv.ParseInt(v, 10, 64)
		switch {
		case err != nil:
			errs = append(errs, fmt.Errorf("%s=%q: not a whole number", name, v))
		case n < 0:
			errs = append(errs, fmt.Errorf("%s=%q: must not be negative", name, v))
		default:
			set(n)
		}
	}
	num(EnvMaxPages, func(n int64) { l.MaxPages = int(min(n, 1<<31-1)) })
	num(EnvMaxDepth, func(n int64) { l.MaxDepth = int(min(n, 1<<31-1)) })
	num(EnvRequestDelay, func(n int64) { l.RequestDelay = ms(n) })
	num(EnvRequestTimeout, func(n int64) { l.RequestTimeout = ms(n) })
	num(EnvMaxBytes, func(n int64) { l.MaxBytes = n })
	num(EnvHostConcurrency, func(n int64) { l.HostConcurrency = int(min(n, 1<<31-1)) })
	num(EnvMaxDocumentBytes, func(n int64) { l.MaxDocumentBytes = n })
	num(EnvMaxSitemapChildren, func(n int64) { l.MaxSitemapChildren = int(min(n, 1<<31-1)) })
	num(EnvMaxSitemaps, func(n int64) { l.MaxSitemaps = int(min(n, 1<<31-1)) })
	if v, ok := lookup(EnvBlockPrivate); ok && strings.TrimSpace(v) != "" {
		switch strings.ToLower(strings.TrimSpace(v)) {
		case "1", "true", "yes", "on":
			l.BlockPrivate = true
		case "0", "false", "no", "off":
			l.BlockPrivate = false
		default:
			errs = append(errs, fmt.Errorf("%s=%q: must be 1 or 0", EnvBlockPrivate, v))
		}
	}
	if v, ok := lookup(EnvRespectRobots); ok && strings.TrimSpace(v) != "" {
		switch strings.ToLower(strings.TrimSpace(v)) {
		case "1", "true", "yes", "on":
			l.RespectRobots = true
		case "0", "false", "no", "off":
			l.RespectRobots = false
		default:
			errs = append(errs, fmt.Errorf("%s=%q: must be 1 or 0", EnvRespectRobots, v))
		}
	}
	if err := l.validate(); err != nil {
		errs = append(errs, err)
	}
	if len(errs) > 0 {
		return DefaultLimits(), fmt.Errorf("recrawl: limits from environment: %w", errors.Join(errs...))
	}
	return l, nil
}

// hostConcurrency is HostConcurrency with 0 meaning 1.
func (l Limits) hostConcurrency() int { return max(l.HostConcurrency, 1) }

func ms(n int64) time.Duration {
	const maxMS = int64(1<<63-1) / int64(time.Millisecond)
	return time.Duration(min(n, maxMS)) * time.Millisecond
}

// validate reports limits that cannot work, naming the variable.
func (l Limits) validate() error {
	var errs []error
	if l.MaxPages < 0 {
		errs = append(errs, fmt.Errorf("%s: must not be negative, got %d", EnvMaxPages, l.MaxPages))
	}
	if l.MaxDepth < 0 {
		errs = append(errs, fmt.Errorf("%s: must not be negative, got %d", EnvMaxDepth, l.MaxDepth))
	}
	if l.RequestDelay < 0 {
		errs = append(errs, fmt.Errorf("%s: must not be negative, got %s", EnvRequestDelay, l.RequestDelay))
	}
	if l.RequestTimeout <= 0 {
		errs = append(errs, fmt.Errorf("%s: must be positive, got %s", EnvRequestTimeout, l.RequestTimeout))
	}
	if l.HostConcurrency < 0 {
		errs = append(errs, fmt.Errorf("%s: must not be negative, got %d", EnvHostConcurrency, l.HostConcurrency))
	}
	if l.MaxBytes <= 0 {
		errs = append(errs, fmt.Errorf("%s: must be positive, got %d", EnvMaxBytes, l.MaxBytes))
	}
	if l.MaxDocumentBytes <= 0 {
		errs = append(errs, fmt.Errorf("%s: must be positive, got %d", EnvMaxDocumentBytes, l.MaxDocumentBytes))
	}
	if l.MaxSitemapChildren < 0 {
		errs = append(errs, fmt.Errorf("%s: must not be negative, got %d", EnvMaxSitemapChildren, l.MaxSitemapChildren))
	}
	if l.MaxSitemaps < 0 {
		errs = append(errs, fmt.Errorf("%s: must not be negative, got %d", EnvMaxSitemaps, l.MaxSitemaps))
	}
	return errors.Join(errs...)
}
