package discover

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"

	"github.com/recrawl/recrawl/sitemap"
)

// SkipOffHost is the Skip reason for a sitemap entry on another host than
// its sitemap: the sitemaps.org protocol allows a sitemap to list only URLs
// of its own host.
const SkipOffHost = "off-host"

// Sitemap discovers the pages listed by a sitemap, following sitemap
// indexes breadth-first to at most Env.MaxDepth levels and at most
// Env.MaxDocuments nested sitemaps. Entries on another host than the
// sitemap that lists them are yielded with Skip set to SkipOffHost.
type Sitemap struct {
	// URL is the sitemap or sitemap index.
	URL string
	// SourceName names the source in state; empty means URL.
	SourceName string
}

// Name implements Source.
func (s Sitemap) Name() string {
	if s.SourceName != "" {
		return s.SourceName
	}
	return s.URL
}

// EntryURL implements Entrier.
func (s Sitemap) EntryURL() string { return s.URL }

type sitemapDoc struct {
	url   string
	depth int
}

// Discover implements Source.
func (s Sitemap) Discover(ctx context.Context, env Env, yield func(Link) error) error {
	if env.Client == nil {
		return ErrNoClient
	}
	queue := []sitemapDoc{{url: s.URL}}
	visited := map[string]bool{s.URL: true}
	docs := 0
	var errs []error
	var limit *LimitError
	for len(queue) > 0 {
		doc := queue[0]
		queue = queue[1:]
		if docs >= env.maxDocuments() {
			limit = &LimitError{Limit: "max_pages", Value: env.maxDocuments()}
			break
		}
		docs++
		var children []sitemapDoc
		err := s.read(ctx, env, doc, func(l Link, isChild bool) error {
			if !isChild {
				return yield(l)
			}
			if doc.depth+1 > env.maxDepth() {
				if limit == nil {
					limit = &LimitError{Limit: "max_depth", Value: env.maxDepth()}
				}
				return nil
			}
			if l.Skip == "" && !visited[l.URL] {
				visited[l.URL] = true
				children = append(children, sitemapDoc{url: l.URL, depth: doc.depth + 1})
			}
			return nil
		})
		if err != nil {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			var ye *yieldError
			if errors.As(err, &ye) {
				return ye.err
			}
			if doc.depth == 0 {
				return err // the entry document itself is unusable
			}
			env.logger().WarnContext(ctx, "sitemap unreadable", "url", doc.url, "err", err)
			errs = append(errs, err)
		}
		queue = append(queue, children...)
	}
	if len(errs) > 0 {
		return fmt.Errorf("discover: %d of %d sitemaps incomplete: %w", len(errs), docs, errors.Join(errs...))
	}
	if limit != nil {
		return limit
	}
	return nil
}

type yieldError struct{ err error }

func (e *yieldError) Error() string { return e.err.Error() }

// read fetches one sitemap document and streams its entries to emit, with
// isChild true for the entries of a sitemap index.
func (s Sitemap) read(ctx context.Context, env Env, doc sitemapDoc, emit func(l Link, isChild bool) error) error {
	base, err := url.Parse(doc.url)
	if err != nil {
		return &FetchError{URL: doc.url, Err: err}
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, doc.url, nil)
	if err != nil {
		return &FetchError{URL: doc.url, Err: err}
	}
	req.Header.Set("Accept", "application/xml, text/xml;q=0.9, text/plain;q=0.8, */*;q=0.5")
	resp, err := env.Client.Do(req)
	if err != nil {
		return &FetchError{URL: doc.url, Err: err}
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return &FetchError{URL: doc.url, Status: resp.StatusCode}
	}
	p := sitemap.Parser{MaxBytes: env.maxBytes()}
	_, err = p.Parse(resp.Body, func(e sitemap.Entry) error {
		l := Link{URL: e.Loc, LastMod: e.LastMod, Depth: doc.depth}
		if u, err := url.Parse(e.Loc); err != nil || !sameHost(base, u) {
			l.Skip = SkipOffHost
		}
		if err := emit(l, e.Kind == sitemap.Index); err != nil {
			return &yieldError{err}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("discover: sitemap %s: %w", doc.url, err)
	}
	return nil
}

func sameHost(a, b *url.URL) bool {
	return strings.EqualFold(a.Host, b.Host) && (b.Scheme == "http" || b.Scheme == "https")
}
