package discover

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"mime"
	"net"
	"net/http"
	"net/url"
	"strings"
	"syscall"

	"github.com/gocolly/colly/v2"
	"golang.org/x/net/html"
	"golang.org/x/net/html/charset"

	"github.com/recrawl/recrawl/normalize"
)

const pageAccept = "text/html, application/xhtml+xml;q=0.9, */*;q=0.5"

// Crawl discovers the pages of a site that has neither a sitemap nor an
// llms.txt file by crawling it breadth-first from one page, with colly
// (github.com/gocolly/colly/v2) doing the requests. Without a PageHandler
// the links are read from each page with the HTML tokenizer
// (golang.org/x/net/html), streamed into the crawl's queue: no DOM and no
// list of the page's links is built, so a page of a million links costs
// little more than its body and the links the crawl keeps.
//
// # Scope
//
// The crawl follows only links on the start page's host (either http or
// https) whose path lies in the start page's directory: the path up to and
// including its last "/". From https://x.test/docs/intro or
// https://x.test/docs/ it follows /docs/ itself, /docs and everything
// under /docs/, never /docsearch or /blog/; from https://x.test/docs (no
// trailing slash) the directory is "/", the whole host. Scope is taken
// from the start page's final URL, after redirects, so an entry
// https://x.test/docs that redirects to https://x.test/docs/ is scoped to
// /docs/; a redirect to another host (normalize.SameSite: anything but
// the start page's host and its www/apex twin) leaves the scope on the
// start page's own host, so the crawl never moves to another site. Links
// outside the scope yield nothing.
//
// # Requests
//
// Links are resolved against the page's final URL (colly honours <base
// href>) and normalized with Normalize (keeping the trailing slash as
// written, so the request goes to the spelling the site uses). Links
// whose path names a file that is not a page (NotDocumentPath: images,
// archives, media, fonts, notebooks, source files, feeds, Sphinx's
// _sources/) are not requested. A 2xx answer whose Content-Type is not
// HTML is not read: without Env.Pages it has no links; with it, Handle
// receives the status, header and Content-Type with an empty body. The
// normalized identity, under Normalize as is, dedupes the links: variants
// that differ only by a tracking parameter, a fragment, parameter order
// or a trailing slash are requested once. A page's final URL after redirects
// is marked as seen too.
//
// Every request goes through Env.Client unchanged: its transport (the
// engine's polite transport) does robots.txt, pacing, user agent and the
// engine's page cap. colly's own robots.txt handling, limit rules, cookie
// jar, user agent and environment settings (COLLY_*) are not used. Pages
// are requested one at a time: a crawl stays on one host, whose requests
// the transport serializes and paces anyway.
//
// # Caps
//
// The start page has depth 0 and the links of a depth-d page depth d+1.
// Pages deeper than Env.MaxDepth are not requested; Discover then returns
// a *LimitError{Limit: "max_depth"} if at least one link was cut that way.
// At most Env.MaxDocuments pages are requested; when pages remain, the
// crawl ends with a *LimitError{Limit: "max_pages"} (the queue holds at
// most twice MaxDocuments links; a link past that is dropped, and the crawl
// ends the same way). A page counts when its
// request was sent: an answer arrived (any status), or the client's error
// came from the network (a dial, read or write failure, a timeout). A
// request the transport refused before sending it (a robots.txt denial,
// the engine's page cap) does not count. Bodies larger than Env.MaxPageBytes
// are refused (ErrTooLarge), and so are gzip-compressed bodies, which are
// not pages and which colly would decompress without a size bound.
//
// # What is yielded
//
// Each page the crawl decides to request is yielded, before the request,
// as a Link with the URL as requested and its depth (Via is empty). A
// link that is off scope, already seen, not a page by its path or cut by
// a cap yields nothing.
//
// Without Env.Pages the crawl extracts the links itself (every <a href>
// of a 2xx HTML answer). A page whose request failed on the network or
// answered 5xx or 429 leaves the listing incomplete: after crawling the
// rest, Discover returns an error naming those pages (other 4xx answers
// and refused requests have no links and are not failures).
//
// With Env.Pages (the engine's PageHandler), for each page the crawl
// calls Prepare, then yields the link (with Prepare's skip reason, if any;
// a skipped page is not requested), then sends the request with Prepare's
// context (as the request's context, so the transport sees its values)
// and validators (If-None-Match, If-Modified-Since), and hands every
// outcome to Handle: any status with its body (304 included), or the
// transport error (a robots denial arrives as CrawledPage.Err with Status
// 0). The links Handle returns are followed. An error from Prepare or
// Handle stops the crawl and is returned as is, so a *LimitError from the
// engine ends it as a cap. The body Handle receives is UTF-8 when the
// answer declared another charset (colly converts it); ContentType and
// the Content-Type header then say charset=utf-8.
//
// Cancelling the context aborts the current request and ends the crawl
// with the context's error.
type Crawl struct {
	// URL is the start page.
	URL string
	// SourceName names the source in state; empty means URL.
	SourceName string
	// Only, when set, is a path prefix (such as "/docs/guide/"): only
	// URLs whose path starts with it are followed (the start page is requested whatever its path). It is a plain prefix:
	// "/docs/api" also holds "/docs/apiary"; end it with "/" for a
	// directory.
	Only string
}

