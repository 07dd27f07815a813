// Package testsite is a deterministic fake web site served on loopback by
// httptest: the one fixture that recrawl's tests, demo and benchmarks share.
//
// A Site has generated documentation-like pages (navigation, header, footer,
// code blocks, tables, links), a sitemap (plain, gzipped, or split into an
// index, with or without lastmod), llms.txt, robots.txt, strong ETags and
// Last-Modified with correct 304 answers (switchable per page), volatile
// blocks that change on every request while the real content does not,
// script-only pages, and commands that change the site between runs: edit,
// delete (404 or 410), redirect, add, remove from the sitemap, inject
// failures (429/503 with Retry-After), slow and huge responses, and the
// hostile behaviours of hostile.go (bodies generated while served,
// fan-out sitemap indexes, answers trickling a byte at a time). Every request
// is logged (method, path, conditional headers, status) so tests can count
// exactly what was fetched.
package testsite

import (
	"bytes"
	"compress/gzip"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"html"
	"net"
	"net/http"
	"net/http/httptest"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/recrawl/recrawl/clock"
)

// Options configure a Site. The zero value gives 20 pages with ETag and
// Last-Modified, a single uncompressed sitemap with lastmod, and a
// robots.txt that allows everything.
type Options struct {
	// Pages is the number of generated pages (default 20).
	Pages int
	// PathPrefix is where generated pages live (default "/docs/").
	PathPrefix string
	// NoETag and NoLastModified switch validators off for generated pages.
	NoETag         bool
	NoLastModified bool
	// Volatile gives every generated page a block that changes on every
	// request (a timestamp and a CSRF token) while its content stays put.
	Volatile bool
	// SitemapSplit > 0 serves the sitemap as an index of child sitemaps
	// with at most SitemapSplit entries each.
	SitemapSplit int
	// SitemapGzip serves sitemap files gzipped (with the .xml.gz name).
	SitemapGzip bool
	// NoLastMod omits <lastmod> from the sitemap.
	NoLastMod bool
	// Host, when set, names the site in every URL it serves and reports
	// (http://Host/...) instead of its loopback address and random port,
	// so a program run twice sees the same URLs; only Client reaches it.
	Host string
	// GeneratedLastMod makes every sitemap entry's lastmod the time the
	// sitemap is served, as a generator that stamps its build time on
	// every URL does.
	GeneratedLastMod bool
	// Paths, when set, are the generated pages' paths, in order, instead
	// of PathPrefix's (Pages is then len(Paths)): a harness that mirrors
	// another site's layout names them.
	Paths []string
	// Sections > 0 puts the generated pages in that many sections, each a
	// directory of consecutive pages (PathPrefix + "s03/page-0042"), as
	// a documentation site's chapters are.
	Sections int
	// Robots is the robots.txt body; empty means allow everything and name
	// the sitemap.
	Robots string
	// Clock gives Last-Modified and lastmod times (default: a fixed clock
	// at 2026-01-01, so runs are deterministic).
	Clock clock.Clock
	// Words is the approximate number of words of body text per generated
	// page (default 120).
	Words int
	// DocsChrome makes generated pages look like a real documentation
	// site's, with the markup of Material for MkDocs (its generator tag,
	// md-* layout and content container, an edit button): inline style and
	// script in the head, a sidebar of 150 links, an on-page table of
	// contents, and articles whose length varies with the page from half to
	// twice Words, in sections with headings and code blocks. With Words
	// 2000 pages weigh 20–60 KB.
	DocsChrome bool
}

// Page is one page of the site. Tests read pages with Site.Page and change
// them with the Site's methods.
type Page struct {
	Path        string
	Title       string
	Content     string // the page's real content, as HTML for the article body
	Version     int    // bumped by every edit
	Modified    time.Time
	ETag        bool
	LastMod     bool
	Volatile    bool
	InSitemap   bool
	InLLMs      bool
	Status      int    // 200, or 404/410 once deleted
	RedirectTo  string // when set, answers 301 to this path or URL
	ContentType string // default "text/html; charset=utf-8"
	Raw         []byte // when set, served as is instead of the HTML template
	Links       []string
	Canonical   string
	Priority    float64 // the sitemap's <priority>; 0: none
	index       int     // a generated page's number (from 1), which its content derives from; 0 for others
	// ListedLastMod, when set, is what the sitemap lists as the page's
	// lastmod instead of what the site's options say: ListNone (no
	// lastmod), ListGenerated (the time the sitemap is served),
	// ListModified (its Modified time), or any other text,
	// listed as it is (a date in the future, one that does not parse).
	ListedLastMod string
}

// Values of Page.ListedLastMod.
const (
	ListNone      = "none"
	ListGenerated = "generated"
	ListModified  = "modified" // the page's Modified time, whatever the site's options
)

// Request is one logged request.
type Request struct {
	Method          string
	Path            string // path and query
	IfNoneMatch     string
	IfModifiedSince string
	UserAgent       string
	Status          int
	Bytes           int
	At              time.Time // arrival, on the site's clock
}

// Conditional reports whether the request carried a validator.
func (r Request) Conditional() bool { return r.IfNoneMatch != "" || r.IfModifiedSince != "" }

type fault struct {
	status     int
	retryAfter string
	remaining  int
}

