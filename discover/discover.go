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
	// MaxBytes bounds one document's size; 0 means DefaultMaxBytes.
	MaxBytes int64
	// Logger receives diagnostics (default: discard).
	Logger *slog.Logger
}

// Defaults for Env's zero fields.
const (
	DefaultMaxDepth     = 5
	DefaultMaxDocuments = 1000
	DefaultMaxBytes     = 50 << 20
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
	Limit string // "max_depth" or "max_pages"
	Value int
}

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

func (e *FetchError) Error() string {
	if e.Status != 0 {
		return fmt.Sprintf("discover: fetching %s: HTTP %d %s", e.URL, e.Status, http.StatusText(e.Status))
	}
	return fmt.Sprintf("discover: fetching %s: %v", e.URL, e.Err)
}

func (e *FetchError) Unwrap() error { return e.Err }

// ErrNoClient is returned when Env.Client is nil.
var ErrNoClient = errors.New("discover: Env.Client is required")