// Name implements Source.
func (c Crawl) Name() string {
	if c.SourceName != "" {
		return c.SourceName
	}
	return c.URL
}

// EntryURL implements Entrier.
func (c Crawl) EntryURL() string { return c.URL }

// Discover implements Source.
func (c Crawl) Discover(ctx context.Context, env Env, yield func(Link) error) error {
	return c.discover(ctx, env, nil, yield)
}

// discover runs the crawl. first, when not nil, is the start page's
// answer, already requested by Entry's detection: the crawl uses it
// instead of requesting the page again.
func (c Crawl) discover(ctx context.Context, env Env, first *pageResult, yield func(Link) error) error {
	if env.Client == nil {
		return ErrNoClient
	}
	cr := &crawler{env: env, identity: env.Normalize, entryURL: c.URL, seen: map[string]struct{}{}, first: first, only: c.Only}
	cr.request = env.Normalize
	cr.request.KeepTrailingSlash, cr.request.KeepFragment = true, false
	start, err := cr.request.URL(c.URL)
	if err != nil {
		return &FetchError{URL: c.URL, Err: fmt.Errorf("the start page must be an absolute http(s) URL: %w", err)}
	}
	key, _ := cr.identity.URL(start)
	cr.seen[key] = struct{}{}
	cr.scope = newScope(start)
	cr.queue = []crawlItem{{url: start}}
	cr.col = cr.collector()
	return cr.run(ctx, yield)
}

type crawlItem struct {
	url   string
	depth int
}

// pageResult is what colly's callbacks learned about one request.
type pageResult struct {
	status      int
	header      http.Header
	contentType string
	final       string
	body        []byte
	err         error
	local       bool // err is the crawl's own refusal of the answer
	notHTML     bool // a 2xx answer that is not HTML; its body was not read
	prefetched  bool // the answer of Entry's detection request
}

type crawler struct {
	env      Env
	identity normalize.Policy // dedupe key
	request  normalize.Policy // the URL as requested
	entryURL string
	col      *colly.Collector
	scope    scope
	seen     map[string]struct{}
	queue    []crawlItem
	first    *pageResult // the start page's answer, already requested
	only     string      // Crawl.Only

	requested int
	depthCut  bool
	overflow  bool // a link was not queued: the queue held all the crawl could still request
	failed    []error
}

// queueFactor bounds the crawl's queue to this many times Env.MaxDocuments
// links: no more can be requested, and the slack is for links Prepare
// skips. A page of a million links thus costs its body, not a million
// queued URLs. A link past the bound is dropped, and the crawl ends with
// the max_pages *LimitError, since pages remained.
const queueFactor = 2

const resultKey = "recrawl.page"

