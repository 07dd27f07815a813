package discover

import (
	"context"
	"errors"
	"fmt"
	"github.com/recrawl/recrawl/crawlstate"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/recrawl/recrawl/sitemap"
)

// SkipOffHost is the Skip reason for a sitemap entry on another host than
// its sitemap: the sitemaps.org protocol allows a sitemap to list only URLs
// of its own host.
const SkipOffHost = "off-host"

// Skip reasons of a child sitemap a sitemap index lists but discovery does
// not read, past Env.MaxChildren (for one index) or Env.MaxSitemaps (for
// the whole discovery). They are also the Limit of the *LimitError that
// then ends Discover.
const (
	SkipMaxSitemapChildren = "max_sitemap_children"
	SkipMaxSitemaps        = "max_sitemaps"
)

const sitemapAccept = "application/xml, text/xml;q=0.9, text/plain;q=0.8, */*;q=0.5"

// Sitemap discovers the pages listed by a sitemap, following sitemap
// indexes breadth-first to at most Env.MaxDepth levels and at most
// Env.MaxDocuments nested sitemaps (past either cap it returns a
// *LimitError after yielding what it found). It queues at most
// Env.MaxChildren child sitemaps of one index and Env.MaxSitemaps in all,
// so an index tree that fans out costs bounded memory; the children past
// those caps are yielded with Skip set to SkipMaxSitemapChildren or
// SkipMaxSitemaps, and Discover returns a *LimitError naming the cap.
// Entries on another host than
// the sitemap that lists them are yielded with Skip set to SkipOffHost.
// Every yielded Link has Via set to the sitemap file that listed it,
// spelled exactly as it was requested (the Sitemap's URL, or the loc of an
// index entry): the same string OnUnchanged receives and crawlstate.Document.URL
// holds.
//
// # Incremental discovery
//
// With Env.Documents set, every sitemap read completely with a 200 is
// stored with PutDocument: its validators, its number of entries and their
// newest lastmod, and the lastmod its parent index listed for it. With
// Env.OnUnchanged set as well, a url set (any sitemap but an index) whose
// validators are stored is requested conditionally; a 304 calls
// OnUnchanged with its URL and its entries are not yielded again. With
// Env.TrustLastMod, a child sitemap whose lastmod in the index equals the
// stored ListedLastMod (both non-zero) is not requested at all: OnUnchanged
// is called for it instead, and it does not count against MaxDocuments.
//
// A sitemap index is always requested unconditionally, and its validators
// are not stored: a 304 would not say which child sitemaps it lists, and
// those must be visited anyway, since an unchanged index does not mean
// unchanged children (each child is then requested conditionally). Its
// crawlstate.Document still records its number of children and their newest
// lastmod.
//
// The engine can tell that nothing changed since the last run in two
// ways. For a single url set: OnUnchanged was called with the Sitemap's
// URL. For any sitemap, index or not: the run yielded no link at all and
// returned nil, which happens only when every document was unchanged
// (a 304 or a trusted lastmod) or listed nothing. Comparing the entry's crawlstate.Document
// before and after the run (Entries, NewestLastMod) is the cheap check
// for servers without validators: a url set whose entry count and newest
// lastmod did not move probably lists the same pages; for an index it only
// says its list of children did not move.
type Sitemap struct {
	// URL is the sitemap or sitemap index.
	URL string
	// SourceName names the source in state; empty means URL.
	SourceName string
	// Only, when set, is a path prefix (such as "/docs/guide/"): only
	// URLs whose path starts with it are listed; the others are yielded with Skip set to SkipOutOfScope (child sitemaps are read wherever they are). It is a plain prefix:
	// "/docs/api" also holds "/docs/apiary"; end it with "/" for a
	// directory.
	Only string
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
	url    string
	depth  int
	listed time.Time // the lastmod the parent index gave it
}

// Discover implements Source.
func (s Sitemap) Discover(ctx context.Context, env Env, yield func(Link) error) error {
	return s.discover(ctx, env, nil, yield)
}

