package discover

import (
	"context"
	"net/http"
)

// Entry is a documentation site given by one URL: a sitemap, an llms.txt
// file or a page to crawl from. Its Discover reads the document at URL and
// runs Sitemap, LLMsTxt or Crawl accordingly (see Detect for the decision
// table); a document that fits none of them is a *FormatError, which names
// the EntryFormat setting.
//
// Format, when set, is an override, not a hint: no detection happens and
// the named source runs whatever the document is. It accepts what
// ParseFormat accepts.
//
// Detection costs no extra request: the detection answer is handed to the
// source, which reads it; for a crawl it is the start page's answer (the
// engine's PageHandler receives it with CrawledPage.Prefetched set), so
// the start page is requested once per run. With Env.Documents and
// Env.OnUnchanged set and validators stored for URL (which only a url set
// or an llms.txt file leaves), the detection request is conditional; a 304
// calls OnUnchanged(URL) and ends discovery, since such a document lists
// what it listed before whichever of the two it is. Without stored
// document validators, a PageHandler that implements PageLookup and knows
// URL as a page gives the validators instead: a 304 then starts the crawl
// from the unchanged start page.
type Entry struct {
	// URL is the entry point.
	URL string
	// Format overrides detection when not empty.
	Format Format
	// SourceName names the source in state; empty means URL.
	SourceName string
	// Only is a path prefix handed to the source that runs (see
	// Crawl.Only, Sitemap.Only, LLMsTxt.Only).
	Only string
}

// Name implements Source.
func (e Entry) Name() string {
	if e.SourceName != "" {
		return e.SourceName
	}
	return e.URL
}

// EntryURL implements Entrier.
func (e Entry) EntryURL() string { return e.URL }

// Detect returns the format Discover would use: Format when it is set
// (without a request), else what Detect finds at URL (one request).
func (e Entry) Detect(ctx context.Context, env Env) (Format, error) {
	if e.Format != "" {
		return ParseFormat(string(e.Format))
	}
	if env.Client == nil {
		return "", ErrNoClient
	}
	doc, err := sniff(ctx, env, e.URL, Validators{})
	if err != nil {
		return "", err
	}
	doc.close()
	return doc.format, nil
}

// Discover implements Source.
func (e Entry) Discover(ctx context.Context, env Env, yield func(Link) error) error {
	if env.Client == nil {
		return ErrNoClient
	}
	if e.Format != "" {
		f, err := ParseFormat(string(e.Format))
		if err != nil {
			return err
		}
		return e.source(f).Discover(ctx, env, yield)
	}
	info, known, err := env.stored(ctx, e.URL)
	if err != nil {
		return err
	}
	v := env.validators(info, known)
	page := false // v are a known start page's validators
	if pl, ok := env.Pages.(PageLookup); ok && !known {
		pv, ok, err := pl.Known(ctx, e.URL)
		if err != nil {
			return err
		}
		if ok && !pv.empty() {
			v, page = pv, true
		}
	}
	doc, err := sniff(ctx, env, e.URL, v)
	if err != nil {
		return err
	}
	if doc.resp.StatusCode == http.StatusNotModified {
		if page {
			return e.crawl().discover(ctx, env, prefetchedPage(doc, env), yield)
		}
		doc.close()
		return env.OnUnchanged(ctx, e.URL)
	}
	env.logger().DebugContext(ctx, "entry format detected", "url", e.URL, "format", doc.format, "mime", doc.mime)
	switch doc.format {
	case FormatSitemap:
		resp := doc.resp
		resp.Body = readCloser{doc.body(), resp.Body}
		return Sitemap{URL: e.URL, SourceName: e.SourceName, Only: e.Only}.discover(ctx, env, resp, yield)
	case FormatLLMsTxt:
		defer doc.close()
		body, err := readLimited(doc.body(), env.maxBytes())
		if err != nil {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			return &FetchError{URL: e.URL, Err: err}
		}
		return LLMsTxt{URL: e.URL, SourceName: e.SourceName, Only: e.Only}.emit(ctx, env, doc.resp, body, yield)
	default:
		return e.crawl().discover(ctx, env, prefetchedPage(doc, env), yield)
	}
}

func (e Entry) crawl() Crawl {
	return Crawl{URL: e.URL, SourceName: e.SourceName, Only: e.Only}
}

func (e Entry) source(f Format) Source {
	switch f {
	case FormatSitemap:
		return Sitemap{URL: e.URL, SourceName: e.SourceName, Only: e.Only}
	case FormatLLMsTxt:
		return LLMsTxt{URL: e.URL, SourceName: e.SourceName, Only: e.Only}
	default:
		return Crawl{URL: e.URL, SourceName: e.SourceName, Only: e.Only}
	}
}