// collector configures a colly collector around Env.Client. It is built
// with Init, not NewCollector, so COLLY_* environment variables are not
// read behind the caller's back.
func (cr *crawler) collector() *colly.Collector {
	col := &colly.Collector{}
	col.Init()
	col.IgnoreRobotsTxt = true // the client's transport decides
	col.AllowURLRevisit = true // the crawl dedupes by normalized URL
	col.ParseHTTPErrorResponse = true
	col.UserAgent = ""
	col.MaxBodySize = int(min(cr.env.maxPageBytes()+1, int64(maxInt)))
	col.SetClient(cr.env.Client) // keeps the client's transport, redirects and timeout
	col.OnRequest(func(r *colly.Request) {
		// colly always sets a User-Agent; leave it to the client's
		// transport, as for every other request of the engine.
		r.Headers.Del("User-Agent")
	})
	col.OnResponseHeaders(func(r *colly.Response) {
		res := r.Ctx.GetAny(resultKey).(*pageResult)
		res.status, res.final = r.StatusCode, r.Request.URL.String()
		if ct := r.Headers.Get("Content-Type"); r.StatusCode >= 200 && r.StatusCode < 300 && ct != "" && !htmlType(ct) {
			res.header, res.contentType, res.notHTML = r.Headers.Clone(), ct, true
			r.Request.Abort()
			return
		}
		ce := strings.ToLower(r.Headers.Get("Content-Encoding"))
		ct := strings.ToLower(r.Headers.Get("Content-Type"))
		if strings.Contains(ce, "gzip") || (ce == "" && strings.Contains(ct, "gzip")) || strings.HasSuffix(strings.ToLower(r.Request.URL.Path), ".xml.gz") {
			res.err, res.local = fmt.Errorf("discover: %s: gzip-compressed body, not a page (colly would decompress it past Env.MaxPageBytes)", r.Request.URL), true
			r.Request.Abort()
		}
	})
	col.OnResponse(func(r *colly.Response) {
		res := r.Ctx.GetAny(resultKey).(*pageResult)
		res.status, res.final = r.StatusCode, r.Request.URL.String()
		res.header = r.Headers.Clone()
		res.contentType = res.header.Get("Content-Type")
		if int64(len(r.Body)) > cr.env.maxPageBytes() {
			res.err = fmt.Errorf("discover: %s: %w: more than %d bytes (%s)", r.Request.URL, ErrTooLarge, cr.env.maxPageBytes(), pageCapHint)
			res.local = true
			return
		}
		res.body = r.Body
		if recoded(res.contentType, len(r.Body)) {
			res.contentType = withUTF8(res.contentType)
			res.header.Set("Content-Type", res.contentType)
		}
	})
	col.OnError(func(r *colly.Response, err error) {
		res := r.Ctx.GetAny(resultKey).(*pageResult)
		if res.err == nil && res.body == nil && !res.notHTML {
			res.err = err
		}
	})
	// No OnHTML callback: colly would parse every page into a DOM (some
	// 30 times the body for a page of links). The links are read from the
	// body with the HTML tokenizer instead (eachPageLink).
	return col
}

