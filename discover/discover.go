// Package discover finds the URLs of a source: a sitemap (following sitemap
// indexes), and, through the same Source interface, other kinds of entry
// points.
//
// A Source streams Links to a yield function, so discovery of a large site
// never holds the whole URL list in memory. Sources fetch their documents
// with the *http.Client the engine passes in Env, which carries the engine's
// politeness (user agent, robots.txt, pacing, caps).
package discover

import (
	"context"
	"errors"
	"fmt"
	"github.com/recrawl/recrawl/crawlstate"
	"github.com/recrawl/recrawl/normalize"
	"log/slog"
	"net/http"
	"time"
)

// Link is one URL found by discovery.
type Link struct {
	// URL is the address as the source listed it, resolved to an absolute
	// URL but not normalized: normalization is the engine's job.
	URL string
	// LastMod is the sitemap's lastmod, or zero.
	LastMod time.Time
	// Depth is how many documents (sitemap index levels, crawl hops) lie
	// between the entry point and the link; entries of the entry document
	// have depth 0.
	Depth int
	// Skip, when not empty, says why the engine must not accept the link
	// (for example "off-host"); the engine counts it as skipped with this
	// reason.
	Skip string
	// Via is the discovery document that listed the link (the sitemap file
	// of a sitemap entry); "" for links found otherwise.
	Via string
	// Priority is the sitemap's <priority>, in [0, 1], when HasPriority.
	Priority    float64
	HasPriority bool
}

// Env is what a source needs from the engine.
type Env struct {
	// Client fetches discovery documents. Required.
	Client *http.Client
	// MaxDepth bounds how deep a source follows nested documents (sitemap
	// index levels, crawl hops); 0 means DefaultMaxDepth.
	MaxDepth int
	// MaxDocuments bounds how many documents a source reads (nested
	// sitemaps, crawled pages); 0 means DefaultMaxDocuments.
	MaxDocuments int
	// MaxBytes bounds one discovery document: a sitemap (uncompressed, and
	// each compressed layer), an llms.txt file, an entry document being
	// detected; 0 means DefaultMaxBytes. The engine sets it from
	// WEB_MAX_DOCUMENT_BYTES.
	MaxBytes int64
	// MaxPageBytes bounds one crawled page's body, the start page of an
	// Entry detected as HTML included; 0 means DefaultMaxPageBytes. The
	// engine sets it from WEB_MAX_BYTES.
	MaxPageBytes int64
	// MaxChildren bounds the child sitemaps followed from one sitemap
	// index, MaxSitemaps those queued in one discovery over all indexes
	// (0: DefaultMaxChildren, DefaultMaxSitemaps; negative: no cap). The
	// children past either cap are yielded with Skip set to
	// SkipMaxSitemapChildren or SkipMaxSitemaps, not read, and discovery
	// ends with a *LimitError naming the cap.
	MaxChildren int
	MaxSitemaps int
	// Logger receives diagnostics (default: discard).
	Logger *slog.Logger

	// Documents, when set, remembers discovery documents between runs, so
	// a source requests them conditionally (If-None-Match /
	// If-Modified-Since) and can tell an unchanged document cheaply. The
	// engine backs it with its state; documents are kept under Source.
	// (A source only reads and stores documents: it never calls
	// TouchListed, which the engine's OnUnchanged does.)
	Documents crawlstate.DocumentStore
	// Source names the source the documents belong to.
	Source string
	// Normalize is the URL policy that gives pages their identity: the
	// engine's (Config.Normalize), so that a crawl dedupes exactly as the
	// engine keys its rows. The zero value is the default policy.
	Normalize normalize.Policy
	// OnUnchanged, when set, is called for a document that is known to
	// list exactly what it listed before: it answered 304, or (with
	// TrustLastMod) its lastmod in a sitemap index did not move and it was
	// not requested. Its links are not yielded again; the engine marks the
	// URLs it listed before as seen. Without OnUnchanged, sources request
	// documents unconditionally.
	OnUnchanged func(ctx context.Context, docURL string) error
	// TrustLastMod makes a sitemap index authoritative: a child sitemap
	// whose lastmod equals the one stored for it is not requested at all.
	TrustLastMod bool

	// Pages, when set, lets a source that fetches pages itself (a crawl)
	// take part in the incremental state; see PageHandler.
	Pages PageHandler
}

// PageHandler lets a source that fetches pages itself (a crawl) take part
// in the incremental state instead of only listing URLs: pages already
// known are requested conditionally, every answer is recorded exactly as a
// fetch from the due queue would be, and a page that answers 304 continues
// the crawl from its stored links. Implementations are safe for concurrent
// use.
type PageHandler interface {
	// Prepare is called before a page request, with the URL as it will be
	// requested. It returns the context to send the request with (the
	// engine counts it against the page cap) and the validators to send.
	// skip, when not empty, is the reason the page must not be requested
	// (the URL is not accepted, or it was already handled in this run);
	// the source yields the link with that Skip and follows none of its
	// links.
	Prepare(ctx context.Context, rawURL string, depth int) (reqCtx context.Context, v Validators, skip string, err error)
	// Handle receives the outcome of a page request: the answer (any
	// status, with its body) or the transport error. It returns the
	// page's outgoing links, absolute: from the body for a 200, the stored
	// ones for a 304, none otherwise. An error stops the crawl.
	Handle(ctx context.Context, page CrawledPage) (links []string, err error)
}

