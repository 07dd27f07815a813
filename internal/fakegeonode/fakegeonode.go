// Package fakegeonode is the Geonode Scraper API on loopback, for offline
// tests, examples and benchmarks of recrawl's Geonode client.
//
// A Server implements the contract in the project's geonode-api.md: sync and
// async extraction (POST /v1/extract, GET /v1/extract/{id}), batch jobs with
// real pagination and progress spread over several polls (POST /v1/batch,
// GET and DELETE /v1/batch/{id}), and URL mapping (POST /v1/map). It fetches
// the requested pages over HTTP from whatever origin the URL names (usually a
// testsite.Site), forwards the request's headers object to it, converts HTML
// to Markdown with recrawl's extract package and reports the origin's status
// in metadata.http_status.
//
// Where Geonode's documentation is silent the fake follows §9 of the
// contract: application errors carry a code (UNAUTHORIZED,
// INSUFFICIENT_BALANCE, NOT_FOUND, INVALID_STATE, RATE_LIMITED), Retry-After
// is sent only when a test asks for it, unrequested formats are null, no
// ETag or Last-Modified is ever reported, and unknown request fields are
// ignored.
//
// Billing follows the contract's billing section, with one choice of ours:
// every extraction that got an answer from the origin costs one request,
// whatever the origin's status (a 304 or a 404 included), because the
// origin was reached and the docs do not say otherwise. Failed extractions,
// rejected requests, job lookups and map calls cost nothing.
//
// Pages are fetched only from loopback hosts or the configured Origins, so
// nothing reaches the internet. The list endpoints, crawl, webhooks, usage
// and statistics are not implemented (404).
//
// Tests steer the fake with Fail/Inject (API errors such as 429 with or
// without Retry-After, 5xx, 408), FailURL (an extraction that fails),
// SetBalance (402 once the balance runs out), StallBatches and
// StallExtracts (jobs that never finish), Hang (requests that get no answer
// at all), and read what happened with
// Requests and Billed.
package fakegeonode

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/recrawl/recrawl/clock"
	"github.com/recrawl/recrawl/extract"
	"github.com/recrawl/recrawl/sitemap"
)

// DefaultAPIKey is the key a Server accepts when Options.APIKey is empty.
const DefaultAPIKey = "fake-geonode-key-0123456789"

// Limits of the contract, enforced by the fake.
const (
	MaxBatchURLs    = 1000
	MaxPageSize     = 50
	DefaultPageSize = 10
)

// Options configure a Server. The zero value is ready to use.
type Options struct {
	// APIKey is the only key accepted in X-Api-Key (default DefaultAPIKey).
	APIKey string
	// Client fetches origin pages (default: a client with a 30 s timeout).
	Client *http.Client
	// Clock stamps created_at and completed_at (default: a fixed clock at
	// 2026-01-01).
	Clock clock.Clock
	// ItemsPerPoll is how many pending batch items finish each time a
	// client polls a batch job (a GET of page 1), default 10. Batch jobs
	// therefore complete over several polls, deterministically.
	ItemsPerPoll int
	// AsyncPolls is how many polls an async extraction answers
	// "processing" before it completes (default 1).
	AsyncPolls int
	// InvalidURLObjects reports a batch's invalid_urls as objects
	// {"url","reason"} instead of plain strings (the element type is not
	// documented; clients must handle both).
	InvalidURLObjects bool
	// MaxBodyBytes caps an origin body (default 10 MiB).
	MaxBodyBytes int64
	// Origins are the base URLs (scheme://host[:port]) the fake may fetch
	// pages from, such as a testsite.Site's URL(). Empty means any
	// loopback host. Other URLs fail as unreachable, so a test can never
	// reach the internet through the fake.
	Origins []string
}

// Request is one logged API request.
type Request struct {
	Method string
	Path   string // path only
	Query  string // raw query
	Body   []byte // request body as sent
	// KeyOK reports whether the request carried the right API key.
	KeyOK  bool
	Status int
}

// Fault is an injected API error.
type Fault struct {
	// Status is the HTTP status to answer.
	Status int
	// Times is how many matching requests fail (default 1).
	Times int
	// RetryAfter, when not empty, is sent as the Retry-After header.
	RetryAfter string
	// Code and Message fill the application error body (defaults by status).
	Code, Message string
	// Retryable overrides the body's retryable flag (default: true for 429
	// and 5xx).
	Retryable *bool
	// Body, when not empty, is sent verbatim instead of the application
	// error body.
	Body string
	// Hang makes the matching requests get no answer at all: the handler
	// holds them until the client gives up or the server closes (an API
	// that stalls). Status and the other fields are then unused.
	Hang bool
}

type urlFailure struct{ code, message string }