func (cr *crawler) run(ctx context.Context, yield func(Link) error) error {
	pages := cr.env.Pages
	var limit *LimitError
	for len(cr.queue) > 0 {
		if err := ctx.Err(); err != nil {
			return err
		}
		if cr.requested >= cr.env.maxDocuments() {
			limit = &LimitError{Limit: "max_pages", Value: cr.env.maxDocuments()}
			break
		}
		item := cr.queue[0]
		cr.queue = cr.queue[1:]
		reqCtx, v, skip := ctx, Validators{}, ""
		if pages != nil {
			var err error
			reqCtx, v, skip, err = pages.Prepare(ctx, item.url, item.depth)
			if err != nil {
				return err
			}
			if reqCtx == nil {
				reqCtx = ctx
			}
		}
		if err := yield(Link{URL: item.url, Depth: item.depth, Skip: skip}); err != nil {
			return err
		}
		if skip != "" {
			continue
		}
		var res *pageResult
		if item.depth == 0 && cr.first != nil {
			res, cr.first = cr.first, nil
		} else {
			res = cr.fetch(reqCtx, item, v)
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		if res.status != 0 || (res.err != nil && reachedNetwork(res.err)) {
			cr.requested++
		}
		if !res.local && (res.status >= 500 || res.status == http.StatusTooManyRequests || (res.err != nil && reachedNetwork(res.err))) {
			cr.failed = append(cr.failed, &FetchError{URL: item.url, Status: res.status, Err: res.err})
		}
		base := item.url
		if res.final != "" {
			base = res.final
			if key, err := cr.identity.URL(res.final); err == nil {
				cr.seen[key] = struct{}{}
			}
			if item.depth == 0 {
				// A redirect of the start page may move the scope to
				// another directory of the site, never to another host.
				if f, err := cr.request.URL(res.final); err == nil && normalize.SameSite(item.url, f) {
					cr.scope = newScope(f)
				}
			}
		}
		if pages == nil && res.err == nil && res.status >= 200 && res.status <= 299 {
			// Stream the links of the body into the queue: neither a
			// DOM nor a list of every link is built.
			body := res.body
			res.body = nil
			if err := eachPageLink(body, base, func(base, ref string) error { return cr.enqueueOne(base, item.depth+1, ref, yield) }); err != nil {
				return err
			}
			continue
		}
		links, err := cr.links(ctx, item, res)
		if err != nil {
			return err
		}
		if err := cr.enqueue(base, item.depth+1, links, yield); err != nil {
			return err
		}
	}
	if limit == nil && cr.overflow {
		limit = &LimitError{Limit: "max_pages", Value: cr.env.maxDocuments()}
	}
	if n := len(cr.failed); n > 0 {
		shown := cr.failed[:min(n, 10)]
		return fmt.Errorf("discover: crawl of %s incomplete: %d of %d pages failed: %w", cr.entryURL, n, cr.requested, errors.Join(shown...))
	}
	if limit != nil {
		return limit
	}
	if cr.depthCut {
		return &LimitError{Limit: "max_depth", Value: cr.env.maxDepth()}
	}
	return nil
}

// fetch requests one page through colly and collects the outcome. The
// collector is used by one goroutine, so setting its Context per request
// is safe: colly sends every request with Collector.Context.
func (cr *crawler) fetch(reqCtx context.Context, item crawlItem, v Validators) *pageResult {
	res := &pageResult{}
	cctx := colly.NewContext()
	cctx.Put(resultKey, res)
	hdr := http.Header{}
	hdr.Set("Accept", pageAccept)
	v.setOn(hdr)
	cr.col.Context = reqCtx
	err := cr.col.Request(http.MethodGet, item.url, nil, cctx, hdr)
	if err != nil && res.err == nil && res.body == nil && !res.notHTML {
		res.err = err
	}
	if res.err != nil {
		res.body = nil
	}
	return res
}

// links returns the outgoing links of a requested page with a
// PageHandler (Handle's), and logs a failed page without one (the links of
// a 2xx answer are streamed from its body in run).
func (cr *crawler) links(ctx context.Context, item crawlItem, res *pageResult) ([]string, error) {
	if cr.env.Pages != nil {
		page := CrawledPage{URL: item.url, FinalURL: res.final, Depth: item.depth, Err: res.err, Prefetched: res.prefetched}
		if page.FinalURL == "" {
			page.FinalURL = item.url
		}
		if res.err == nil {
			page.Status, page.Header, page.ContentType, page.Body = res.status, res.header, res.contentType, res.body
		}
		return cr.env.Pages.Handle(ctx, page)
	}
	if res.err != nil {
		cr.env.logger().DebugContext(ctx, "crawled page failed", "url", item.url, "err", res.err)
		return nil, nil
	}
	return nil, nil // a page that is not a 2xx answer has no links to follow
}

// enqueue queues the links of a page (resolved against base) that are in
// scope and not seen yet. A link that does not resolve, or an http(s)
// link that does not normalize, is yielded once per crawl with Skip set to
// SkipInvalid, so it is counted; links of other schemes (mailto:,
// javascript:) are not web pages and are ignored.
func (cr *crawler) enqueue(base string, depth int, links []string, yield func(Link) error) error {
	for _, raw := range links {
		if err := cr.enqueueOne(base, depth, raw, yield); err != nil {
			return err
		}
	}
	return nil
}

// enqueueOne queues one link, as enqueue does.
func (cr *crawler) enqueueOne(base string, depth int, raw string, yield func(Link) error) error {
	invalid := func(u string) error {
		k := "\x00" + u // never a normalized URL
		if _, dup := cr.seen[k]; dup {
			return nil
		}
		cr.seen[k] = struct{}{}
		return yield(Link{URL: u, Depth: depth, Skip: SkipInvalid})
	}
	raw = strings.TrimSpace(raw)
	if u, err := url.Parse(raw); err == nil && u.Scheme != "" && !strings.EqualFold(u.Scheme, "http") && !strings.EqualFold(u.Scheme, "https") {
		return nil // mailto:, javascript:, ftp:... lead to no web page
	}
	abs, err := cr.request.Resolve(base, raw)
	if err != nil {
		return invalid(raw)
	}
	key, err := cr.identity.URL(abs)
	if err != nil {
		return invalid(abs)
	}
	if _, dup := cr.seen[key]; dup || !cr.scope.contains(abs) || NotDocumentPath(abs) || !inOnly(cr.only, abs) {
		return nil
	}
	if depth > cr.env.maxDepth() {
		cr.depthCut = true
		return nil
	}
	if max := cr.env.maxDocuments(); max <= maxInt/queueFactor && len(cr.queue) >= queueFactor*max {
		cr.overflow = true
		return nil
	}
	cr.seen[key] = struct{}{}
	cr.queue = append(cr.queue, crawlItem{url: abs, depth: depth})
	return nil
}

// scope is the part of a site a crawl follows: one host, one directory.
type scope struct {
	host string
	dir  string // ends with "/"
}

// newScope returns the scope of a start page given in normalized form.
func newScope(start string) scope {
	u, err := url.Parse(start)
	if err != nil {
		return scope{}
	}
	p := u.EscapedPath()
	return scope{host: strings.ToLower(u.Host), dir: p[:strings.LastIndexByte(p, '/')+1]}
}

// contains reports whether the normalized URL abs is in scope.
func (s scope) contains(abs string) bool {
	u, err := url.Parse(abs)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || !strings.EqualFold(u.Host, s.host) || s.dir == "" {
		return false
	}
	p := u.EscapedPath()
	if p == "" {
		p = "/"
	}
	return s.dir == "/" || p == strings.TrimSuffix(s.dir, "/") || strings.HasPrefix(p, s.dir)
}

// InCrawlScope reports whether a crawl started at start (the start page's
// final URL) would follow link: same host, under the start page's
// directory. Both URLs should be absolute.
func InCrawlScope(start, link string) bool { return newScope(start).contains(link) }

// reachedNetwork reports whether a client error came from the network (the
// request was, or was being, sent) rather than from a transport that
// refused it before sending.
func reachedNetwork(err error) bool {
	var ue *url.Error
	if errors.As(err, &ue) {
		err = ue.Err
	}
	var ne net.Error
	return errors.As(err, &ne) || errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) ||
		errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.ECONNREFUSED)
}