// Site is a running fake web site. Its methods are safe for concurrent use.
type Site struct {
	srv    *httptest.Server
	base   string       // the scheme and authority of every URL: srv.URL or http://Host
	client *http.Client // Client's answer
	opts   Options
	clock  clock.Clock

	mu          sync.Mutex
	pages       map[string]*Page
	order       []string // paths in creation order
	log         []Request
	epoch       int // ResetLog calls; a request is logged only in the epoch it arrived in
	robots      string
	robotsCode  int
	robotsRedir string
	faults      map[string]*fault
	delays      map[string]time.Duration
	huge        map[string]int64
	overclaims  map[string]int64
	seq         int
	sitemapPath string
	noSitemap   bool
	llmsCode    int
	docs        map[string]document
	moved       map[string]string        // Move: path -> redirect target
	inFlight    int                      // page requests being answered
	peak        int                      // most page requests answered at once since ResetLog
	gens        map[string]generated     // see hostile.go
	fanouts     map[string]int           // FanOut prefix → width
	trickles    map[string]time.Duration // Trickle path → interval
	etags       map[string]etagMemo      // path → the ETag of a version, computed once

	sidebarOnce sync.Once
	sidebarHTML string // a DocsChrome page's navigation, the same on every page
}

// etagMemo is a page's ETag for one version and content, so that a
// request does not hash the page again (a real server derives its ETags
// from stored metadata too).
type etagMemo struct {
	version int
	content string
	etag    string
}

type document struct {
	contentType string
	body        []byte
}

// DefaultStart is the fixed time of the default clock.
var DefaultStart = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

// New starts a site on a free loopback port. Call Close when done.
func New(opts Options) *Site {
	s := newSite(opts)
	s.srv = httptest.NewServer(http.HandlerFunc(s.serve))
	s.started()
	return s
}

// started sets what depends on the server's address.
func (s *Site) started() {
	s.base, s.client = s.srv.URL, s.srv.Client()
	if s.opts.Host != "" {
		s.base = "http://" + s.opts.Host
		addr := s.srv.Listener.Addr().String()
		s.client = &http.Client{Transport: &http.Transport{
			// Every connection goes to the site, whatever the host name.
			DialContext: func(ctx context.Context, network, _ string) (net.Conn, error) {
				return (&net.Dialer{}).DialContext(ctx, network, addr)
			},
		}}
	}
}

// Listen starts a site on addr, such as "127.0.0.1:8931" (a port of 0
// picks a free one), so that a program run twice serves the same URLs.
// It fails when addr cannot be listened on. Call Close when done.
func Listen(addr string, opts Options) (*Site, error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("testsite: listen on %s: %w", addr, err)
	}
	s := newSite(opts)
	s.srv = httptest.NewUnstartedServer(http.HandlerFunc(s.serve))
	s.srv.Listener.Close()
	s.srv.Listener = ln
	s.srv.Start()
	s.started()
	return s, nil
}

func newSite(opts Options) *Site {
	if len(opts.Paths) > 0 {
		opts.Pages = len(opts.Paths)
	}
	if opts.Pages == 0 {
		opts.Pages = 20
	}
	if opts.PathPrefix == "" {
		opts.PathPrefix = "/docs/"
	}
	if opts.Words == 0 {
		opts.Words = 120
	}
	if opts.Clock == nil {
		opts.Clock = clock.NewFake(DefaultStart)
	}
	s := &Site{
		opts:       opts,
		clock:      opts.Clock,
		pages:      map[string]*Page{},
		faults:     map[string]*fault{},
		delays:     map[string]time.Duration{},
		huge:       map[string]int64{},
		overclaims: map[string]int64{},
		robots:     opts.Robots,
		robotsCode: http.StatusOK,
		llmsCode:   http.StatusOK,
		docs:       map[string]document{},
		moved:      map[string]string{},
	}
	s.sitemapPath = "/sitemap.xml"
	if opts.SitemapGzip {
		s.sitemapPath = "/sitemap.xml.gz"
	}
	now := s.clock.Now().UTC().Truncate(time.Second)
	for i := 1; i <= opts.Pages; i++ {
		p := s.newPage(s.pagePath(i), now)
		p.index = i
		p.Title = fmt.Sprintf("Page %d", i)
		p.Content = s.content(i, 1)
		p.Links = s.neighbours(i)
		if p.ETag {
			s.etag(p) // a server derives its ETags ahead of the requests
		}
	}
	return s
}

func (s *Site) newPage(path string, now time.Time) *Page {
	p := &Page{
		Path:      path,
		Version:   1,
		Modified:  now,
		ETag:      !s.opts.NoETag,
		LastMod:   !s.opts.NoLastModified,
		Volatile:  s.opts.Volatile,
		InSitemap: true,
		InLLMs:    true,
		Status:    http.StatusOK,
	}
	s.pages[path] = p
	s.order = append(s.order, path)
	return p
}

// pagePath is the path of generated page i (from 1): PathPrefix +
// "page-0042", or with Sections PathPrefix + "s03/page-0042".
func (s *Site) pagePath(i int) string {
	if len(s.opts.Paths) >= i {
		return s.opts.Paths[i-1]
	}
	if n := s.opts.Sections; n > 0 && s.opts.Pages > 0 {
		sec := min((i-1)*n/s.opts.Pages, n-1)
		return fmt.Sprintf("%ss%02d/page-%04d", s.opts.PathPrefix, sec, i)
	}
	return fmt.Sprintf("%spage-%04d", s.opts.PathPrefix, i)
}