// Server is a running fake Geonode API. Its methods are safe for concurrent
// use.
type Server struct {
	srv    *httptest.Server
	opts   Options
	client *http.Client
	clock  clock.Clock

	mu          sync.Mutex
	log         []Request
	faults      map[string]*Fault
	failURL     map[string]urlFailure
	rejectURL   map[string]bool
	billed      int
	limited     bool
	balance     int
	seq         int
	extracts    map[string]*extractJob
	batches     map[string]*batchJob
	stallAfter  int // -1: batches progress normally
	stallAsync  bool
	corrSeq     int
	originCalls int

	closed    chan struct{} // closed by Close: hanging requests return
	closeOnce sync.Once
}

// New starts a fake API on loopback. Call Close when done.
func New(opts Options) *Server {
	if opts.APIKey == "" {
		opts.APIKey = DefaultAPIKey
	}
	if opts.ItemsPerPoll <= 0 {
		opts.ItemsPerPoll = 10
	}
	if opts.AsyncPolls <= 0 {
		opts.AsyncPolls = 1
	}
	if opts.MaxBodyBytes <= 0 {
		opts.MaxBodyBytes = 10 << 20
	}
	if opts.Clock == nil {
		opts.Clock = clock.NewFake(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	}
	s := &Server{
		opts:       opts,
		client:     opts.Client,
		clock:      opts.Clock,
		faults:     map[string]*Fault{},
		failURL:    map[string]urlFailure{},
		rejectURL:  map[string]bool{},
		extracts:   map[string]*extractJob{},
		batches:    map[string]*batchJob{},
		stallAfter: -1,
		closed:     make(chan struct{}),
	}
	if s.client == nil {
		s.client = &http.Client{Timeout: 30 * time.Second}
	}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /health", func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, http.StatusOK, map[string]any{"status": "ok"})
	})
	mux.HandleFunc("POST /v1/extract", s.postExtract)
	mux.HandleFunc("GET /v1/extract/{id}", s.getExtract)
	mux.HandleFunc("POST /v1/batch", s.postBatch)
	mux.HandleFunc("GET /v1/batch/{id}", s.getBatch)
	mux.HandleFunc("DELETE /v1/batch/{id}", s.deleteBatch)
	mux.HandleFunc("POST /v1/map", s.postMap)
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		s.appError(w, http.StatusNotFound, "NOT_FOUND", "no such endpoint: "+r.Method+" "+r.URL.Path, false)
	})
	s.srv = httptest.NewServer(s.middleware(mux))
	return s
}

// Close shuts the server down.
func (s *Server) Close() {
	s.closeOnce.Do(func() { close(s.closed) })
	s.srv.Close()
}

// Hang makes the next n requests matching endpoint (see Fail) get no
// answer until the client gives up: a stalled API.
func (s *Server) Hang(endpoint string, n int) {
	s.Inject(endpoint, Fault{Hang: true, Times: n})
}

// URL returns the base URL, such as "http://127.0.0.1:34567".
func (s *Server) URL() string { return s.srv.URL }

// APIKey returns the key the server accepts.
func (s *Server) APIKey() string { return s.opts.APIKey }

// Billed returns how many requests were billed so far.
func (s *Server) Billed() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.billed
}

// OriginRequests returns how many page requests the fake sent to origins.
func (s *Server) OriginRequests() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.originCalls
}

// SetBalance limits the account to n more billed requests; once they are
// used, extraction requests answer 402 INSUFFICIENT_BALANCE (a batch asks
// for its whole URL count up front). A negative n removes the limit.
func (s *Server) SetBalance(n int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.limited, s.balance = n >= 0, max(n, 0)
}

// Fail makes the next n requests matching endpoint answer status, with a
// Retry-After header when retryAfter is not empty. endpoint is "METHOD
// /path-prefix" (for example "POST /v1/extract" or "GET /v1/batch/") or "*".
func (s *Server) Fail(endpoint string, status, n int, retryAfter string) {
	s.Inject(endpoint, Fault{Status: status, Times: n, RetryAfter: retryAfter})
}