// discover runs the source; first, when not nil, is the entry document's
// 200 response, already requested (by Entry's detection).
func (s Sitemap) discover(ctx context.Context, env Env, first *http.Response, yield func(Link) error) error {
	defer func() {
		if first != nil {
			first.Body.Close()
		}
	}()
	if env.Client == nil {
		return ErrNoClient
	}
	queue := []sitemapDoc{{url: s.URL}}
	visited := map[string]bool{s.URL: true}
	docs, queued := 0, 0 // documents read; child sitemaps ever queued
	var errs []error
	var limit *LimitError
	for len(queue) > 0 {
		doc := queue[0]
		queue = queue[1:]
		if err := ctx.Err(); err != nil {
			return err
		}
		info, known, err := env.stored(ctx, doc.url)
		if err != nil {
			return err
		}
		if env.TrustLastMod && env.conditional() && known && !doc.listed.IsZero() && doc.listed.Equal(info.ListedLastMod) {
			if err := env.OnUnchanged(ctx, doc.url); err != nil {
				return err
			}
			continue
		}
		if docs >= env.maxDocuments() {
			limit = &LimitError{Limit: "max_pages", Value: env.maxDocuments()}
			break
		}
		docs++
		var resp *http.Response
		if doc.depth == 0 && first != nil {
			resp, first = first, nil
		}
		var children []sitemapDoc
		listed := 0 // distinct child sitemaps of this document
		err = s.read(ctx, env, doc, info, known, resp, func(l Link, isChild bool) error {
			if !isChild {
				return yield(l)
			}
			if doc.depth+1 > env.maxDepth() {
				if limit == nil {
					limit = &LimitError{Limit: "max_depth", Value: env.maxDepth()}
				}
				return nil
			}
			if l.Skip != "" {
				return yield(l) // an off-host child sitemap is counted, not read
			}
			if visited[l.URL] {
				return nil
			}
			// The caps bound the queue and visited set: an index tree that
			// fans out without end costs at most MaxSitemaps entries.
			reason, value := "", 0
			switch {
			case listed >= env.maxChildren():
				reason, value = SkipMaxSitemapChildren, env.maxChildren()
			case queued >= env.maxSitemaps():
				reason, value = SkipMaxSitemaps, env.maxSitemaps()
			}
			if reason != "" {
				if limit == nil || limit.Limit == "max_depth" {
					limit = &LimitError{Limit: reason, Value: value}
				}
				l.Skip = reason
				return yield(l)
			}
			listed++
			queued++
			visited[l.URL] = true
			children = append(children, sitemapDoc{url: l.URL, depth: doc.depth + 1, listed: l.LastMod})
			return nil
		})
		if err != nil {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			var se *stopError
			if errors.As(err, &se) {
				return se.err
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

// read fetches one sitemap document (unless resp already holds it) and
// streams its entries to emit, with isChild true for the entries of a
// sitemap index. info and known are what Env.Documents holds for it.
func (s Sitemap) read(ctx context.Context, env Env, doc sitemapDoc, info crawlstate.Document, known bool, resp *http.Response, emit func(l Link, isChild bool) error) error {
	base, err := url.Parse(doc.url)
	if err != nil {
		if resp != nil {
			resp.Body.Close()
		}
		return &FetchError{URL: doc.url, Err: err}
	}
	if resp == nil {
		resp, err = getDocument(ctx, env, doc.url, sitemapAccept, env.validators(info, known))
		if err != nil {
			return err
		}
	}
	defer resp.Body.Close()
	if resp.StatusCode == http.StatusNotModified {
		if err := env.OnUnchanged(ctx, doc.url); err != nil {
			return &stopError{err}
		}
		if !doc.listed.Equal(info.ListedLastMod) {
			// The index moved its lastmod, the document did not change:
			// remember the new lastmod so TrustLastMod can skip it next time.
			info.ListedLastMod = doc.listed
			if err := env.Documents.PutDocument(ctx, env.Source, info); err != nil {
				return &stopError{fmt.Errorf("discover: storing the state of %s: %w", doc.url, err)}
			}
		}
		return nil
	}
	entries := 0
	var newest time.Time
	var skipErr error
	p := sitemap.Parser{MaxBytes: env.maxBytes(), OnSkip: func(se *sitemap.SkipError) {
		// Entries the parser leaves out are yielded as skipped, so the
		// engine counts them.
		reason := SkipInvalid
		if errors.Is(se, sitemap.ErrLocTooLong) {
			reason = SkipTooLong
		}
		if skipErr == nil {
			skipErr = emit(Link{URL: se.Loc, Depth: doc.depth, Skip: reason, Via: doc.url}, false)
		}
	}}
	kind, err := p.Parse(resp.Body, func(e sitemap.Entry) error {
		if skipErr != nil {
			return &stopError{skipErr}
		}
		entries++
		if e.LastMod.After(newest) {
			newest = e.LastMod
		}
		l := Link{URL: e.Loc, LastMod: e.LastMod, Depth: doc.depth, Via: doc.url, Priority: e.Priority, HasPriority: e.HasPriority}
		if u, err := url.Parse(e.Loc); err != nil {
			l.Skip = SkipInvalid
		} else if !sameHost(base, u) {
			l.Skip = SkipOffHost
		}
		if l.Skip == "" && e.Kind != sitemap.Index && !inOnly(s.Only, e.Loc) {
			l.Skip = SkipOutOfScope
		}
		if err := emit(l, e.Kind == sitemap.Index); err != nil {
			return &stopError{err}
		}
		return nil
	})
	if err == nil && skipErr != nil {
		err = &stopError{skipErr}
	}
	if err != nil {
		var se *stopError
		if errors.As(err, &se) {
			return se
		}
		if errors.Is(err, sitemap.ErrTooLarge) {
			return fmt.Errorf("discover: sitemap %s: %w (%s)", doc.url, err, documentCapHint)
		}
		return fmt.Errorf("discover: sitemap %s: %w", doc.url, err)
	}
	if env.Documents == nil {
		return nil
	}
	stored := crawlstate.Document{URL: doc.url, Entries: entries, NewestLastMod: newest, ListedLastMod: doc.listed}
	if kind != sitemap.Index {
		stored.ETag, stored.LastModified = resp.Header.Get("ETag"), resp.Header.Get("Last-Modified")
	}
	if err := env.Documents.PutDocument(ctx, env.Source, stored); err != nil {
		return &stopError{fmt.Errorf("discover: storing the state of %s: %w", doc.url, err)}
	}
	return nil
}

func sameHost(a, b *url.URL) bool {
	return strings.EqualFold(a.Host, b.Host) && (b.Scheme == "http" || b.Scheme == "https")
}