// neighbours links each page to the next few pages, so a breadth-first
// crawl from the first page reaches all of them.
func (s *Site) neighbours(i int) []string {
	var out []string
	for _, j := range []int{i + 1, i + 2, 2 * i} {
		if j >= 1 && j <= s.opts.Pages {
			out = append(out, s.pagePath(j))
		}
	}
	return out
}

var words = strings.Fields(`incremental crawler fetches pages state sitemap schedule interval change
detect validator request response header content hash volatile block timestamp token robots
delay budget freshness revisit estimate deletion tombstone index chunk vector alert evidence
source canonical identity normalize query fragment redirect archive release guide install
configure example reference tutorial server client library module package function method`)

// content builds a page's article body for a version: a few paragraphs, a
// code block and a table. Deterministic in (i, version).
func (s *Site) content(i, version int) string {
	var b strings.Builder
	n := s.opts.Words
	if s.opts.DocsChrome {
		n = n * (4 + (i*37)%13) / 8
	}
	w := func(k int) string { return words[(i*7+k*13+version*3)%len(words)] }
	fmt.Fprintf(&b, "<p>This is page %d, revision %d.", i, version)
	for k := 0; k < n; k++ {
		if s.opts.DocsChrome && k%250 == 249 {
			fmt.Fprintf(&b, "</p>\n<h2 id=\"section-%d\">Section %d</h2>\n<pre><code class=\"language-go\">func section%d(ctx context.Context) error {\n\treturn run(ctx, %d)\n}\n</code></pre>\n<p>", k/250, k/250, k/250, k)
		} else if k%20 == 19 {
			b.WriteString("</p>\n<p>")
		}
		b.WriteString(" ")
		b.WriteString(w(k))
	}
	b.WriteString(".</p>\n")
	fmt.Fprintf(&b, "<h2>Example</h2>\n<pre><code class=\"language-go\">func page%d() int {\n\treturn %d\n}\n</code></pre>\n", i, version)
	fmt.Fprintf(&b, "<h2>Settings</h2>\n<table><thead><tr><th>name</th><th>value</th></tr></thead><tbody><tr><td>page</td><td>%d</td></tr><tr><td>revision</td><td>%d</td></tr></tbody></table>\n", i, version)
	return b.String()
}

// Close shuts the server down.
func (s *Site) Close() { s.srv.Close() }

// URL returns the site's base URL, such as "http://127.0.0.1:34567" (or
// "http://" + Options.Host).
func (s *Site) URL() string { return s.base }

// Client returns an HTTP client for the site (with Options.Host, one that
// connects to the site whatever host a URL names).
func (s *Site) Client() *http.Client { return s.client }

// SitemapURL returns the URL of the sitemap (or sitemap index).
func (s *Site) SitemapURL() string { return s.base + s.sitemapPath }

// LLMsURL returns the URL of llms.txt.
func (s *Site) LLMsURL() string { return s.base + "/llms.txt" }

// PageURL returns the absolute URL of a path.
func (s *Site) PageURL(path string) string { return s.base + path }

// Paths returns the paths of all pages, in creation order.
func (s *Site) Paths() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.order...)
}

// PageURLs returns the absolute URLs of every page listed in the sitemap.
func (s *Site) PageURLs() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []string
	for _, p := range s.order {
		if s.pages[p].InSitemap {
			out = append(out, s.base+p)
		}
	}
	return out
}

// Page returns a copy of the page at path, or false.
func (s *Site) Page(path string) (Page, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	p, ok := s.pages[path]
	if !ok {
		return Page{}, false
	}
	return *p, true
}

// Update changes the page at path with f, under the site's lock. It
// panics on an unknown path (a test bug).
func (s *Site) Update(path string, f func(*Page)) {
	s.mu.Lock()
	defer s.mu.Unlock()
	p, ok := s.pages[path]
	if !ok {
		panic("testsite: no page " + path)
	}
	f(p)
}

func (s *Site) touch(p *Page) {
	p.Version++
	now := s.clock.Now().UTC().Truncate(time.Second)
	if !now.After(p.Modified) {
		now = p.Modified.Add(time.Second) // Last-Modified has one-second resolution
	}
	p.Modified = now
}

// Edit changes the real content of the page at path (a new revision),
// which moves its ETag, Last-Modified and sitemap lastmod.
func (s *Site) Edit(path string) {
	s.Update(path, func(p *Page) {
		s.touch(p)
		p.Content = s.content(p.index, p.Version)
	})
}

// Touch makes a new revision of the page at path whose real content is
// unchanged (a site rebuild, a moved footer date): its ETag, Last-Modified
// and sitemap lastmod move, and the body is the same except for its
// volatile block, if it has one.
func (s *Site) Touch(path string) {
	s.Update(path, s.touch)
}

// SetContent replaces the page's article HTML (a new revision).
func (s *Site) SetContent(path, html string) {
	s.Update(path, func(p *Page) {
		s.touch(p)
		p.Content = html
	})
}

// Delete makes the page answer status (404 or 410). It stays in the
// sitemap unless removed with RemoveFromSitemap.
func (s *Site) Delete(path string, status int) {
	s.Update(path, func(p *Page) { p.Status = status })
}

// Redirect makes the page answer 301 to target (a path or absolute URL).
func (s *Site) Redirect(path, target string) {
	s.Update(path, func(p *Page) { p.RedirectTo = target })
}

// Move makes any path (a sitemap, llms.txt, robots.txt, a served
// document or a page) answer 301 to target, a path or an absolute URL
// such as another Site's; an empty target undoes it.
func (s *Site) Move(path, target string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if target == "" {
		delete(s.moved, path)
		return
	}
	s.moved[path] = target
}