// Inject installs a fault for endpoint (see Fail), replacing any earlier one.
func (s *Server) Inject(endpoint string, f Fault) {
	if f.Times <= 0 {
		f.Times = 1
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.faults[endpoint] = &f
}

// FailURL makes every extraction of pageURL fail with code and message:
// a 422 for a sync extraction, a failed job for an async one, a failed
// item in a batch. An empty code removes the failure.
func (s *Server) FailURL(pageURL, code, message string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if code == "" {
		delete(s.failURL, pageURL)
		return
	}
	s.failURL[pageURL] = urlFailure{code: code, message: message}
}

// RejectURL makes the API's URL validation refuse pageURL (Geonode
// validates more than a parse, e.g. hosts it cannot resolve): a batch lists
// it in invalid_urls, an extraction answers 422 in FastAPI's shape.
func (s *Server) RejectURL(pageURL string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.rejectURL[pageURL] = true
}

func (s *Server) validURL(raw string) bool {
	s.mu.Lock()
	rejected := s.rejectURL[raw]
	s.mu.Unlock()
	return !rejected && validPageURL(raw)
}

// StallBatches makes batch jobs created from now on finish at most after
// items and then never progress again (a stuck job); a negative value
// turns stalling off for new jobs.
func (s *Server) StallBatches(after int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.stallAfter = after
}

// StallExtracts makes async extractions stay "processing" forever while on.
func (s *Server) StallExtracts(on bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.stallAsync = on
}

// Requests returns a copy of the request log.
func (s *Server) Requests() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]Request, len(s.log))
	copy(out, s.log)
	return out
}

// ResetLog empties the request log.
func (s *Server) ResetLog() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.log = nil
}

// Count returns how many logged requests have the method and a path with
// the prefix (an empty method matches any).
func (s *Server) Count(method, pathPrefix string) int {
	n := 0
	for _, r := range s.Requests() {
		if (method == "" || r.Method == method) && strings.HasPrefix(r.Path, pathPrefix) {
			n++
		}
	}
	return n
}

type statusRecorder struct {
	http.ResponseWriter
	status int
}

func (r *statusRecorder) WriteHeader(code int) {
	r.status = code
	r.ResponseWriter.WriteHeader(code)
}

func (r *statusRecorder) Write(b []byte) (int, error) {
	if r.status == 0 {
		r.status = http.StatusOK
	}
	return r.ResponseWriter.Write(b)
}

// middleware logs every request, checks the API key and applies faults.
func (s *Server) middleware(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, err := io.ReadAll(io.LimitReader(r.Body, 16<<20))
		if err != nil {
			http.Error(w, "reading body: "+err.Error(), http.StatusBadRequest)
			return
		}
		r.Body = io.NopCloser(bytes.NewReader(body))
		rec := &statusRecorder{ResponseWriter: w}
		keyOK := r.Header.Get("X-Api-Key") == s.opts.APIKey
		defer func() {
			s.mu.Lock()
			s.log = append(s.log, Request{Method: r.Method, Path: r.URL.Path, Query: r.URL.RawQuery, Body: body, KeyOK: keyOK, Status: rec.status})
			s.mu.Unlock()
		}()
		if r.URL.Path != "/health" && !keyOK {
			s.appError(rec, http.StatusUnauthorized, "UNAUTHORIZED", "missing or invalid API key: send it in the X-Api-Key header", false)
			return
		}
		if f := s.takeFault(r.Method, r.URL.Path); f != nil {
			if f.Hang {
				select {
				case <-r.Context().Done():
				case <-s.closed:
				}
				return
			}
			s.writeFault(rec, f)
			return
		}
		next.ServeHTTP(rec, r)
	})
}

func (s *Server) takeFault(method, path string) *Fault {
	s.mu.Lock()
	defer s.mu.Unlock()
	var hit *Fault
	var key string
	for k, f := range s.faults {
		if f.Times <= 0 {
			continue
		}
		if k == "*" {
			if hit == nil {
				hit, key = f, k
			}
			continue
		}
		m, p, ok := strings.Cut(k, " ")
		if ok && m == method && strings.HasPrefix(path, p) && (hit == nil || key == "*" || len(k) > len(key)) {
			hit, key = f, k
		}
	}
	if hit == nil {
		return nil
	}
	hit.Times--
	c := *hit
	return &c
}

func (s *Server) writeFault(w http.ResponseWriter, f *Fault) {
	if f.RetryAfter != "" {
		w.Header().Set("Retry-After", f.RetryAfter)
	}
	if f.Body != "" {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(f.Status)
		io.WriteString(w, f.Body)
		return
	}
	code, msg := f.Code, f.Message
	if code == "" {
		code = codeFor(f.Status)
	}
	if msg == "" {
		msg = "injected failure: " + http.StatusText(f.Status)
	}
	retry := f.Status == http.StatusTooManyRequests || f.Status >= 500
	if f.Retryable != nil {
		retry = *f.Retryable
	}
	s.appError(w, f.Status, code, msg, retry)
}

func codeFor(status int) string {
	switch status {
	case http.StatusUnauthorized:
		return "UNAUTHORIZED"
	case http.StatusPaymentRequired:
		return "INSUFFICIENT_BALANCE"
	case http.StatusNotFound:
		return "NOT_FOUND"
	case http.StatusRequestTimeout:
		return "TIMEOUT"
	case http.StatusConflict:
		return "INVALID_STATE"
	case http.StatusUnprocessableEntity:
		return "VALIDATION_ERROR"
	case http.StatusTooManyRequests:
		return "RATE_LIMITED"
	}
	if status >= 500 {
		return "INTERNAL_ERROR"
	}
	return "ERROR"
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	b, err := json.Marshal(v)
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	w.Write(b)
}