// Validators are the stored validators of a known page.
type Validators struct {
	ETag         string
	LastModified string
}

// CrawledPage is the outcome of one page request of a crawl.
type CrawledPage struct {
	URL         string // as requested
	FinalURL    string // after redirects
	Depth       int
	Status      int // 0 when Err is set
	Header      http.Header
	ContentType string
	Body        []byte
	Err         error // the transport error (robots denial, cap, timeout...)
	// Prefetched marks the start page's answer to Entry's format
	// detection: it was requested before Prepare, without Prepare's
	// context, and the crawl did not request the page again.
	Prefetched bool
}

// PageLookup is an optional ability of a PageHandler. Entry uses it to
// request a start page known from earlier runs conditionally: Known
// returns the validators stored for rawURL; ok is false for a URL that is
// not a known page (or has no validators).
type PageLookup interface {
	Known(ctx context.Context, rawURL string) (v Validators, ok bool, err error)
}

// Defaults for Env's zero fields.
const (
	DefaultMaxDepth     = 5
	DefaultMaxDocuments = 1000
	DefaultMaxBytes     = 50 << 20
	DefaultMaxPageBytes = 10 << 20
	DefaultMaxChildren  = 50000
	DefaultMaxSitemaps  = 10000
)

func (e Env) maxDepth() int {
	if e.MaxDepth <= 0 {
		return DefaultMaxDepth
	}
	return e.MaxDepth
}

func (e Env) maxDocuments() int {
	if e.MaxDocuments <= 0 {
		return DefaultMaxDocuments
	}
	return e.MaxDocuments
}

func (e Env) maxBytes() int64 {
	if e.MaxBytes <= 0 {
		return DefaultMaxBytes
	}
	return e.MaxBytes
}

func (e Env) maxPageBytes() int64 {
	if e.MaxPageBytes <= 0 {
		return DefaultMaxPageBytes
	}
	return e.MaxPageBytes
}

// capOf maps a cap field to a bound: 0 is the default, negative none.
func capOf(n, def int) int {
	switch {
	case n == 0:
		return def
	case n < 0:
		return maxInt
	}
	return n
}

func (e Env) maxChildren() int { return capOf(e.MaxChildren, DefaultMaxChildren) }
func (e Env) maxSitemaps() int { return capOf(e.MaxSitemaps, DefaultMaxSitemaps) }

func (e Env) logger() *slog.Logger {
	if e.Logger == nil {
		return slog.New(slog.DiscardHandler)
	}
	return e.Logger
}

// Source lists the URLs of one site. Implementations are safe for
// concurrent use by different runs.
type Source interface {
	// Name identifies the source; the engine keys its state by it, so it
	// must be stable across runs.
	Name() string
	// Discover calls yield for every link found, in the order found. It
	// stops and returns yield's error if yield fails. A Limit error means
	// discovery stopped early at a cap; the links yielded before it are
	// valid. Any other error means the listing is incomplete and must not
	// be used to count pages as missing.
	Discover(ctx context.Context, env Env, yield func(Link) error) error
}

// Entrier is implemented by sources that start from one URL (a sitemap, an
// llms.txt file, a crawl's start page). The engine reads that host's
// robots.txt before discovery, so a site whose rules cannot be read is not
// touched at all.
type Entrier interface {
	EntryURL() string
}

// LimitError reports that discovery stopped at a cap. What was found
// before it is complete enough to use.
type LimitError struct {
	Limit string // "max_depth", "max_pages", SkipMaxSitemapChildren or SkipMaxSitemaps
	Value int
}

// Error describes the failure.
func (e *LimitError) Error() string {
	return fmt.Sprintf("discovery stopped at %s=%d", e.Limit, e.Value)
}

// FetchError is a discovery document that could not be fetched: a
// transport error, or a status other than 200.
type FetchError struct {
	URL    string
	Status int // 0 for transport errors
	Err    error
}

// Error describes the failure.
func (e *FetchError) Error() string {
	if e.Status != 0 {
		return fmt.Sprintf("discover: fetching %s: HTTP %d %s", e.URL, e.Status, http.StatusText(e.Status))
	}
	return fmt.Sprintf("discover: fetching %s: %v", e.URL, e.Err)
}

// Unwrap returns the underlying cause, for errors.Is and errors.As.
func (e *FetchError) Unwrap() error { return e.Err }

// ErrNoClient is returned when Env.Client is nil.
var ErrNoClient = errors.New("discover: Env.Client is required")