// RemoveFromSitemap drops the page from the sitemap and llms.txt; it is
// still served.
func (s *Site) RemoveFromSitemap(path string) {
	s.Update(path, func(p *Page) { p.InSitemap, p.InLLMs = false, false })
}

// AddToSitemap lists the page in the sitemap and llms.txt again.
func (s *Site) AddToSitemap(path string) {
	s.Update(path, func(p *Page) { p.InSitemap, p.InLLMs = true, true })
}

// Add creates a page at path with the given title and article HTML,
// listed in the sitemap and llms.txt, and returns its URL.
func (s *Site) Add(path, title, html string) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	p := s.newPage(path, s.clock.Now().UTC().Truncate(time.Second))
	p.Title, p.Content = title, html
	return s.base + path
}

// AddRaw creates a page served verbatim with the given content type (for
// PDFs, Markdown, malformed documents, script-only apps...). It is listed in
// the sitemap and llms.txt.
func (s *Site) AddRaw(path, contentType string, body []byte) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	p := s.newPage(path, s.clock.Now().UTC().Truncate(time.Second))
	p.Raw, p.ContentType = body, contentType
	return s.base + path
}

// Serve makes path answer body with contentType. Unlike a page it is not
// listed in the sitemap or llms.txt: use it for hand-made sitemaps,
// llms.txt variants and other documents. It returns the document's URL.
func (s *Site) Serve(path, contentType string, body []byte) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.docs[path] = document{contentType: contentType, body: body}
	return s.base + path
}

// Asset is a file of a documentation build that is not a page.
type Asset struct {
	Path        string
	ContentType string
	Size        int
}

// AddAssets gives the site the files a Sphinx-like documentation build
// links to besides its pages, and links every generated page to them: a
// PNG image, a zip archive, a Python script, a Jupyter notebook, a font
// and an Atom feed shared by all pages, each page's reStructuredText
// source under /_sources/ (text/plain, as Sphinx serves it), and a
// download without a file extension that answers application/zip, which
// only its Content-Type tells apart from a page. Assets have ETags and
// are not listed in the sitemap or llms.txt. Call it before the first
// request; it returns the assets, shared ones first.
func (s *Site) AddAssets() []Asset {
	s.mu.Lock()
	defer s.mu.Unlock()
	pre := s.opts.PathPrefix
	shared := []Asset{
		{pre + "_images/architecture.png", "image/png", 48 << 10},
		{pre + "_downloads/examples.zip", "application/zip", 160 << 10},
		{pre + "_downloads/tutorial.py", "text/x-python", 6 << 10},
		{pre + "tutorial.ipynb", "application/x-ipynb+json", 24 << 10},
		{pre + "_static/fonts/lato.woff2", "font/woff2", 32 << 10},
		{pre + "feed.atom", "application/atom+xml", 4 << 10},
		{pre + "download/dataset", "application/zip", 96 << 10},
	}
	var out []Asset
	for _, a := range shared {
		s.docs[a.Path] = document{contentType: a.ContentType, body: assetBody(a)}
		out = append(out, a)
	}
	for _, path := range s.order {
		p := s.pages[path]
		if !strings.HasPrefix(path, pre) || p.Raw != nil {
			continue
		}
		src := Asset{pre + "_sources/" + strings.TrimPrefix(path, pre) + ".rst.txt", "text/plain; charset=utf-8", 2 << 10}
		s.docs[src.Path] = document{contentType: src.ContentType, body: assetBody(src)}
		out = append(out, src)
		p.Links = append(p.Links, src.Path)
		for _, a := range shared {
			p.Links = append(p.Links, a.Path)
		}
	}
	return out
}

// assetBody is a deterministic body of a's size, starting like a file of
// its type (a PNG signature, a zip header, a script...).
func assetBody(a Asset) []byte {
	var head string
	switch {
	case strings.HasPrefix(a.ContentType, "image/png"):
		head = "\x89PNG\r\n\x1a\n"
	case strings.HasPrefix(a.ContentType, "application/zip"):
		head = "PK\x03\x04"
	case strings.HasPrefix(a.ContentType, "font/woff2"):
		head = "wOF2"
	case strings.HasPrefix(a.ContentType, "application/x-ipynb+json"):
		head = `{"cells": [], "nbformat": 4, "metadata": {}, "pad": "`
	case strings.HasPrefix(a.ContentType, "application/atom+xml"):
		head = `<?xml version="1.0" encoding="utf-8"?><feed xmlns="http://www.w3.org/2005/Atom"><title>Docs</title></feed><!-- `
	case strings.HasPrefix(a.ContentType, "text/x-python"):
		head = "# tutorial\nprint('hello')\n# "
	default:
		head = "Page\n====\n\n.. note:: source of " + a.Path + "\n\n"
	}
	b := make([]byte, a.Size)
	n := copy(b, head)
	for i := n; i < len(b); i++ {
		b[i] = 'a' + byte((i*31+len(a.Path))%26)
	}
	return b
}

// ScriptOnlyHTML is a page whose content is rendered by client-side
// JavaScript: an empty app root and scripts.
const ScriptOnlyHTML = `<!doctype html><html><head><title>App</title><script src="/static/app.js"></script></head>
<body><noscript>You need to enable JavaScript to run this app.</noscript><div id="root"></div>
<script>window.__INITIAL_STATE__={}</script></body></html>`