// appError writes the application error shape.
func (s *Server) appError(w http.ResponseWriter, status int, code, message string, retryable bool) {
	s.mu.Lock()
	s.corrSeq++
	corr := fmt.Sprintf("c0ffee00-0000-4000-8000-%012x", s.corrSeq)
	s.mu.Unlock()
	writeJSON(w, status, map[string]any{"code": code, "message": message, "correlation_id": corr, "retryable": retryable})
}

// validation writes FastAPI's 422 shape for one problem.
func validation(w http.ResponseWriter, typ string, loc []any, msg string) {
	writeJSON(w, http.StatusUnprocessableEntity, map[string]any{
		"detail": []map[string]any{{"type": typ, "loc": loc, "msg": msg}},
	})
}

func (s *Server) newID() string {
	s.seq++
	return fmt.Sprintf("%08x-0000-4000-8000-%012x", s.seq, s.seq)
}

func (s *Server) stamp() string { return s.clock.Now().UTC().Format(time.RFC3339Nano) }

// ---- request bodies ----

type proxyCfg struct {
	Country *string `json:"country"`
	Type    string  `json:"type"`
}

type waitCfg struct {
	WaitUntil   string  `json:"wait_until"`
	WaitFor     *string `json:"wait_for"`
	WaitTimeout int     `json:"wait_timeout"`
}

type pageOptions struct {
	Formats      []string          `json:"formats"`
	RenderJS     bool              `json:"render_js"`
	Proxy        *proxyCfg         `json:"proxy"`
	Headers      map[string]string `json:"headers"`
	WaitConfig   *waitCfg          `json:"wait_config"`
	ExtractLinks bool              `json:"extract_links"`
}

type extractBody struct {
	URL            *string `json:"url"`
	ProcessingMode string  `json:"processing_mode"`
	pageOptions
}

type batchBody struct {
	URLs              *[]string `json:"urls"`
	IgnoreInvalidURLs *bool     `json:"ignore_invalid_urls"`
	pageOptions
}

type mapBody struct {
	URL                   *string `json:"url"`
	Search                *string `json:"search"`
	IncludeSubdomains     *bool   `json:"include_subdomains"`
	IgnoreQueryParameters *bool   `json:"ignore_query_parameters"`
}

// decodeBody decodes a JSON request body, ignoring unknown fields; a
// malformed body is a FastAPI 422.
func decodeBody(w http.ResponseWriter, r *http.Request, v any) bool {
	if err := json.NewDecoder(r.Body).Decode(v); err != nil {
		validation(w, "json_invalid", []any{"body"}, "JSON decode error: "+err.Error())
		return false
	}
	return true
}

func validFormats(w http.ResponseWriter, f []string) bool {
	for i, v := range f {
		if v != "markdown" && v != "html" {
			validation(w, "enum", []any{"body", "formats", i}, "Input should be 'markdown' or 'html'")
			return false
		}
	}
	return true
}

func validPageURL(raw string) bool {
	u, err := url.Parse(raw)
	return err == nil && (u.Scheme == "http" || u.Scheme == "https") && u.Host != "" && !strings.ContainsAny(raw, " \t\r\n")
}

// ---- extraction ----

// page is the outcome of one extraction.
type page struct {
	status   int
	finalURL string
	markdown *string
	html     *string
	links    []string
	fail     *urlFailure
}

func (p *page) data(formats []string, withLinks bool) map[string]any {
	d := map[string]any{"markdown": nil, "html": nil, "links": nil}
	for _, f := range formats {
		switch f {
		case "markdown":
			d["markdown"] = p.markdown
		case "html":
			d["html"] = p.html
		}
	}
	if withLinks {
		d["links"] = p.links
	}
	return d
}

func (p *page) metadata(o pageOptions, mode string) map[string]any {
	m := map[string]any{
		"url": p.finalURL, "render_js": o.RenderJS, "http_status": p.status, "duration_ms": 12,
		"retry_count": 0, "formats": o.Formats, "processing_mode": mode, "headers": o.Headers,
	}
	if o.Proxy != nil {
		m["proxy"] = o.Proxy
	} else {
		m["proxy"] = proxyCfg{Type: "residential"}
	}
	if o.WaitConfig != nil {
		m["wait_config"] = o.WaitConfig
	}
	return m
}