// htmlType reports whether a Content-Type is HTML or XHTML.
func htmlType(contentType string) bool {
	mt, _, _ := strings.Cut(strings.ToLower(contentType), ";")
	mt = strings.TrimSpace(mt)
	return mt == "text/html" || mt == "application/xhtml+xml"
}

// recoded reports whether colly converted a body of n bytes served with
// contentType to UTF-8 (the rule of colly's Response.fixCharset without
// charset detection).
func recoded(contentType string, n int) bool {
	ct := strings.ToLower(contentType)
	if n == 0 || !strings.Contains(ct, "charset") || strings.Contains(ct, "utf-8") || strings.Contains(ct, "utf8") {
		return false
	}
	for _, t := range []string{"image/", "video/", "audio/", "font/"} {
		if strings.Contains(ct, t) {
			return false
		}
	}
	return true
}

// withUTF8 returns contentType with its charset set to utf-8.
func withUTF8(contentType string) string {
	mt, params, err := mime.ParseMediaType(contentType)
	if err != nil {
		mt, _, _ = strings.Cut(contentType, ";")
		return strings.TrimSpace(mt) + "; charset=utf-8"
	}
	params["charset"] = "utf-8"
	return mime.FormatMediaType(mt, params)
}

// countPageLinks counts the distinct links of an HTML page that a crawl
// starting from it would follow.
func countPageLinks(body []byte, pageURL string) int {
	request := normalize.Policy{KeepTrailingSlash: true}
	start, err := request.URL(pageURL)
	if err != nil {
		return 0
	}
	sc := newScope(start)
	self, _ := normalize.URL(start)
	seen := map[string]struct{}{self: {}}
	for _, abs := range pageLinks(body, pageURL) {
		if sc.contains(abs) && !NotDocumentPath(abs) {
			if key, err := normalize.URL(abs); err == nil {
				seen[key] = struct{}{}
			}
		}
	}
	return len(seen) - 1
}