// SetRobots sets robots.txt's body and status (0 keeps 200).
func (s *Site) SetRobots(body string, status int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.robots = body
	if status == 0 {
		status = http.StatusOK
	}
	s.robotsCode = status
}

// RedirectRobots makes /robots.txt answer 301 to target.
func (s *Site) RedirectRobots(target string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.robotsRedir = target
}

// DisableSitemap makes the sitemap answer 404.
func (s *Site) DisableSitemap() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.noSitemap = true
}

// Fail makes the next n requests to path answer status, with a
// Retry-After header when retryAfter is not empty. Use path "*" for every
// path.
func (s *Site) Fail(path string, status, n int, retryAfter string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.faults[path] = &fault{status: status, retryAfter: retryAfter, remaining: n}
}

// Slow delays every answer for path by d of real time (for timeouts and
// concurrency). Use path "*" for every path without a delay of its own.
func (s *Site) Slow(path string, d time.Duration) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.delays[path] = d
}

// Huge makes path answer with a body of n bytes of HTML, streamed; n <= 0
// serves the page normally again.
func (s *Site) Huge(path string, n int64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if n <= 0 {
		delete(s.huge, path)
		return
	}
	s.huge[path] = n
}

// Requests returns a copy of the request log, in the order the answers
// completed.
func (s *Site) Requests() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Request(nil), s.log...)
}

// ResetLog empties the request log and resets MaxInFlight. A request
// that arrived before it belongs to the log that was reset: it is not
// logged after it, even when its handler is still running.
func (s *Site) ResetLog() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.log = nil
	s.epoch++
	s.peak = s.inFlight
}

// InFlight returns how many page requests are being answered now.
func (s *Site) InFlight() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.inFlight
}

// MaxInFlight returns the most page requests (under PathPrefix) the site
// was answering at the same time since it started or ResetLog was called:
// how many connections a client used in parallel.
func (s *Site) MaxInFlight() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.peak
}

// Count returns how many logged requests satisfy match (all when nil).
func (s *Site) Count(match func(Request) bool) int {
	n := 0
	for _, r := range s.Requests() {
		if match == nil || match(r) {
			n++
		}
	}
	return n
}

// PageRequests returns the logged requests for pages under the site's
// PathPrefix (not robots.txt, sitemaps or llms.txt).
func (s *Site) PageRequests() []Request {
	var out []Request
	for _, r := range s.Requests() {
		if strings.HasPrefix(r.Path, s.opts.PathPrefix) {
			out = append(out, r)
		}
	}
	return out
}

// IsPage reports whether a logged request was for a generated page path.
func (s *Site) IsPage(r Request) bool { return strings.HasPrefix(r.Path, s.opts.PathPrefix) }

// recorder notes a response's status and body bytes. With complete set,
// it calls it before the write that reaches the response's declared
// Content-Length: a client has the whole answer once that write is out,
// possibly before the handler returns, so the request is logged first.
type recorder struct {
	http.ResponseWriter
	status   int
	bytes    int
	complete func() // called once, before the last write of a declared length
	declared int    // the Content-Length, once read: -1 none
}

func (r *recorder) WriteHeader(code int) {
	r.status = code
	r.ResponseWriter.WriteHeader(code)
}

func (r *recorder) Write(b []byte) (int, error) {
	if r.status == 0 {
		r.status = http.StatusOK
	}
	if r.complete != nil {
		if r.declared == 0 {
			r.declared = -1
			if n, err := strconv.Atoi(r.Header().Get("Content-Length")); err == nil && n > 0 {
				r.declared = n
			}
		}
		if r.declared > 0 && r.bytes+len(b) >= r.declared {
			done := r.complete
			r.complete = nil
			r.bytes += len(b) // logged as if the write goes out whole
			done()
			n, err := r.ResponseWriter.Write(b)
			r.bytes -= len(b) - n
			return n, err
		}
	}
	n, err := r.ResponseWriter.Write(b)
	r.bytes += n
	return n, err
}

func (s *Site) serve(w http.ResponseWriter, r *http.Request) {
	rec := &recorder{ResponseWriter: w}
	at := s.clock.Now() // when the request arrived
	path := r.URL.Path
	page := strings.HasPrefix(path, s.opts.PathPrefix)
	s.mu.Lock()
	epoch := s.epoch
	delay, ok := s.delays[path]
	if !ok {
		delay = s.delays["*"]
	}
	if page {
		s.inFlight++
		s.peak = max(s.peak, s.inFlight)
	}
	every := s.trickles[path]
	s.mu.Unlock()
	if delay > 0 {
		select {
		case <-time.After(delay):
		case <-r.Context().Done():
		}
	}
	// The request is logged when its handler returns, or before the write
	// that completes a body of declared length, whichever comes first.
	logged := false
	logRequest := func() {
		s.mu.Lock()
		defer s.mu.Unlock()
		if logged {
			return
		}
		logged = true
		if page {
			s.inFlight--
		}
		if epoch != s.epoch {
			return // arrived before ResetLog
		}
		s.log = append(s.log, Request{
			Method:          r.Method,
			Path:            r.URL.RequestURI(),
			IfNoneMatch:     r.Header.Get("If-None-Match"),
			IfModifiedSince: r.Header.Get("If-Modified-Since"),
			UserAgent:       r.UserAgent(),
			Status:          rec.status,
			Bytes:           rec.bytes,
			At:              at,
		})
	}
	rec.complete = logRequest
	if every > 0 {
		s.handle(&trickleWriter{ResponseWriter: rec, r: r, every: every}, r)
	} else {
		s.handle(rec, r)
	}
	logRequest()
}