// reachable reports whether the fake may fetch raw: an allowed origin, or
// a loopback host when no origin is configured.
func (s *Server) reachable(raw string) bool {
	u, err := url.Parse(raw)
	if err != nil {
		return false
	}
	if len(s.opts.Origins) == 0 {
		h := u.Hostname()
		if h == "localhost" {
			return true
		}
		ip := net.ParseIP(h)
		return ip != nil && ip.IsLoopback()
	}
	for _, o := range s.opts.Origins {
		ou, err := url.Parse(o)
		if err == nil && strings.EqualFold(ou.Scheme, u.Scheme) && strings.EqualFold(ou.Host, u.Host) {
			return true
		}
	}
	return false
}

// fetchPage fetches pageURL from its origin with the caller's headers and
// converts it. A URL registered with FailURL fails without an origin
// request; an origin that cannot be reached fails with EXTRACTION_FAILED.
func (s *Server) fetchPage(ctx context.Context, pageURL string, o pageOptions) *page {
	s.mu.Lock()
	f, failing := s.failURL[pageURL]
	s.mu.Unlock()
	if failing {
		return &page{fail: &f}
	}
	if !s.reachable(pageURL) {
		return &page{fail: &urlFailure{code: "EXTRACTION_FAILED", message: "could not reach the target: the fake fetches only its configured origins"}}
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, pageURL, nil)
	if err != nil {
		return &page{fail: &urlFailure{code: "EXTRACTION_FAILED", message: err.Error()}}
	}
	req.Header.Set("User-Agent", "fakegeonode/1.0")
	for k, v := range o.Headers {
		req.Header.Set(k, v)
	}
	s.mu.Lock()
	s.originCalls++
	s.mu.Unlock()
	resp, err := s.client.Do(req)
	if err != nil {
		return &page{fail: &urlFailure{code: "EXTRACTION_FAILED", message: "could not reach the target: " + err.Error()}}
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, s.opts.MaxBodyBytes+1))
	if err != nil {
		return &page{fail: &urlFailure{code: "EXTRACTION_FAILED", message: "reading the target's answer: " + err.Error()}}
	}
	if int64(len(body)) > s.opts.MaxBodyBytes {
		return &page{fail: &urlFailure{code: "CONTENT_TOO_LARGE", message: "the target's answer exceeds the size limit"}}
	}
	p := &page{status: resp.StatusCode, finalURL: resp.Request.URL.String()}
	empty := ""
	p.markdown, p.html = &empty, &empty
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return p
	}
	h := string(body)
	p.html = &h
	mt, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type"))
	switch mt {
	case "text/markdown", "text/plain":
		p.markdown = &h
	default:
		doc, err := extract.FromHTMLWithType(body, p.finalURL, resp.Header.Get("Content-Type"))
		md := doc.Markdown
		if err != nil {
			md = "" // a script-rendered or empty page yields no text without rendering
		}
		p.markdown = &md
		p.links = doc.Links
	}
	return p
}

// charge bills one extraction; it reports false when the balance is empty.
func (s *Server) charge() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.limited {
		if s.balance <= 0 {
			return false
		}
		s.balance--
	}
	s.billed++
	return true
}

func (s *Server) hasBalance(n int) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return !s.limited || s.balance >= n
}

func (s *Server) noBalance(w http.ResponseWriter) {
	s.appError(w, http.StatusPaymentRequired, "INSUFFICIENT_BALANCE", "insufficient request balance: top up or upgrade the plan", false)
}

type extractJob struct {
	id        string
	url       string
	opts      pageOptions
	polls     int
	status    string
	created   string
	completed *string
	page      *page
	err       *urlFailure
}

func (s *Server) postExtract(w http.ResponseWriter, r *http.Request) {
	var b extractBody
	if !decodeBody(w, r, &b) {
		return
	}
	if b.URL == nil {
		validation(w, "missing", []any{"body", "url"}, "Field required")
		return
	}
	if !s.validURL(*b.URL) {
		validation(w, "url_parsing", []any{"body", "url"}, "Input should be a valid URL")
		return
	}
	if b.Formats == nil {
		b.Formats = []string{"html"} // the documented default of extract
	}
	if !validFormats(w, b.Formats) {
		return
	}
	mode := b.ProcessingMode
	if mode == "" {
		mode = "sync"
	}
	if mode != "sync" && mode != "async" {
		validation(w, "literal_error", []any{"body", "processing_mode"}, "Input should be 'sync' or 'async'")
		return
	}
	if !s.hasBalance(1) {
		s.noBalance(w)
		return
	}
	if mode == "async" {
		s.mu.Lock()
		j := &extractJob{id: s.newID(), url: *b.URL, opts: b.pageOptions, status: "queued", created: s.stamp()}
		s.extracts[j.id] = j
		s.mu.Unlock()
		writeJSON(w, http.StatusAccepted, map[string]any{
			"job_id": j.id, "status": "queued", "status_url": "/v1/extract/" + j.id, "estimated_tokens": 1,
		})
		return
	}
	p := s.fetchPage(r.Context(), *b.URL, b.pageOptions)
	if p.fail != nil {
		s.appError(w, http.StatusUnprocessableEntity, p.fail.code, p.fail.message, false)
		return
	}
	if !s.charge() {
		s.noBalance(w)
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{
		"data":           p.data(b.Formats, b.ExtractLinks),
		"metadata":       p.metadata(b.pageOptions, "sync"),
		"tokens_charged": 1,
	})
}