// pageLinks returns the <a href> links of an HTML page, resolved against
// its <base href> or pageURL, as colly's a[href] extraction does.
func pageLinks(body []byte, pageURL string) []string {
	request := normalize.Policy{KeepTrailingSlash: true}
	var out []string
	_ = eachPageLink(body, pageURL, func(base, ref string) error {
		if abs, err := request.Resolve(base, ref); err == nil {
			out = append(out, abs)
		}
		return nil
	})
	return out
}

// eachPageLink calls f with the href of each <a href> of an HTML page,
// trimmed, and the base to resolve it against (its <base href>, else
// pageURL), in document order, and stops at f's first error. It reads the
// page with the HTML tokenizer, token by token: beyond body it holds one
// token at a time, never a DOM.
func eachPageLink(body []byte, pageURL string, f func(base, ref string) error) error {
	request := normalize.Policy{KeepTrailingSlash: true}
	base := pageURL
	z := html.NewTokenizer(bytes.NewReader(body))
	for {
		switch z.Next() {
		case html.ErrorToken:
			return nil
		case html.StartTagToken, html.SelfClosingTagToken:
			name, hasAttr := z.TagName()
			tag := string(name)
			if (tag != "a" && tag != "base") || !hasAttr {
				continue
			}
			for {
				k, v, more := z.TagAttr()
				if string(k) == "href" {
					ref := strings.TrimSpace(string(v))
					if tag == "base" {
						if b, err := request.Resolve(pageURL, ref); err == nil {
							base = b
						}
					} else if err := f(base, ref); err != nil {
						return err
					}
				}
				if !more {
					break
				}
			}
		}
	}
}

// prefetchedPage turns Entry's detection answer for a page (a 200 or a
// 304) into the start page's result, as a crawl request would have
// produced it. It reads the body and closes the document, releasing the
// transport's slot for the host. Detection has found an HTML page: its
// body is read under the page cap, Env.MaxPageBytes (WEB_MAX_BYTES), as
// every crawled page is, not under the discovery-document cap.
func prefetchedPage(doc *entryDoc, env Env) *pageResult {
	defer doc.close()
	resp := doc.resp
	res := &pageResult{status: resp.StatusCode, header: resp.Header.Clone(), contentType: resp.Header.Get("Content-Type"), final: doc.final, prefetched: true}
	if resp.StatusCode != http.StatusOK {
		return res
	}
	if res.contentType != "" && !htmlType(res.contentType) {
		res.notHTML = true
		return res
	}
	body, err := readCapped(doc.body(), env.maxPageBytes(), pageCapHint)
	if err != nil {
		res.err = fmt.Errorf("discover: %s: %w", doc.url, err)
		res.local = errors.Is(err, ErrTooLarge)
		return res
	}
	if recoded(res.contentType, len(body)) {
		if _, params, err := mime.ParseMediaType(res.contentType); err == nil {
			if r, err := charset.NewReaderLabel(params["charset"], bytes.NewReader(body)); err == nil {
				if utf, err := io.ReadAll(io.LimitReader(r, 4*env.maxPageBytes())); err == nil {
					body = utf
					res.contentType = withUTF8(res.contentType)
					res.header.Set("Content-Type", res.contentType)
				}
			}
		}
	}
	res.body = body
	return res
}