func (s *Site) handle(w http.ResponseWriter, r *http.Request) {
	path := r.URL.Path
	s.mu.Lock()
	f := s.faults[path]
	if f == nil {
		f = s.faults["*"]
	}
	if f != nil && f.remaining > 0 {
		f.remaining--
		status, ra := f.status, f.retryAfter
		s.mu.Unlock()
		if ra != "" {
			w.Header().Set("Retry-After", ra)
		}
		http.Error(w, http.StatusText(status), status)
		return
	}
	if target, ok := s.moved[path]; ok {
		s.mu.Unlock()
		http.Redirect(w, r, target, http.StatusMovedPermanently)
		return
	}
	if d, ok := s.docs[path]; ok {
		s.mu.Unlock()
		serveWithETag(w, r, d.body, d.contentType)
		return
	}
	if n, ok := s.huge[path]; ok {
		s.mu.Unlock()
		serveHuge(w, n)
		return
	}
	if n, ok := s.overclaims[path]; ok {
		s.mu.Unlock()
		serveOverclaim(w, n)
		return
	}
	if g, ok := s.gens[path]; ok {
		s.mu.Unlock()
		serveGenerated(w, r, g)
		return
	}
	if g, ok := s.fanOutLocked(path); ok {
		s.mu.Unlock()
		serveGenerated(w, r, g)
		return
	}
	switch {
	case path == "/robots.txt":
		body, code, redir := s.robots, s.robotsCode, s.robotsRedir
		if body == "" {
			body = "User-agent: *\nAllow: /\n\nSitemap: " + s.base + s.sitemapPath + "\n"
		}
		s.mu.Unlock()
		if redir != "" {
			http.Redirect(w, r, redir, http.StatusMovedPermanently)
			return
		}
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		w.WriteHeader(code)
		fmt.Fprint(w, body)
		return
	case path == "/llms.txt":
		code := s.llmsCode
		body := s.llmsLocked()
		s.mu.Unlock()
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		w.WriteHeader(code)
		w.Write(body)
		return
	case strings.HasPrefix(path, "/sitemap"):
		body, ok := s.sitemapLocked(path)
		s.mu.Unlock()
		if !ok {
			http.NotFound(w, r)
			return
		}
		serveWithETag(w, r, body, s.contentTypeFor(path))
		return
	}
	p, ok := s.pages[path]
	if !ok {
		s.mu.Unlock()
		http.NotFound(w, r)
		return
	}
	page := *p
	s.seq++
	seq := s.seq
	s.mu.Unlock()
	s.servePage(w, r, &page, seq)
}

func (s *Site) contentTypeFor(path string) string {
	if strings.HasSuffix(path, ".gz") {
		return "application/gzip"
	}
	return "application/xml"
}

func serveHuge(w http.ResponseWriter, n int64) {
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.WriteHeader(http.StatusOK)
	chunk := bytes.Repeat([]byte("<p>filler filler filler filler filler filler filler</p>\n"), 1024)
	for n > 0 {
		b := chunk
		if int64(len(b)) > n {
			b = b[:n]
		}
		if _, err := w.Write(b); err != nil {
			return // the client hung up: the connection was released
		}
		n -= int64(len(b))
	}
}

func serveWithETag(w http.ResponseWriter, r *http.Request, body []byte, ctype string) {
	sum := sha256.Sum256(body)
	etag := `"` + hex.EncodeToString(sum[:8]) + `"`
	w.Header().Set("ETag", etag)
	if etagMatch(r.Header.Get("If-None-Match"), etag) {
		w.WriteHeader(http.StatusNotModified)
		return
	}
	w.Header().Set("Content-Type", ctype)
	w.Write(body)
}

// etagMatch implements the weak comparison of If-None-Match (RFC 9110
// 13.1.2): a list of entity tags or "*".
func etagMatch(header, etag string) bool {
	if header == "" {
		return false
	}
	for _, t := range strings.Split(header, ",") {
		t = strings.TrimSpace(t)
		if t == "*" || strings.TrimPrefix(t, "W/") == strings.TrimPrefix(etag, "W/") {
			return true
		}
	}
	return false
}

func (s *Site) etag(p *Page) string {
	s.mu.Lock()
	m, ok := s.etags[p.Path]
	s.mu.Unlock()
	if ok && m.version == p.Version && m.content == p.Content {
		return m.etag
	}
	sum := sha256.Sum256([]byte(fmt.Sprintf("%s\x00%d\x00%s", p.Path, p.Version, p.Content)))
	etag := `"` + hex.EncodeToString(sum[:10]) + `"`
	s.mu.Lock()
	if s.etags == nil {
		s.etags = map[string]etagMemo{}
	}
	s.etags[p.Path] = etagMemo{version: p.Version, content: p.Content, etag: etag}
	s.mu.Unlock()
	return etag
}