func (s *Server) getExtract(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	s.mu.Lock()
	j, ok := s.extracts[id]
	if !ok {
		s.mu.Unlock()
		s.appError(w, http.StatusNotFound, "NOT_FOUND", "extraction job "+id+" not found", false)
		return
	}
	run := false
	if j.status == "queued" || j.status == "processing" {
		j.polls++
		j.status = "processing"
		if !s.stallAsync && j.polls > s.opts.AsyncPolls {
			run = true
		}
	}
	s.mu.Unlock()
	if run {
		p := s.fetchPage(r.Context(), j.url, j.opts)
		var fail *urlFailure
		switch {
		case p.fail != nil:
			fail = p.fail
		case !s.charge():
			fail = &urlFailure{code: "INSUFFICIENT_BALANCE", message: "insufficient request balance"}
		}
		s.mu.Lock()
		now := s.stamp()
		j.completed = &now
		if fail != nil {
			j.status, j.err = "failed", fail
		} else {
			j.status, j.page = "completed", p
		}
		s.mu.Unlock()
	}
	s.mu.Lock()
	out := map[string]any{
		"job_id": j.id, "status": j.status, "created_at": j.created, "completed_at": j.completed,
		"data": nil, "metadata": nil, "error": nil, "tokens_charged": nil,
	}
	if j.page != nil {
		out["data"] = j.page.data(j.opts.Formats, j.opts.ExtractLinks)
		out["metadata"] = j.page.metadata(j.opts, "async")
		out["tokens_charged"] = 1
	}
	if j.err != nil {
		out["error"] = map[string]any{"code": j.err.code, "message": j.err.message, "retryable": false, "details": map[string]any{}}
	}
	s.mu.Unlock()
	writeJSON(w, http.StatusOK, out)
}

// ---- batch ----

type batchItem struct {
	index  int
	url    string
	status string // queued, processing, completed, failed, cancelled
	page   *page
	err    *urlFailure
}

type batchJob struct {
	id         string
	opts       pageOptions
	items      []*batchItem // by input order of accepted URLs
	invalid    []string
	status     string
	created    string
	completed  *string
	stallAfter int
	finished   int
	charged    int
}

func (s *Server) postBatch(w http.ResponseWriter, r *http.Request) {
	var b batchBody
	if !decodeBody(w, r, &b) {
		return
	}
	if b.URLs == nil {
		validation(w, "missing", []any{"body", "urls"}, "Field required")
		return
	}
	urls := *b.URLs
	if len(urls) == 0 {
		validation(w, "too_short", []any{"body", "urls"}, "List should have at least 1 item after validation, not 0")
		return
	}
	if len(urls) > MaxBatchURLs {
		validation(w, "too_long", []any{"body", "urls"}, fmt.Sprintf("List should have at most %d items after validation, not %d", MaxBatchURLs, len(urls)))
		return
	}
	if b.Formats == nil {
		b.Formats = []string{"markdown"} // the documented default of batch
	}
	if !validFormats(w, b.Formats) {
		return
	}
	ignore := b.IgnoreInvalidURLs == nil || *b.IgnoreInvalidURLs
	j := &batchJob{opts: b.pageOptions, status: "queued"}
	for i, u := range urls {
		if !s.validURL(u) {
			if !ignore {
				validation(w, "url_parsing", []any{"body", "urls", i}, "Input should be a valid URL")
				return
			}
			j.invalid = append(j.invalid, u)
			continue
		}
		j.items = append(j.items, &batchItem{index: i, url: u, status: "queued"})
	}
	if !s.hasBalance(len(j.items)) {
		s.noBalance(w)
		return
	}
	s.mu.Lock()
	j.id, j.created, j.stallAfter = s.newID(), s.stamp(), s.stallAfter
	s.batches[j.id] = j
	if len(j.items) == 0 {
		now := j.created
		j.status, j.completed = "completed", &now
	}
	invalid := s.invalidList(j)
	s.mu.Unlock()
	writeJSON(w, http.StatusAccepted, map[string]any{
		"job_id": j.id, "status": j.status, "status_url": "/v1/batch/" + j.id,
		"accepted_urls": len(j.items), "invalid_urls": invalid,
	})
}