func (s *Site) servePage(w http.ResponseWriter, r *http.Request, p *Page, seq int) {
	if p.RedirectTo != "" {
		http.Redirect(w, r, p.RedirectTo, http.StatusMovedPermanently)
		return
	}
	if p.Status != http.StatusOK {
		http.Error(w, http.StatusText(p.Status), p.Status)
		return
	}
	h := w.Header()
	var etag string
	if p.ETag {
		etag = s.etag(p)
		h.Set("ETag", etag)
	}
	if p.LastMod {
		h.Set("Last-Modified", p.Modified.UTC().Format(http.TimeFormat))
	}
	// RFC 9110 13.2.2: If-None-Match takes precedence; If-Modified-Since is
	// evaluated only without it.
	if inm := r.Header.Get("If-None-Match"); inm != "" {
		if p.ETag && etagMatch(inm, etag) {
			w.WriteHeader(http.StatusNotModified)
			return
		}
	} else if ims := r.Header.Get("If-Modified-Since"); ims != "" && p.LastMod {
		if t, err := http.ParseTime(ims); err == nil && !p.Modified.After(t) {
			w.WriteHeader(http.StatusNotModified)
			return
		}
	}
	if p.Raw != nil {
		h.Set("Content-Type", p.ContentType)
		w.Write(p.Raw)
		return
	}
	h.Set("Content-Type", "text/html; charset=utf-8")
	if r.Method == http.MethodHead {
		return
	}
	// A rendered page goes out whole, with its length, as a static-site
	// server sends a file (the hostile paths of hostile.go write their own
	// headers, a false length among them).
	body := s.render(p, seq)
	h.Set("Content-Length", strconv.Itoa(len(body)))
	w.Write(body)
}

// render produces the page's HTML: chrome around the article, plus the
// volatile block when the page has one. seq numbers the request, so the
// volatile block differs on every request yet is deterministic.
func (s *Site) render(p *Page, seq int) []byte {
	var b bytes.Buffer
	b.Grow(len(p.Content) + len(docsHead) + 16<<10)
	fmt.Fprintf(&b, "<!doctype html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>%s</title>\n", p.Title)
	if p.Canonical != "" {
		fmt.Fprintf(&b, "<link rel=\"canonical\" href=\"%s\">\n", p.Canonical)
	}
	if s.opts.DocsChrome {
		b.WriteString(docsHead)
		b.WriteString("</head><body dir=\"ltr\">\n<header class=\"md-header\"><nav class=\"md-header__inner md-grid\" aria-label=\"Header\"><a href=\"/\" class=\"md-header__button md-logo\">Home</a> <a href=\"" + s.opts.PathPrefix + "\">Docs</a></nav></header>\n")
		b.WriteString("<div class=\"md-container\"><main class=\"md-main\"><div class=\"md-main__inner md-grid\">\n")
		s.sidebarOnce.Do(func() { s.sidebarHTML = s.sidebar() })
		b.WriteString(s.sidebarHTML)
		b.WriteString("<div class=\"md-content\" data-md-component=\"content\"><article class=\"md-content__inner md-typeset\">\n")
		fmt.Fprintf(&b, "<a href=\"https://github.com/example/docs/edit/main%s.md\" title=\"Edit this page\" class=\"md-content__button md-icon\">Edit</a>\n", p.Path)
	} else {
		b.WriteString("</head><body>\n<header><nav><a href=\"/\">Home</a> <a href=\"" + s.opts.PathPrefix + "\">Docs</a></nav></header>\n")
		b.WriteString("<main><article>\n")
	}
	b.WriteString("<h1>")
	b.WriteString(p.Title)
	b.WriteString("</h1>\n")
	b.WriteString(p.Content)
	if p.Volatile {
		stamp := DefaultStart.Add(time.Duration(seq) * time.Second).Format(time.RFC3339)
		fmt.Fprintf(&b, "<p class=\"render-info\">Rendered at %s (csrf_token=%x)</p>\n", stamp, sha256.Sum256([]byte(strconv.Itoa(seq))))
	}
	if len(p.Links) > 0 {
		b.WriteString("<h2>See also</h2>\n<ul>\n")
		for _, l := range p.Links {
			fmt.Fprintf(&b, "<li><a href=\"%s\">%s</a></li>\n", l, l)
		}
		b.WriteString("</ul>\n")
	}
	if s.opts.DocsChrome {
		b.WriteString("</article></div></div></main>\n<footer class=\"md-footer\"><nav class=\"md-footer__inner md-grid\" aria-label=\"Footer\"><a href=\"" + s.opts.PathPrefix + "\" class=\"md-footer__link md-footer__link--prev\">Previous</a></nav>" +
			"<div class=\"md-footer-meta md-typeset\"><p>© 2026 Example Docs. All rights reserved. Made with Material for MkDocs</p></div></footer></div>\n</body></html>\n")
		return b.Bytes()
	}
	b.WriteString("</article></main>\n<footer><p>© 2026 Example Docs. All rights reserved.</p></footer>\n</body></html>\n")
	return b.Bytes()
}

// docsHead is the generator tag, inline style and script of a DocsChrome
// page.
var docsHead = "<meta name=\"generator\" content=\"mkdocs-1.6.1, mkdocs-material-9.5.39\">\n<style>" + strings.Repeat(".sidebar a{display:block;padding:2px 8px;color:#334}.toc li{margin:0}pre{background:#f6f8fa;padding:12px}", 12) + "</style>\n" +
	"<script>window.__DOCS__={version:\"1.0\",search:{index:\"/search-index.json\"}};" + strings.Repeat("document.querySelectorAll('pre').forEach(function(e){e.dataset.copy=1});", 10) + "</script>\n"

// sidebar returns a DocsChrome page's navigation, as Material for MkDocs
// lays it out: 150 links in sections, then the on-page table of contents.
// It is built once per site: a real generator renders its pages ahead of
// time, and the crawlers measured against this site should not pay for it.
func (s *Site) sidebar() string {
	b := new(strings.Builder)
	b.WriteString("<div class=\"md-sidebar md-sidebar--primary\" data-md-component=\"sidebar\" data-md-type=\"navigation\"><div class=\"md-sidebar__scrollwrap\"><nav class=\"md-nav md-nav--primary sidebar\" aria-label=\"Documentation\">\n")
	for sec := 0; sec < 10; sec++ {
		fmt.Fprintf(b, "<h3 class=\"md-nav__title\">Section %d</h3>\n<ul class=\"md-nav__list\">\n", sec+1)
		for k := 0; k < 15; k++ {
			j := sec*15 + k + 1
			fmt.Fprintf(b, "<li class=\"md-nav__item\"><a class=\"md-nav__link sidebar-link\" href=\"%s\">%s %s</a></li>\n", s.pagePath(j), words[j%len(words)], words[(j*3)%len(words)])
		}
		b.WriteString("</ul>\n")
	}
	b.WriteString("</nav></div></div>\n<div class=\"md-sidebar md-sidebar--secondary\" data-md-component=\"sidebar\" data-md-type=\"toc\"><nav class=\"md-nav md-nav--secondary toc\" aria-label=\"On this page\"><ul class=\"md-nav__list\"><li class=\"md-nav__item\"><a class=\"md-nav__link\" href=\"#example\">Example</a></li><li class=\"md-nav__item\"><a class=\"md-nav__link\" href=\"#settings\">Settings</a></li></ul></nav></div>\n")
	return b.String()
}

func (s *Site) sitemapLocked(path string) ([]byte, bool) {
	if s.noSitemap {
		return nil, false
	}
	var listed []*Page
	for _, p := range s.order {
		if pg := s.pages[p]; pg.InSitemap {
			listed = append(listed, pg)
		}
	}
	ext := ".xml"
	if s.opts.SitemapGzip {
		ext = ".xml.gz"
	}
	var body []byte
	switch {
	case path == s.sitemapPath && s.opts.SitemapSplit > 0:
		var b bytes.Buffer
		b.WriteString(`<?xml version="1.0" encoding="UTF-8"?>` + "\n" + `<sitemapindex xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">` + "\n")
		for i := 0; i*s.opts.SitemapSplit < len(listed); i++ {
			fmt.Fprintf(&b, "<sitemap><loc>%s/sitemap-%d%s</loc></sitemap>\n", s.base, i+1, ext)
		}
		b.WriteString("</sitemapindex>\n")
		body = b.Bytes()
	case path == s.sitemapPath:
		body = s.urlset(listed)
	case s.opts.SitemapSplit > 0 && strings.HasPrefix(path, "/sitemap-") && strings.HasSuffix(path, ext):
		n, err := strconv.Atoi(strings.TrimSuffix(strings.TrimPrefix(path, "/sitemap-"), ext))
		if err != nil || n < 1 || (n-1)*s.opts.SitemapSplit >= len(listed) {
			return nil, false
		}
		lo := (n - 1) * s.opts.SitemapSplit
		hi := min(lo+s.opts.SitemapSplit, len(listed))
		body = s.urlset(listed[lo:hi])
	default:
		return nil, false
	}
	if s.opts.SitemapGzip {
		var z bytes.Buffer
		gw := gzip.NewWriter(&z)
		gw.Write(body)
		gw.Close()
		body = z.Bytes()
	}
	return body, true
}

func (s *Site) urlset(pages []*Page) []byte {
	var b bytes.Buffer
	b.WriteString(`<?xml version="1.0" encoding="UTF-8"?>` + "\n" + `<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">` + "\n")
	for _, p := range pages {
		fmt.Fprintf(&b, "<url><loc>%s%s</loc>", s.base, p.Path)
		if p.Priority > 0 {
			fmt.Fprintf(&b, "<priority>%.2f</priority>", p.Priority)
		}
		switch {
		case p.ListedLastMod == ListNone:
		case p.ListedLastMod == ListGenerated:
			fmt.Fprintf(&b, "<lastmod>%s</lastmod>", s.clock.Now().UTC().Format(time.RFC3339))
		case p.ListedLastMod == ListModified:
			fmt.Fprintf(&b, "<lastmod>%s</lastmod>", p.Modified.UTC().Format(time.RFC3339))
		case p.ListedLastMod != "":
			fmt.Fprintf(&b, "<lastmod>%s</lastmod>", html.EscapeString(p.ListedLastMod))
		case s.opts.NoLastMod:
		case s.opts.GeneratedLastMod:
			fmt.Fprintf(&b, "<lastmod>%s</lastmod>", s.clock.Now().UTC().Format(time.RFC3339))
		default:
			fmt.Fprintf(&b, "<lastmod>%s</lastmod>", p.Modified.UTC().Format(time.RFC3339))
		}
		b.WriteString("</url>\n")
	}
	b.WriteString("</urlset>\n")
	return b.Bytes()
}

func (s *Site) llmsLocked() []byte {
	var b bytes.Buffer
	b.WriteString("# Example Docs\n\n> Documentation of an example project, for tests.\n\n## Pages\n\n")
	paths := append([]string(nil), s.order...)
	sort.Strings(paths)
	for _, path := range paths {
		p := s.pages[path]
		if !p.InLLMs {
			continue
		}
		fmt.Fprintf(&b, "- [%s](%s): %s\n", p.Title, path, "reference page")
	}
	return b.Bytes()
}