func (s *Server) invalidList(j *batchJob) []any {
	out := make([]any, 0, len(j.invalid))
	for _, u := range j.invalid {
		if s.opts.InvalidURLObjects {
			out = append(out, map[string]any{"url": u, "reason": "not an absolute http(s) URL"})
		} else {
			out = append(out, u)
		}
	}
	return out
}

func intParam(q url.Values, name string, def int) (int, bool) {
	v := q.Get(name)
	if v == "" {
		return def, true
	}
	n, err := strconv.Atoi(v)
	return n, err == nil
}

func (s *Server) getBatch(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	q := r.URL.Query()
	pageNo, ok1 := intParam(q, "page", 1)
	size, ok2 := intParam(q, "page_size", DefaultPageSize)
	switch {
	case !ok1 || pageNo < 1:
		validation(w, "greater_than_equal", []any{"query", "page"}, "Input should be greater than or equal to 1")
		return
	case !ok2 || size < 1:
		validation(w, "greater_than_equal", []any{"query", "page_size"}, "Input should be greater than or equal to 1")
		return
	case size > MaxPageSize:
		validation(w, "less_than_equal", []any{"query", "page_size"}, fmt.Sprintf("Input should be less than or equal to %d", MaxPageSize))
		return
	}
	s.mu.Lock()
	j, ok := s.batches[id]
	s.mu.Unlock()
	if !ok {
		s.appError(w, http.StatusNotFound, "NOT_FOUND", "batch job "+id+" not found", false)
		return
	}
	if pageNo == 1 {
		s.progress(r.Context(), j)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	var done, failed, cancelled, pending int
	for _, it := range j.items {
		switch it.status {
		case "completed":
			done++
		case "failed":
			failed++
		case "cancelled":
			cancelled++
		default:
			pending++
		}
	}
	results := []map[string]any{}
	lo := min((pageNo-1)*size, len(j.items))
	hi := min(lo+size, len(j.items))
	for _, it := range j.items[lo:hi] {
		res := map[string]any{"input_index": it.index, "url": it.url, "status": it.status, "error_code": nil, "error_message": nil, "data": nil, "metadata": nil}
		if it.page != nil {
			res["data"] = it.page.data(j.opts.Formats, j.opts.ExtractLinks)
			res["metadata"] = map[string]any{"url": it.page.finalURL, "http_status": it.page.status, "duration_ms": 12, "retry_count": 0, "tokens_charged": 1}
		}
		if it.err != nil {
			res["error_code"], res["error_message"] = it.err.code, it.err.message
		}
		results = append(results, res)
	}
	cfg := map[string]any{"render_js": j.opts.RenderJS, "formats": j.opts.Formats, "proxy": j.opts.Proxy, "headers": j.opts.Headers}
	if j.opts.WaitConfig != nil {
		cfg["wait_config"] = j.opts.WaitConfig
	}
	writeJSON(w, http.StatusOK, map[string]any{
		"job_id": j.id, "status": j.status, "batch_config": cfg,
		"token_summary": map[string]any{"tokens_charged_total": j.charged, "tokens_reserved": len(j.items)},
		"total_urls":    len(j.items), "completed_urls": done, "failed_urls": failed, "cancelled_urls": cancelled,
		"pending_urls": pending, "invalid_urls": s.invalidList(j), "created_at": j.created, "completed_at": j.completed,
		"results": results,
	})
}

// progress finishes the next ItemsPerPoll queued items of a job (unless it
// is stalled), fetching their pages outside the lock.
func (s *Server) progress(ctx context.Context, j *batchJob) {
	s.mu.Lock()
	if j.status != "queued" && j.status != "processing" {
		s.mu.Unlock()
		return
	}
	j.status = "processing"
	var claim []*batchItem
	for _, it := range j.items {
		if len(claim) == s.opts.ItemsPerPoll {
			break
		}
		if j.stallAfter >= 0 && j.finished+len(claim) >= j.stallAfter {
			break
		}
		if it.status == "queued" {
			it.status = "processing"
			claim = append(claim, it)
		}
	}
	s.mu.Unlock()
	for _, it := range claim {
		p := s.fetchPage(ctx, it.url, j.opts)
		var fail *urlFailure
		switch {
		case p.fail != nil:
			fail = p.fail
		case !s.charge():
			fail = &urlFailure{code: "INSUFFICIENT_BALANCE", message: "insufficient request balance"}
		}
		s.mu.Lock()
		if it.status == "processing" { // not cancelled meanwhile
			if fail != nil {
				it.status, it.err = "failed", fail
			} else {
				it.status, it.page = "completed", p
				j.charged++
			}
			j.finished++
		}
		s.mu.Unlock()
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if j.status != "processing" {
		return
	}
	for _, it := range j.items {
		if it.status == "queued" || it.status == "processing" {
			return
		}
	}
	now := s.stamp()
	j.status, j.completed = "completed", &now
}

func (s *Server) deleteBatch(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	s.mu.Lock()
	j, ok := s.batches[id]
	if !ok {
		s.mu.Unlock()
		s.appError(w, http.StatusNotFound, "NOT_FOUND", "batch job "+id+" not found", false)
		return
	}
	if j.status != "queued" && j.status != "processing" {
		st := j.status
		s.mu.Unlock()
		s.appError(w, http.StatusConflict, "INVALID_STATE", "batch job "+id+" is already "+st+" and cannot be cancelled", false)
		return
	}
	inFlight := 0
	for _, it := range j.items {
		switch it.status {
		case "queued":
			it.status = "cancelled"
		case "processing":
			inFlight++
		}
	}
	now := s.stamp()
	j.status, j.completed = "cancelled", &now
	s.mu.Unlock()
	writeJSON(w, http.StatusAccepted, map[string]any{"job_id": id, "status": "cancelled", "status_url": "/v1/batch/" + id, "in_flight_urls": inFlight})
}

// ---- map ----

type mapLink struct {
	URL    string `json:"url"`
	Source string `json:"source"`
}

func (s *Server) postMap(w http.ResponseWriter, r *http.Request) {
	var b mapBody
	if !decodeBody(w, r, &b) {
		return
	}
	if b.URL == nil {
		validation(w, "missing", []any{"body", "url"}, "Field required")
		return
	}
	seed, err := url.Parse(*b.URL)
	if err != nil || !validPageURL(*b.URL) {
		validation(w, "url_parsing", []any{"body", "url"}, "Input should be a valid URL")
		return
	}
	stripQuery := b.IgnoreQueryParameters == nil || *b.IgnoreQueryParameters
	var links []mapLink
	seen := map[string]bool{}
	add := func(raw, source string) {
		u, err := url.Parse(raw)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") {
			return
		}
		u.Fragment = ""
		if stripQuery {
			u.RawQuery = ""
		}
		v := u.String()
		if seen[v] {
			return
		}
		if b.Search != nil && !strings.Contains(strings.ToLower(v), strings.ToLower(*b.Search)) {
			return
		}
		seen[v] = true
		links = append(links, mapLink{URL: v, Source: source})
	}
	root := &url.URL{Scheme: seed.Scheme, Host: seed.Host}
	s.readSitemap(r.Context(), root.String()+"/sitemap.xml", 0, func(loc string) { add(loc, "sitemap") })
	if p := s.fetchPage(r.Context(), seed.String(), pageOptions{}); p.fail == nil {
		for _, l := range p.links {
			add(l, "html")
		}
	}
	var warning any
	if len(links) == 0 {
		warning = "no links found: try mapping the site's base domain"
	}
	if links == nil {
		links = []mapLink{}
	}
	writeJSON(w, http.StatusOK, map[string]any{
		"success": true, "links": links, "warning": warning,
		"metadata": map[string]any{"url": seed.String(), "duration_ms": 20, "links_count": len(links)},
	})
}

// readSitemap reads a sitemap (following an index one level) and calls add
// for every page URL.
func (s *Server) readSitemap(ctx context.Context, sitemapURL string, depth int, add func(string)) {
	if !s.reachable(sitemapURL) {
		return
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, sitemapURL, nil)
	if err != nil {
		return
	}
	resp, err := s.client.Do(req)
	if err != nil {
		return
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return
	}
	var children []string
	_, _ = sitemap.Parse(resp.Body, func(e sitemap.Entry) error {
		if e.Kind == sitemap.Index {
			children = append(children, e.Loc)
		} else {
			add(e.Loc)
		}
		return nil
	})
	if depth > 0 {
		return
	}
	sort.Strings(children)
	for _, c := range children {
		s.readSitemap(ctx, c, depth+1, add)
	}
}

// ErrNoJob is returned by BatchStatus for an unknown job id.
var ErrNoJob = errors.New("fakegeonode: no such job")

// BatchStatus returns a batch job's status, or ErrNoJob.
func (s *Server) BatchStatus(id string) (string, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	j, ok := s.batches[id]
	if !ok {
		return "", ErrNoJob
	}
	return j.status, nil
}

// BatchIDs returns the ids of every batch job created, in creation order.
func (s *Server) BatchIDs() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	ids := make([]string, 0, len(s.batches))
	for id := range s.batches {
		ids = append(ids, id)
	}
	sort.Strings(ids) // ids embed a sequence number in hex with a fixed width
	return ids
}
